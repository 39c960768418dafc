"""Licensing: the author's words carry no result. A sentence that compares rows, qualifies a
difference, claims equivalence or non-inferiority, or fits a budget is a frame the package writes
(generator.claims.frames); in the author's own words (`ClaimView.own_words`: canonical, values
filled from results and whole design quotes blanked) every word of an assertive class (direction,
significance, no difference, equivalence, magnitude, budget fit; the lexicon's classes whose
`licensed_by` is a result, generator/core/text/lexicons/*.yaml, in English and every language the ledger
declares) is refused, with the frame that would say it. The lexicon is the second net over free
prose: the closed rule is generator.claims.tracing.rules.prose.

Two classes remain the author's to use, each with its own licence:

- a cause ("because", "due to", "leads to") only with a quoted design source: the design's
  mechanism, never the results, says why;
- "pre-registered" (fixed before the results, in advance) only with cited decisions whose rules
  the design freeze holds from before any results.

A sentence that speaks of a correction for many comparisons shows only corrected p-values.
"""

from __future__ import annotations

import functools
import re

from generator.core.dataclass import dataclass
from generator.core.text import lexicon
from generator.claims.tracing.naming import rows_in_order
from generator.claims.tracing.rules import rule
from generator.claims.tracing.view import ClaimView

DESIGN_QUOTE = "design quote"
VERDICT = "decision"
PREREGISTERED = "preregistered decision"
_SENTENCE_END = re.compile(r"[.!?;](?=\s|$)")


@dataclass(frozen=True)
class WordUse:
    """One assertive word as the sentence uses it."""

    word: str
    word_class: lexicon.WordClass
    start: int
    end: int
    negated: bool
    subject: str | None     # the last row named before it in its sentence
    object: str | None      # the first row named after it
    others: frozenset[str]  # every other row its sentence names
    sentence: str



def _languages(view: ClaimView) -> tuple[str, ...]:
    return tuple(sorted({lexicon.ENGLISH, *view.context.languages}))


def _sentences(text: str) -> list[tuple[int, int]]:
    bounds, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        bounds.append((start, match.end()))
        start = match.end()
    bounds.append((start, len(text)))
    return bounds


@functools.lru_cache(maxsize=16)
def _licensed_classes(languages: tuple[str, ...]) -> dict[str, lexicon.WordClass]:
    """The assertive classes of `languages` an assertion (or a design quote, or the freeze) licenses."""
    classes: dict[str, lexicon.WordClass] = {}
    for language in languages:
        for name, word_class in lexicon.assertive(language).items():
            # A verdict is the decisions family's to hold (a decision's outcome, word for word).
            if word_class.licensed_by and word_class.licensed_by != VERDICT:
                classes.setdefault(name, word_class)
    return classes


def word_uses(view: ClaimView) -> list[WordUse]:
    """Every assertive word of the author's own words, with what it says of which rows."""
    text = view.own_words
    languages = _languages(view)
    found: list[tuple[int, int, lexicon.WordClass]] = []
    for name, word_class in _licensed_classes(languages).items():
        pattern = lexicon.pattern(name, languages)
        found += [(match.start(), match.end(), word_class) for match in pattern.finditer(text)]
    kept = [(start, end, word_class) for start, end, word_class in found
            if not any(word_class.name in other.overrides and other_start <= start and end <= other_end
                       and (other_start, other_end) != (start, end)
                       for other_start, other_end, other in found)]
    negation = lexicon.pattern("negation", languages)
    uses = []
    sentences = _sentences(text)
    known = view.known_rows
    for start, end, word_class in sorted(kept, key=lambda item: (item[0], item[1])):
        low, high = next((a, b) for a, b in sentences if a <= start < b or b == len(text))
        sentence = text[low:high]
        mentions = rows_in_order(sentence, known)
        before = [row for a, b, row in mentions if b <= start - low]
        after = [row for a, b, row in mentions if a >= end - low]
        words_before = " ".join(text[low:start].split()[-3:])
        subject = before[-1] if before else None
        uses.append(WordUse(text[start:end], word_class, start, end, bool(negation.search(words_before)),
                            subject, after[0] if after else None,
                            frozenset(row for _, _, row in mentions) - {subject}, sentence))
    return uses


def _says_correction(view: ClaimView) -> re.Match | None:
    return lexicon.pattern("correction", _languages(view)).search(view.own_words)


# The frame that says what a word of each class says (the finding's fix).
FRAME_FOR = {"higher": "comparison", "lower": "comparison", "distinguishable": "comparison (its test decides "
             "'significantly')", "indistinguishable": "comparison", "equivalent": "equivalence or noninferiority",
             "within_budget": "budget", "over_budget": "budget"}


@rule("word-licensed", "The author's words carry no result")
def word_licensed(view: ClaimView) -> list[str]:
    """A word of an assertive class (beats, significantly, as good as, clearly, fits the budget,
    ...) is a result only a frame may state: the package writes the sentence from the computed
    result. A cause needs a quoted design source; "pre-registered" a decision frozen before any
    results."""
    found = []
    for use in word_uses(view):
        if use.word_class.licensed_by == PREREGISTERED:
            problem = _preregistration_problem(view)
            if problem:
                found.append(f"the sentence says {use.word!r}: {problem}")
            continue
        if use.word_class.licensed_by == DESIGN_QUOTE:
            if not view.claim.design_sources:
                found.append(f"the sentence says {use.word!r}, a cause, which only a design document's mechanism can "
                             "state: quote it (a design source), or say what was measured without the cause")
            continue
        frame = FRAME_FOR.get(use.word_class.licensed_by or "", "frame")
        found.append(f"the sentence says {use.word!r} ({use.word_class.meaning}): a result only the package writes; "
                     f"state it as a frame ({frame}: docs/claims.md, 'Frames')")
    return found


def _preregistration_problem(view: ClaimView) -> str | None:
    """Why "pre-registered" does not hold of the decisions the claim cites, or None."""
    cited = [view.context.decision(source.trigger) for source in view.claim.decision_sources]
    if not cited or any(row is None for row in cited):
        return ("only the design freeze says when a rule was fixed: cite the decision (decision: {trigger: "
                f"{view.context.example_decision}, state: ...}}) whose rule was frozen before any results")
    late = sorted(row.trigger.decision for row in cited if row.post_hoc)
    if late:
        return (f"the rule of {', '.join(late)} was set or moved after the results existed (the design freeze says "
                "so): it is post hoc, never pre-registered")
    return None


@rule("correction-named", "A corrected p-value is the corrected one")
def correction_named(view: ClaimView) -> list[str]:
    """A sentence that speaks of a correction for many comparisons (Holm, adjusted, corrected,
    family-wise) shows only corrected p-values (`p_holm`): an unadjusted p quoted "after Holm's
    correction" overstates the evidence."""
    said = _says_correction(view)
    if said is None:
        return []
    return [f"the sentence says {said.group(0)!r}, but {{{value.name}}} is the unadjusted p-value "
            f"({value.location.name}): show the corrected one (p_holm of all_pairs)"
            for value in view.shown if value.location is not None and value.location.name == "p_value"]
