"""Did a change measured on the query sample hold on the full query set? Compares two results
files (results.json and the every-query file) row by row; the statistics themselves come from
generator.core.uncertainty when each file is written. The builder of `comparison_with_sample`
and `comparison_with_sample_by_row` (generator.core.results.builders).

For one row against its baseline, each metric's ``delta``, ``ci95_low``, ``ci95_high`` and
``p_value`` are read from both files. An interval "excludes zero" when ``low > 0`` or
``high < 0``; a delta is positive when it is above the tolerance (default 1e-12). Per metric the
comparison reports both sides, the direction of each delta, whether the full interval lies inside
the sample interval (``sample_low <= full_low`` and ``full_high <= sample_high``), whether the
intervals overlap and where, whether the full delta falls inside the sample interval, and a
verdict:

- ``"not-measured"``: the row is not measured (or a value is null) in either file;
- ``"sample-not-positive"``: the sample delta was not positive, so there is nothing to keep;
- ``"confirmed"``: positive on both, and the full interval excludes zero;
- ``"positive-but-uncertain"``: positive on both, the full interval includes zero;
- ``"not-confirmed"``: positive on the sample, zero or negative on the full set.

The top level says whether every listed metric's change stays positive
(``both_changes_stay_positive``: True, False, or None when not measured, with the reason).
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any, Mapping, Sequence

from generator.core.signflip import DEFAULT_TOLERANCE, check_tolerance, plain_float
from generator.core.results.model import ResultsModel


def _model(results: Mapping[str, Any], label: str) -> ResultsModel:
    if not isinstance(results, Mapping):
        raise ValueError(f"{label} results must be a results.json object, got "
                         f"{type(results).__name__}")
    return ResultsModel(results)


def _find_row(model: ResultsModel, label: str, search: str) -> Mapping[str, Any]:
    if not model.has_table:
        raise ValueError(f"{label} results: no table of rows")
    row = model.row(search)
    if row is None:
        raise ValueError(f"{label} results: no row {search!r}; the rows are "
                         f"{', '.join(model.row_names) or '(none)'}")
    return row


def _is_number(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value)


def _side(results: Mapping[str, Any], label: str, row: str, base: str,
          metric: str) -> tuple[dict[str, Any] | None, str | None]:
    """One file's delta and interval for (row, metric), or None and why it is not measured."""
    model = _model(results, label)
    entry = _find_row(model, label, row)
    where = f"{label} results: table[search={row}]"
    if entry.get("measured") is False:
        reason = entry.get("not_measured_reason") or "no reason given"
        return None, f"{where} is not measured: {reason}"
    paired = model.paired(row, base)
    at = f"{label} results: comparisons.{row}_vs_{base}.metrics"
    stats = paired.get(metric)
    if stats is None:
        raise ValueError(f"{at}.{metric}: missing (available: {', '.join(sorted(paired)) or 'none'})")
    side: dict[str, Any] = {}
    for key in ("delta", "ci95_low", "ci95_high"):
        value = stats.get(key)
        if value is None:
            return None, f"{at}.{metric}.{key} is null or missing"
        if not _is_number(value):
            raise ValueError(f"{at}.{metric}.{key}: not a finite number: "
                             f"{value!r}")
        side[key] = plain_float(value)
    if side["ci95_low"] > side["ci95_high"]:
        raise ValueError(f"{at}.{metric}: ci95_low {side['ci95_low']} "
                         f"is above ci95_high {side['ci95_high']}")
    p_value = stats.get("p_value")
    side["p_value"] = plain_float(p_value) if _is_number(p_value) else None
    queries = stats.get("queries", model.queries)
    side["queries"] = int(queries) if isinstance(queries, Integral) and not isinstance(
        queries, bool) else None
    return side, None


def _direction(delta: float, tolerance: float) -> str:
    if delta > tolerance:
        return "positive"
    if delta < -tolerance:
        return "negative"
    return "zero"


def compare_sample_to_full(
    sample_results: Mapping[str, Any],
    full_results: Mapping[str, Any],
    *,
    row: str = "hybrid+rerank",
    base: str = "dense",
    metrics: Sequence[str] = ("recall@5", "nDCG@5"),
    tolerance: float = DEFAULT_TOLERANCE,
) -> dict[str, Any]:
    """Did the row's change over the baseline on the query sample hold on the full query set?

    Reads ``comparisons.<row>_vs_<base>.metrics.<metric>`` from the sample run and the full run
    and compares them metric by metric (the verdicts are in the module docstring). ``metrics``
    are names as in results.json; a delta within ``tolerance`` of 0 counts as zero. Returns plain
    JSON data; raises ValueError for malformed results (no table, no such row, a missing metric
    key, a non-numeric value) or bad arguments.
    """
    _check_arguments(row, base, metrics)
    tolerance = check_tolerance(tolerance)
    per_metric: dict[str, Any] = {}
    reasons: list[str] = []
    for metric in metrics:
        sample, sample_reason = _side(sample_results, "sample", row, base, metric)
        full, full_reason = _side(full_results, "full", row, base, metric)
        if sample is None or full is None:
            why = [reason for reason in (sample_reason, full_reason) if reason]
            reasons.extend(reason for reason in why if reason not in reasons)
            per_metric[metric] = {"verdict": "not-measured", "reason": "; ".join(why),
                                  "sample": sample, "full": full}
        else:
            per_metric[metric] = _compare_sides(sample, full, tolerance)

    measured = not reasons
    both_positive = (all(per_metric[name]["stays_positive"] for name in metrics)
                     if measured else None)
    if not measured:
        verdict = "not-measured"
    elif both_positive:
        verdict = "stays-positive"
    else:
        verdict = "does-not-stay-positive"
    return {
        "row": row,
        "base": base,
        "metrics": list(metrics),
        "sample_queries": _query_count(sample_results),
        "full_queries": _query_count(full_results),
        "measured": measured,
        "not_measured_reason": "; ".join(reasons) if reasons else None,
        "both_changes_stay_positive": both_positive,
        "verdict": verdict,
        "per_metric": per_metric,
    }


def _check_arguments(row: Any, base: Any, metrics: Any) -> None:
    if not isinstance(row, str) or not row:
        raise ValueError(f"row must be a non-empty string, got {row!r}")
    if not isinstance(base, str) or not base:
        raise ValueError(f"base must be a non-empty string, got {base!r}")
    if isinstance(metrics, str) or not isinstance(metrics, Sequence) or not metrics:
        raise ValueError(f"metrics must be a non-empty sequence of metric names, got {metrics!r}")
    if not all(isinstance(name, str) and name for name in metrics):
        raise ValueError(f"metrics must be non-empty strings, got {list(metrics)!r}")
    if len(set(metrics)) != len(metrics):
        raise ValueError(f"metrics must not repeat a name, got {list(metrics)!r}")


def _compare_sides(sample: dict[str, Any], full: dict[str, Any], tolerance: float) -> dict[str, Any]:
    """One metric measured on both sides: directions, how the intervals relate, the verdict."""
    for side in (sample, full):
        side["direction"] = _direction(side["delta"], tolerance)
        side["excludes_zero"] = side["ci95_low"] > 0.0 or side["ci95_high"] < 0.0
    overlap_low = max(sample["ci95_low"], full["ci95_low"])
    overlap_high = min(sample["ci95_high"], full["ci95_high"])
    overlaps = overlap_low <= overlap_high
    if sample["direction"] != "positive":
        verdict = "sample-not-positive"
    elif full["direction"] != "positive":
        verdict = "not-confirmed"
    elif full["ci95_low"] > 0.0:
        verdict = "confirmed"
    else:
        verdict = "positive-but-uncertain"
    return {
        "verdict": verdict,
        "reason": None,
        "sample": sample,
        "full": full,
        "stays_positive": sample["direction"] == "positive" and full["direction"] == "positive",
        "sign_kept": sample["direction"] == full["direction"],
        "full_interval_inside_sample_interval": (
            sample["ci95_low"] <= full["ci95_low"] and full["ci95_high"] <= sample["ci95_high"]),
        "intervals_overlap": overlaps,
        "overlap": [overlap_low, overlap_high] if overlaps else None,
        "full_delta_inside_sample_interval": (
            sample["ci95_low"] <= full["delta"] <= sample["ci95_high"]),
    }


def _query_count(results: Mapping[str, Any]) -> int | None:
    return ResultsModel(results).queries


def sample_comparisons(sample: Mapping[str, Any], full: Mapping[str, Any]) -> dict[str, Any]:
    """How each row's change over the baseline on the release sample relates to the full query set:
    `decided` for the reranker under decision (None when no rerank row is configured), `by_row` for
    every row but the baseline (what was measured when the rerank row could not be)."""
    model = ResultsModel(full)
    roles = model.roles
    metrics = _compared_metrics(model)
    by_row = {row: compare_sample_to_full(sample, full, row=row, base=roles.baseline, metrics=metrics)
              for row in roles.names if row != roles.baseline}
    return {"decided": by_row.get(roles.rerank) if roles.rerank else None, "by_row": by_row}


def _compared_metrics(full: ResultsModel) -> tuple[str, ...]:
    """Recall@5 and nDCG@5, the spec's two, where the rows were scored on them; otherwise every
    metric the results were scored on."""
    first = full.rows[0] if full.rows else {}
    if all(metric in first for metric in ("recall@5", "nDCG@5")):
        return ("recall@5", "nDCG@5")
    return tuple(full.metric_names) or ("recall@5", "nDCG@5")
