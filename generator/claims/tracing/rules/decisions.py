"""Verdicts: only a decision record's trigger computes one. A decision source holds when its
trigger computes the state the claim declares and the sentence says the decision that state
gives, word for word; any other verdict, in any lexicon language, is untraceable.

The sentence is read canonical (look-alike letters folded, hidden characters removed), so "Ѕhір
the reranker" written with Cyrillic letters is the verdict "ship the reranker".
"""

from __future__ import annotations

import re

from generator.core.text import lexicon
from generator.claims.record.triggers import UNDECIDED, DecisionRow
from generator.claims.tracing.measured import short
from generator.claims.tracing.rules import rule
from generator.claims.tracing.view import ClaimView
from generator.core.text.verdicts import Verdict, normalise, phrase_spans, unlicensed, whether_spans

_NEGATION = lexicon.pattern("negation")


def unquoted(plain: str, quotes: list[str]) -> str:
    """The sentence without the spans it quotes from a design document (a quoted rule is not a verdict)."""
    def drop(match: re.Match) -> str:
        inner = " ".join(match.group(1).split())
        return " " if any(inner and inner in " ".join(quote.split()) for quote in quotes) else match.group(0)
    return re.sub(r"[\"\u201c]([^\"\u201d]+)[\"\u201d]", drop, plain)


def _read_values(row: DecisionRow) -> str:
    return ", ".join(f"{name}={short(entry['value']) if entry.get('measured') else 'not measured'}"
                     for name, entry in sorted(row.read.items()))


def _cited(view: ClaimView) -> list[tuple[object, DecisionRow | None]]:
    return [(source, view.context.decision(source.trigger)) for source in view.claim.decision_sources]


@rule("decision-known", "A cited decision has a trigger")
def decision_known(view: ClaimView) -> list[str]:
    """A decision source names a decision whose reversal trigger is a fenced `trigger` block of a
    design document."""
    known = ", ".join(row.trigger.decision for row in view.context.decisions) or "none"
    return [f"decision {source.trigger} has no trigger block in design/ (triggers: {known})"
            for source, row in _cited(view) if row is None]


@rule("decision-state", "A cited decision is in the state the claim says")
def decision_state(view: ClaimView) -> list[str]:
    """The trigger, evaluated on the results, computes the state the claim declares (fires, does
    not fire, cannot be decided)."""
    return [f"decision {source.trigger}: the trigger {row.state} ({_read_values(row)}), but the claim says it "
            f"{source.state}" for source, row in _cited(view) if row is not None and row.state != source.state]


@rule("decision-outcome", "The sentence says the cited decision's outcome")
def decision_outcome(view: ClaimView) -> list[str]:
    """The sentence says the outcome the computed state gives, word for word, says no other state's
    outcome, and does not negate it ("whether to ship the reranker" names an undecided question)."""
    said = " ".join(unquoted(view.said, view.quotes).lower().split())
    found = []
    for source, row in _cited(view):
        if row is None or row.state != source.state:
            continue
        problem = _outcome_problem(said, row)
        if problem:
            found.append(f"decision {source.trigger} {row.state}: {problem}")
    return found


@rule("verdict-licensed", "Every verdict is a cited decision's outcome")
def verdict_licensed(view: ClaimView) -> list[str]:
    """Every verdict the sentence gives (ship, deploy, roll out, keep or drop the reranker, it pays
    for itself, in every lexicon language, and every decision's own outcome words) must be the
    computed outcome of a decision it cites, or, for an undecided one, the question "whether to
    ..." it leaves open."""
    said = normalise(unquoted(view.said, view.quotes))
    context = view.context
    licensed: list[tuple[int, int]] = []
    cited = []
    for source, row in _cited(view):
        if row is None or row.state != source.state:
            continue
        cited.append(row)
        licensed += phrase_spans(said, row.outcome)
        if row.state == UNDECIDED:
            licensed += whether_spans(said, [row.trigger.fires, row.trigger.otherwise])
    extra = unlicensed(said, licensed, context.languages)
    # Every decision's own outcome words are a verdict too ("keep the hybrid candidates" is D2's).
    if context.outcomes is not None:
        extra += [Verdict(match.start(), match.end(), match.group(0)) for match in context.outcomes.finditer(said)
                  if not any(a <= match.start() and match.end() <= b for a, b in licensed)]
    extra.sort(key=lambda verdict: verdict.start)
    if not extra:
        return []
    if not view.claim.decision_sources:
        return [f"the claim gives a verdict ({extra[0].text!r}) that no decision record computes: cite the trigger "
                f"(decision: {{trigger: {context.example_decision}, state: ...}}) so the verdict follows from the results"]
    computed = "; ".join(f"{row.trigger.decision}: {row.outcome!r}" for row in cited) or "nothing it can cite"
    return [f"the claim also gives the verdict {extra[0].text!r}, which no cited decision computes ({computed}): a "
            "cited decision licenses its own outcome, word for word, and no other verdict"]


def _outcome_problem(said: str, row: DecisionRow) -> str | None:
    """Why the sentence does not say the decision the trigger computed: every outcome phrase it
    holds (longest first, so "do not ship the reranker" is not read as "ship the reranker") must
    be the computed one, at least one must be there, and none may be negated just before it."""
    phrases = sorted({" ".join(row.trigger.outcome(state).lower().split())
                      for state in ("fires", "does not fire", "cannot be decided")}, key=len, reverse=True)
    outcome = " ".join(row.outcome.lower().split())
    found = []
    taken = [False] * len(said)
    if row.state == UNDECIDED:   # "whether to ship the reranker" names the open question, not an answer
        for start, end in whether_spans(said, [row.trigger.fires, row.trigger.otherwise]):
            taken[start:end] = [True] * (end - start)
    for phrase in phrases:
        for match in re.finditer(r"(?<!\w)" + re.escape(phrase) + r"(?!\w)", said):
            if not any(taken[match.start():match.end()]):
                taken[match.start():match.end()] = [True] * (match.end() - match.start())
                found.append((match.start(), phrase))
    if not any(phrase == outcome for _, phrase in found):
        return f"the sentence must say {row.outcome!r}"
    others = sorted({phrase for _, phrase in found if phrase != outcome})
    if others:
        return f"it says {row.outcome!r} but also {others[0]!r}, the decision of another trigger state"
    for start, _phrase in found:
        before = " ".join(said[:start].split()[-3:])
        if _NEGATION.search(before):
            return f"the sentence negates {row.outcome!r} ({before!r} before it)"
    return None
