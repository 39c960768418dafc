"""TREC run files (`qid Q0 docid rank score tag`) that trec_eval, ir_measures and ranx read.

trec_eval ignores the rank column: it re-sorts each query by score and breaks equal scores by
document id (descending, as strings). RRF produces exact ties, so a file holding the raw scores
would be re-ordered. pytrec_eval also keeps scores in single precision, so distinct doubles can
tie there too. Scores are therefore written as float32 values, and a tie (or an inversion) after
that rounding is broken by stepping the later document's score one float32 step below its
predecessor. The written order is the tool's order for every reader.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

from generator.fileio import atomic_write_text


def order_preserving_scores(scores: Sequence[float]) -> list[float]:
    import numpy as np

    written: list[np.float32] = []
    for score in scores:
        value = np.float32(score)
        if written and value >= written[-1]:
            value = np.nextafter(written[-1], np.float32(-np.inf))
        written.append(value)
    return [float(value) for value in written]


def format_run(rankings: Mapping[str, Sequence[tuple[str, float]]], tag: str) -> str:
    lines = []
    for query_id in sorted(rankings):
        ranking = rankings[query_id]
        scores = order_preserving_scores([score for _, score in ranking])
        for rank, ((doc_id, _), score) in enumerate(zip(ranking, scores), start=1):
            lines.append(f"{query_id} Q0 {doc_id} {rank} {score!r} {tag}")
    return "\n".join(lines) + ("\n" if lines else "")


def write_run(path: Path, rankings: Mapping[str, Sequence[tuple[str, float]]], tag: str) -> Path:
    return atomic_write_text(path, format_run(rankings, tag))


def read_run(path: Path) -> dict[str, dict[str, float]]:
    """Parse a run file into {qid: {docid: score}} (the shape pytrec_eval takes)."""
    run: dict[str, dict[str, float]] = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            query_id, _, doc_id, _, score, _ = line.split()
            run.setdefault(query_id, {})[doc_id] = float(score)
    return run
