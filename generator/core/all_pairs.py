"""Every pair of measured rows compared, with Holm's correction across the family (ranx's
`compare`, with the correction stated).

`comparisons` holds the pairs a review asks about (each row against the baseline, a reranker
against the row it reorders). A reader also wants the pairs nobody configured, such as a fusion
row against the team's own run; testing them all makes many tests at once, so each metric's
p-values are adjusted together:

- The family of a metric is every pair (later row, earlier row) of the measured rows, in row
  order: n rows give n(n-1)/2 pairs. A pair is keyed `<row>_vs_<baseline>` and compared exactly
  as `comparisons` compares it (the same seed for the same key and metric, so a pair present in
  both holds the same figures).
- Holm (1979), step-down: sort the family's m p-values ascending, p(1) <= ... <= p(m); the
  adjusted p(i) is max over j <= i of min(1, (m - j + 1) p(j)). It controls the family-wise
  error rate at 0.05 with no assumption about how the tests depend on each other.
- `distinguishable_holm`: the interval excludes zero and the adjusted p-value is below 0.05.
  The intervals are not widened: they are each pair's own 95% interval, as the block says.

Pure: the caller passes how one pair is compared (`compare_pair`), so the evaluation stage draws
it with NumPy and SciPy while `check` re-uses the comparisons it has already re-derived.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from generator.core.signflip import SIGNIFICANCE, plain_float

CORRECTION = ("Holm step-down over every pair of measured rows, per metric (family-wise error rate 0.05); "
              "intervals are each pair's own 95% interval, not widened")


def holm_adjusted(p_values: Sequence[float]) -> list[float]:
    """Holm's adjusted p-values, in the order given (ties keep their order)."""
    order = sorted(range(len(p_values)), key=lambda index: (p_values[index], index))
    adjusted = [0.0] * len(p_values)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def reusing(comparisons: Mapping[str, Any],
            draw: Callable[[str, str, str, str], Mapping[str, Any]]) -> Callable[[str, str, str, str], Mapping[str, Any]]:
    """`compare_pair` that takes a pair's figures from a comparisons block where it holds them
    (the same key and metric give the same seed, so the same figures) and draws the others."""
    def compare_pair(row: str, baseline: str, key: str, metric: str) -> Mapping[str, Any]:
        known = comparisons.get(key)
        if isinstance(known, dict) and known.get("measured") and metric in known.get("metrics", {}):
            return known["metrics"][metric]
        return draw(row, baseline, key, metric)

    return compare_pair


def family_pairs(rows: Sequence[str]) -> list[tuple[str, str]]:
    """(later row, earlier row) for every pair, in row order."""
    return [(rows[later], rows[earlier]) for earlier in range(len(rows)) for later in range(earlier + 1, len(rows))]


def all_pairs_block(rows: Sequence[str], measured: Mapping[str, bool], metrics: Sequence[str],
                    compare_pair: Callable[[str, str, str, str], Mapping[str, Any]]) -> dict[str, Any]:
    """`{"correction", "rows", "left_out", "metrics": {metric: {"family", "pairs": {key: ...}}}}`.

    `rows` in table order; `measured[row]` says whether it has per-query values (a row left out
    is named; why is its table entry's `not_measured_reason`); `compare_pair(row, baseline, key,
    metric)` gives compare()'s figures for one pair."""
    kept = [row for row in rows if measured.get(row)]
    pairs = family_pairs(kept)
    block: dict[str, Any] = {"correction": CORRECTION, "rows": kept,
                             "left_out": [row for row in rows if not measured.get(row)],
                             "metrics": {}}
    for metric in metrics:
        entries = {}
        for row, baseline in pairs:
            key = f"{row}_vs_{baseline}"
            entries[key] = {"row": row, "baseline": baseline, **compare_pair(row, baseline, key, metric)}
        adjusted = holm_adjusted([entry["p_value"] for entry in entries.values()])
        for entry, p_holm in zip(entries.values(), adjusted):
            entry["p_holm"] = plain_float(p_holm)
            entry["distinguishable_holm"] = bool(entry["excludes_zero"]) and p_holm < SIGNIFICANCE
        block["metrics"][metric] = {"family": len(entries), "pairs": {key: entries[key] for key in sorted(entries)}}
    return block
