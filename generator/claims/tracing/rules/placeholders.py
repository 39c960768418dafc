"""Placeholders and what a reader sees: a value is placed with an allowed format, text from
results carries no claim, and nothing links out of the report."""

from __future__ import annotations

from generator.claims.language.visible import remote_references
from generator.claims.tracing.rules import noted_rule, rule
from generator.claims.tracing.view import ClaimView

noted_rule("placeholder-format", "A value is placed with an allowed format", (
    "Formats come from a short allow-list (`''`, `,`, `d`, `,d`, `.Nf`, `,.Nf`, `+.Nf`, `.N%`, "
    "generator.claims.language.formats) that fits the value's type."), __name__)
noted_rule("placed-text", "Text from results carries no claim", (
    "A word-valued placeholder of several words is held to the label rules: no numerals, no "
    "comparison, no verdict (unless it is shown as code, between backticks)."), __name__)


@rule("no-remote-reference", "Nothing links out of the report")
def no_remote_reference(view: ClaimView) -> list[str]:
    """Links and images point to an anchor of this report (`#...`); anything else would send the
    reader away or fetch from elsewhere."""
    return [f"remote reference in the text ({reference}): links and images must point to an anchor in this "
            "report (#...)" for reference in remote_references(view.visible)]
