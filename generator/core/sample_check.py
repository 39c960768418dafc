"""Did a change measured on the query sample hold on the full query set? Compares two results
files (results.json and results-300.json) row by row; the statistics themselves come from
generator.core.uncertainty when each file is written.

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

from generator.core.rows import row_roles
from generator.core.signflip import DEFAULT_TOLERANCE, check_tolerance, plain_float
from generator.results import parse_path, resolve


def _find_row(results: Mapping[str, Any], label: str, search: str) -> Mapping[str, Any]:
    if not isinstance(results, Mapping):
        raise ValueError(f"{label} results must be a results.json object, got "
                         f"{type(results).__name__}")
    found = resolve(results, parse_path(f"table[search={search}]"), measured_only=False)
    if not found.ok or not isinstance(found.value, Mapping):
        raise ValueError(f"{label} results: {found.reason or f'table[search={search}] is not an object'}")
    return found.value


def _is_number(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value)


def _side(results: Mapping[str, Any], label: str, row: str, base: str,
          metric: str) -> tuple[dict[str, Any] | None, str | None]:
    """One file's delta and interval for (row, metric), or None and why it is not measured."""
    entry = _find_row(results, label, row)
    where = f"{label} results: table[search={row}]"
    if entry.get("measured") is False:
        reason = entry.get("not_measured_reason") or "no reason given"
        return None, f"{where} is not measured: {reason}"
    paired = entry.get(f"paired_vs_{base}")
    if paired is None:
        return None, f"{where}.paired_vs_{base} is null"
    if not isinstance(paired, Mapping):
        raise ValueError(f"{where}.paired_vs_{base}: not an object")
    stats = paired.get(metric)
    if stats is None:
        if metric not in paired:
            raise ValueError(f"{where}.paired_vs_{base}.{metric}: missing "
                             f"(available: {', '.join(sorted(map(str, paired))) or 'none'})")
        return None, f"{where}.paired_vs_{base}.{metric} is null"
    if not isinstance(stats, Mapping):
        raise ValueError(f"{where}.paired_vs_{base}.{metric}: not an object")
    side: dict[str, Any] = {}
    for key in ("delta", "ci95_low", "ci95_high"):
        value = stats.get(key)
        if value is None:
            return None, f"{where}.paired_vs_{base}.{metric}.{key} is null or missing"
        if not _is_number(value):
            raise ValueError(f"{where}.paired_vs_{base}.{metric}.{key}: not a finite number: "
                             f"{value!r}")
        side[key] = plain_float(value)
    if side["ci95_low"] > side["ci95_high"]:
        raise ValueError(f"{where}.paired_vs_{base}.{metric}: ci95_low {side['ci95_low']} "
                         f"is above ci95_high {side['ci95_high']}")
    p_value = stats.get("p_value")
    side["p_value"] = plain_float(p_value) if _is_number(p_value) else None
    queries = stats.get("queries", results.get("queries"))
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

    Reads ``table[search=row].paired_vs_<base>.<metric>`` from the sample run and the full run
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
    queries = results.get("queries")
    if isinstance(queries, Integral) and not isinstance(queries, bool):
        return int(queries)
    return None


def sample_comparisons(sample: Mapping[str, Any], full: Mapping[str, Any]) -> dict[str, Any]:
    """How each row's change over the baseline on the release sample relates to the full query set.

    The spec's question is about the rerank row (None when no rerank row is configured); the
    other rows answer the same question for what was measured when the rerank row could not be.
    """
    roles = row_roles(full)
    metrics = _compared_metrics(full)
    by_row = {row: compare_sample_to_full(sample, full, row=row, base=roles.baseline, metrics=metrics)
              for row in roles.names if row != roles.baseline}
    return {"comparison_300": by_row.get(roles.rerank) if roles.rerank else None,
            "comparison_300_by_row": by_row}


def _compared_metrics(full: Mapping[str, Any]) -> tuple[str, ...]:
    """Recall@5 and nDCG@5, the spec's two, where the rows were scored on them; otherwise every
    metric the results were scored on."""
    table = full.get("table") if isinstance(full.get("table"), list) else []
    first = table[0] if table and isinstance(table[0], Mapping) else {}
    if all(metric in first for metric in ("recall@5", "nDCG@5")):
        return ("recall@5", "nDCG@5")
    manifest = full.get("manifest") if isinstance(full.get("manifest"), Mapping) else {}
    scored = manifest.get("metrics") if isinstance(manifest.get("metrics"), Mapping) else {}
    return tuple(scored) or ("recall@5", "nDCG@5")
