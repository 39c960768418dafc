"""Reciprocal Rank Fusion (Cormack, Clarke and Buettcher, SIGIR 2009), as a pure function."""

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
