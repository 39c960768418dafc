"""The rules a claim must keep to trace, as a registry: each rule a unit with a stable code, a
title and one check over the claim's view (generator.claims.tracing.view), the way Vale keeps its
rules (the interface in code, the words each reads as data: generator/core/text/lexicons/).

A check returns one message per thing broken; `readout check` reports each as a finding under
the rule's code, in text, JSON and GitHub output. docs/rules.md is generated from this registry
(`python docs/generate_rules_reference.py`) and a test keeps it current. Rules run in the order
they are registered here: a reader meets the cause (a path that does not resolve) before its
consequences.

Modules: `frames` (a frame is computed and written), `sources` (each source holds and each value is used), `predicates` (comparisons held by
predicates that can fail), `placeholders` (formats, text from results, links), `presentation` (a placed figure shown as what it is:
its sign, its unit, never zero for a value that is not), `attribution` (a
value beside its row, baseline, query and query set), `statistic` (a value named as the statistic
it is), `subjects` (a source supports only what it speaks of), `costs` (a cost says how it was
measured), `licensing` (the author's words carry no result), `prose` (free prose beside a result entity keeps to a
closed vocabulary), `identity` (which model
ran, what a count counts), `decisions` (verdicts computed by triggers) and `numbers` (every
numeral from evidence).
"""

from __future__ import annotations

import functools
import importlib
import re
from typing import Callable, Iterable

from generator.claims.tracing.view import ClaimView, Finding
from generator.core.dataclass import dataclass

# The rule modules, in the order their rules run.
FAMILIES = ("frames", "sources", "predicates", "placeholders", "presentation", "attribution", "statistic", "subjects", "costs",
            "licensing", "prose", "identity", "decisions", "numbers")
# The families a frame is held to: the package wrote its words, so only whether it was computed and
# written is the frame's to answer for.
FRAME_FAMILIES = ("frames",)
_CODE = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*\Z")


@dataclass(frozen=True)
class Rule:
    code: str
    title: str
    family: str
    check: Callable[[ClaimView], Iterable[str]]

    @property
    def description(self) -> str:
        """What the rule holds, in words: its check's docstring."""
        return " ".join((self.check.__doc__ or "").split())


_REGISTERED: list[Rule] = []


def rule(code: str, title: str) -> Callable[[Callable[[ClaimView], Iterable[str]]], Callable[[ClaimView], Iterable[str]]]:
    """Register a check under a stable code (lower-case words joined by hyphens)."""
    if not _CODE.match(code):
        raise ValueError(f"rule code {code!r} is not lower-case words joined by hyphens")

    def register(check: Callable[[ClaimView], Iterable[str]]) -> Callable[[ClaimView], Iterable[str]]:
        if any(existing.code == code for existing in _REGISTERED):
            raise ValueError(f"rule code {code!r} is registered twice")
        _REGISTERED.append(Rule(code, title, check.__module__.rsplit(".", 1)[-1], check))
        return check
    return register


def noted_rule(code: str, title: str, description: str, module: str) -> None:
    """Register a rule whose findings the view makes while binding the claim's sources (a quote
    not found, a path that does not resolve): its check reports what the view noted under `code`."""
    def check(view: ClaimView) -> list[str]:
        return list(view.noted.get(code, ()))
    check.__doc__ = description
    check.__module__ = module
    rule(code, title)(check)


_LOADED: tuple[Rule, ...] | None = None


def registry() -> tuple[Rule, ...]:
    """Every rule, in the order they run."""
    global _LOADED
    if _LOADED is None:
        for family in FAMILIES:
            importlib.import_module(f"{__name__}.{family}")
        order = {family: number for number, family in enumerate(FAMILIES)}
        _LOADED = tuple(sorted(_REGISTERED, key=lambda entry: order[entry.family]))
    return _LOADED


def by_code(code: str) -> Rule:
    return next(entry for entry in registry() if entry.code == code)


def findings(view: ClaimView) -> list[Finding]:
    """Every rule's findings on one claim, in registry order: a frame's rules for a frame, every
    other rule for the author's words."""
    return [Finding(entry.code, message) for entry in _rules_for(framed=view.claim.frame is not None)
            for message in entry.check(view)]


@functools.cache
def _rules_for(*, framed: bool) -> tuple[Rule, ...]:
    """The rules that read a frame, or those that read the author's words, in registry order."""
    return tuple(entry for entry in registry() if (entry.family in FRAME_FAMILIES) == framed)
