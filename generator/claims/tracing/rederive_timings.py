"""What follows from a results file's timings, re-derived: timings cannot be recomputed, but every
reranker's cost summary follows from its per-query times, each cost timed exactly the candidates
its row reranks, an extrapolated time is the straight line through its timed layer counts, the
frontier's ceilings follow from its over row's run, and a rerank row reorders only its over row's
candidates. A cost measured by shape never claims a quality.
"""

from __future__ import annotations

import math
import re
from typing import Any, Mapping

from generator.claims.tracing.mismatch import Mismatch, _expect, _field, _show
from generator.core.metrics import metrics_from_names, percentile, same_candidate_sets
from generator.core.options import SHAPE_COST
from generator.core.results.builders import frontier_block, reranked_top_ids, timing_summary
from generator.core.results.schema import FRONTIER, P95_RERANK, RERANK_COSTS, SAME_CANDIDATES

_EXTRAPOLATED = re.compile(re.escape(SHAPE_COST) + r", extrapolated from (\d+) of (\d+) layers")


def _per_evaluated_query(mapping: Any, query_ids: list[str]) -> bool:
    """A per-query mapping covers exactly the evaluated queries. Its key order carries nothing:
    results.json is written with sorted keys, while manifest.query_ids keeps the qrels order."""
    return isinstance(mapping, dict) and len(mapping) == len(query_ids) and set(mapping) == set(query_ids)


def _query_difference(mapping: Any, query_ids: list[str]) -> str:
    if not isinstance(mapping, dict):
        return " (it is not an object)"
    missing, extra = sorted(set(query_ids) - set(mapping)), sorted(set(mapping) - set(query_ids))
    parts = ([f"missing {', '.join(map(repr, missing[:3]))}{' ...' if len(missing) > 3 else ''}"] if missing else []) + \
        ([f"not evaluated {', '.join(map(repr, extra[:3]))}{' ...' if len(extra) > 3 else ''}"] if extra else [])
    return f" ({'; '.join(parts)}); re-run readout evaluate to rebuild it" if parts else ""


def _check_extrapolation(where: str, cost: dict, times: dict) -> None:
    """An extrapolated time is the straight line through its timed layer counts, read at the
    model's full depth: the label's "k of N", the least-squares fit of each query's timed layers
    and the time it gives all agree (the fit is linear in the times, so a query's summed batches
    fit exactly as the sum of its batches' fits)."""
    label = _EXTRAPOLATED.fullmatch(str(cost.get("cost")))
    if label is None:
        if "extrapolated" in str(cost.get("cost")):
            raise Mismatch(f"{where}.cost is {_show(cost.get('cost'))}: not a label the tool writes")
        return
    layers, full = cost.get("layers_timed"), cost.get("full_layers")
    fits = _field(cost, "per_query_fit", where)
    if not isinstance(layers, list) or len(layers) < 2 or full != int(label.group(2)) \
            or max(layers) != int(label.group(1)) or not isinstance(fits, dict) or set(fits) != set(times):
        raise Mismatch(f"{where}: its label, layers_timed, full_layers and per_query_fit do not describe one "
                       "extrapolation per query")
    for query, fit in fits.items():
        timed = fit.get("layer_milliseconds") if isinstance(fit, dict) else None
        if not isinstance(timed, dict) or sorted(timed) != sorted(str(count) for count in layers):
            raise Mismatch(f"{where}.per_query_fit.{query} does not hold a time for each layer count timed")
        points = [(float(count), float(timed[str(count)])) for count in layers]
        mean_x = math.fsum(x for x, _ in points) / len(points)
        mean_y = math.fsum(y for _, y in points) / len(points)
        slope = (math.fsum((x - mean_x) * (y - mean_y) for x, y in points)
                 / math.fsum((x - mean_x) ** 2 for x, _ in points))
        intercept = mean_y - slope * mean_x
        for key, derived in (("intercept_milliseconds", intercept), ("per_layer_milliseconds", slope),
                             ("extrapolated", intercept + slope * full)):
            recorded = times[query] if key == "extrapolated" else fit.get(key)
            if not isinstance(recorded, (int, float)) or not math.isclose(recorded, derived, rel_tol=1e-6,
                                                                           abs_tol=1e-6):
                shown = f"per_query_milliseconds.{query}" if key == "extrapolated" else f"per_query_fit.{query}.{key}"
                raise Mismatch(f"{where}.{shown} is {_show(recorded)}, but its timed layers give {derived:.6g}")


class TimingChecks:
    """The rerank rows, their costs and the frontier, for the derivation
    (generator.claims.tracing.rederive): it sets the results model, data, manifest and the rerank
    rows' entries these read."""

    def _check_frontier(self, query_ids: list[str], rankings: dict[str, dict[str, list[str]]],
                        judgements: Mapping[str, Mapping[str, int]]) -> None:
        """The frontier's ceilings and headroom follow from its over row's run and the judgements,
        each configuration's timing summary from its per-query times, which cover exactly the
        pairs of its depth; every figure in it is a cost by shape, never a quality."""
        if not self.model.has_frontier:
            return
        block = self.data[FRONTIER.name]
        where = FRONTIER.name
        over = _field(block, "over", where)
        if over not in rankings:
            raise Mismatch(f"frontier.over names {str(over)[:40]!r}, which has no run file")
        try:
            metric = metrics_from_names([str(_field(block, "metric", where))])[0]
        except ValueError as error:
            raise Mismatch(f"frontier.metric: {error}") from None
        configurations = _field(block, "configurations", where)
        if not isinstance(configurations, list):
            raise Mismatch("frontier.configurations is not a list")
        for index, entry in enumerate(configurations):
            at = f"frontier.configurations[{index}]"
            depth = _field(entry, "depth", at)
            if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
                raise Mismatch(f"{at}.depth is {_show(depth)}, not a positive integer")
            cost = str(_field(entry, "cost", at))
            if not cost.startswith(SHAPE_COST) or entry.get("quality") != "not measured":
                raise Mismatch(f"{at} says cost {cost[:60]!r} with quality {_show(entry.get('quality'))}: the "
                               "frontier is priced by shape and measures no quality")
            times, pairs = _field(entry, "per_query_milliseconds", at), _field(entry, "per_query_pairs", at)
            if not _per_evaluated_query(times, query_ids) or any(
                    isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0
                    for v in times.values()):
                raise Mismatch(f"{at}.per_query_milliseconds does not hold one positive time per query of "
                               f"manifest.query_ids{_query_difference(times, query_ids)}")
            _expect(f"{at}.per_query_pairs", pairs, {q: len(rankings[over][q][:depth]) for q in query_ids})
            _check_extrapolation(at, entry, times)
        derived = frontier_block(configurations, over, {q: rankings[over][q] for q in query_ids}, judgements,
                                 query_ids, metric)
        for key in ("over_mean", "queries", "note"):
            _expect(f"frontier.{key}", block.get(key), derived[key])
        for index, (written, made) in enumerate(zip(configurations, derived["configurations"])):
            for key in ("p50_milliseconds", "p95_milliseconds", "ceiling", "headroom", "model", "depth"):
                _expect(f"frontier.configurations[{index}].{key}", written.get(key), made.get(key))
        _expect(FRONTIER.name, block, derived)

    def _check_rerank_cost(self, query_ids: list[str], rankings: dict[str, dict[str, list[str]]]) -> None:
        """Every rerank row's cost (`rerank_costs.<row>`) follows from its per-query times, and
        timed exactly the candidates its row scores for every evaluated query; a measured row's
        cost is its own times."""
        if not self.model.has_rerank_costs:
            return
        costs = self.data[RERANK_COSTS.name]
        expected = list(self.rerank_entries)
        if not isinstance(costs, dict) or sorted(costs) != sorted(expected):
            raise Mismatch(f"rerank_costs names rows {sorted(costs) if isinstance(costs, dict) else costs!r}"[:120]
                           + f", but the rerank rows are {sorted(expected)}")
        for name, cost in sorted(costs.items()):
            self._check_cost_block(f"rerank_costs.{name}", cost, name, query_ids, rankings)

    def _check_cost_block(self, where: str, cost: Any, row: str | None, query_ids: list[str],
                          rankings: dict[str, dict[str, list[str]]]) -> None:
        if not isinstance(cost, dict):
            raise Mismatch(f"{where} is not an object")
        kind = cost.get("cost")
        if cost.get("measured") is False:
            if kind != "not measured" or cost.get("quality") != "not measured" or "p95_milliseconds" in cost:
                raise Mismatch(f"{where} is not measured but states a cost or a quality")
            return
        by_shape = isinstance(kind, str) and (kind == SHAPE_COST or kind.startswith(SHAPE_COST + ", extrapolated"))
        if not (kind == "measured" and cost.get("quality") == "measured") and not (
                by_shape and cost.get("quality") == "not measured"):
            raise Mismatch(f"{where} says cost {kind!r} with quality {cost.get('quality')!r}: a cost measured "
                           "by shape never measures quality")
        if (kind == "measured") != (row in rankings):
            raise Mismatch(f"{where} says cost {kind!r}, but the {row or 'rerank'} row was "
                           f"{'measured' if row in rankings else 'not measured'}")
        times = _field(cost, "per_query_milliseconds", where)
        pairs = _field(cost, "per_query_pairs", where)
        for name, mapping in (("per_query_milliseconds", times), ("per_query_pairs", pairs)):
            if not _per_evaluated_query(mapping, query_ids):
                raise Mismatch(f"{where}.{name} does not hold one entry per query of manifest.query_ids"
                               f"{_query_difference(mapping, query_ids)}")
        if any(isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0
               for v in times.values()):
            raise Mismatch(f"{where}.per_query_milliseconds holds a time that is not a positive number")
        entry = self.rerank_entries.get(row) if row is not None else None
        if entry is None:
            raise Mismatch(f"{where} states a cost, but no rerank row is recorded (manifest.rows)")
        over, depth = entry.get("over"), entry.get("depth")
        if over in rankings:
            _expect(f"{where}.per_query_pairs", pairs, {q: len(rankings[over][q][:depth]) for q in query_ids})
        if kind == "measured" and row == self.rerank_row:
            _expect(f"{where}.per_query_milliseconds", times, self.model.rerank_milliseconds)
        _check_extrapolation(where, cost, times)
        for name, value in timing_summary(times, pairs).items():
            _expect(f"{where}.{name}", cost.get(name), value)

    def _check_reorderings(self, rankings: dict[str, dict[str, list[str]]]) -> None:
        """A measured rerank row is a reordering of its over row's top `depth` candidates (all of
        them without a depth) with the rest in their order below, by a model the manifest
        identifies; a row missing any of these was not made by the tool."""
        models = self.manifest.get("models") if isinstance(self.manifest.get("models"), dict) else {}
        for position, (name, entry) in enumerate(self.rerank_entries.items()):
            if name not in rankings:
                continue
            over, depth = entry.get("over"), entry.get("depth")
            where = f"table[search={name}]"
            if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
                raise Mismatch(f"manifest.rows: rerank row {name} records depth {depth!r}, not a positive integer")
            if over not in rankings or not same_candidate_sets(rankings[over], rankings[name]):
                raise Mismatch(f"{where} does not reorder exactly {over}'s candidates")
            for query, ranked in rankings[name].items():
                head, tail = rankings[over][query][:depth], rankings[over][query][len(rankings[over][query][:depth]):]
                if sorted(ranked[:len(head)]) != sorted(head) or ranked[len(head):] != tail:
                    raise Mismatch(f"{where}, query {query}: does not reorder only {over}'s top {len(head)} "
                                   "and keep the rest in their order below")
            if position == 0 and not isinstance(self.model.rerank_milliseconds, dict):
                raise Mismatch(f"{where} is measured but no rerank time is recorded per query")
            identity = models.get("rerank" if position == 0 else f"rerank:{name}", {})
            if not isinstance(identity, dict) or not identity.get("weights_sha256"):
                raise Mismatch(f"{where} is measured but manifest.models names no weights for it")

    def _check_rerank(self, query_ids: list[str], rankings: dict[str, dict[str, list[str]]]) -> None:
        self._check_reorderings(rankings)
        if self.model.has_rerank_summary:
            times = self.model.rerank_milliseconds
            recorded = self.model.p95_rerank_milliseconds
            if times is None:
                _expect(P95_RERANK.name, recorded, None)
            else:
                if not isinstance(times, dict) or sorted(times) != sorted(query_ids):
                    raise Mismatch("rerank_milliseconds does not hold one time per evaluated query")
                _expect(P95_RERANK.name, recorded, percentile([times[q] for q in query_ids], 95))
        if SAME_CANDIDATES.name in self.data:
            derived = (same_candidate_sets(rankings[self.rerank_over], rankings[self.rerank_row])
                       if self.rerank_over in rankings and self.rerank_row in rankings else None)
            _expect(SAME_CANDIDATES.name, self.data[SAME_CANDIDATES.name], derived)
        top = self.model.reranked_top
        if top:
            if self.rerank_row not in rankings:
                raise Mismatch("reranked_top_5 lists documents for a rerank row that has no run file")
            listed = reranked_top_ids(rankings[self.rerank_row], sorted(top))
            for query, entries in sorted(top.items()):
                _expect(f"reranked_top_5.{query}", [entry.get("corpus_id") for entry in entries], listed[query])
