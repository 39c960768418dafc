"""How a measured value may be placed in a sentence: a short allow-list of format specs.

    {name}        text as written, or an integer, or a number at full precision
    {name:d}      an integer                     {name:,d} or {name:,}  with thousands commas
    {name:.3f}    a number, 3 decimals (0 to 9)  {name:+.3f}   the same, sign always shown
    {name:,.1f}   with thousands commas
    {name:.1%}    a share as a percentage        {name:+.1%}   the same, sign always shown

No fill, alignment or width (a width spec can turn 0.048 into `90.05`, and `{h:2000000000}`
would build a 2 GB sentence), at most 9 decimals, numeric specs only on numbers, no spec at all
on text (a precision spec cuts a reason into a word), and never a boolean: a sentence states a
yes/no with its own words and a predicate holds it. A refused spec is repeated in the message cut
to 40 characters: a spec can be as long as the claim's text.
"""

from __future__ import annotations

import math
import re
from typing import Any

from generator.core.results import excerpt

SPEC = re.compile(r"(?P<sign>\+)?(?P<comma>,)?(?:\.(?P<precision>[0-9]))?(?P<type>[df%])?\Z")
ALLOWED = "'', ',', d, ,d, .Nf, +.Nf, ,.Nf, .N%, +.N% (N from 0 to 9)"


def spec_problem(spec: str) -> str | None:
    """Why a format spec is not on the allow-list (None when it is); checked when the ledger loads."""
    match = SPEC.match(spec)
    shown = excerpt(spec, 40)
    if match is None:
        return f"format spec {shown} is not allowed; use one of {ALLOWED}"
    kind, precision = match.group("type"), match.group("precision")
    if kind == "d" and (precision is not None or match.group("sign")):
        return f"format spec {shown}: an integer takes `d` or `,d` only"
    if kind in ("f", "%") and precision is None:
        return f"format spec {shown}: give the decimals, for example .3f or .1%"
    if kind is None and spec and spec != ",":
        return f"format spec {shown} is not allowed; use one of {ALLOWED}"
    return None


def place(value: Any, spec: str) -> tuple[str | None, str | None]:
    """(text, None) for a value that may be shown with `spec`, or (None, why not)."""
    if isinstance(value, bool):
        return None, "a boolean is never placed in a sentence: say it in words and hold it with a predicate"
    if isinstance(value, (dict, list)) or value is None:
        return None, "only numbers and text can be placed in a sentence"
    if isinstance(value, str):
        if spec:
            return None, f"text takes no format spec (got {excerpt(spec, 40)})"
        return value, None
    if isinstance(value, float) and not math.isfinite(value):
        return None, f"{value!r} is not a finite number"
    if spec.endswith("d") and not isinstance(value, int):
        return None, f"format spec {excerpt(spec, 40)} is for integers; {value!r} is not one"
    if spec_problem(spec) is not None:
        # The ledger refuses such a spec when it loads; a caller that skipped that gets no
        # 2 GB string for `{h:2000000000}` either.
        return None, spec_problem(spec)
    text = format(value, spec)
    if re.fullmatch(r"[-+]?0*\.?0*%?", text.lstrip("-")) and text.startswith("-"):
        text = format(0.0 if not isinstance(value, int) else 0, spec)  # no "-0.000" for a tiny negative
    return text, None
