"""Predicates: a comparison the sentence shows or words is held by a predicate that is true, able
to fail, compares what it names, and compares the values of the rows the sentence names."""

from __future__ import annotations

from typing import Any

from generator.claims.language.ledger import literal_text
from generator.claims.tracing.naming import (ShownValue, is_query_count, mention_spans, mentions_row, named_rows,
                                             rows_of)
from generator.claims.tracing.rules import noted_rule, rule
from generator.claims.tracing.view import ClaimView
from generator.core.text.wording import COMPARATIVE

# Kinds of value that say what was measured rather than how well (generator.core.results.schema).
SAYS_WHAT_WAS_MEASURED = ("count", "query count", "parameter", "identity")

noted_rule("predicate-holds", "Every predicate is true", (
    "A predicate (`hybrid > dense`) is evaluated on the claim's values; false, or not a truth value, "
    "and the claim does not trace."), __name__)
noted_rule("predicate-can-fail", "Every predicate can fail", (
    "A predicate that compares none of the claim's values, or stays true however they change "
    "(`h == h`, `d > -1` on an nDCG), supports nothing."), __name__)
noted_rule("predicate-compares", "A predicate compares what it names", (
    "A predicate naming two or more values compares two of them with each other, or holds one against "
    "zero, an exact count or a category: `h > -1 and d > -1` names both and holds neither."), __name__)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def says_what_was_measured(value: ShownValue) -> bool:
    """A count or a setting of the whole file (the documents, the queries, the query set, the
    candidate depth): it says what was measured, never how well."""
    location = value.location
    return is_query_count(value) or (location is not None and location.block.scalar
                                     and location.kind in SAYS_WHAT_WAS_MEASURED)


def _measure_groups(names: list[str], view: ClaimView) -> list[list[str]]:
    """Shown numbers that are the same measure (their paths end in the same key, such as nDCG@5):
    set side by side, they read as a comparison."""
    groups: dict[str, list[str]] = {}
    for name in names:
        steps = view.value_sources[name].steps[name]
        if says_what_was_measured(view.declared[name]):
            continue  # query counts name a sample (attribution); they are not compared
        groups.setdefault(steps[-1].text() if steps else name, []).append(name)
    return [group for group in groups.values() if len(group) >= 2]


@rule("comparison-held", "A comparison is held by a predicate on the rows it names")
def comparison_held(view: ClaimView) -> list[str]:
    """A claim that is evaluative or causal, uses comparative wording, or shows two numbers of the
    same measure needs a predicate; each such pair of numbers is compared in one; and with
    comparative wording the predicate compares values the sentence shows or of the rows it names,
    between the rows it compares."""
    claim = view.claim
    if not claim.measured_sources:
        return []
    plain, compared, shown_names = view.said, view.compared, view.shown_names
    numbers_shown = sorted({name for name in shown_names if _is_number(view.values.get(name))
                            and name in view.value_sources})
    groups = _measure_groups(numbers_shown, view)
    # The author's own words compare; words inside a filled value (a stage record) do not.
    comparative = COMPARATIVE.search(literal_text(claim.text, " "))
    if not (groups or comparative or claim.kind in ("evaluative", "causal")):
        return []
    why = (f"it shows {', '.join('{' + name + '}' for name in groups[0])} side by side" if groups else
           f"it compares ({comparative.group(0)!r})" if comparative else f"it is {claim.kind}")
    if not any(source.compiled is not None for source in claim.measured_sources):
        return [f"the claim needs a predicate because {why}: state the comparison (for example `hybrid > dense`) "
                "so the checker can hold it"]
    missing = [name for group in groups for name in group if name not in compared]
    if missing:
        return [f"the claim shows {', '.join('{' + name + '}' for name in missing)} beside numbers of the same "
                "measure, but no predicate compares them: a comparison a sentence shows must be held"]
    if not comparative:
        return []
    unrelated = sorted(name for name in compared if not _related(name, view))
    if unrelated:
        return [f"the claim compares ({comparative.group(0)!r}) but its predicate compares {', '.join(unrelated)}, "
                "a value of a row the sentence does not name: a predicate on another value holds nothing it says"]
    named_values = {name for name, value in view.declared.items()
                    if any(mentions_row(plain, row) for row in rows_of(value))}
    if not compared & (set(shown_names) | named_values):
        return [f"the claim compares ({comparative.group(0)!r}) but its predicate compares no value the sentence "
                "shows or of a row it names: a predicate on another value holds nothing it says"]
    named = named_rows(plain, view.known_rows)
    covered = set().union(*(rows_of(view.declared[name]) for name in compared if name in view.declared)) & named
    if len(named) >= 2 and len(covered) < 2 and _compares_between(plain, named):
        return [f"the claim compares rows {', '.join(sorted(named))} but its predicates compare values of "
                f"{', '.join(sorted(covered)) or 'none of them'}: hold the comparison between the rows it names"]
    return []


def _compares_between(plain: str, rows: set[str]) -> bool:
    """Comparative wording between the first and the last row the sentence names ("Hybrid beats
    dense"), as opposed to a sentence that mentions a second row in passing."""
    spans = [span for row in rows for span in mention_spans(plain, row)]
    if len({row for row in rows if mention_spans(plain, row)}) < 2:
        return False
    first, last = min(start for start, _ in spans), max(end for _, end in spans)
    return any(first <= match.start() and match.end() <= last for match in COMPARATIVE.finditer(plain)
               if match.group(0).lower() != "rather than")


def _related(name: str, view: ClaimView) -> bool:
    """A compared value belongs to the sentence: it is shown, it is a value of a row the sentence
    names (or of no row at all), or it is a count of what was measured."""
    if name in view.shown_names:
        return True
    value = view.declared.get(name)
    if value is None:
        return False
    rows = rows_of(value)
    return says_what_was_measured(value) or not rows or any(mentions_row(view.said, row) for row in rows)
