"""A recorded figure against the one its evidence gives: the re-derivation
(generator.claims.tracing.rederive) refuses a results file at the first value that differs, named
by its path, so the refusal says which figure its run files and judgements do not give.
"""

from __future__ import annotations

import math
from typing import Any


class Mismatch(Exception):
    """The first figure of a results file that its evidence does not give."""


def _same(recorded: Any, derived: Any) -> bool:
    if isinstance(recorded, bool) or isinstance(derived, bool):
        return recorded is derived
    if isinstance(recorded, (int, float)) and isinstance(derived, (int, float)):
        if isinstance(recorded, float) and not math.isfinite(recorded):
            return False
        return math.isclose(recorded, derived, rel_tol=1e-12, abs_tol=1e-12)
    if isinstance(recorded, dict) and isinstance(derived, dict):
        return recorded.keys() == derived.keys() and all(_same(recorded[k], derived[k]) for k in recorded)
    if isinstance(recorded, list) and isinstance(derived, list):
        return len(recorded) == len(derived) and all(_same(a, b) for a, b in zip(recorded, derived))
    return recorded == derived


def _expect(where: str, recorded: Any, derived: Any) -> None:
    """Refuse at the first value of `recorded` that is not `derived`, naming it by its path."""
    if _same(recorded, derived):
        return
    if isinstance(recorded, dict) and isinstance(derived, dict) and recorded.keys() == derived.keys():
        for key in sorted(derived, key=str):
            _expect(f"{where}.{key}" if where else str(key), recorded[key], derived[key])
    if isinstance(recorded, list) and isinstance(derived, list) and len(recorded) == len(derived):
        for index, (written, made) in enumerate(zip(recorded, derived)):
            label = made.get("search") if isinstance(made, dict) and "search" in made else None
            _expect(f"{where}[search={label}]" if label is not None else f"{where}[{index}]", written, made)
    if isinstance(recorded, dict) and isinstance(derived, dict) and recorded.keys() != derived.keys():
        extra, missing = sorted(set(recorded) - set(derived), key=str), sorted(set(derived) - set(recorded), key=str)
        if missing:
            raise Mismatch(f"{where}.{missing[0]} is missing, but its run files and judgements give "
                           f"{_show(derived[missing[0]])}")
        raise Mismatch(f"{where}.{extra[0]} is {_show(recorded[extra[0]])}, but its run files and judgements give "
                       "no such value")
    raise Mismatch(f"{where} is {_show(recorded)}, but its run files and judgements give {_show(derived)}")


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _field(mapping: Any, key: str, where: str) -> Any:
    if not isinstance(mapping, dict) or key not in mapping:
        raise Mismatch(f"{where}.{key} is missing")
    return mapping[key]
