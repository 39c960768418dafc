"""The ceiling on real candidates: how good could any reordering of a row's own candidates be?

For every row and query, the oracle sorts that row's candidates by their relevance grades (ties
keep the row's order) and scores the result: the best Recall@k and nDCG@k that any reranker of
those candidates could reach. It reads the labels it is scored on, so it is an upper bound, never
a model's result. The headroom of a row is its mean ceiling minus its own mean: how much a
reranker of, say, the hybrid 50 could gain at most. Recall at the candidate depth cannot move at
all (a reordering keeps the set), which is why the ceiling is reported per metric.

The oracle is the one the ceiling calculator uses (generator.sandbox.ceiling), applied to the
evaluated lists. Pure functions; the block itself is built by generator.core.results.builders.ceiling_block.
"""

from __future__ import annotations

from typing import Mapping, Sequence

NOTE = ("an upper bound that uses the relevance labels: the best any reordering of the row's own candidates "
        "could score, never a model's result")


def oracle_order(ranking: Sequence[str], grades: Mapping[str, int]) -> list[str]:
    """The ranking's documents sorted by grade, highest first; equal grades keep their order."""
    return sorted(ranking, key=lambda doc_id: -max(grades.get(doc_id, 0), 0))
