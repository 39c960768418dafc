"""The value of a numeral a reader reads: 0.5 for `½` and `half`, 81 for `eighty-one`, 2 for
`twice` and `2x`, and none where no value is well defined (a version, a vague plural).

The numerals themselves are found by generator.core.text.numerals; a value is read from the
normalized form it gives, so every spelling of one number has the same value.
"""

from __future__ import annotations

import re

from generator.core.text.number_words import _DENOMINATORS, _FOREIGN_WORDS, _SCALES, _WORD_VALUES
from generator.core.text.numerals import _DIGIT, _FRACTION_SLASH, _LETTERS, _LOOKALIKE_DIGITS, Numeral, _Lazy


_MULTIPLIER_VALUES = (("twice", 2), ("thrice", 3), ("doubl", 2), ("tripl", 3), ("quadrupl", 4),
                      ("half", 0.5), ("halv", 0.5))
_WORD_PARTS = _Lazy(r"[a-z]+")
_NUMBER_VALUE = _Lazy(r"([-+±]?)(\.?\d+(?:,\d{3})*(?:\.\d+)?(?:e[-+]?\d+)?)(?:\^([-+]?\d+))?")
_FRACTION_PARTS = _Lazy(rf"([-+±]?)(?:(\d+) )?(\d+)[/{_FRACTION_SLASH}](\d+)")


def numeral_value(numeral: Numeral) -> float | None:
    """The numeral's value where one is well defined: 0.5 for `½` and `half`, 81 for `eighty-one`,
    2 for `twice` and `2x`, 10000 for `10,000`; None for versions and vague plurals (`thousands`).
    A sign counts (`-0.04`), a unit does not (`12ms` is 12, `95%` is 95)."""
    text = numeral.normalized
    kind = numeral.kind
    if kind in ("version", "identifier"):
        return None
    if kind == "number word":
        return _FOREIGN_WORDS.get(text, _words_value(text)) if text in _FOREIGN_WORDS else _words_value(text)
    if kind == "multiplier":
        for stem, value in _MULTIPLIER_VALUES:
            if text.startswith(stem):
                return float(value)
        if text.endswith("fold"):
            prefix = text[:-4].rstrip("-")
            return _number_value(prefix) if _DIGIT.search(prefix) else _words_value(prefix)
        return _number_value(text.lstrip("x×").strip())
    words = re.split(r"[\s-]+", text)
    if kind == "fraction" and len(words) == 2 and words[1] in _DENOMINATORS:
        count = 1 if words[0] in ("a", "an", "one") else _WORD_VALUES.get(words[0])
        return count / _DENOMINATORS[words[1]] if count is not None else None
    if kind == "fraction":
        sign, whole, numerator, denominator = _FRACTION_PARTS.search(text).groups()
        if int(denominator) == 0:
            return None
        value = int(whole or 0) + int(numerator) / int(denominator)
        return -value if sign == "-" else value
    if any(char in "lio" for char in text) and not _LETTERS.fullmatch(text):
        return _number_value(numeral.token.translate(_LOOKALIKE_DIGITS).rstrip("%‰"))
    return _number_value(text)


def _number_value(text: str) -> float | None:
    match = _NUMBER_VALUE.match(text)
    if match is None:
        return None
    sign, digits, exponent = match.groups()
    try:
        value = float(digits.replace(",", ""))
        if exponent is not None:
            value = value ** int(exponent)
    except (ArithmeticError, ValueError):  # 0^-1, 9^9999: no value a reader could check
        return None
    return -value if sign == "-" else value


def _words_value(text: str) -> float | None:
    total = current = 0
    for word in _WORD_PARTS.findall(text):
        if word == "and":
            continue
        if word in _WORD_VALUES:
            current += _WORD_VALUES[word]
        elif word in ("hundred", "dozen"):
            current = (current or 1) * _SCALES[word]
        elif word in _SCALES:
            total += (current or 1) * _SCALES[word]
            current = 0
        else:
            return None
    return float(total + current)
