"""From rankings to the figures of a results file: per-query metrics, row means, changes over the
baseline, the paired comparisons (generator.core.comparisons), the ceiling on each row's
candidates (generator.core.headroom), the candidate diagnosis and the rerank summary.

Pure: it takes rankings and judgements (wherever they came from: the four retrieval rows, a
run file, a test fixture) and returns JSON-ready data. The checker re-derives the same figures
from the written run files (generator.claims.rederive), so both must use these definitions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from generator.core.all_pairs import all_pairs_block, reusing
from generator.core.comparisons import (compare, comparison_key, comparisons_block, default_pairs, per_query_scores,
                                        seed_for)
from generator.core.diagnosis import count_verdicts, diagnose, recall_verdict
from generator.core.headroom import ceiling_block
from generator.core.metrics import (ROW_METRICS, Metric, macro_mean, p95, per_query_metrics,
                                        same_candidate_sets, signed_delta)

Ranking = list[tuple[str, float]]
DIAGNOSIS_CUTOFF = 5


@dataclass(frozen=True)
class RowRun:
    """One row to score: its rankings per query, or None with the reason it was not measured."""

    name: str
    label: str | None
    rankings: Mapping[str, Ranking] | None
    not_measured_reason: str | None = None


def _row_entry(row: RowRun, per_query: Mapping[str, Mapping[str, float]] | None, baseline_name: str,
               baseline: Mapping[str, Mapping[str, float]], query_ids: Sequence[str],
               metrics: Sequence[Metric], comparisons: Mapping[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = {"search": row.name, "model": row.label}
    if per_query is None:
        entry.update({"measured": False, "not_measured_reason": row.not_measured_reason})
        for metric in metrics:
            entry[metric.name] = None
        for metric in metrics:
            entry[f"delta_{metric.name}_vs_{baseline_name}"] = None
        entry[f"paired_vs_{baseline_name}"] = None
        return entry
    entry["measured"] = True
    for metric in metrics:
        entry[metric.name] = macro_mean(per_query[q][metric.name] for q in query_ids)
    for metric in metrics:
        baseline_mean = macro_mean(baseline[q][metric.name] for q in query_ids)
        entry[f"delta_{metric.name}_vs_{baseline_name}"] = signed_delta(entry[metric.name], baseline_mean)
    # The row's comparison with the baseline, kept inside the row where earlier ledgers read it.
    against_baseline = comparisons.get(comparison_key(row.name, baseline_name))
    entry[f"paired_vs_{baseline_name}"] = (dict(against_baseline["metrics"]) if against_baseline
                                      and against_baseline.get("measured") else {})
    return entry


def score_rows(rows: Sequence[RowRun], judgements: Mapping[str, Mapping[str, int]], query_ids: Sequence[str], *,
               bootstrap_resamples: int, seed: int, metrics: Sequence[Metric] = ROW_METRICS,
               pairs: Sequence[tuple[str, str]] | None = None, baseline: str = "dense",
               extra_pairs: Sequence[tuple[str, str]] = (("hybrid+rerank", "hybrid"),)) -> dict[str, Any]:
    """`table`, `per_query`, `comparisons`, `ceiling`, `diagnosis` and `diagnosis_summary`.

    Every row's change is over `baseline` (which must be measured). `pairs` are the (row,
    baseline) comparisons to make; by default every row against `baseline`, then `extra_pairs`
    (the rerank row against the row it reorders).
    """
    per_query: dict[str, dict[str, dict[str, float]]] = {}
    diagnosis: dict[str, dict[str, dict[str, Any]]] = {}
    for row in rows:
        if row.rankings is None:
            continue
        per_query[row.name] = {}
        diagnosis[row.name] = {}
        for q in query_ids:
            ranked = [doc_id for doc_id, _ in row.rankings.get(q, [])]
            grades = judgements.get(q, {})
            per_query[row.name][q] = per_query_metrics(ranked, grades, metrics)
            found = diagnose(ranked, grades, DIAGNOSIS_CUTOFF)
            diagnosis[row.name][q] = {"missed_by_candidates": found.not_in_candidates,
                                      f"ranked_below_{DIAGNOSIS_CUTOFF}": found.ranked_below,
                                      "diagnosis": recall_verdict(found)}
    if baseline not in per_query:
        raise ValueError(f"the baseline row {baseline!r} was not measured")
    pairs = list(pairs) if pairs is not None else default_pairs([row.name for row in rows], baseline, extra_pairs)
    comparisons = comparisons_block(
        per_query, query_ids, pairs, [metric.name for metric in metrics], seed=seed, resamples=bootstrap_resamples,
        not_measured={row.name: row.not_measured_reason or "not measured" for row in rows if row.rankings is None})
    table = [_row_entry(row, per_query.get(row.name), baseline, per_query[baseline], query_ids, metrics, comparisons)
             for row in rows]
    measured = {row.name: {q: [d for d, _ in row.rankings.get(q, [])] for q in query_ids}
                for row in rows if row.rankings is not None}
    return {"table": table, "per_query": per_query, "comparisons": comparisons,
            "all_pairs": _all_pairs(rows, per_query, query_ids, metrics, comparisons, seed, bootstrap_resamples),
            "ceiling": ceiling_block(measured, judgements, query_ids, metrics), "diagnosis": diagnosis,
            "diagnosis_summary": {row: count_verdicts({q: entry["diagnosis"] for q, entry in by_query.items()})
                                  for row, by_query in diagnosis.items()}}


def _all_pairs(rows: Sequence[RowRun], per_query: Mapping[str, Any], query_ids: Sequence[str],
               metrics: Sequence[Metric], comparisons: Mapping[str, Any], seed: int, resamples: int) -> dict[str, Any]:
    """Every pair of measured rows (generator.core.all_pairs); a pair `comparisons` already
    drew is taken from it (the same seed gives the same figures), the others drawn here."""
    def draw(row: str, baseline: str, key: str, metric: str) -> Mapping[str, Any]:
        return compare(per_query_scores(per_query, row, query_ids, metric),
                       per_query_scores(per_query, baseline, query_ids, metric),
                       seed=seed_for(seed, key, metric), resamples=resamples)

    return all_pairs_block([row.name for row in rows], {row.name: row.name in per_query for row in rows},
                           [metric.name for metric in metrics], reusing(comparisons, draw))


def rerank_summary(candidates: Mapping[str, Ranking] | None, reranked: Mapping[str, Ranking] | None,
                   milliseconds: Mapping[str, float] | None, query_ids: Sequence[str]) -> dict[str, Any]:
    """What the spec asks of the rerank row; nulls when it was not measured."""
    if reranked is None or milliseconds is None:
        return {"same_50_rows_after_rerank": None, "p95_rerank_milliseconds": None, "rerank_milliseconds": None,
                "reranked_top_5": {}}
    return {
        "same_50_rows_after_rerank": same_candidate_sets({q: [d for d, _ in candidates[q]] for q in query_ids},
                                                         {q: [d for d, _ in reranked[q]] for q in query_ids}),
        "p95_rerank_milliseconds": p95([milliseconds[q] for q in query_ids]),
        "rerank_milliseconds": {q: milliseconds[q] for q in query_ids},
        "reranked_top_5": {q: [{"corpus_id": d, "score": float(s)} for d, s in reranked[q][:5]] for q in query_ids},
    }
