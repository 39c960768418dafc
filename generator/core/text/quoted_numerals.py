"""The quote rule: whether a numeral of a claim is accounted for by a design quote.

A numeral is accounted for by a design quote only when it lies inside the quoted span, that is
when the quote holds the same numeral (equal normalized forms, as generator.core.text.numerals finds
them) with the same words around it. See `inside_quoted_span`.
"""

from __future__ import annotations

import functools
import unicodedata

from generator.core.text.numerals import _EXTRA, PLACEHOLDER_CLOSE, PLACEHOLDER_OPEN, Numeral, _Lazy, find_numerals


_WORD = _Lazy(rf"[^\s{PLACEHOLDER_OPEN}{PLACEHOLDER_CLOSE}]+")
_EDGE_PUNCTUATION = _Lazy(r"^\W+|\W+$")


def inside_quoted_span(text: str, numeral: Numeral, quote: str) -> bool:
    """Whether `numeral` (found in `text`) lies inside the quoted span `quote`.

    True when the quote holds a numeral with the same normalized form whose surroundings agree
    with the claim's. Both texts are split into words at whitespace (and at the placeholder marks);
    a word is compared lowercased, NFKC-normalised, with its surrounding punctuation stripped, and
    words that are only punctuation (`—`) are passed over. For each occurrence in the quote:
    the words holding the numeral must be equal (so `top-50` is not `depth-50`; `2030.` is
    `2030,`); of the previous and the next word (None at the start or end), at least one must
    exist on both sides, and every one that exists on both sides must agree. A quote that is
    exactly the numeral accounts for it. So "RRF with constant 60, and" is not inside "RRF with
    constant 60, ties broken by first appearance" (`and` is not `ties`), and "by 2030." is inside
    "by 2030, which" (only `by` is comparable, and it agrees).
    """
    occurrences = [(whole, around) for normalized, whole, around in _quoted(quote) if normalized == numeral.normalized]
    if not occurrences:
        return False
    if any(whole for whole, _ in occurrences):
        return True
    claim = _surroundings(text, numeral.start, numeral.end)
    for _, (before, holding, after) in occurrences:
        if holding != claim[1]:
            continue
        pairs = [(mine, theirs) for mine, theirs in ((claim[0], before), (claim[2], after))
                 if mine is not None and theirs is not None]
        if pairs and all(mine == theirs for mine, theirs in pairs):
            return True
    return False


@functools.lru_cache(maxsize=1024)
def _quoted(quote: str) -> tuple[tuple[str, bool, tuple[str | None, str, str | None]], ...]:
    """Each numeral of a quote: its normalized form, whether it is the whole quote, and its
    surroundings. A ledger cites the same few design sentences again and again."""
    return tuple((found.normalized, not quote[:found.start].strip() and not quote[found.end:].strip(),
                  _surroundings(quote, found.start, found.end)) for found in find_numerals(quote))


def _surroundings(text: str, start: int, end: int) -> tuple[str | None, str, str | None]:
    """(previous word, the words holding text[start:end], next word), each compared form. Only the
    nearest words are compared (normalised): a word that is only punctuation is passed over."""
    words = list(_WORD.finditer(text))
    holding = [word.group() for word in words if word.end() > start and word.start() < end]
    before = next((compared for word in reversed(words) if word.end() <= start
                   and (compared := _compared(word.group()))), None)
    after = next((compared for word in words if word.start() >= end and (compared := _compared(word.group()))), None)
    return before, _compared(" ".join(holding)), after


def _compared(word: str) -> str:
    if not word.isascii():
        word = unicodedata.normalize("NFKC", word).translate(_EXTRA)
    return _EDGE_PUNCTUATION.sub("", word.lower())
