"""A quote must be about the claim: a source supports only what it speaks of.

Limits: the words are lists, not a parser: a subject named only by a pronoun ("it") or a
paraphrase outside the lexicon's `subject_*` classes is not a subject here, and a quote that
names the right kind of row while saying something else about it still supports the claim (the
other rules, numbers, verdicts and predicates, still hold it).
"""

from __future__ import annotations

import functools
import re

from generator.core.text import lexicon
from generator.claims.tracing.naming import ROW_ALIASES, ShownValue, baseline_of, row_of
from generator.claims.tracing.rules import rule
from generator.claims.tracing.view import ClaimView
from generator.core.results import path_text

# The subject kinds and their words are the lexicon's `subject_*` classes (not inside an address,
# `rerank@example.org`, or a dotted name: a name there is no subject); `run` the words of a run.
SUBJECTS = tuple(name.split("_", 1)[1] for name in lexicon.classes(lexicon.ENGLISH) if name.startswith("subject_"))
_SUBJECT_PATTERNS = {kind: lexicon.pattern(f"subject_{kind}") for kind in SUBJECTS}
_RUN = lexicon.pattern("run")


@functools.lru_cache(maxsize=4096)
def subjects_of(text: str) -> frozenset[str]:
    """The subject kinds a text speaks of (a ledger cites the same quotes and paths again and again)."""
    return frozenset(kind for kind, pattern in _SUBJECT_PATTERNS.items() if pattern.search(text))


def _value_subjects(value: ShownValue) -> frozenset[str]:
    """What a measured value is of: every word of its path (`table[search=hybrid].delta_nDCG@5_vs_dense`
    is of fusion, nDCG and dense) and the words of the rows it names."""
    words = re.sub(r"[._\[\]=]+", " ", path_text(value.steps))
    rows = {row_of(value), baseline_of(value)} - {None}
    aliases = " ".join(alias for row in rows for alias in ROW_ALIASES.get(row, (row,)))
    return subjects_of(f"{words} {aliases}")


@rule("subject-supported", "Every subject of the sentence is a subject of a source")
def subject_supported(view: ClaimView) -> list[str]:
    """The claim's subject terms (the kinds of row, dense, sparse, fusion, rerank, by any of their
    words, and the metrics nDCG, Recall, MRR, MAP, Precision) are each spoken of by one of its
    sources: a design quote that names the same kind or metric, or a measured value of a row of
    that kind or of that metric."""
    values = list(view.declared.values())
    if not (view.claim.design_sources or values):
        return []
    quotes = [source.quote for source in view.claim.design_sources]
    supported = set().union(*(subjects_of(quote) for quote in quotes), *(_value_subjects(v) for v in values))
    missing = sorted(subjects_of(view.said) - supported)
    if not missing:
        return []
    return [f"the claim speaks of {', '.join(missing)}, but none of its sources does: quote a design sentence about "
            "it or cite a measured value of it (a quote supports only what it speaks of)"]


@rule("run-measured", "What was done stands on a measured source")
def run_measured(view: ClaimView) -> list[str]:
    """A claim that states what this review measured, loaded or ran ("was loaded", "were timed",
    "reranked every query", "we measured") needs a measured source: a design document says what
    was planned, never what happened."""
    run = _RUN.search(view.said)
    if run is None or view.declared:
        return []
    return [f"the claim says what was done ({run.group(0)!r}) with no measured source: a design document says what "
            "was planned, a results file what happened"]
