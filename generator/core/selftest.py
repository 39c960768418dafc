"""`readout selftest`: the scorer checked against hand-computed fixtures from the spec.

The mutant switch swaps in a classic nDCG mistake (an ideal DCG that counts only the relevant
documents the run retrieved) so anyone can watch the guard catch it.
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

from generator.core.dataclass import dataclass
from generator.core.fusion import reciprocal_rank_fusion
from generator.core.metrics import ndcg_at_k, recall_at_k

RANKED = ["d3", "d1", "d7", "d2", "d9"]
RELEVANT = {"d1", "d2", "d4"}
EXPECTED_RECALL_AT_5 = 0.6667
EXPECTED_NDCG_AT_5 = 0.4982
RRF_INPUT = [["x", "y", "z"], ["y", "z", "x"]]
EXPECTED_RRF = ["y", "x", "z"]
MUTANT_NOTICE = ("Running against the MUTATED nDCG (ideal counts only retrieved relevant documents); "
                 "a FAIL is the expected outcome.")


def mutant_ndcg_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """The mutation the guard must catch: the ideal counts only relevant documents retrieved."""
    relevant_set = set(relevant)
    hits = [rank for rank, doc_id in enumerate(ranked[:k], start=1) if doc_id in relevant_set]
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, len(hits) + 1))
    if ideal == 0.0:
        return 0.0
    return sum(1.0 / math.log2(rank + 1) for rank in hits) / ideal


@dataclass(frozen=True)
class CheckResult:
    name: str
    passed: bool
    got: str
    expected: str

    def line(self) -> str:
        verdict = "PASS" if self.passed else "FAIL"
        return f"{verdict} {self.name}: got {self.got}, expected {self.expected}"


def _rounded_check(name: str, value: float, expected: float) -> CheckResult:
    return CheckResult(name, round(value, 4) == expected, f"{value:.4f}", f"{expected:.4f}")


def run_checks(*, mutant: bool = False) -> list[CheckResult]:
    """The spec's fixtures, scored by the real nDCG or (with `mutant`) by the mutated one."""
    ndcg = mutant_ndcg_at_k if mutant else ndcg_at_k
    fused = [doc_id for doc_id, _ in reciprocal_rank_fusion(RRF_INPUT)]
    return [
        _rounded_check("Recall@5 of [d3, d1, d7, d2, d9] against {d1, d2, d4}",
                       recall_at_k(RANKED, RELEVANT, 5), EXPECTED_RECALL_AT_5),
        _rounded_check("nDCG@5 of [d3, d1, d7, d2, d9] against {d1, d2, d4}",
                       ndcg(RANKED, RELEVANT, 5), EXPECTED_NDCG_AT_5),
        CheckResult("RRF(k=60) of [[x, y, z], [y, z, x]]", fused == EXPECTED_RRF,
                    "[" + ", ".join(fused) + "]", "[" + ", ".join(EXPECTED_RRF) + "]"),
    ]
