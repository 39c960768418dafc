"""Frames: a sentence the package writes from a computed result (generator.claims.frames). Its
words cannot say more than the reading computed, so a frame traces when it can be computed: its
rows measured, the statistic it is about held by its results file, its thresholds of its own
metric or unit, and a sentence for the reading in the claim's language and phrasing."""

from __future__ import annotations

from generator.claims.tracing.rules import noted_rule

noted_rule("frame-computable", "A frame is computed from the results and the design", (
    "Its rows were measured, its results file holds the statistic it is about (a mean change, the wins, "
    "ties and losses, one query's values, a p95 time, a power entry), and each threshold it names is a "
    "threshold of its own metric (a margin, a smallest effect) or unit (a budget in ms) that the design "
    "fixes: a 500 ms budget is never the margin of an nDCG (generator.claims.frames.thresholds)."), __name__)
noted_rule("frame-phrasing", "A frame's phrasing is one the package offers", (
    "The phrasing a frame names is one of its kind's in the claim's language "
    "(generator/claims/frames/phrasings/)."), __name__)
