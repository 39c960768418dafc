"""Licensing: a sentence says only what its assertions compute. Every assertive word (direction,
significance, no difference, equivalence, magnitude, budget fit, cause; the lexicon's classes
with a `licensed_by`, generator/lexicons/*.yaml, in English and every language the ledger
declares) must be licensed by an assertion of the class's kind that holds
(generator.claims.tracing.outcomes), for the rows the sentence names around the word, in the
order it names them, on a metric it names and the query set it shows.

How a word is read:

- in the author's words only (`ClaimView.own_words`: canonical, values filled from results and
  spans quoted from a design document blanked), sentence by sentence;
- where one class's word holds another's ("no significant difference", "no worse than"), the
  longer one is read (the lexicon's `overrides`);
- negated ("does not beat", "not significantly") it asks for what it negates: "does not beat"
  is licensed by `lower` or `indistinguishable`, "not significant" by `indistinguishable`;
- its rows: the last row named before the word is the first row of the assertion, the first
  named after it the second ("team-okapi beats hybrid" needs `higher: team-okapi, than:
  hybrid`); for `distinguishable`, `indistinguishable` and `equivalent` the order is free;
- "not distinguishable" never licenses "as good as": equivalence needs `equivalent`, a two
  one-sided test against a margin a design document fixed.

A cause ("because", "due to", "leads to") is licensed by a quoted design source only: the design's
mechanism, never the results, says why. "Pre-registered" (fixed before the results, in advance)
is licensed only by cited decisions whose rules the design freeze holds from before any results.

A direction between no rows ("the alternative we beat", in a sentence that names no row and shows
no row's value) says nothing of the results and needs no assertion.

Limits: the rules read words, not grammar. A sentence can still mislead with words no class holds,
and a row named only by a pronoun is not a row here (the word is then licensed by any assertion of
its kind that holds).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from generator import lexicon
from generator.claims.language.assertions import KINDS, SYMMETRIC
from generator.claims.tracing.naming import rows_in_order, rows_of
from generator.claims.tracing.outcomes import Outcome
from generator.claims.tracing.rules import rule
from generator.claims.tracing.rules.statistic import names_metric
from generator.claims.tracing.view import ClaimView

# What a negated word asks for: "does not beat" is true when the row is below, or not told apart.
NEGATED = {"higher": ("lower", "indistinguishable"), "lower": ("higher", "indistinguishable"),
           "distinguishable": ("indistinguishable",), "indistinguishable": ("distinguishable",),
           "equivalent": ("lower", "distinguishable"), "within_budget": ("over_budget",),
           "over_budget": ("within_budget",)}
DESIGN_QUOTE = "design quote"
PREREGISTERED = "preregistered decision"
_SENTENCE_END = re.compile(r"[.!?;](?=\s|$)")
_METRIC_FAMILY = re.compile(r"(?<![\w@])(n?dcg|recall|precision|mrr|map|p)@(\d+)", re.IGNORECASE)


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

    @property
    def kinds(self) -> tuple[str, ...]:
        kind = self.word_class.licensed_by or ""
        return NEGATED.get(kind, (kind,)) if self.negated else (kind,)


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
            if word_class.licensed_by in (*KINDS, DESIGN_QUOTE, PREREGISTERED):
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


def _metrics_named(sentence: str) -> list[tuple[str, str | None]]:
    """(family, cutoff) of each metric the sentence names; a bare family ("nDCG") has no cutoff."""
    named = [(match.group(1).lower(), match.group(2)) for match in _METRIC_FAMILY.finditer(sentence)]
    for family in ("ndcg", "recall", "precision", "mrr"):
        if re.search(rf"(?<![\w@]){family}(?![\w@])", sentence, re.IGNORECASE):
            named.append((family, None))
    return named


def _on_metric(sentence: str, metric: str | None) -> bool:
    """The assertion's metric is one the sentence names, or the sentence names none."""
    named = _metrics_named(sentence)
    if not named or metric is None:
        return True
    if names_metric(sentence, metric):
        return True
    family = metric.split("@")[0].lower()
    return any(name == family and cutoff is None for name, cutoff in named) and not any(
        name == family and cutoff is not None for name, cutoff in named)


def _fits(use: WordUse, outcome: Outcome, view: ClaimView) -> str | None:
    """Why a holding assertion of the right kind does not license this word, or None."""
    assertion = outcome.assertion
    kind = assertion.kind
    rows = assertion.rows()
    if kind in SYMMETRIC:
        wanted = {row for row in (use.subject, use.object) if row}
        if not wanted <= set(rows):
            return f"it is about {' and '.join(rows)}, the sentence about {' and '.join(sorted(wanted))}"
    elif kind in ("within_budget", "over_budget"):
        # A time's row is named anywhere in the sentence ("the reranker ... takes 3,535 ms, over the budget").
        named = {row for row in (use.subject, use.object) if row} | use.others
        if named and assertion.row not in named:
            return f"it is about {assertion.row}, the sentence about {', '.join(sorted(named))}"
    else:
        if use.subject and use.subject != assertion.row:
            return (f"it puts {assertion.row} first, the sentence names {use.subject} first" if use.subject in rows
                    else f"it is about {assertion.row}, the sentence about {use.subject}")
        if use.object and use.object != assertion.other:
            return f"it compares with {assertion.other}, the sentence with {use.object}"
        if not use.object and use.others and assertion.other not in use.others:
            return f"it compares with {assertion.other}, which the sentence does not name"
    if not _on_metric(use.sentence, assertion.metric):
        return f"it is on {assertion.metric}, a metric the sentence does not name"
    sets = {value.query_set for value in view.shown if value.query_set}
    if sets and assertion.file not in sets:
        return f"it reads {assertion.file}, the sentence shows values of {', '.join(sorted(sets))}"
    if use.word_class.name in ("significance", "no_difference", "magnitude") and _says_correction(view) \
            and kind in ("distinguishable", "indistinguishable") and assertion.correction != "holm":
        return "the sentence speaks of a correction, the assertion reads the uncorrected test (add `correction: holm`)"
    return None


def _says_correction(view: ClaimView) -> re.Match | None:
    return lexicon.pattern("correction", _languages(view)).search(view.own_words)


def _example(use: WordUse) -> str:
    kind = use.kinds[0]
    first = use.subject or "ROW"
    partner = KINDS.get(kind)
    if partner is None:
        return f"{{{kind}: {first}, budget: NAME}}"
    second = use.object or next(iter(sorted(use.others)), "OTHER")
    extra = ", margin: NAME" if kind == "equivalent" else ""
    return f"{{{kind}: {first}, {partner}: {second}, metric: METRIC{extra}}}"


@rule("assertion-holds", "Every assertion holds")
def assertion_holds(view: ClaimView) -> list[str]:
    """Each assertion the claim declares (`asserts:`) is evaluated from the results and the design;
    one that does not hold, or cannot be evaluated (a row not measured, a metric or a budget the
    files do not hold), makes the claim untraceable."""
    found = []
    for outcome in view.outcomes:
        if outcome.holds is False:
            found.append(f"asserts {outcome.assertion.text()}, but the results say otherwise: {outcome.read}")
        elif outcome.holds is None:
            found.append(f"asserts {outcome.assertion.text()}, which cannot be evaluated: {outcome.read}")
    return found


@rule("word-licensed", "Every assertive word is licensed by an assertion that holds")
def word_licensed(view: ClaimView) -> list[str]:
    """A word of an assertive class (beats, significantly, as good as, clearly, fits the budget,
    because, ...) is licensed by an assertion of its class's kind that holds, on the rows the
    sentence names around it, in that order, on a metric it names and the query set it shows; a
    cause only by a quoted design source."""
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
        if use.word_class.licensed_by in ("higher", "lower") and not (use.subject or use.object or use.others) \
                and not any(rows_of(value) for value in view.shown):
            continue    # "the alternative we beat": a direction between no rows says nothing of the results
        candidates = [outcome for outcome in view.outcomes if outcome.assertion.kind in use.kinds]
        holding = [outcome for outcome in candidates if outcome.licenses]
        misfits = [(outcome, _fits(use, outcome, view)) for outcome in holding]
        if any(why is None for _, why in misfits):
            continue
        said = f"the sentence says {use.word!r}" + (" (negated)" if use.negated else "")
        if misfits:
            outcome, why = misfits[0]
            found.append(f"{said}, but the assertion that holds ({outcome.assertion.text()}) does not license it: "
                         f"{why}")
        elif candidates:
            outcome = candidates[0]
            state = "does not hold" if outcome.holds is False else "cannot be evaluated"
            found.append(f"{said}, but {outcome.assertion.text()} {state} ({outcome.read}): the words must say what "
                         "the results computed")
        else:
            found.append(f"{said} ({use.word_class.meaning}), which only an assertion that holds can license: "
                         f"declare it under `asserts:`, e.g. - {_example(use)}")
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
