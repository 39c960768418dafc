"""A reranker's CPU cost measured by its shape: random weights, the real pairs, the real scorer.

Compute does not depend on weight values, so the cost of scoring (query, document) pairs is
measured without downloading weights: the architecture is built from its configuration
(generator.evaluate.shapes) with seeded random fp32 weights, inside a real
`sentence_transformers.CrossEncoder`, and each query's pairs go through the very call the rerank
row makes, `predict(pairs, batch_size=..., show_progress_bar=False)`, with the same max_length.
The model is built in memory (a 568M-parameter shape never touches the disk); only its config
and tokenizer files pass through a temporary directory, because that is how a CrossEncoder loads.
The scores mean nothing and are thrown away: quality is not measured here.

Two methods. `full` times the whole model. `extrapolated` times the same pairs through the shape
cut to a few layers (EXTRAPOLATION_LAYERS) and fits, batch by batch, t(L) = a + b * L: every
encoder layer has the same shape, so at fixed inputs the cost is linear in the layer count, and
the fit at the model's own depth N prices it in a fraction of the time (the bge-reranker-v2-m3
shape takes minutes per query on two cores in full). The fitted intercept and per-layer time of
every query are part of the result, so a reader can audit the fit. `int8` precision is PyTorch's
dynamic quantization of the linear layers (generator.evaluate.models.apply_precision), applied
to the built (and cut) shape.

Each predict is timed batch by batch (predict's own batches, observed as it forms them), so a
sweep (generator.evaluate.sweep) can price a shallower candidate depth from a deeper measurement
where the batches are exactly the same. Every finished query is written at once to a per-query
cache file, so a long measurement resumes where it stopped and never estimates a query it did
not time. torch, transformers, sentence-transformers and tqdm are imported inside the functions
that use them.
"""

from __future__ import annotations

import os
import time
from dataclasses import field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from generator.core.dataclass import dataclass
from generator.storage.errors import InputError
from generator.evaluate.cache import is_finite_number, seal, warning_line
from generator.core.results.builders import timing_summary
from generator.evaluate.models import resolve_device
from generator.core.options import PRECISIONS, RERANK_BATCH_SIZE, RERANK_MAX_LENGTH
from generator.evaluate.cost_sessions import DTYPES, _entry_key, _open_session, _read_entry, _Session
from generator.evaluate.progress import Progress
from generator.evaluate.query_cost import REPEAT_STATISTIC, QueryCost, _fastest, _query_cost
from generator.evaluate.shape_scorer import COST_SEED, Pair, predict_batches, timed_predict
from generator.evaluate.shapes import ResolvedShape, choose_tokenizer, position_limit, resolve_shape, shape_summary
from generator.storage.fileio import atomic_write_json
from generator.storage.paths import display_home_path

METHODS = ("full", "extrapolated")
MEASURED = "measured by shape"
# 0 layers times the intercept itself (tokenizing, padding, embeddings, pooler, classifier and the
# Python around them) instead of extrapolating it, and a slope over 2 layers halves the timing noise
# that multiplying it by N amplifies: 23*t(2) - 22*t(1) (layers 1 and 2) carries about twice the
# noise of 12*t(2) - 11*t(0), and costs 3 layers per repeat instead of 2. The intercept is a few
# per cent of one layer, so 0 layers is nearly free.
EXTRAPOLATION_LAYERS = (0, 2)
# Two repeats, interleaved with the layer counts query by query so a busy spell slows both alike,
# each batch keeping its fastest time over the repeats (REPEAT_STATISTIC). Two keep a 24-layer
# shape's pricing near a sixth of a full run (2 x 2 of 24 layers, plus the intercepts); three would
# cost a quarter.
EXTRAPOLATION_REPEATS = 2
FULL_REPEATS = 1


def _load_average() -> list[float] | None:
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except (OSError, AttributeError):  # not every platform has one
        return None


def _positive(value: Any, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"expected a positive integer, got {value!r}", field=name)


def check_precision(precision: Any) -> str:
    if precision not in PRECISIONS:
        raise InputError(f"unknown precision {precision!r}; choose one of {', '.join(PRECISIONS)}",
                         field="precision")
    return precision


def _layer_counts(method: Any, layers: Sequence[int] | None, full_layers: int) -> list[int]:
    """The layer counts a method times, smallest first."""
    if method not in METHODS:
        raise InputError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}", field="method")
    if method == "full":
        return [full_layers]
    chosen = EXTRAPOLATION_LAYERS if layers is None else layers
    if any(isinstance(count, bool) or not isinstance(count, int) or count < 0 for count in chosen):
        raise InputError(f"layer counts are whole numbers from 0, got {list(chosen)!r}", field="layers")
    counts = sorted(set(chosen))
    if len(counts) < 2:
        raise InputError(f"a line needs two different layer counts, got {list(chosen)!r}", field="layers")
    if counts[-1] > full_layers:
        raise InputError(f"{counts[-1]} layers is deeper than the model's {full_layers}", field="layers")
    return counts


def _now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


@dataclass
class Pricing:
    """One shape at one setting, priced one way: a session per layer count it times."""

    shape: ResolvedShape
    method: str
    repeats: int
    sessions: dict[int, _Session]       # layer count -> session, smallest first
    log: Callable[[str], None]

    @property
    def full_layers(self) -> int:
        return int(self.shape.config.num_hidden_layers)

    @property
    def label(self) -> str:
        if self.method == "full":
            return MEASURED
        return f"{MEASURED}, extrapolated from {max(self.sessions)} of {self.full_layers} layers"

    @property
    def session(self) -> _Session:
        """The deepest session (for the full method, the only one)."""
        return self.sessions[max(self.sessions)]

    def plan(self, pairs: Sequence[Pair]) -> list[list[int]] | None:
        """The batches predict forms for `pairs`; building the shallowest scorer if none is built."""
        built = [session for session in self.sessions.values() if session.scorer is not None]
        scorer = (built or [self.sessions[min(self.sessions)]])[0].build()
        return predict_batches(scorer, pairs, self.session.batch_size)

    def _time_query(self, query_id: str, pairs: Sequence[Pair], warm_pairs: Sequence[Pair]) -> dict[int, dict]:
        sessions = list(self.sessions.values())
        scorers = {session.layers: session.ready(warm_pairs) for session in sessions}
        features = scorers[sessions[0].layers].preprocess(list(pairs))
        tokens = [int(count) for count in features["attention_mask"].sum(dim=1).tolist()]
        runs: dict[int, list[list[float]]] = {session.layers: [] for session in sessions}
        cpu = dict.fromkeys(runs, 0.0)
        batches: dict[int, list[list[int]]] = {}
        load_before = _load_average()
        for _ in range(self.repeats):
            # Interleaved: a busy spell of the machine slows every layer count alike.
            for session in sessions:
                cpu_started = time.process_time()
                milliseconds, batches[session.layers] = timed_predict(scorers[session.layers], pairs,
                                                                      session.batch_size)
                cpu[session.layers] += time.process_time() - cpu_started
                runs[session.layers].append(milliseconds)
        load_after, measured_at = _load_average(), _now()
        entries = {}
        for layers, repeated in runs.items():
            entries[layers] = {"query_id": query_id, "pairs": len(pairs), "layers": layers,
                               "milliseconds": sum(_fastest(times) for times in zip(*repeated)),
                               "batches": batches[layers],
                               "batch_milliseconds": repeated, "cpu_seconds": cpu[layers],
                               "timed_milliseconds": sum(map(sum, repeated)),
                               "load_average_before": load_before, "load_average_after": load_after,
                               "tokens": tokens, "measured_at": measured_at}
        return entries

    def costs(self, pairs_by_query: Mapping[str, Sequence[Pair]], *, progress: bool, label: str = "",
              warm_pairs: Sequence[Pair] | None = None) -> tuple[dict[str, QueryCost], list[str], list[str]]:
        """Each query's cost, from the cache where every layer count's entry verifies, else timed
        now (all layer counts again, interleaved) and cached at once. (costs, resumed, computed)."""
        found: dict[str, dict[int, dict]] = {}
        pending = []
        for query_id, pairs in pairs_by_query.items():
            entries = {}
            for layers, session in self.sessions.items():
                path = session.entry_path(query_id, pairs)
                entry, problem = _read_entry(path, _entry_key(session, path), query_id, pairs, self.repeats)
                if problem is not None:  # a missing entry is simply not measured yet; a bad one is news
                    self.log(warning_line(f"cost entry for query {query_id}", problem, path, "measuring again"))
                if entry is not None:
                    entries[layers] = entry
            if len(entries) == len(self.sessions):
                found[query_id] = entries
            else:
                pending.append(query_id)
        resumed = [query_id for query_id in pairs_by_query if query_id in found]
        if pairs_by_query:
            self.log(f"cost{label}: {len(resumed)} of {len(pairs_by_query)} queries resumed from "
                     f"{display_home_path(self.session.root)}; {len(pending)} to measure")
        if warm_pairs is None:
            warm_pairs = pairs_by_query[pending[0]] if pending else ()
        with Progress(f"cost{label}", len(pending), unit="queries", log=self.log, enabled=progress) as bar:
            for query_id in pending:
                pairs = pairs_by_query[query_id]
                entries = self._time_query(query_id, pairs, warm_pairs)
                for layers, session in self.sessions.items():
                    path = session.entry_path(query_id, pairs)
                    entries[layers] = seal(entries[layers], _entry_key(session, path))
                    atomic_write_json(path, entries[layers])
                found[query_id] = entries
                bar.update(1)
        costs = {query_id: _query_cost(query_id, found[query_id], self.full_layers) for query_id in pairs_by_query}
        return costs, resumed, pending


def _validated_pairs(pairs_by_query: Mapping[str, Sequence[Pair]]) -> None:
    if not pairs_by_query:
        raise InputError("no queries to measure", field="pairs")
    for query_id, pairs in pairs_by_query.items():
        if not pairs:
            raise InputError(f"query {query_id!r} has no candidates to score", field="pairs")


def open_pricing(model_spec: str | ResolvedShape, *, method: str = "full", precision: str = "fp32",
                 layers: Sequence[int] | None = None, repeats: int | None = None,
                 max_length: int = RERANK_MAX_LENGTH, batch_size: int = RERANK_BATCH_SIZE,
                 cache_dir: Path | None = None, device: str = "auto",
                 log: Callable[[str], None] = print) -> Pricing:
    """A shape's sessions for one setting and method; nothing is built until a query is timed."""
    import torch

    for name, value in (("max_length", max_length), ("batch_size", batch_size)):
        _positive(value, name)
    check_precision(precision)
    if method not in METHODS:  # before resolving the shape: a typo should not wait for a download
        raise InputError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}", field="method")
    repeats = (FULL_REPEATS if method == "full" else EXTRAPOLATION_REPEATS) if repeats is None else repeats
    _positive(repeats, "repeats")
    shape = model_spec if isinstance(model_spec, ResolvedShape) else resolve_shape(model_spec)
    counts = _layer_counts(method, layers, int(shape.config.num_hidden_layers))
    if max_length > position_limit(shape.config):
        raise InputError(f"{max_length} is longer than the {position_limit(shape.config)} positions "
                         f"{shape.requested} holds", field="max_length")
    device = resolve_device(device)
    tokenizer = choose_tokenizer(shape)
    threads = int(torch.get_num_threads())
    sessions = {count: _open_session(shape, tokenizer, layers=count, method=method, repeats=repeats,
                                     precision=precision, max_length=max_length, batch_size=batch_size,
                                     cache_dir=cache_dir, device=device, threads=threads, log=log)
                for count in counts}
    return Pricing(shape, method, repeats, sessions, log)


@dataclass
class CostMeasurement:
    """Per-query wall time of scoring each query's pairs with one shape at one setting."""

    pricing: Pricing
    costs: dict[str, QueryCost]            # in query order
    resumed: list[str] = field(default_factory=list)
    computed: list[str] = field(default_factory=list)

    @property
    def session(self) -> _Session:
        return self.pricing.session

    @property
    def milliseconds(self) -> list[float]:
        return [cost.milliseconds for cost in self.costs.values()]

    @property
    def pairs(self) -> int:
        return sum(cost.pairs for cost in self.costs.values())

    @property
    def cpu_seconds_per_wall_second(self) -> float | None:
        """Over every predict timed for these queries (a derived query shares its deeper one's)."""
        entries = {id(entry): entry for cost in self.costs.values() for entry in cost.entries}.values()
        cpu = [entry.get("cpu_seconds") for entry in entries]
        wall = [entry.get("timed_milliseconds") for entry in entries]
        if any(not is_finite_number(value) for value in cpu + wall):
            return None
        seconds = sum(wall) / 1000.0
        return sum(cpu) / seconds if seconds > 0 else None

    def _fit(self, cost: QueryCost) -> dict[str, Any]:
        return {"intercept_milliseconds": sum(cost.intercepts), "per_layer_milliseconds": sum(cost.slopes),
                "layer_milliseconds": {str(layers): sum(values) for layers, values in cost.layer_milliseconds.items()}}

    def as_dict(self) -> dict[str, Any]:
        pricing, session, shape = self.pricing, self.pricing.session, self.pricing.shape
        tokens = [count for cost in self.costs.values() for count in cost.tokens]
        costs = self.costs
        figures = {
            "cost": pricing.label, "quality": "not measured", "method": pricing.method,
            "layers_timed": sorted(pricing.sessions), "full_layers": pricing.full_layers,
            "repeats": pricing.repeats, "repeat_statistic": REPEAT_STATISTIC,
            "model": shape.requested, "architecture": shape.architecture, "parameters": shape.parameters,
            "shape": shape_summary(shape), "config_source": shape.source, "config_path": shape.config_path,
            "config_sha256": shape.config_sha256,
            "weights": f"random (seed {COST_SEED}); compute does not depend on weight values",
            "tokenizer": {"name": session.tokenizer.name, "tokens": session.tokenizer.tokens,
                          "path": str(session.tokenizer.directory), "sha256": session.tokenizer.sha256},
            "max_length": session.max_length, "batch_size": session.batch_size,
            "precision": session.precision, "dtype": DTYPES[session.precision],
            "device": session.device, "threads": session.threads,
            "machine": session.settings["machine"], "packages": session.settings["packages"],
            "cache_key": session.key,
            "cache_keys": {str(layers): each.key for layers, each in pricing.sessions.items()},
            "queries": len(costs), "pairs": self.pairs,
            "per_query_milliseconds": {q: cost.milliseconds for q, cost in costs.items()},
            "per_query_batch_milliseconds": {q: list(cost.batch_milliseconds) for q, cost in costs.items()},
            "per_query_pairs": {q: cost.pairs for q, cost in costs.items()},
            "per_query_cpu_seconds": {q: None if cost.from_depth is not None else
                                      sum(entry.get("cpu_seconds", 0.0) for entry in cost.entries)
                                      for q, cost in costs.items()},
            "per_query_load_average": {q: {"before": cost.entries[0].get("load_average_before"),
                                           "after": cost.entries[0].get("load_average_after")}
                                       for q, cost in costs.items()},
            # About the thread count on an idle machine; well below it, something else held the CPU.
            "cpu_seconds_per_wall_second": self.cpu_seconds_per_wall_second,
            **{key: value for key, value in timing_summary(
                {q: cost.milliseconds for q, cost in costs.items()},
                {q: cost.pairs for q, cost in costs.items()}).items() if key not in ("queries", "pairs")},
            "tokens_per_pair": {"mean": sum(tokens) / len(tokens), "max": max(tokens)},
            "resumed_queries": len(self.resumed), "computed_queries": len(self.computed),
        }
        if pricing.method == "extrapolated":
            # Per query, t(L) = intercept + per_layer * L over the layer counts timed (their fastest
            # summed over batches); the query's figure is that line at full_layers.
            figures["per_query_fit"] = {q: self._fit(cost) for q, cost in costs.items()}
        return figures


def measure_rerank_cost(pairs_by_query: Mapping[str, Sequence[Pair]], model_spec: str | ResolvedShape, *,
                        max_length: int = RERANK_MAX_LENGTH, batch_size: int = RERANK_BATCH_SIZE,
                        method: str = "full", precision: str = "fp32", layers: Sequence[int] | None = None,
                        repeats: int | None = None, cache_dir: Path | None = None, device: str = "auto",
                        progress: bool = True, log: Callable[[str], None] = print) -> CostMeasurement:
    """Time `predict` of each query's pairs (in rank order) with the model's shape.

    method "full" times the whole model once per query; "extrapolated" times it cut to `layers`
    (default EXTRAPOLATION_LAYERS), `repeats` times each (default EXTRAPOLATION_REPEATS), and fits
    the line to the full depth. precision "fp32" or "int8". The first query still to be measured
    is scored once untimed at each layer count (warm-up); finished queries are cached at once under
    cache_dir/cost/<settings key>/ and reused by a re-run.
    """
    _validated_pairs(pairs_by_query)
    pricing = open_pricing(model_spec, method=method, precision=precision, layers=layers, repeats=repeats,
                           max_length=max_length, batch_size=batch_size, cache_dir=cache_dir, device=device,
                           log=log)
    costs, resumed, computed = pricing.costs(pairs_by_query, progress=progress)
    return CostMeasurement(pricing, costs, resumed, computed)


@dataclass
class CostCurve:
    """The same measurement at several candidate depths: each query's first d pairs."""

    measurements: dict[int, CostMeasurement]

    def as_dict(self) -> dict[str, Any]:
        figures = {depth: measurement.as_dict() for depth, measurement in self.measurements.items()}
        summary = ("queries", "pairs", "p50_milliseconds", "p95_milliseconds", "pairs_per_second",
                   "resumed_queries", "computed_queries")
        rows = [{"depth": depth, **{key: values[key] for key in summary}} for depth, values in figures.items()]
        first = next(iter(figures.values()))   # a curve has at least one depth (parse_depths)
        return {"cost": first["cost"], "quality": "not measured", "model": first["model"],
                "method": first["method"], "precision": first["precision"], "curve": rows,
                "measurements": {str(depth): values for depth, values in figures.items()}}


def parse_depths(depths: Sequence[int]) -> list[int]:
    """Positive candidate depths, each once, smallest first."""
    if not depths:
        raise InputError("give at least one depth", field="depth")
    for depth in depths:
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise InputError(f"a depth is a positive integer, got {depth!r}", field="depth")
    return sorted(set(depths))


def cost_curve(pairs_by_query: Mapping[str, Sequence[Pair]], model_spec: str | ResolvedShape,
               depths: Sequence[int], *, max_length: int = RERANK_MAX_LENGTH,
               batch_size: int = RERANK_BATCH_SIZE, method: str = "full", precision: str = "fp32",
               layers: Sequence[int] | None = None, repeats: int | None = None, cache_dir: Path | None = None,
               device: str = "auto", progress: bool = True, log: Callable[[str], None] = print) -> CostCurve:
    """measure_rerank_cost with each query's pairs cut to its first d candidates, for every depth d.

    One scorer per layer count serves every depth (built and warmed up once); each depth's queries
    are cached like any measurement, so the full depth shares its entries with a plain measurement.
    """
    ordered = parse_depths(depths)
    _validated_pairs(pairs_by_query)
    deepest = max(len(pairs) for pairs in pairs_by_query.values())
    if ordered[-1] > deepest:
        raise InputError(f"depth {ordered[-1]} is deeper than the {deepest} candidates a query has", field="depth")
    pricing = open_pricing(model_spec, method=method, precision=precision, layers=layers, repeats=repeats,
                           max_length=max_length, batch_size=batch_size, cache_dir=cache_dir, device=device,
                           log=log)
    # Warm up on a whole candidate list, whichever depth is measured first.
    warm_pairs = list(next(iter(pairs_by_query.values())))[:ordered[-1]]
    measurements = {}
    for depth in ordered:
        cut = {query_id: list(pairs)[:depth] for query_id, pairs in pairs_by_query.items()}
        costs, resumed, computed = pricing.costs(cut, progress=progress, label=f" depth {depth}",
                                                 warm_pairs=warm_pairs)
        measurements[depth] = CostMeasurement(pricing, costs, resumed, computed)
    return CostCurve(measurements)
