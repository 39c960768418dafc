"""Presentation: a figure the author places is presented as what it is. The sign is part of the
placed value (a change is placed with a signed format, never after a typed minus or plus); a
format never shows a value that is not zero as zero; a percent format is for a share, never for a
change or a mean, which it would show as relative; and a time is followed by its own unit, never
another ("1,558 microseconds" for 1,558 ms). A frame's figures are the package's
(generator.claims.frames.present) and need none of this."""

from __future__ import annotations

import re

from generator.claims.tracing.rules import rule
from generator.claims.tracing.view import ClaimView
from generator.core.text.wording import with_article

# Kinds of the results schema a placed sign or percent sign speaks of; of the changes, only a
# difference (row minus baseline) and its interval carry a sign, never a magnitude such as the
# smallest detectable effect.
SIGNED_KINDS = ("change", "interval end")
UNSIGNED_CHANGES = ("minimum_detectable_effect",)
NOT_PERCENT_KINDS = ("change", "interval end", "mean", "bound", "time", "count", "query count", "p-value", "power")
_TYPED_SIGN = re.compile(r"(?:[+\-\u2212\u00b1\u2213]|\b(?:minus|plus|negative|positive))\s*\Z", re.IGNORECASE)
_TIME_UNITS = re.compile(r"\A\s*(ns|nanoseconds?|µs|μs|us|microseconds?|ms|milliseconds?|s|secs?|seconds?|mins?|"
                         r"minutes?|h|hours?)\b", re.IGNORECASE)
_OWN_TIME = ("ms", "millisecond", "milliseconds")


def _placements(view: ClaimView):
    """Each placeholder with the literal text before and after it, and what its value is."""
    text = view.claim.text
    for match in re.finditer(r"(?<!\{)\{(\w+)(?::([^{}]*))?\}(?!\})", text):
        name, spec = match.group(1), match.group(2) or ""
        value = view.declared.get(name)
        location = value.location if value is not None else None
        yield name, spec, text[:match.start()], text[match.end():], location


@rule("figure-sign", "A sign is part of the placed value")
def figure_sign(view: ClaimView) -> list[str]:
    """A change or an interval end is placed with a signed format (`+.3f`), and no sign (+, -,
    ±, "minus", "plus") is typed before a placeholder: a typed minus before {lift} turns +0.071
    into a loss."""
    found = []
    for name, spec, before, _after, location in _placements(view):
        if _TYPED_SIGN.search(before):
            found.append(f"a sign is typed before {{{name}}}: the sign is part of the placed value (use a signed "
                         f"format, {{{name}:+.3f}})")
        elif location is not None and location.kind in SIGNED_KINDS and location.name not in UNSIGNED_CHANGES \
                and "+" not in spec and name in view.formatted:
            found.append(f"{{{name}}} is {with_article(location.kind)} ({location.name}), placed without its sign: use a signed "
                         f"format ({{{name}:+.3f}}), or a comparison frame")
    return found


@rule("figure-zero", "A format never shows a value that is not zero as zero")
def figure_zero(view: ClaimView) -> list[str]:
    """`{delta:+.0f}` shows -0.358 as "-0" or "+0": a format whose decimals show a value that is not
    zero as zero hides it."""
    found = []
    for name, text in view.formatted.items():
        value = view.values.get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value != 0 and \
                re.fullmatch(r"[-+\u2212]?[0,.\s]*%?", text) and re.search(r"0", text):
            found.append(f"{{{name}}} is {value!r} but its format shows {text!r}: give it enough decimals to show it "
                         "is not zero")
    return found


@rule("figure-percent", "A percent format is for a share")
def figure_percent(view: ClaimView) -> list[str]:
    """A change, a mean, a time or a count shown with `%` reads as a relative change or a share: a
    relative change is computed by the package (a comparison frame with `relative: "true"`)."""
    return [f"{{{name}}} is {with_article(location.kind)} ({location.name}) shown as a percentage, which reads as relative: "
            "place it as a number, or write a comparison frame with relative: \"true\""
            for name, spec, _before, _after, location in _placements(view)
            if spec.endswith("%") and location is not None and location.kind in NOT_PERCENT_KINDS]


@rule("figure-unit", "A time is followed by its own unit")
def figure_unit(view: ClaimView) -> list[str]:
    """A time the results record in milliseconds is followed by ms or milliseconds, never by another
    unit ("1,558 microseconds", "3.5 seconds" for 3,535 ms)."""
    found = []
    for name, _spec, _before, after, location in _placements(view):
        if location is None or location.kind != "time" or not (location.unit or "").startswith("milliseconds"):
            continue
        unit = _TIME_UNITS.match(after)
        if unit and unit.group(1).lower() not in _OWN_TIME:
            found.append(f"{{{name}}} is in milliseconds, but the sentence says {unit.group(1)!r}: a time is "
                         "followed by its own unit (ms)")
    return found
