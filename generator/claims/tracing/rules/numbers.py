"""Numbers: every numeral a reader sees, in any spelling (generator.core.text.numerals: digits, number
words, multipliers, Roman numerals, versions), was filled from results, names a query the
sentence shows a value of, or lies inside a quoted design span with the same words around it.
Predicate constants account for nothing."""

from __future__ import annotations

import re
from typing import Any

from generator.claims.language.visible import PLACED_CLOSE, PLACED_OPEN
from generator.claims.tracing.measured import short
from generator.claims.tracing.naming import query_of, query_spans
from generator.claims.tracing.rules import rule
from generator.claims.tracing.view import ClaimView
from generator.core.text.numerals import find_numerals
from generator.core.text.quoted_numerals import inside_quoted_span


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@rule("number-placed", "Every number a reader sees comes from evidence")
def number_placed(view: ClaimView) -> list[str]:
    """A numeral that neither a placeholder, a named query id nor a quoted design span accounts
    for was typed by hand."""
    marked = view.visible.text
    placed = list(view.visible.placed_spans())
    words = marked.replace(PLACED_OPEN, " ").replace(PLACED_CLOSE, " ")
    for value in view.shown:
        query = query_of(value)
        if query is not None:
            placed.extend(query_spans(words, query))
    found = []
    for numeral in find_numerals(marked, view.context.identifiers):
        if any(low <= numeral.start and numeral.end <= high for low, high in placed):
            continue
        if any(inside_quoted_span(words, numeral, quote) for quote in view.quotes):
            continue
        found.append(f"number {numeral.token!r} is typed by hand: no placeholder fills it and no quoted design span "
                     f"holds it with the same words around it{_hint(numeral.token, view.values)}")
    return found


def _hint(token: str, values: dict[str, Any]) -> str:
    decimals = len(token.split(".")[1]) if re.fullmatch(r"[-+]?\d+\.\d+", token) else 0
    for name, value in values.items():
        if _is_number(value) and f"{value:.{decimals}f}" == token.replace(",", "").lstrip("+"):
            return f"; it matches {name} = {short(value)}: write {{{name}:.{decimals}f}}"
    return ""
