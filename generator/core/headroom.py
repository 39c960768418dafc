"""The ceiling on real candidates: how good could any reordering of a row's own candidates be?

For every row and query, the oracle sorts that row's candidates by their relevance grades (ties
keep the row's order) and scores the result: the best Recall@k and nDCG@k that any reranker of
those candidates could reach. It reads the labels it is scored on, so it is an upper bound, never
a model's result. The headroom of a row is its mean ceiling minus its own mean: how much a
reranker of, say, the hybrid 50 could gain at most. Recall at the candidate depth cannot move at
all (a reordering keeps the set), which is why the ceiling is reported per metric.

The oracle is the one the ceiling calculator uses (generator.sandbox.ceiling), applied to the
evaluated lists. Pure functions; the checker re-derives the block (generator.claims.rederive).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from generator.core.metrics import Metric, macro_mean

NOTE = ("an upper bound that uses the relevance labels: the best any reordering of the row's own candidates "
        "could score, never a model's result")


def oracle_order(ranking: Sequence[str], grades: Mapping[str, int]) -> list[str]:
    """The ranking's documents sorted by grade, highest first; equal grades keep their order."""
    return sorted(ranking, key=lambda doc_id: -max(grades.get(doc_id, 0), 0))


def ceiling_block(rankings: Mapping[str, Mapping[str, Sequence[str]]], judgements: Mapping[str, Mapping[str, int]],
                  query_ids: Sequence[str], metrics: Sequence[Metric]) -> dict[str, Any]:
    """Per row: each metric's mean ceiling, the row's own mean and the headroom between them;
    and per row and query, the ceiling of each metric."""
    rows: dict[str, Any] = {}
    per_query: dict[str, Any] = {}
    for row, by_query in sorted(rankings.items()):
        per_query[row] = {}
        for query in query_ids:
            grades = judgements.get(query, {})
            ranking = list(by_query.get(query, []))
            best = oracle_order(ranking, grades)
            per_query[row][query] = {metric.name: metric.per_query(best, grades) for metric in metrics}
        rows[row] = {}
        for metric in metrics:
            ceiling = macro_mean(per_query[row][q][metric.name] for q in query_ids)
            actual = macro_mean(metric.per_query(list(by_query.get(q, [])), judgements.get(q, {})) for q in query_ids)
            rows[row][metric.name] = {"ceiling": ceiling, "row": actual, "headroom": ceiling - actual}
    return {"note": NOTE, "rows": rows, "per_query": per_query}
