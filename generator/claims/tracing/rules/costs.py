"""A cost measured without the model's weights says nothing about quality, and says how it was
measured: by shape (the architecture with random weights) or extrapolated from a few layers. The
model's own run is not described as either."""

from __future__ import annotations

import re
import string

from generator.core.text import lexicon
from generator.core.text.characters import fold
from generator.claims.language.visible import render_visible
from generator.claims.tracing.rules import rule
from generator.claims.tracing.view import ClaimView
from generator.core.options import SHAPE_COST
from generator.core.results import cost_block
from generator.core.text.wording import QUALITY

_SHAPE_WORDS = lexicon.pattern("shape")
_NOT_MEASURED = lexicon.pattern("not_measured")
_MARK_OPEN, _MARK_CLOSE = "\ue020", "\ue021"


class _Costs:
    """The shown values whose block measured cost alone (how), and those timed on the model's own run."""

    def __init__(self, view: ClaimView):
        self.cost_only: dict[str, str] = {}
        self.own_run: list[str] = []
        for value in view.shown:
            results = view.results_of(value.file)
            data = results.data if results is not None else None
            steps = value.canonical or value.steps
            block = cost_block(data, steps)
            if block is None:
                continue
            if block.get("quality") == "not measured" and block.get("cost") != "not measured":
                self.cost_only[value.name] = str(block.get("cost"))
            elif block.get("cost") == "measured":
                self.own_run.append(value.name)


def _costs(view: ClaimView) -> _Costs:
    cached = view.__dict__.get("_costs")
    if cached is None:
        cached = view.__dict__["_costs"] = _Costs(view)
    return cached


def _braced(names) -> str:
    return ", ".join("{" + name + "}" for name in names)


@rule("shape-said", "A cost by shape says so")
def shape_said(view: ClaimView) -> list[str]:
    """A figure of a cost measured with the architecture and random weights (its time, its batch,
    its length) is shown only in a sentence that says "measured by shape", so no reader takes it
    for the model's own run."""
    by_shape = [name for name, how in _costs(view).cost_only.items() if how.startswith(SHAPE_COST)]
    if not by_shape or re.search(r"\bshape\b", view.said, re.IGNORECASE):
        return []
    return [f"{_braced(by_shape)} was measured by shape (the architecture with random weights), but the sentence "
            "does not say so: say 'measured by shape' so no reader takes it for the model's own run"]


@rule("extrapolation-said", "An extrapolated cost says so")
def extrapolation_said(view: ClaimView) -> list[str]:
    """A time extrapolated from a few of the model's layers is shown only in a sentence that says
    'extrapolated'."""
    extrapolated = [name for name, how in _costs(view).cost_only.items() if "extrapolated" in how]
    if not extrapolated or re.search(r"\bextrapolat", view.said, re.IGNORECASE):
        return []
    return [f"{_braced(extrapolated)} was extrapolated from a few of the model's layers, but the sentence does not "
            "say so: say 'extrapolated' so no reader takes it for a timing of the whole model"]


@rule("quality-not-measured", "A cost without quality speaks of no quality")
def quality_not_measured(view: ClaimView) -> list[str]:
    """Beside a cost whose quality was not measured, each clause that speaks of quality (nDCG,
    recall, better, helps, ...) either says that quality was not measured or shows a measured
    value of its own."""
    cost_only = _costs(view).cost_only
    if not cost_only:
        return []
    measured_elsewhere = {value.name for value in view.shown if value.name not in cost_only}
    found = []
    for clause, names in _clauses_with_names(view.claim.text):
        match = QUALITY.search(clause)
        if match and not _NOT_MEASURED.search(clause) and not names & measured_elsewhere:
            found.append(f"the sentence shows a cost whose quality was not measured ({_braced(sorted(cost_only))}), "
                         f"and its clause {' '.join(clause.split())!r} speaks of quality ({match.group(0)!r}) with no "
                         "measured value: say that quality was not measured, or cite it")
    return found


@rule("own-run-not-shape", "The model's own run is not called a shape's")
def own_run_not_shape(view: ClaimView) -> list[str]:
    """A time of the model's own run, with its weights and every layer, described as measured by
    shape or extrapolated is as false as the reverse (and hides that the weights were loaded)."""
    costs = _costs(view)
    said = _SHAPE_WORDS.search(view.said)
    if costs.cost_only or not costs.own_run or said is None:
        return []
    return [f"{_braced(costs.own_run)} was timed on the model's own run, with its weights and every layer, but the "
            f"sentence says {said.group(0)!r}: describe how it was measured, not how another figure was"]


def _clauses(text: str) -> list[str]:
    return [part for part in re.split(r"[.;:!?,\u2014()]|\s-\s|\b(?:and|but|while|whereas|yet)\b", text) if part]


def _clauses_with_names(text: str) -> list[tuple[str, set[str]]]:
    """What a reader sees of each clause of the claim (the author's words; placeholders blanked),
    with the placeholders it holds. Clauses end at , ; : . ! ? dashes and brackets, and at
    'and', 'but', 'while'."""
    parts = []
    for literal, field_name, _spec, _conversion in string.Formatter().parse(text):
        parts.append(literal)
        if field_name is not None:
            parts.append(f"{_MARK_OPEN}{field_name}{_MARK_CLOSE}")
    found = []
    for clause in _clauses(render_visible("".join(parts)).plain):
        names = set(re.findall(f"{_MARK_OPEN}([^{_MARK_CLOSE}]*){_MARK_CLOSE}", clause))
        found.append((fold(re.sub(f"{_MARK_OPEN}[^{_MARK_CLOSE}]*{_MARK_CLOSE}", " ", clause)), names))
    return found
