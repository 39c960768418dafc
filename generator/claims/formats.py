"""How a measured value may be placed in a sentence: a short allow-list of format specs.

    {name}        text as written, or an integer, or a number at full precision
    {name:d}      an integer                     {name:,d} or {name:,}  with thousands commas
    {name:.3f}    a number, 3 decimals (0 to 9)  {name:+.3f}   the same, sign always shown
    {name:,.1f}   with thousands commas
    {name:.1%}    a share as a percentage        {name:+.1%}   the same, sign always shown

No fill, alignment or width (a width spec can turn 0.048 into `90.05`), numeric specs only on
numbers, no spec at all on text (a precision spec cuts a reason into a word), and never a
boolean: a sentence states a yes/no with its own words and a predicate holds it.
"""

from __future__ import annotations

import math
import re
from typing import Any

SPEC = re.compile(r"(?P<sign>\+)?(?P<comma>,)?(?:\.(?P<precision>[0-9]))?(?P<type>[df%])?\Z")
ALLOWED = "'', ',', d, ,d, .Nf, +.Nf, ,.Nf, .N%, +.N% (N from 0 to 9)"


def spec_problem(spec: str) -> str | None:
    """Why a format spec is not on the allow-list (None when it is); checked when the ledger loads."""
    match = SPEC.match(spec)
    if match is None:
        return f"format spec {spec!r} is not allowed; use one of {ALLOWED}"
    kind, precision = match.group("type"), match.group("precision")
    if kind == "d" and (precision is not None or match.group("sign")):
        return f"format spec {spec!r}: an integer takes `d` or `,d` only"
    if kind in ("f", "%") and precision is None:
        return f"format spec {spec!r}: give the decimals, for example .3f or .1%"
    if kind is None and spec and spec != ",":
        return f"format spec {spec!r} is not allowed; use one of {ALLOWED}"
    return None


def place(value: Any, spec: str) -> tuple[str | None, str | None]:
    """(text, None) for a value that may be shown with `spec`, or (None, why not)."""
    if isinstance(value, bool):
        return None, "a boolean is never placed in a sentence: say it in words and hold it with a predicate"
    if isinstance(value, (dict, list)) or value is None:
        return None, "only numbers and text can be placed in a sentence"
    if isinstance(value, str):
        if spec:
            return None, f"text takes no format spec (got {spec!r})"
        return value, None
    if isinstance(value, float) and not math.isfinite(value):
        return None, f"{value!r} is not a finite number"
    if spec.endswith("d") and not isinstance(value, int):
        return None, f"format spec {spec!r} is for integers; {value!r} is not one"
    text = format(value, spec)
    if re.fullmatch(r"[-+]?0*\.?0*%?", text.lstrip("-")) and text.startswith("-"):
        text = format(0.0 if not isinstance(value, int) else 0, spec)  # no "-0.000" for a tiny negative
    return text, None
