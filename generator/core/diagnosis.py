"""Why a query's ranking falls short: the candidates missed a relevant document (no reranker can
fix that) or ranked one too low (a reranker could). Pure functions.

`diagnose` gathers the facts once; two rules turn them into a verdict, because the two reports
ask two different questions:

- `recall_verdict` (the BEIR review): why did the query lose Recall@k? "candidate miss" when a
  relevant document is not among the candidates at all, "ordering problem" when one is a
  candidate but ranked below k, both when both happen, "none" otherwise.
- `ndcg_verdict` (the graded L03 sandbox): why is nDCG@k below 1? "candidate miss" when a
  relevant document is not among the candidates, else "ordering problem" when the top k is not
  ideal (a relevant document below k, or a lower grade above a higher one), else "none".
"""

from __future__ import annotations

from typing import Mapping, Sequence

from generator.core.dataclass import dataclass
from generator.core.metrics import graded_ndcg_at_k, graded_recall_at_k

IDEAL_TOLERANCE = 1e-12


@dataclass(frozen=True)
class Diagnosis:
    relevant: list[str]            # grade > 0, sorted
    top: list[str]                 # the first k of the ranking
    misses: list[str]              # relevant, not in the top k (sorted)
    not_in_candidates: list[str]   # relevant, not in the ranking at all (sorted)
    ranked_below: list[str]        # relevant, in the ranking below k (sorted)
    recall: float                  # Recall@k
    ndcg: float                    # graded nDCG@k, gain 2^grade - 1


def diagnose(ranking: Sequence[str], grades: Mapping[str, int], k: int) -> Diagnosis:
    """The facts about one query's ranking (its candidates) at cutoff k."""
    positive = {doc_id: grade for doc_id, grade in grades.items() if grade > 0}
    relevant = sorted(positive)
    top = list(ranking[:k])
    candidates = set(ranking)
    return Diagnosis(
        relevant=relevant, top=top,
        misses=[doc_id for doc_id in relevant if doc_id not in top],
        not_in_candidates=[doc_id for doc_id in relevant if doc_id not in candidates],
        ranked_below=sorted(doc_id for doc_id in ranking[k:] if doc_id in positive),
        recall=graded_recall_at_k(ranking, positive, k), ndcg=graded_ndcg_at_k(ranking, positive, k))


def recall_verdict(diagnosis: Diagnosis) -> str:
    if diagnosis.not_in_candidates and diagnosis.ranked_below:
        return "candidate miss and ordering problem"
    if diagnosis.not_in_candidates:
        return "candidate miss"
    if diagnosis.ranked_below:
        return "ordering problem"
    return "none"


def ndcg_verdict(diagnosis: Diagnosis) -> str:
    if diagnosis.not_in_candidates:
        return "candidate miss"
    if diagnosis.misses or diagnosis.ndcg < 1.0 - IDEAL_TOLERANCE:
        return "ordering problem"
    return "none"


def count_verdicts(verdicts: Mapping[str, str]) -> dict[str, int]:
    """How many queries got each verdict, sorted by verdict."""
    counts: dict[str, int] = {}
    for verdict in verdicts.values():
        counts[verdict] = counts.get(verdict, 0) + 1
    return dict(sorted(counts.items()))
