"""How the tool presents a figure in a sentence it writes: the unit from what the figure is, the
sign inside the placed value, and the fewest decimals that never show a non-zero value as zero
nor move a value across a threshold the sentence compares it with.

An author never formats a figure of a frame: `{delta:+.0f}` showing -0.358 as "+0", a typed minus
sign before a placeholder, "1,558 microseconds" or a percent sign on a change that is not
relative cannot be written, because the words around a figure and the figure itself come from
here. Each language writes its numbers its own way (decimal comma, thousands separator), read
from its phrasing file (generator/claims/frames/phrasings/).
"""

from __future__ import annotations

import math
from typing import Iterable

from generator.core.dataclass import dataclass

# Decimals a score, a change or an interval end starts from, and the most it may grow to so that
# a value keeps its side of every threshold it is compared with (and a non-zero value is not 0).
BASE_DECIMALS = 3
MAX_DECIMALS = 6
MINUS = "-"
PLUS = "+"


@dataclass(frozen=True)
class NumberStyle:
    """How a language writes a number: its decimal mark and thousands separator."""

    decimal: str = "."
    thousands: str = ","


def decimals_that_decide(values: Iterable[float], thresholds: Iterable[float] = (),
                         base: int = BASE_DECIMALS) -> int:
    """The fewest decimals (from `base` up to MAX_DECIMALS) at which every value, rounded, is
    still non-zero when it is non-zero and still on its own side of each threshold (equal stays
    equal). Past MAX_DECIMALS the caller says "below 10^-6" rather than round."""
    values = [float(value) for value in values]
    thresholds = [float(threshold) for threshold in thresholds]
    for decimals in range(base, MAX_DECIMALS + 1):
        if all(_keeps_side(value, decimals, thresholds) for value in values):
            return decimals
    return MAX_DECIMALS


def _side(value: float, threshold: float) -> int:
    return (value > threshold) - (value < threshold)


def _keeps_side(value: float, decimals: int, thresholds: list[float]) -> bool:
    shown = round(value, decimals)
    if value != 0 and shown == 0:
        return False
    return all(_side(shown, threshold) == _side(value, threshold) for threshold in thresholds)


def _grouped(integer_digits: str, separator: str) -> str:
    groups = []
    while len(integer_digits) > 3:
        groups.insert(0, integer_digits[-3:])
        integer_digits = integer_digits[:-3]
    groups.insert(0, integer_digits)
    return separator.join(groups)


def number(value: float, decimals: int, style: NumberStyle, *, signed: bool = False, group: bool = True) -> str:
    """`value` at `decimals`, in the language's style; `signed` always shows + or - (a change).
    A value that rounds to zero is shown unsigned, whatever its sign."""
    if not math.isfinite(value):
        raise ValueError(f"{value!r} is not a finite number")
    text = f"{abs(value):.{decimals}f}"
    whole, _, fraction = text.partition(".")
    shown = (_grouped(whole, style.thousands) if group else whole) + (style.decimal + fraction if fraction else "")
    if float(text) == 0:
        return shown
    if value < 0:
        return MINUS + shown
    return PLUS + shown if signed else shown


def integer(value: int, style: NumberStyle) -> str:
    return number(float(value), 0, style)


def decimals_that_order(first: float, second: float, base: int = BASE_DECIMALS) -> int:
    """The fewest decimals at which two values, both rounded, keep their order (equal stays equal)."""
    for decimals in range(base, MAX_DECIMALS + 1):
        if _side(round(first, decimals), round(second, decimals)) == _side(first, second) and \
                _keeps_side(first, decimals, []) and _keeps_side(second, decimals, []):
            return decimals
    return MAX_DECIMALS


def score(value: float, style: NumberStyle, thresholds: Iterable[float] = (), decimals: int | None = None) -> str:
    """A metric's value (nDCG, recall, ...): at least three decimals, more when a threshold needs them."""
    return number(value, decimals if decimals is not None else decimals_that_decide([value], thresholds), style)


def change(value: float, style: NumberStyle, thresholds: Iterable[float] = (0.0,)) -> str:
    """A difference (row minus baseline): always signed."""
    return number(value, decimals_that_decide([value], thresholds), style, signed=True)


def interval_ends(low: float, high: float, style: NumberStyle, thresholds: Iterable[float] = (0.0,)) -> tuple[str, str]:
    """Both ends of an interval at the same decimals, enough that neither end changes side of any
    threshold (zero, a margin) by rounding: [-0.01004, ...] against 0.01 is never "-0.010"."""
    decimals = decimals_that_decide([low, high], thresholds)
    return (number(low, decimals, style, signed=True), number(high, decimals, style, signed=True))


def p_value(value: float, style: NumberStyle) -> str:
    """A p-value with its relation: "= 0.017" at two significant figures, "< 0.0001" below that
    (never "= 0.000")."""
    if value < 0.0001:
        return "< " + number(0.0001, 4, style)
    return "= " + _p_digits(value, style)


def _p_digits(value: float, style: NumberStyle) -> str:
    if value >= 0.1:
        decimals = 2
    else:
        decimals = max(2, 1 - math.floor(math.log10(value)))
    decimals = decimals_that_decide([value], [0.05], base=decimals)
    return number(value, decimals, style)


def milliseconds(value: float, style: NumberStyle, thresholds: Iterable[float] = ()) -> str:
    """A time in milliseconds, in whole milliseconds from 10 up, one decimal below (never 0 ms for a
    time that is not zero)."""
    base = 0 if abs(value) >= 10 else 1
    decimals = base
    while decimals < MAX_DECIMALS and not _keeps_side(value, decimals, list(thresholds)):
        decimals += 1
    return number(value, decimals, style)


def plain(value: float, style: NumberStyle) -> str:
    """A number as it was written (a threshold of the design, a power): its shortest exact form."""
    text = f"{value:.6g}"
    if "e" in text:
        text = f"{value:.{MAX_DECIMALS}f}".rstrip("0").rstrip(".")
    whole, _, fraction = text.lstrip("-").partition(".")
    shown = _grouped(whole, style.thousands) + (style.decimal + fraction if fraction else "")
    return (MINUS if value < 0 else "") + shown


def percent(value: float, style: NumberStyle, *, signed: bool = False) -> str:
    """A share or a relative change as a percentage, one decimal (more when it would read 0.0)."""
    hundred = value * 100
    decimals = 0 if float(hundred).is_integer() else 1
    while decimals < MAX_DECIMALS and hundred != 0 and round(hundred, decimals) == 0:
        decimals += 1
    return number(hundred, decimals, style, signed=signed) + "%"
