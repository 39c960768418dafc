"""A quantized reranker beside its fp32 twin: is int8 as good, and how much faster?

Speed-ups are measured; quality kept is usually assumed. For every int8 rerank row whose fp32
twin ran too (the same model over the same candidates, generator.core.results.model.ResultsModel.quantized_twins),
the rerank cost card of the int8 row shows, per metric the design's `regression` block lists
(generator.claims.record.noninferiority; nDCG@5 when there is none):

- the change int8 minus fp32 over the file's queries, with the pair's paired interval (the
  `all_pairs` block, BCa bootstrap, drawn by the evaluation and re-derived by `check`);
- the one-sided non-inferiority test of "int8 loses at least the margin" and the two one-sided
  tests (TOST) of equivalence within the margin, paired t-tests on the per-query differences
  (generator.core.power), each with its p-value and bound, against the design's margin (without a
  margin in the design, neither test is run: "no margin in the design");
- the p95 speed ratio, fp32 over int8.

The verdict words are the tests' own fixed outcomes, shown as what the test found, never as a
claim of the author's: a sentence saying "int8 is as good" still needs its `equivalent` assertion.
"""

from __future__ import annotations

import json
from typing import Any

from generator.storage.fileio import sha256_text
from generator.storage.memo import default_memo
from generator.render.doors import Door
from generator.render.labels import Labels
from generator.render.values import format_number
from generator.core.results import Results

DEFAULT_METRIC = "nDCG@5"


def _both_tests(differences: list[float], margin: float) -> dict[str, Any]:
    from generator.core.power import non_inferiority, tost_paired

    return {"non_inferiority": non_inferiority(differences, margin), "tost": tost_paired(differences, margin)}


def _tests(differences: list[float], margin: float) -> dict[str, Any]:
    """Both tests of one metric, remembered by their inputs (SciPy only when no memo answers)."""
    key = sha256_text(json.dumps([differences, margin]))
    return default_memo().remembered("quantized twin tests", key, lambda: _both_tests(differences, margin))


def _pair_interval(results: Results, row: str, twin: str, metric: str) -> tuple[float, float] | None:
    pairs = results.model.all_pairs.get("metrics", {}).get(metric, {}).get("pairs", {}) \
        if isinstance(results.model.all_pairs, dict) else {}
    entry = pairs.get(f"{row}_vs_{twin}") if isinstance(pairs, dict) else None
    if isinstance(entry, dict) and isinstance(entry.get("ci95_low"), (int, float)):
        return float(entry["ci95_low"]), float(entry["ci95_high"])
    entry = pairs.get(f"{twin}_vs_{row}") if isinstance(pairs, dict) else None
    if isinstance(entry, dict) and isinstance(entry.get("ci95_low"), (int, float)):
        return -float(entry["ci95_high"]), -float(entry["ci95_low"])
    return None


def twin_rows(results: Results, row: str, metrics: list[str], margin: float | None, door: Door,
              labels: Labels) -> list[tuple[Any, Any]]:
    """The rows an int8 reranker's cost card adds about its fp32 twin (none when it has no twin)."""
    twin = dict(results.model.quantized_twins()).get(row)
    if twin is None:
        return []
    shown: list[tuple[Any, Any]] = [(labels.twin_of, door.code(twin))]
    for metric in [name for name in metrics if name in results.model.metric_names] or [DEFAULT_METRIC]:
        differences = results.model.paired_differences(row, twin, metric)
        if len(differences) < 2:
            continue
        mean = sum(differences) / len(differences)
        interval = _pair_interval(results, row, twin, metric)
        change = door.data(format_number(mean, "+.3f"))
        if interval is not None:
            change = door.join([change, door.interval(door.data(format_number(interval[0], "+.3f")),
                                                      door.data(format_number(interval[1], "+.3f")))])
        shown.append((door.join([labels.twin_change, door.code(metric)]), change))
        if margin is None:
            shown.append((labels.twin_margin, labels.twin_no_margin))
            continue
        tests = _tests(differences, margin)
        lower, tost = tests["non_inferiority"], tests["tost"]
        shown.append((labels.twin_margin, door.data(format_number(margin, "g"))))
        if lower.get("p_value") is not None:
            shown.append((labels.twin_one_sided, door.data(
                f"p {format_number(lower['p_value'], '.3g')}, lower bound {format_number(lower['lower_bound'], '+.3f')}: "
                + ("loss beyond the margin excluded" if lower["non_inferior"] else "loss beyond the margin not excluded"))))
        if tost.get("p_value") is not None:
            shown.append((labels.twin_tost, door.data(
                f"p {format_number(tost['p_value'], '.3g')}, 90% interval {format_number(tost['ci_low'], '+.3f')} to "
                f"{format_number(tost['ci_high'], '+.3f')}: "
                + ("inside the margin" if tost["equivalent"] else "not inside the margin"))))
    fast, slow = results.model.cost(row), results.model.cost(twin)
    if fast and slow and isinstance(fast.get("p95_milliseconds"), (int, float)) and isinstance(
            slow.get("p95_milliseconds"), (int, float)) and fast["p95_milliseconds"] > 0:
        ratio = slow["p95_milliseconds"] / fast["p95_milliseconds"]
        shown.append((labels.twin_speed, door.data(f"{format_number(ratio, '.2f')} times the fp32 twin's speed")))
    return shown
