"""A reranker's CPU cost measured by its shape: random weights, the real pairs, the real scorer.

Compute does not depend on weight values, so the cost of scoring (query, document) pairs is
measured without downloading weights: the architecture is built from its configuration
(generator.evaluate.shapes) with seeded random fp32 weights, inside a real
`sentence_transformers.CrossEncoder`, and each query's pairs go through the very call the rerank
row makes, `predict(pairs, batch_size=..., show_progress_bar=False)`, with the same max_length.
The model is built in memory (a 568M-parameter shape never touches the disk); only its config
and tokenizer files pass through a temporary directory, because that is how a CrossEncoder loads.
The scores mean nothing and are thrown away: quality is not measured here.

Every finished query is written at once to a per-query cache file, so a long measurement (the
bge-reranker-v2-m3 shape takes minutes per query on two cores) resumes where it stopped and
never estimates a query it did not time. torch, transformers, sentence-transformers and tqdm are
imported inside the functions that use them.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from generator.errors import InputError, ModelUnavailableError
from generator.evaluate.cache import (checksum_problem, content_key, is_finite_number, read_json_entry, seal,
                                      warning_line)
from generator.core.metrics import timing_summary
from generator.evaluate.models import resolve_device
from generator.core.options import DEFAULT_SEED, RERANK_BATCH_SIZE, RERANK_MAX_LENGTH
from generator.evaluate.environment import machine, package_versions
from generator.evaluate.shapes import (TOKENIZER_FILES, ResolvedShape, TokenizerChoice, choose_tokenizer,
                                       position_limit, resolve_shape, shape_summary)
from generator.fileio import atomic_write_json, default_cache_dir, display_home_path

Pair = tuple[str, str]
DTYPE = "float32"
COST_SEED = DEFAULT_SEED
CACHE_VERSION = "cost-v1"
PACKAGES = ("torch", "transformers", "sentence-transformers", "tokenizers")


def build_scorer(shape: ResolvedShape, tokenizer: TokenizerChoice, *, max_length: int, device: str,
                 seed: int = COST_SEED) -> Any:
    """A real CrossEncoder of `shape` with seeded random fp32 weights, built in memory.

    It is loaded the way `CrossEncoder(path, max_length=...)` loads a model directory (its
    sequence-classification Transformer module with `model_max_length` = max_length, then the
    CrossEncoder around it), except that the weights come from `from_config` instead of a file.
    """
    import torch
    from sentence_transformers import CrossEncoder
    from sentence_transformers.base.modules import Transformer
    from transformers import AutoModelForSequenceClassification

    class RandomWeightsTransformer(Transformer):
        def _load_model(self, model_name_or_path, transformer_task, config, backend, is_peft_model, **model_kwargs):
            torch.manual_seed(seed)
            return AutoModelForSequenceClassification.from_config(config, dtype=torch.float32).eval()

    with tempfile.TemporaryDirectory(prefix="readout-shape-") as temporary:
        directory = Path(temporary)
        shape.config.save_pretrained(directory)
        for name in TOKENIZER_FILES:
            if (tokenizer.directory / name).is_file():
                shutil.copyfile(tokenizer.directory / name, directory / name)
        if tokenizer.input_names is not None:
            settings_path = directory / "tokenizer_config.json"
            settings = json.loads(settings_path.read_text(encoding="utf-8")) if settings_path.is_file() else {}
            settings["model_input_names"] = list(tokenizer.input_names)
            settings_path.write_text(json.dumps(settings), encoding="utf-8")
        try:
            module = RandomWeightsTransformer(str(directory), transformer_task="sequence-classification",
                                              processor_kwargs={"model_max_length": max_length})
            scorer = CrossEncoder(modules=[module], device=device)
        except (OSError, ValueError, KeyError) as error:
            raise ModelUnavailableError(f"model {shape.requested!r}: its shape did not build as a cross-encoder: "
                                        f"{type(error).__name__}: {error}") from None
    return scorer.eval()


def _packages() -> dict[str, str | None]:
    """The versions that change how fast the same shape runs (bm25s or numpy do not)."""
    return {name: version for name, version in package_versions().items() if name in PACKAGES}


def _load_average() -> list[float] | None:
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except (OSError, AttributeError):  # not every platform has one
        return None


@dataclass
class _Session:
    """One shape at one setting: its cache folder, and the scorer, built and warmed up only once a
    query actually has to be timed (a fully resumed run builds nothing)."""

    shape: ResolvedShape
    tokenizer: TokenizerChoice
    max_length: int
    batch_size: int
    device: str
    threads: int
    root: Path
    key: str
    settings: dict[str, Any]
    log: Callable[[str], None]
    scorer: Any = None
    warmed: bool = False

    def ready(self, warm_pairs: Sequence[Pair]) -> None:
        if self.scorer is None:
            started = time.perf_counter()
            self.scorer = build_scorer(self.shape, self.tokenizer, max_length=self.max_length, device=self.device)
            self.log(f"cost: built the {self.shape.architecture} shape ({self.shape.parameters:,} parameters, random "
                     f"weights) in {time.perf_counter() - started:.1f} s")
        if not self.warmed:
            self.scorer.predict(list(warm_pairs), batch_size=self.batch_size, show_progress_bar=False)
            self.warmed = True
        return self.scorer

    def entry_path(self, query_id: str, pairs: Sequence[Pair]) -> Path:
        return self.root / f"{content_key(CACHE_VERSION, query_id, [list(pair) for pair in pairs])}.json"


def _open_session(model_spec: str | ResolvedShape, *, max_length: int, batch_size: int, cache_dir: Path | None,
                  device: str, log: Callable[[str], None]) -> _Session:
    import torch

    for name, value in (("max_length", max_length), ("batch_size", batch_size)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InputError(f"expected a positive integer, got {value!r}", field=name)
    shape = model_spec if isinstance(model_spec, ResolvedShape) else resolve_shape(model_spec)
    if max_length > position_limit(shape.config):
        raise InputError(f"{max_length} is longer than the {position_limit(shape.config)} positions "
                         f"{shape.requested} holds", field="max_length")
    device = resolve_device(device)
    tokenizer = choose_tokenizer(shape)
    threads = int(torch.get_num_threads())
    settings = {"config_sha256": shape.config_sha256, "tokenizer": {"name": tokenizer.name,
                                                                   "sha256": tokenizer.sha256},
                "max_length": max_length, "batch_size": batch_size, "dtype": DTYPE, "device": device,
                "threads": threads, "packages": _packages(), "machine": machine()}
    key = content_key(CACHE_VERSION, settings)[:24]
    root = Path(cache_dir if cache_dir is not None else default_cache_dir()) / "cost" / key
    atomic_write_json(root / "settings.json", {**settings, "model": shape.requested,
                                               "architecture": shape.architecture, "shape": shape_summary(shape)})
    return _Session(shape, tokenizer, max_length, batch_size, device, threads, root, key, settings, log)


def _entry_key(session: _Session, path: Path) -> str:
    """What an entry is sealed with: the settings it was timed under and the file it belongs in,
    so an entry copied from another setting, depth or query does not verify."""
    return f"{session.key}/{path.stem}"


def _entry_problem(entry: Any, key: str, query_id: str, pairs: Sequence[Pair]) -> str | None:
    """Why `entry` is not a timing of `query_id`'s `pairs` sealed for `key`, or None.

    Fields first, so the reason names a negative time or a short token list; the checksum last,
    for edits that still look plausible (a changed time).
    """
    if not isinstance(entry, dict):
        return f"not a JSON object but {type(entry).__name__}"
    if entry.get("query_id") != query_id:
        return f"made for query {entry.get('query_id')!r}"
    milliseconds = entry.get("milliseconds")
    if not is_finite_number(milliseconds) or milliseconds <= 0:
        return f"milliseconds is {milliseconds!r}, not a finite positive number"
    count = entry.get("pairs")
    if isinstance(count, bool) or not isinstance(count, int) or count != len(pairs):
        return f"pairs is {count!r}, the query has {len(pairs)}"
    tokens = entry.get("tokens")
    if not isinstance(tokens, list) or len(tokens) != len(pairs):
        length = len(tokens) if isinstance(tokens, list) else type(tokens).__name__
        return f"tokens are not {len(pairs)} counts (got {length})"
    if any(isinstance(value, bool) or not isinstance(value, int) or value < 0 for value in tokens):
        return "tokens are not all non-negative integers"
    return checksum_problem(entry, key)


def _read_entry(path: Path, key: str, query_id: str, pairs: Sequence[Pair]) -> tuple[dict | None, str | None]:
    """(entry, None) for a verified entry, (None, None) when there is none yet, else (None, why)."""
    if not path.is_file():
        return None, None
    entry, problem = read_json_entry(path)
    if problem is None:
        problem = _entry_problem(entry, key, query_id, pairs)
    return (entry, None) if problem is None else (None, problem)


def _time_query(session: _Session, query_id: str, pairs: Sequence[Pair], warm_pairs: Sequence[Pair]) -> dict:
    scorer = session.ready(warm_pairs)
    features = scorer.preprocess(list(pairs))
    tokens = [int(count) for count in features["attention_mask"].sum(dim=1).tolist()]
    load_before = _load_average()
    cpu_started = time.process_time()
    started = time.perf_counter()
    scorer.predict(list(pairs), batch_size=session.batch_size, show_progress_bar=False)
    elapsed_ms = (time.perf_counter() - started) * 1000.0
    cpu_seconds = time.process_time() - cpu_started
    return {"query_id": query_id, "pairs": len(pairs), "milliseconds": elapsed_ms, "cpu_seconds": cpu_seconds,
            "load_average_before": load_before, "load_average_after": _load_average(), "tokens": tokens,
            "measured_at": datetime.now(timezone.utc).replace(microsecond=0).isoformat()}


@dataclass
class CostMeasurement:
    """Per-query wall time of scoring each query's pairs with one shape at one setting."""

    session: _Session
    entries: dict[str, dict]            # query id -> its cache entry, in query order
    resumed: list[str] = field(default_factory=list)
    computed: list[str] = field(default_factory=list)

    @property
    def milliseconds(self) -> list[float]:
        return [float(entry["milliseconds"]) for entry in self.entries.values()]

    @property
    def pairs(self) -> int:
        return sum(int(entry["pairs"]) for entry in self.entries.values())

    @property
    def cpu_seconds_per_wall_second(self) -> float | None:
        cpu = [entry.get("cpu_seconds") for entry in self.entries.values()]
        if any(not isinstance(seconds, (int, float)) for seconds in cpu):
            return None
        wall = sum(self.milliseconds) / 1000.0
        return sum(cpu) / wall if wall > 0 else None

    def as_dict(self) -> dict[str, Any]:
        session, shape = self.session, self.session.shape
        tokens = [count for entry in self.entries.values() for count in entry["tokens"]]
        return {
            "cost": "measured by shape", "quality": "not measured",
            "model": shape.requested, "architecture": shape.architecture, "parameters": shape.parameters,
            "shape": shape_summary(shape), "config_source": shape.source, "config_path": shape.config_path,
            "config_sha256": shape.config_sha256,
            "weights": f"random (seed {COST_SEED}); compute does not depend on weight values",
            "tokenizer": {"name": session.tokenizer.name, "tokens": session.tokenizer.tokens,
                          "path": str(session.tokenizer.directory), "sha256": session.tokenizer.sha256},
            "max_length": session.max_length, "batch_size": session.batch_size, "dtype": DTYPE,
            "device": session.device, "threads": session.threads,
            "machine": session.settings["machine"], "packages": session.settings["packages"],
            "cache_key": session.key, "queries": len(self.entries), "pairs": self.pairs,
            "per_query_milliseconds": {q: float(entry["milliseconds"]) for q, entry in self.entries.items()},
            "per_query_pairs": {q: int(entry["pairs"]) for q, entry in self.entries.items()},
            "per_query_cpu_seconds": {q: entry.get("cpu_seconds") for q, entry in self.entries.items()},
            "per_query_load_average": {q: {"before": entry.get("load_average_before"),
                                           "after": entry.get("load_average_after")}
                                       for q, entry in self.entries.items()},
            # About the thread count on an idle machine; well below it, something else held the CPU.
            "cpu_seconds_per_wall_second": self.cpu_seconds_per_wall_second,
            **{key: value for key, value in timing_summary(
                {q: entry["milliseconds"] for q, entry in self.entries.items()},
                {q: entry["pairs"] for q, entry in self.entries.items()}).items() if key not in ("queries", "pairs")},
            "tokens_per_pair": {"mean": sum(tokens) / len(tokens), "max": max(tokens)},
            "resumed_queries": len(self.resumed), "computed_queries": len(self.computed),
        }


def _measure(session: _Session, pairs_by_query: Mapping[str, Sequence[Pair]], *, progress: bool,
             label: str, warm_pairs: Sequence[Pair] | None = None) -> CostMeasurement:
    from tqdm import tqdm

    if not pairs_by_query:
        raise InputError("no queries to measure", field="pairs")
    for query_id, pairs in pairs_by_query.items():
        if not pairs:
            raise InputError(f"query {query_id!r} has no candidates to score", field="pairs")
    measurement = CostMeasurement(session, entries={})
    pending = []
    for query_id, pairs in pairs_by_query.items():
        path = session.entry_path(query_id, pairs)
        entry, problem = _read_entry(path, _entry_key(session, path), query_id, pairs)
        if entry is not None:
            measurement.entries[query_id] = entry
            measurement.resumed.append(query_id)
        else:
            if problem is not None:  # a missing entry is simply not measured yet; a bad one is news
                session.log(warning_line(f"cost entry for query {query_id}", problem, path, "measuring again"))
            measurement.entries[query_id] = {}
            pending.append(query_id)
    session.log(f"cost{label}: {len(measurement.resumed)} of {len(pairs_by_query)} queries resumed from "
                f"{display_home_path(session.root)}; {len(pending)} to measure")
    if warm_pairs is None:
        warm_pairs = pairs_by_query[pending[0]] if pending else ()
    with tqdm(total=len(pending), desc=f"cost{label}", unit="query", disable=not progress or not pending) as bar:
        for query_id in pending:
            pairs = pairs_by_query[query_id]
            path = session.entry_path(query_id, pairs)
            entry = seal(_time_query(session, query_id, pairs, warm_pairs), _entry_key(session, path))
            atomic_write_json(path, entry)
            measurement.entries[query_id] = entry
            measurement.computed.append(query_id)
            bar.update(1)
    return measurement


def measure_rerank_cost(pairs_by_query: Mapping[str, Sequence[Pair]], model_spec: str | ResolvedShape, *,
                        max_length: int = RERANK_MAX_LENGTH, batch_size: int = RERANK_BATCH_SIZE,
                        cache_dir: Path | None = None, device: str = "auto", progress: bool = True,
                        log: Callable[[str], None] = print) -> CostMeasurement:
    """Time one `predict` of each query's pairs (in rank order) with the model's shape.

    The first query still to be measured is scored once untimed (warm-up); finished queries are
    cached at once under cache_dir/cost/<settings key>/ and reused by a re-run.
    """
    session = _open_session(model_spec, max_length=max_length, batch_size=batch_size, cache_dir=cache_dir,
                            device=device, log=log)
    return _measure(session, pairs_by_query, progress=progress, label="")


@dataclass
class CostCurve:
    """The same measurement at several candidate depths: each query's first d pairs."""

    measurements: dict[int, CostMeasurement]

    def as_dict(self) -> dict[str, Any]:
        figures = {depth: measurement.as_dict() for depth, measurement in self.measurements.items()}
        summary = ("queries", "pairs", "p50_milliseconds", "p95_milliseconds", "pairs_per_second",
                   "resumed_queries", "computed_queries")
        rows = [{"depth": depth, **{key: values[key] for key in summary}} for depth, values in figures.items()]
        model = next(iter(figures.values()))["model"]   # a curve has at least one depth (parse_depths)
        return {"cost": "measured by shape", "quality": "not measured", "model": model, "curve": rows,
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
               batch_size: int = RERANK_BATCH_SIZE, cache_dir: Path | None = None, device: str = "auto",
               progress: bool = True, log: Callable[[str], None] = print) -> CostCurve:
    """measure_rerank_cost with each query's pairs cut to its first d candidates, for every depth d.

    One scorer serves every depth (built and warmed up once); each depth's queries are cached like
    any measurement, so the full depth shares its entries with a plain measurement.
    """
    ordered = parse_depths(depths)
    deepest = max((len(pairs) for pairs in pairs_by_query.values()), default=0)
    if ordered[-1] > deepest:
        raise InputError(f"depth {ordered[-1]} is deeper than the {deepest} candidates a query has", field="depth")
    session = _open_session(model_spec, max_length=max_length, batch_size=batch_size, cache_dir=cache_dir,
                            device=device, log=log)
    # Warm up on a whole candidate list, whichever depth is measured first.
    warm_pairs = list(next(iter(pairs_by_query.values())))[:ordered[-1]]
    measurements = {}
    for depth in ordered:
        cut = {query_id: list(pairs)[:depth] for query_id, pairs in pairs_by_query.items()}
        measurements[depth] = _measure(session, cut, progress=progress, label=f" depth {depth}",
                                       warm_pairs=warm_pairs)
    return CostCurve(measurements)
