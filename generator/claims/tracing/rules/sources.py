"""Sources: a claim stands on a quote of a frozen design document, a measured value of a sealed
results file, or a decision its trigger computes; each must hold, and each value must be used."""

from __future__ import annotations

from generator.claims.tracing.rules import noted_rule, rule
from generator.claims.tracing.view import ClaimView


@rule("source-present", "A claim has a source")
def source_present(view: ClaimView) -> list[str]:
    """A claim without a design quote, a measured path or a decision is untraceable; strike it
    with a reason instead."""
    if view.claim.sources:
        return []
    return ["no source: attach a design quote or a measured path, or strike it with a reason"]


noted_rule("design-quote", "A design quote is whole units of a frozen document", (
    "Each quote is one or more whole sentences, list items or table cells of a design document the "
    "design freeze holds, with the words around it as written (generator.claims.record.design)."), __name__)
noted_rule("results-citable", "A results file is sealed and re-derives", (
    "A measured source's file is in outputs/, sealed, valid, and every figure it states re-derives from "
    "its run files and judgements (generator.claims.tracing.rederive)."), __name__)
noted_rule("path-resolves", "Every path resolves to a measured value", (
    "Each declared path names a value the file holds, of a row that was measured: a row whose model "
    "could not run is not measured, and nothing may be said of it from this file."), __name__)
noted_rule("value-finite", "Every value is a finite number or a word",
           "NaN and infinity support no sentence and no comparison.", __name__)


@rule("value-used", "Every declared value is shown or compared")
def value_used(view: ClaimView) -> list[str]:
    """A value declared but neither shown in the text nor compared in a predicate supports nothing."""
    return [f"value {name} is declared but neither shown in the text nor compared in a predicate: a value that "
            "supports nothing is not evidence"
            for name in sorted(set(view.value_sources) - set(view.shown_names) - view.compared)]
