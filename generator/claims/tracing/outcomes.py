"""Each assertion a claim declares (generator.claims.language.assertions), evaluated from the
results and the design: never from the author's arithmetic. What each kind holds when is written
there; an assertion on a row, a metric or a budget the files do not hold, or on a row that was not
measured, cannot be evaluated and licenses nothing."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

from generator.claims.language.assertions import Assertion
from generator.results import Results, comparison_name


@dataclass(frozen=True)
class Outcome:
    """An assertion evaluated: whether it holds (None: it cannot be evaluated) and what was read."""

    assertion: Assertion
    holds: bool | None
    read: str

    @property
    def licenses(self) -> bool:
        return self.holds is True


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
        else None


def _pair_stats(results: Results, a: str, b: str, metric: str, correction: str) -> tuple[dict | None, str]:
    """The paired statistics of two rows on a metric (either orientation), and where they are."""
    model = results.model
    if correction == "none":
        for row, base in ((a, b), (b, a)):
            stats = model.paired(row, base).get(metric)
            if stats is not None:
                return stats, f"comparisons.{comparison_name(row, base)}.metrics.{metric}"
    family = (model.all_pairs or {}).get("metrics", {}).get(metric, {})
    pairs = family.get("pairs", {}) if isinstance(family, dict) else {}
    for row, base in ((a, b), (b, a)):
        stats = pairs.get(comparison_name(row, base)) if isinstance(pairs, dict) else None
        if isinstance(stats, dict):
            return stats, f"all_pairs.metrics.{metric}.pairs.{comparison_name(row, base)}"
    return None, f"no comparison of {a} with {b} on {metric} in {results.name}"


def evaluate(assertion: Assertion, results: Results | None, problem: str | None,
             budget: Callable[[str], float | None]) -> Outcome:
    """Whether `assertion` holds on its results file; `budget(name)` is a design budget's value."""
    if results is None or problem:
        return Outcome(assertion, None, f"{assertion.file} cannot be read: {problem or 'missing'}")
    model = results.model
    for row in assertion.rows():
        if model.row(row) is None:
            return Outcome(assertion, None, f"{assertion.file} has no row {row} (rows: {', '.join(model.row_names)})")
        if not model.measured(row):
            return Outcome(assertion, None, f"row {row} was not measured")
    kind, metric = assertion.kind, assertion.metric
    if kind in ("higher", "lower"):
        if assertion.query is None:
            first, second = (_number(model.row(row).get(metric)) for row in assertion.rows())
            what = f"mean {metric}"
        else:
            first, second = (_number(model.per_query(row).get(assertion.query, {}).get(metric))
                             for row in assertion.rows())
            what = f"{metric} of query {assertion.query}"
        if first is None or second is None:
            return Outcome(assertion, None, f"{assertion.file} holds no {what} of both rows")
        holds = first > second if kind == "higher" else first < second
        return Outcome(assertion, holds, f"{assertion.row} {what} {first:.4g} against {assertion.other} {second:.4g}")
    if kind in ("distinguishable", "indistinguishable", "equivalent"):
        stats, where = _pair_stats(results, assertion.row, assertion.other or "", metric or "", assertion.correction)
        if stats is None:
            return Outcome(assertion, None, where)
        if kind == "equivalent":
            margin = budget(assertion.budget or "")
            low, high = _number(stats.get("ci95_low")), _number(stats.get("ci95_high"))
            if margin is None:
                return Outcome(assertion, None, f"no design budget {assertion.budget} to be the margin")
            if low is None or high is None:
                return Outcome(assertion, None, f"{where} holds no interval")
            holds = -margin < low and high < margin
            return Outcome(assertion, holds, f"{where}: interval [{low:+.4g}, {high:+.4g}] against margin "
                                             f"±{margin:g} ({assertion.budget})")
        field = "distinguishable_holm" if assertion.correction == "holm" else "distinguishable"
        told = stats.get(field)
        if not isinstance(told, bool):
            return Outcome(assertion, None, f"{where} says nothing of {field}")
        p_name = "p_holm" if assertion.correction == "holm" else "p_value"
        read = (f"{where}: {field} {str(told).lower()} (interval [{_number(stats.get('ci95_low')) or 0:+.4g}, "
                f"{_number(stats.get('ci95_high')) or 0:+.4g}], {p_name} {_number(stats.get(p_name)) or 0:.3g})")
        return Outcome(assertion, told if kind == "distinguishable" else not told, read)
    cost = model.cost(assertion.row)
    p95 = _number(cost.get("p95_milliseconds")) if cost else None
    limit = budget(assertion.budget or "")
    if p95 is None:
        return Outcome(assertion, None, f"no p95 time of {assertion.row} in {assertion.file}")
    if limit is None:
        return Outcome(assertion, None, f"no design budget {assertion.budget}")
    holds = p95 <= limit if kind == "within_budget" else p95 > limit
    return Outcome(assertion, holds, f"{assertion.row} p95 {p95:,.0f} ms against budget {limit:g} ({assertion.budget})")
