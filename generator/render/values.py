"""How a results value is shown in a report: formatted with a declared spec, never invented."""

from __future__ import annotations

import json
import math
import re
from typing import Any

_NEGATIVE_ZERO = re.compile(r"-0*\.?0*%?")


def format_number(value: Any, spec: str) -> str:
    """A results value as shown: numbers with the column's spec (no negative zero), others as is."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            return str(value)
        text = format(value, spec)
        if _NEGATIVE_ZERO.fullmatch(text):  # a tiny negative rounds to zero: no "-0.000"
            text = format(0.0, spec)
        return text
    return str(value)


def as_number(value: Any) -> float | None:
    """A finite-or-not real number as float; None for booleans, text, null and containers."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def raw_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)
