"""The reranker frontier: for each configuration a sweep priced (model, depth, max_length,
precision), its p95 time per query and the ceiling of the candidates it would reorder.

The ceiling at depth k is the best mean metric any reordering of the over row's top k could
reach, the rest of the list kept below in its order (generator.core.headroom's oracle on the
top k). It reads the relevance labels, so it is an upper bound on what a reranker of that
depth could gain, never a model's quality: a configuration priced by its shape has no quality
at all. It is non-decreasing in depth and never below the over row's own mean. Headroom is the
ceiling minus the over row's mean.

The block is built by generator.core.results.builders.frontier_block and read through the results
model (`cheapest_within`: the configuration with the lowest p95 among those whose p95 fits the
budget, ties the deeper, then the listed order). Pure functions over plain data.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping, Sequence

from generator.core.dataclass import dataclass
from generator.core.headroom import oracle_order
from generator.core.metrics import Metric, macro_mean, metrics_from_names
from generator.core.rows import PRECISIONS
from generator.storage.errors import InputError

NOTE = ("ceiling: the best any reordering of the over row's top `depth` candidates could score, from the "
        "relevance labels; an upper bound, never a model's quality")
# What a frontier entry holds, in this order (the readout's table reads these).
SUMMARY_KEYS = ("model", "depth", "max_length", "precision", "batch_size", "cost", "quality", "p50_milliseconds",
                "p95_milliseconds", "ceiling", "headroom")


# The built-in shapes (generator.evaluate.shapes, SPEC section 8), swept when `models` is left out.
BUILT_IN_MODELS = ("BAAI/bge-reranker-v2-m3", "BAAI/bge-reranker-large", "BAAI/bge-reranker-base",
                   "cross-encoder/ms-marco-MiniLM-L-12-v2", "cross-encoder/ms-marco-MiniLM-L-6-v2")
METHODS = ("extrapolated", "full")
_KEYS = ("over", "models", "depths", "max_lengths", "precisions", "metric", "batch_size", "method", "repeats")


@dataclass(frozen=True)
class FrontierSpec:
    """The `evaluate.frontier` block: which configurations to price, over which row's candidates."""

    models: tuple[str, ...] = BUILT_IN_MODELS
    depths: tuple[int, ...] = (5, 10, 20, 50)
    max_lengths: tuple[int, ...] = (256, 512)
    precisions: tuple[str, ...] = ("fp32", "int8")
    over: str | None = None        # None: the first rerank row's over row
    metric: str = "nDCG@5"
    batch_size: int | None = None  # None: evaluate.rerank_batch_size
    method: str = "extrapolated"
    repeats: int | None = None     # None: the cost stage's default (generator.evaluate.cost)

    def parameters(self) -> dict[str, Any]:
        return {"models": list(self.models), "depths": list(self.depths), "max_lengths": list(self.max_lengths),
                "precisions": list(self.precisions), "over": self.over, "metric": self.metric,
                "batch_size": self.batch_size, "method": self.method, "repeats": self.repeats}


def parse_frontier(raw: Any, config_display: str, field: str = "evaluate.frontier") -> FrontierSpec:
    """The block, each key checked where it stands (a one-line error names it)."""
    def refuse(message: str, key: str | None = None) -> InputError:
        return InputError(message, path=config_display, field=f"{field}.{key}" if key else field)

    if not isinstance(raw, dict):
        raise refuse("expected a mapping: models, depths, max_lengths, precisions, over, metric, batch_size, method")
    for key in sorted(map(str, raw)):
        if key not in _KEYS:
            raise refuse(f"unknown key; a frontier takes {', '.join(_KEYS)}", key)
    spec = FrontierSpec()
    values: dict[str, Any] = {}
    if "models" in raw:
        models = raw["models"]
        if not isinstance(models, list) or not models or not all(isinstance(m, str) and m.strip() for m in models):
            raise refuse("expected a list of model names or directories", "models")
        values["models"] = tuple(dict.fromkeys(m.strip() for m in models))
    for key, low, high in (("depths", 1, 100_000), ("max_lengths", 1, 65_536)):
        if key in raw:
            items = raw[key]
            if not isinstance(items, list) or not items or any(
                    isinstance(v, bool) or not isinstance(v, int) or not low <= v <= high for v in items):
                raise refuse(f"expected a list of integers from {low:,} to {high:,}", key)
            values[key] = tuple(sorted(set(items)))
    if "precisions" in raw:
        items = raw["precisions"]
        if not isinstance(items, list) or not items or any(v not in PRECISIONS for v in items):
            raise refuse(f"expected a list of {', '.join(PRECISIONS)}", "precisions")
        values["precisions"] = tuple(p for p in PRECISIONS if p in items)
    for key in ("over", "metric", "method"):
        if key in raw and (not isinstance(raw[key], str) or not raw[key].strip()):
            raise refuse("expected a non-empty string", key)
    if "over" in raw:
        values["over"] = raw["over"].strip()
    if "metric" in raw:
        try:
            values["metric"] = metrics_from_names([raw["metric"]])[0].name
        except ValueError as error:
            raise refuse(str(error), "metric") from None
    if "method" in raw:
        if raw["method"] not in METHODS:
            raise refuse(f"choose one of {', '.join(METHODS)}", "method")
        values["method"] = raw["method"]
    for key, high in (("batch_size", 65_536), ("repeats", 100)):
        if key in raw:
            size = raw[key]
            if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= high:
                raise refuse(f"must be an integer from 1 to {high:,}", key)
            values[key] = size
    return replace(spec, **values)


def ceiling_at_depth(over: Mapping[str, Sequence[str]], judgements: Mapping[str, Mapping[str, int]],
                     query_ids: Sequence[str], metric: Metric, depth: int) -> float:
    """The mean of `metric` when each query's top `depth` are put in label order and the rest
    follow in their own order."""
    values = []
    for query in query_ids:
        ranking = list(over.get(query, []))
        grades = judgements.get(query, {})
        values.append(metric.per_query(oracle_order(ranking[:depth], grades) + ranking[depth:], grades))
    return macro_mean(values)
