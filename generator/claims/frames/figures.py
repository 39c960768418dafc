"""What a computed frame holds: the figures its sentence places, the facts that choose its words,
its evidence, or the problem that keeps it from a sentence (generator.claims.frames.readings
computes it, generator.claims.frames.phrasing writes it).

A value becomes a figure only as the number or count it is: a flag, a text or a non-finite number
is none, so a sentence never places one.
"""

from __future__ import annotations

import math
from dataclasses import field
from typing import Any

from generator.claims.evidence import Evidence
from generator.claims.frames.spec import Frame
from generator.core.dataclass import dataclass


@dataclass(frozen=True)
class Figure:
    """A value the sentence places, and what it is (generator.claims.frames.present shows it)."""

    kind: str           # text | score | number | change | interval | p | ms | count | percent | relative | pairs
    value: Any
    thresholds: tuple[float, ...] = ()
    noun: str | None = None         # a count's noun (query, configuration)


@dataclass
class Reading:
    frame: Frame
    case: str = ""                                   # which sentence of the kind
    facts: dict[str, str] = field(default_factory=dict)      # word choices, each computed
    figures: dict[str, Figure] = field(default_factory=dict)
    evidence: list[Evidence] = field(default_factory=list)
    problem: str | None = None
    post_hoc: bool = False                           # it reads a rule or threshold fixed after the results

    def fail(self, problem: str) -> "Reading":
        self.problem = problem
        return self


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _measured(reading: Reading, file: str, path: str, value: Any) -> None:
    reading.evidence.append(Evidence("measured", file=file, path=path, value=value))
