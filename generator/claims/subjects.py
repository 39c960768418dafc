"""A quote must be about the claim: a design sentence supports only what it speaks of.

Any whole sentence of a design document used to trace any claim: "the cross-encoder was loaded
with its trained weights and reranked every release query" passed with a quote about the limits
of the review. Two rules close that:

- **Subjects.** The claim's subject terms (SUBJECTS: the kinds of row, dense, sparse, fusion,
  rerank, by any of their words, and the metrics nDCG, Recall, MRR, MAP, Precision) must each be
  spoken of by one of its sources: a design quote that names the same kind or metric, or a
  measured value of a row of that kind or of that metric (its path: `table[search=hybrid]...`,
  `comparisons.hybrid+rerank_vs_hybrid.metrics.nDCG@5...`, `rerank_costs...`).
- **Runs.** A claim that states what this review measured, loaded or ran ("was loaded", "were
  timed", "reranked every query", "we measured") needs a measured source: a design document says
  what was planned, never what happened.

Limits: the words are lists, not a parser: a subject named only by a pronoun ("it") or a
paraphrase outside SUBJECTS is not a subject here, and a quote that names the right kind of row
while saying something else about it still supports the claim (the other rules, numbers,
verdicts and predicates, still hold it).
"""

from __future__ import annotations

import re
from typing import Iterable

from generator.claims.attribution import ROW_ALIASES, ShownValue, baseline_of, row_of
from generator.results import path_text

SUBJECTS: dict[str, str] = {
    "dense": r"dense|bi-?encoders?|embeddings?",
    "sparse": r"sparse|bm25s?|lexical",
    "fusion": r"hybrid(?!\s*\+)|fusion|fuses?|fused|fusing|rrf|min-max",
    "rerank": r"re-?rank\w*|cross-?encoders?|hybrid\s*\+\s*rerank",
    "nDCG": r"n?dcg(?:@\d+)?\w*",
    "Recall": r"recall(?:@\d+)?",
    "MRR": r"mrr(?:@\d+)?",
    "MAP": r"map@\d+|mean\s+average\s+precision",
    "Precision": r"precision(?:@\d+)?|p@\d+",
}
# Not inside an address (`rerank@example.org`, `www.reranker.example`): a name there is no subject.
_SUBJECT_PATTERNS = {kind: re.compile(r"(?<![\w@.-])(?:" + words + r")(?![\w@]|\.\w)", re.IGNORECASE)
                     for kind, words in SUBJECTS.items()}
_RUN = re.compile(
    r"\b(?:was|were|been|got)\s+(?:not\s+|never\s+|also\s+|then\s+|first\s+)?"
    r"(?:measured|loaded|run|evaluated|timed|reranked|encoded|indexed|trained|scored|executed)\b"
    r"|\b(?:we|it|they|i)\s+(?:then\s+|also\s+)?(?:ran|loaded|measured|reranked|evaluated|timed|encoded|scored)\b"
    r"|\b(?:reranked|loaded|measured|evaluated|timed|encoded|indexed|scored)\s+(?:every|all|each|both)\b",
    re.IGNORECASE)


def subjects_of(text: str) -> set[str]:
    """The subject kinds a text speaks of."""
    return {kind for kind, pattern in _SUBJECT_PATTERNS.items() if pattern.search(text)}


def _value_subjects(value: ShownValue) -> set[str]:
    """What a measured value is of: every word of its path (`table[search=hybrid].delta_nDCG@5_vs_dense`
    is of fusion, nDCG and dense) and the words of the rows it names."""
    words = re.sub(r"[._\[\]=]+", " ", path_text(value.steps))
    rows = {row_of(value), baseline_of(value)} - {None}
    aliases = " ".join(alias for row in rows for alias in ROW_ALIASES.get(row, (row,)))
    return subjects_of(f"{words} {aliases}")


def subject_reasons(text: str, quotes: Iterable[str], values: Iterable[ShownValue]) -> list[str]:
    """What the claim speaks of that none of its sources does, and a run stated without a measured source."""
    values = list(values)
    quotes = list(quotes)
    reasons = []
    if quotes or values:
        supported = set().union(*(subjects_of(quote) for quote in quotes), *(_value_subjects(v) for v in values))
        missing = sorted(subjects_of(text) - supported)
        if missing:
            reasons.append(f"the claim speaks of {', '.join(missing)}, but none of its sources does: quote a design "
                           "sentence about it or cite a measured value of it (a quote supports only what it speaks "
                           "of)")
    run = _RUN.search(text)
    if run and not values:
        reasons.append(f"the claim says what was done ({run.group(0)!r}) with no measured source: a design document "
                       "says what was planned, a results file what happened")
    return reasons
