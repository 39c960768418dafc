"""A sweep of rerank cost by shape over models, candidate depths, max lengths and precisions,
reusing a timing across configurations only where it is exactly the same computation.

`predict` scores a query's pairs in batches it forms itself (sentence-transformers sorts them by
length first), each padded to its own longest pair, and generator.evaluate.cost times every batch.
A shallower depth's pairs are the first d of the deeper list; when predict would form for them
exactly the first batches it formed for the deeper list (found by asking predict, not assumed),
their times are those batches' times, so the shallower configuration is derived, not timed again
(`timings_from_depth` says from where). Otherwise, and that is the common case when predict sorts
by length, the depth is timed on its own. A depth at or beyond a query's candidate count is the
same list, so it is always shared. Each (model, max_length, precision, layer count) is built once.
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from generator.storage.errors import InputError
from generator.core.options import PRECISIONS, RERANK_BATCH_SIZE
from generator.evaluate.cost import CostMeasurement, Pricing, check_precision, open_pricing, parse_depths
from generator.evaluate.query_cost import QueryCost
from generator.evaluate.shape_scorer import Pair
from generator.evaluate.shapes import ResolvedShape, resolve_shape

SUMMARY = ("cost", "quality", "method", "layers_timed", "full_layers", "repeats", "dtype", "queries", "pairs",
           "p50_milliseconds", "p95_milliseconds", "pairs_per_second", "per_query_milliseconds",
           "per_query_batch_milliseconds", "resumed_queries", "computed_queries", "cache_keys")


def _listed(values: Any, name: str) -> list:
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
        raise InputError(f"give a non-empty list, got {values!r}", field=name)
    return list(values)


def _max_lengths(values: Any) -> list[int]:
    for value in _listed(values, "max_length"):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InputError(f"a max length is a positive integer, got {value!r}", field="max_length")
    return sorted(set(values))


def _derived(deeper: list[tuple[int, QueryCost]], pairs: Sequence[Pair], pricing: Pricing) -> QueryCost | None:
    """The query's cost at these pairs taken from a deeper timing of the same query, when predict's
    batches for them are exactly that timing's first batches; the deepest timing first."""
    for depth, cost in deeper:
        if len(pairs) == cost.pairs:   # the same list: the depth reaches past the query's candidates
            return cost.prefix(len(cost.batches), depth)
        plan = pricing.plan(pairs)
        if plan is not None and [list(batch) for batch in cost.batches[:len(plan)]] == plan:
            return cost.prefix(len(plan), depth)
    return None


def _sweep_depths(pricing: Pricing, pairs_by_query: Mapping[str, Sequence[Pair]], depths: list[int], *,
                  progress: bool) -> dict[int, tuple[CostMeasurement, int | None, int]]:
    """depth -> (its measurement, the deeper depth any of its queries was derived from, how many)."""
    timed: dict[str, list[tuple[int, QueryCost]]] = {query_id: [] for query_id in pairs_by_query}
    results = {}
    warm_pairs = list(next(iter(pairs_by_query.values())))[:depths[-1]]
    for depth in reversed(depths):   # deepest first: a shallower depth may be derived from it
        cut = {query_id: list(pairs)[:depth] for query_id, pairs in pairs_by_query.items()}
        costs: dict[str, QueryCost] = {}
        own = {}
        for query_id, pairs in cut.items():
            derived = _derived(timed[query_id], pairs, pricing)
            if derived is None:
                own[query_id] = pairs
            else:
                costs[query_id] = derived
        measured, resumed, computed = pricing.costs(own, progress=progress, label=f" depth {depth}",
                                                    warm_pairs=warm_pairs)
        for query_id, cost in measured.items():
            timed[query_id].append((depth, cost))
        costs.update(measured)
        ordered = {query_id: costs[query_id] for query_id in cut}
        sources = sorted({cost.from_depth for cost in ordered.values() if cost.from_depth is not None})
        reused = sum(cost.from_depth is not None for cost in ordered.values())
        results[depth] = (CostMeasurement(pricing, ordered, resumed, computed),
                          sources[0] if sources else None, reused)
    return results


def rerank_sweep(pairs_by_query: Mapping[str, Sequence[Pair]], models: Sequence[str | ResolvedShape],
                 depths: Sequence[int], max_lengths: Sequence[int], precisions: Sequence[str], *,
                 batch_size: int = RERANK_BATCH_SIZE, method: str = "extrapolated", cache_dir: Path | None = None,
                 device: str = "auto", progress: bool = True, log: Callable[[str], None] = print,
                 layers: Sequence[int] | None = None, repeats: int | None = None) -> list[dict[str, Any]]:
    """One configuration dict per model x depth x max_length x precision, ordered by model (as
    given), depth, max_length and precision (PRECISIONS' order).

    Each holds its settings, the cost label, p50/p95 per query (numpy's percentile, as
    results.builders.timing_summary), per-query and per-batch milliseconds, and `timings_from_depth`
    (None, or the deeper depth some of its queries' batch times were taken from exactly;
    `reused_queries` counts them). Depths beyond every query's candidates are cut to what a
    query has, as predict would score it.
    """
    if not pairs_by_query:
        raise InputError("no queries to measure", field="pairs")
    for query_id, pairs in pairs_by_query.items():
        if not pairs:
            raise InputError(f"query {query_id!r} has no candidates to score", field="pairs")
    model_list = _listed(models, "models")
    ordered_depths = parse_depths(_listed(depths, "depth"))
    lengths = _max_lengths(max_lengths)
    chosen = sorted({check_precision(value) for value in _listed(precisions, "precision")}, key=PRECISIONS.index)
    shapes = []
    for model in model_list:
        shape = model if isinstance(model, ResolvedShape) else resolve_shape(model)
        if shape.requested not in [known.requested for known in shapes]:
            shapes.append(shape)
    configurations = []
    for shape in shapes:
        for max_length in lengths:
            for precision in chosen:
                # One pricing per (model, max_length, precision): each layer count built once for every
                # depth, and let go before the next, so one group's models are in memory at a time.
                pricing = open_pricing(shape, method=method, precision=precision, layers=layers, repeats=repeats,
                                       max_length=max_length, batch_size=batch_size, cache_dir=cache_dir,
                                       device=device, log=log)
                results = _sweep_depths(pricing, pairs_by_query, ordered_depths, progress=progress)
                for depth in ordered_depths:
                    measurement, source, reused = results[depth]
                    figures = measurement.as_dict()
                    configurations.append({
                        "model": shape.requested, "depth": depth, "max_length": max_length, "precision": precision,
                        "batch_size": batch_size, **{key: figures[key] for key in SUMMARY},
                        "tokens": figures["tokenizer"]["tokens"], "timings_from_depth": source,
                        "reused_queries": reused,
                        "per_query_timings_from_depth": {query_id: cost.from_depth
                                                         for query_id, cost in measurement.costs.items()},
                        # The fit behind each extrapolated time, so `check` can redo the arithmetic.
                        **({"per_query_fit": figures["per_query_fit"]} if "per_query_fit" in figures else {})})
                del pricing, results, measurement
                # The shapes' modules sit in reference cycles, which only a full collection frees:
                # without it every group's models stay in memory (an 80-configuration sweep of the
                # five built-in shapes grew past 24 GB and was killed).
                gc.collect()
    order = {shape.requested: index for index, shape in enumerate(shapes)}
    return sorted(configurations, key=lambda row: (order[row["model"]], row["depth"], row["max_length"],
                                                   PRECISIONS.index(row["precision"])))
