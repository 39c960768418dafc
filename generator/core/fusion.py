"""Fusing ranked lists, as pure functions: Reciprocal Rank Fusion (Cormack, Clarke and Buettcher,
SIGIR 2009) and min-max score interpolation, for fusion rows and the L03 sandbox's hybrid."""

from __future__ import annotations

from typing import Sequence

RRF_K = 60


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]], k: int = RRF_K,
                           depth: int | None = None) -> list[tuple[str, float]]:
    """Fuse ranked lists: score(d) = sum over lists of 1/(k + rank of d), ranks from 1.

    Exact ties (common: a document at rank r in one list only ties with another at rank r in
    the other list only) are broken by first appearance, reading the lists in the order given,
    each from the top. Returns (doc_id, score) pairs, best first, cut to `depth` if given.
    """
    if k < 0:
        raise ValueError(f"RRF constant k must be >= 0, got {k}")
    scores: dict[str, float] = {}
    first_seen: dict[str, int] = {}
    for ranking in rankings:
        seen_here: set[str] = set()
        for rank, doc_id in enumerate(ranking, start=1):
            if doc_id in seen_here:
                raise ValueError(f"document {doc_id!r} appears twice in one ranking")
            seen_here.add(doc_id)
            # Terms are added in list order for every document, so equal sums are bit-identical.
            scores[doc_id] = scores.get(doc_id, 0.0) + 1.0 / (k + rank)
            first_seen.setdefault(doc_id, len(first_seen))
    fused = sorted(scores.items(), key=lambda item: (-item[1], first_seen[item[0]]))
    return fused if depth is None else fused[:depth]


def min_max_normalise(ranked: Sequence[tuple[str, float]]) -> dict[str, float]:
    """(s - min) / (max - min) within one list; every score 1.0 when all are equal (or one)."""
    if not ranked:
        return {}
    values = [score for _, score in ranked]
    low, high = min(values), max(values)
    if high == low:
        return {doc_id: 1.0 for doc_id, _ in ranked}
    return {doc_id: (score - low) / (high - low) for doc_id, score in ranked}


def min_max_fusion(first: Sequence[tuple[str, float]], second: Sequence[tuple[str, float]],
                   alpha: float) -> dict[str, float]:
    """alpha * minmax(first) + (1 - alpha) * minmax(second) over the union of both lists.

    A document missing from one list gets 0 on that side. Returns scores by document id
    (sorted), unranked: the caller decides how ties are ordered.
    """
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    first_norm, second_norm = min_max_normalise(first), min_max_normalise(second)
    return {doc_id: alpha * first_norm.get(doc_id, 0.0) + (1.0 - alpha) * second_norm.get(doc_id, 0.0)
            for doc_id in sorted(set(first_norm) | set(second_norm))}


def min_max_fused_ranking(first: Sequence[tuple[str, float]], second: Sequence[tuple[str, float]], alpha: float,
                          depth: int | None = None) -> list[tuple[str, float]]:
    """`min_max_fusion` ranked: best first, equal scores in order of first appearance (the first
    list from the top, then the second), as reciprocal_rank_fusion breaks its ties."""
    scores = min_max_fusion(first, second, alpha)
    first_seen: dict[str, int] = {}
    for doc_id, _ in [*first, *second]:
        first_seen.setdefault(doc_id, len(first_seen))
    fused = sorted(scores.items(), key=lambda item: (-item[1], first_seen[item[0]]))
    return fused if depth is None else fused[:depth]
