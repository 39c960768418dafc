"""Ranking metrics as pure functions: a per-query function and, where useful, a macro mean.

Conventions (they differ between toolkits, so they are settled here):
- Recall@k = |relevant in top k| / |relevant|; an empty relevant set scores 0.0.
- nDCG@k, binary gain (the seed definition): DCG = sum over ranks r <= k of 1/log2(r + 1) for each
  relevant document; the ideal DCG places min(k, |relevant|) relevant documents at the top,
  whether or not the run retrieved them; 0.0 when the ideal is 0. This equals trec_eval's
  ndcg_cut.k for binary judgements.
- Graded nDCG@k (the sandbox and the ceiling): gain 2^rel - 1, discount log2(rank + 1), ideal from
  the grades sorted in decreasing order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence


def _check_cutoff(k: int) -> None:
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise ValueError(f"cutoff k must be a positive integer, got {k!r}")


def _discount(rank: int) -> float:
    return 1.0 / math.log2(rank + 1)


def recall_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """|relevant in top k| / |relevant|; 0.0 for an empty relevant set."""
    _check_cutoff(k)
    relevant_set = set(relevant)
    if not relevant_set:
        return 0.0
    return len(relevant_set.intersection(ranked[:k])) / len(relevant_set)


def ndcg_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """Binary nDCG@k: DCG over relevant hits in the top k, over the ideal of min(k, |relevant|) hits."""
    _check_cutoff(k)
    relevant_set = set(relevant)
    ideal = sum(_discount(rank) for rank in range(1, min(k, len(relevant_set)) + 1))
    if ideal == 0.0:
        return 0.0
    dcg = sum(_discount(rank) for rank, doc_id in enumerate(ranked[:k], start=1) if doc_id in relevant_set)
    return dcg / ideal


def graded_ndcg_at_k(ranked: Sequence[str], grades: Mapping[str, int], k: int) -> float:
    """Graded nDCG@k: DCG = sum (2^rel - 1)/log2(rank + 1); ideal from grades sorted high to low."""
    _check_cutoff(k)
    for doc_id, grade in grades.items():
        if not isinstance(grade, int) or isinstance(grade, bool) or grade < 0:
            raise ValueError(f"grade of {doc_id!r} must be a non-negative integer, got {grade!r}")
    dcg = sum((2 ** grades.get(doc_id, 0) - 1) * _discount(rank)
              for rank, doc_id in enumerate(ranked[:k], start=1))
    ideal_grades = sorted(grades.values(), reverse=True)[:k]
    ideal = sum((2 ** grade - 1) * _discount(rank) for rank, grade in enumerate(ideal_grades, start=1))
    return 0.0 if ideal == 0.0 else dcg / ideal


def graded_recall_at_k(ranked: Sequence[str], grades: Mapping[str, int], k: int) -> float:
    """Recall@k where the relevant set is every document with grade > 0."""
    return recall_at_k(ranked, {doc_id for doc_id, grade in grades.items() if grade > 0}, k)


def macro_mean(values: Iterable[float]) -> float:
    """The plain mean over queries; 0.0 for no queries."""
    collected = list(values)
    return float(sum(collected) / len(collected)) if collected else 0.0


def signed_delta(row_value: float, dense_value: float) -> float:
    """Row minus dense, sign kept."""
    return float(row_value - dense_value)


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile with numpy's default ("linear") method, reproduced step by step in pure
    Python so that a checker without numpy derives the very same float: virtual index
    (n - 1) * q / 100, then numpy's two-sided interpolation between its neighbours."""
    if len(values) == 0:
        raise ValueError("the percentile of an empty list is undefined")
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"q must be in [0, 100], got {q!r}")
    ordered = sorted(float(value) for value in values)
    virtual = (len(ordered) - 1) * (q / 100)
    if virtual >= len(ordered) - 1:
        return ordered[-1]
    below = math.floor(virtual)
    low, high = ordered[below], ordered[below + 1]
    gamma = virtual - below
    difference = high - low
    return high - difference * (1 - gamma) if gamma >= 0.5 else low + difference * gamma


def p95(values: Sequence[float]) -> float:
    """The 95th percentile with numpy's default linear interpolation."""
    if len(values) == 0:
        raise ValueError("p95 of an empty list is undefined")
    return percentile(values, 95)


def timing_summary(per_query_milliseconds: Mapping[str, float], per_query_pairs: Mapping[str, int]) -> dict[str, Any]:
    """The figures a reranker's cost is read by, from its per-query wall times and pair counts:
    p50 and p95 milliseconds per query, the pairs scored and pairs per second of scoring time."""
    times = [float(per_query_milliseconds[q]) for q in per_query_milliseconds]
    pairs = sum(int(per_query_pairs[q]) for q in per_query_milliseconds)
    seconds = math.fsum(times) / 1000.0
    return {"queries": len(times), "pairs": pairs, "p50_milliseconds": percentile(times, 50),
            "p95_milliseconds": p95(times), "pairs_per_second": pairs / seconds if seconds > 0 else 0.0}


def same_candidate_sets(before: Mapping[str, Sequence[str]], after: Mapping[str, Sequence[str]]) -> bool:
    """True iff, for every query, the reordered list holds exactly the same documents."""
    if set(before) != set(after):
        return False
    return all(len(before[q]) == len(after[q]) and set(before[q]) == set(after[q]) for q in before)


@dataclass(frozen=True)
class Metric:
    """One reported measure at one cutoff, named as results.json keys it (`nDCG@5`).

    `measure` picks the definition above (`recall` or `ndcg`); `gain` says how a judgement counts:
    `binary` (grade > 0 is relevant, every hit gains 1: the seed nDCG, equal to trec_eval's
    ndcg_cut on binary judgements) or `exponential` (gain 2^grade - 1, the graded sandbox).
    Recall is always binary: grade > 0 is relevant.
    """

    name: str
    measure: str
    cutoff: int
    gain: str = "binary"

    def __post_init__(self) -> None:
        if self.measure not in MEASURES:
            raise ValueError(f"unknown measure {self.measure!r}; choose one of {', '.join(MEASURES)}")
        if self.gain not in GAINS:
            raise ValueError(f"unknown gain {self.gain!r}; choose one of {', '.join(GAINS)}")
        _check_cutoff(self.cutoff)

    def per_query(self, ranked: Sequence[str], grades: Mapping[str, int]) -> float:
        """This metric for one query's ranking against its judgements (document -> grade)."""
        if self.measure == "ndcg" and self.gain == "exponential":
            return graded_ndcg_at_k(ranked, {d: g for d, g in grades.items() if g > 0}, self.cutoff)
        relevant = {doc_id for doc_id, grade in grades.items() if grade > 0}
        return MEASURES[self.measure](ranked, relevant, self.cutoff)

    def as_manifest(self) -> dict[str, object]:
        return {"measure": self.measure, "cutoff": self.cutoff, "gain": self.gain}

    @classmethod
    def from_manifest(cls, name: str, entry: object) -> "Metric":
        """The metric a results manifest declares; ValueError names what is wrong."""
        if not isinstance(entry, Mapping) or set(entry) - {"measure", "cutoff", "gain"}:
            raise ValueError(f"metric {name!r}: expected {{measure, cutoff, gain}}, got {entry!r}")
        return cls(name, str(entry.get("measure")), entry.get("cutoff"), str(entry.get("gain", "binary")))  # type: ignore[arg-type]


MEASURES = {"recall": recall_at_k, "ndcg": ndcg_at_k}
GAINS = ("binary", "exponential")

# What every BEIR row reports, and the metrics whose change over dense is reported.
ROW_METRICS = (Metric("recall@5", "recall", 5), Metric("recall@50", "recall", 50), Metric("nDCG@5", "ndcg", 5))
DELTA_METRICS = ("recall@5", "recall@50", "nDCG@5")


def per_query_metrics(ranked: Sequence[str], grades: Mapping[str, int],
                      metrics: Sequence[Metric] = ROW_METRICS) -> dict[str, float]:
    return {metric.name: metric.per_query(ranked, grades) for metric in metrics}
