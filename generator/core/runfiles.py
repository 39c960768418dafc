"""TREC run files (`qid Q0 docid rank score tag`) that trec_eval, ir_measures and ranx read.

trec_eval ignores the rank column: it re-sorts each query by score and breaks equal scores by
document id (descending, as strings). Fusion produces exact ties, so a file holding the raw scores
would be re-ordered. pytrec_eval also keeps scores in single precision, so distinct doubles can
tie there too. Scores are therefore written as float32 values, and a tie (or an inversion) after
that rounding is broken by stepping the later document's score one float32 step below its
predecessor. The written order is the tool's order for every reader. Pure Python (no numpy), so
the offline sandbox writes its runs with the same code.
"""

from __future__ import annotations

import math
import struct
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from generator.storage.errors import InputError
from generator.storage.bounded_reads import read_input
from generator.storage.fileio import atomic_write_text, sha256_bytes

Ranking = Sequence[tuple[str, float]]
# The judgements of the evaluated queries, written beside their run files (trec_eval's qrels).
QRELS_COPY_NAME = "qrels.tsv"


def to_float32(value: float) -> float:
    """The float32 nearest to `value` (round half to even), as a Python float."""
    try:
        return struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:  # beyond float32's range, as numpy rounds it
        return math.copysign(math.inf, value)


def float32_below(value: float) -> float:
    """The largest float32 strictly below the float32 `value`."""
    if math.isnan(value) or value == -math.inf:
        return value
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    if value == 0.0:
        bits = 0x80000001                    # the smallest negative subnormal
    elif value > 0.0:
        bits -= 1                            # positive: a smaller magnitude
    else:
        bits += 1                            # negative: a larger magnitude
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def order_preserving_scores(scores: Sequence[float]) -> list[float]:
    """float32 scores, each strictly below its predecessor, so every reader keeps this order."""
    written: list[float] = []
    for score in scores:
        value = to_float32(score)
        if written and value >= written[-1]:
            value = float32_below(written[-1])
        written.append(value)
    return written


def format_run(rankings: Mapping[str, Ranking], tag: str, *, separator: str = " ") -> str:
    lines = []
    for query_id in sorted(rankings):
        ranking = rankings[query_id]
        scores = order_preserving_scores([score for _, score in ranking])
        for rank, ((doc_id, _), score) in enumerate(zip(ranking, scores), start=1):
            lines.append(separator.join((query_id, "Q0", doc_id, str(rank), repr(score), tag)))
    return "\n".join(lines) + ("\n" if lines else "")


def write_run(path: Path, rankings: Mapping[str, Ranking], tag: str, *, separator: str = " ") -> Path:
    return atomic_write_text(path, format_run(rankings, tag, separator=separator))


def read_run(path: Path) -> dict[str, dict[str, float]]:
    """Parse a run file into {qid: {docid: score}} (the shape pytrec_eval takes)."""
    run: dict[str, dict[str, float]] = {}
    for line in read_input(path, "run file").decode("utf-8").splitlines():
        if line.strip():
            query_id, _, doc_id, _, score, _ = line.split()
            run.setdefault(query_id, {})[doc_id] = float(score)
    return run


def format_qrels(judgements: Mapping[str, Mapping[str, int]]) -> str:
    """TREC qrels lines `query 0 document grade`, queries and documents sorted."""
    lines = [f"{query_id} 0 {doc_id} {grade}" for query_id in sorted(judgements)
             for doc_id, grade in sorted(judgements[query_id].items())]
    return "\n".join(lines) + ("\n" if lines else "")


def qrels_copy_entry(path: str, data: bytes, judgements: Mapping[str, Mapping[str, int]]) -> dict[str, Any]:
    """What a results manifest records of the judgements copied beside its run files."""
    return {"path": path, "sha256": sha256_bytes(data), "queries": len(judgements),
            "judgements": sum(len(grades) for grades in judgements.values()),
            # More than one means graded judgements, where the nDCG gain changes the figure.
            "positive_grades": positive_grades(judgements),
            "format": "TREC qrels: query 0 document grade"}


def positive_grades(judgements: Mapping[str, Mapping[str, int]]) -> list[int]:
    """The distinct grades above zero the judgements give (SciFact: [1])."""
    return sorted({grade for grades in judgements.values() for grade in grades.values() if grade > 0})


def write_qrels(path: Path, judgements: Mapping[str, Mapping[str, int]]) -> Path:
    return atomic_write_text(path, format_qrels(judgements))


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """Parse TREC qrels into {query: {document: grade}}; ValueError names the bad line."""
    judgements: dict[str, dict[str, int]] = {}
    for number, line in enumerate(read_input(path, "judgements").decode("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 4:
            raise ValueError(f"line {number}: expected 4 columns (query 0 document grade), got {len(parts)}")
        try:
            grade = int(parts[3])
        except ValueError:
            raise ValueError(f"line {number}: grade {parts[3]!r} is not an integer") from None
        judgements.setdefault(parts[0], {})[parts[2]] = grade
    return judgements


def run_file_lines(path: Path, shown: str) -> Iterator[tuple[int, str, str, float]]:
    """(line number, query, document, score) of each line of a TREC run file, in file order;
    InputError with file:line for a file that is not UTF-8, a line without six fields or a score
    that is not a finite number."""
    try:
        text = read_input(path, "run file", shown).decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text (byte {error.start:,})", path=shown) from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 6:
            raise InputError(f"expected six fields (query Q0 document rank score tag), found {len(fields)}",
                             path=shown, line=number)
        query_id, _, doc_id, _, score_text, _ = fields
        try:
            score = float(score_text)
        except ValueError:
            score = math.nan
        if not math.isfinite(score):
            raise InputError(f"score {score_text[:40]!r} is not a finite number", path=shown, line=number,
                             field="score")
        yield number, query_id, doc_id, score


def read_supplied_run(path: Path, shown: str, *, queries: Mapping[str, Any], documents: set[str], depth: int,
                      query_ids: Sequence[str]) -> dict[str, list[tuple[str, float]]]:
    """A run file a team already has (ranx, PyTerrier, Pyserini, trec_eval format), checked and
    ranked the way trec_eval reads it: score descending, equal scores by document id descending
    (the rank column is ignored, as trec_eval ignores it).

    Refused with file:line: a line without six fields, a score that is not a finite number, a
    query or document id the dataset does not hold, a document listed twice for one query. Each
    evaluated query keeps its best `depth` documents; a query the file does not rank has none.
    """
    ranked: dict[str, list[tuple[int, str, float]]] = {}
    seen: dict[str, set[str]] = {}
    for number, query_id, doc_id, score in run_file_lines(path, shown):
        if query_id not in queries:
            raise InputError(f"query {query_id[:80]!r} is not in the dataset's queries.jsonl", path=shown,
                             line=number, field="query")
        if doc_id not in documents:
            raise InputError(f"document {doc_id[:80]!r} is not in the dataset's corpus.jsonl", path=shown,
                             line=number, field="document")
        if doc_id in seen.setdefault(query_id, set()):
            raise InputError(f"document {doc_id[:80]!r} is listed twice for query {query_id[:80]!r}", path=shown,
                             line=number, field="document")
        seen[query_id].add(doc_id)
        ranked.setdefault(query_id, []).append((number, doc_id, score))
    rankings = {}
    for query_id in query_ids:
        lines = sorted(ranked.get(query_id, []), key=lambda item: item[1], reverse=True)
        lines = sorted(lines, key=lambda item: -item[2])[:depth]   # stable: the id order survives ties
        rankings[query_id] = [(doc_id, score) for _, doc_id, score in lines]
    return rankings
