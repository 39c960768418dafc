"""The right statistic under the right name: what a value is (its kind, its unit, its row,
baseline and metric) is read from the results schema, and the sentence must say it that way.

Limits: the rules read words, not grammar. A sentence that names the right words in a misleading
order ("dense, whose lift over hybrid ..." written about hybrid's change) can still pass.
"""

from __future__ import annotations

import re

from generator.core.text import lexicon
from generator.claims.tracing.naming import ROW_ALIASES, baseline_of, row_of
from generator.claims.tracing.rules import rule
from generator.claims.tracing.view import ClaimView

# The lexicon's words (generator/core/text/lexicons/en.yaml): the row a change is measured against, an
# interval, a ceiling, a share of queries, and the nouns of each unit a parameter is declared in.
_BASELINE_WORDS = lexicon.pattern("baseline").pattern
_INTERVAL = lexicon.pattern("interval")
_CEILING = lexicon.pattern("ceiling")
_SHARE = lexicon.pattern("share")
_UNIT_WORDS = {"tokens": lexicon.pattern("unit_tokens"), "pairs per forward pass": lexicon.pattern("unit_batch"),
               "candidates": lexicon.pattern("unit_candidates")}
_UNIT_SAID = {"tokens": "tokens", "pairs per forward pass": "a batch (pairs per forward pass)",
              "candidates": "candidates"}
_COUNT_KINDS = ("count", "query count")


def names_metric(text: str, metric: str) -> bool:
    """The text names the metric (`nDCG@5`; a family written as `nDCG` names nDCG@5 too only when
    the metric is that family's one cutoff, which the caller decides)."""
    base = metric.split(":")[0]
    return re.search(r"(?<![\w@])" + re.escape(base) + r"(?![\w@])", text, re.IGNORECASE) is not None


def _presented_as_baseline(text: str, row: str) -> str | None:
    for alias in ROW_ALIASES.get(row, (row,)):
        match = re.search(rf"\b{_BASELINE_WORDS}\s+(?:the\s+)?{re.escape(alias)}(?![\w+]|-(?=\w))", text,
                          re.IGNORECASE)
        if match:
            return match.group(0)
    return None


@rule("change-direction", "A change keeps its direction")
def change_direction(view: ClaimView) -> list[str]:
    """A change (`delta_nDCG@5_vs_dense`, `comparisons.R_vs_B...delta`) is R minus B: the sentence
    may not present R as the baseline ("over R", "than R", "against R", "relative to R", ...), or
    hybrid's lift over dense reads as dense's lift over hybrid."""
    found = []
    for value in view.shown:
        baseline, row = baseline_of(value), row_of(value)
        if baseline is not None and row is not None and row != baseline and (
                said := _presented_as_baseline(view.said, row)):
            found.append(f"{{{value.name}}} is {row} minus {baseline}, but the sentence says {said!r}: a change is "
                         f"named with its own baseline ({baseline}), never its row's")
    return found


@rule("interval-named", "An interval end is called an interval")
def interval_named(view: ClaimView) -> list[str]:
    """A value of kind `interval end` is shown only in a sentence that says interval (or
    confidence interval, bounds, range, "between"): an interval's end must not pass for the effect."""
    if _INTERVAL.search(view.said):
        return []
    return [f"{{{value.name}}} is an end of an interval ({value.location.name}), but the sentence does not say "
            "interval: an interval's end must not pass for the effect"
            for value in view.shown if value.location is not None and value.location.kind == "interval end"]


@rule("ceiling-named", "A ceiling is called a ceiling")
def ceiling_named(view: ClaimView) -> list[str]:
    """A value of kind `bound` (the oracle ceiling of a row's candidates, the headroom under it) is
    shown only with ceiling, at most, upper bound, oracle or "could reach": it reads the labels,
    and is never a quality a row achieved."""
    if _CEILING.search(view.said):
        return []
    return [f"{{{value.name}}} is the oracle ceiling of a row's candidates, but the sentence does not say ceiling "
            "(or at most, upper bound): a bound must not pass for a quality achieved"
            for value in view.shown if value.location is not None and value.location.kind == "bound"]


@rule("metric-named", "A value of a metric is shown beside the metric's name")
def metric_named(view: ClaimView) -> list[str]:
    """Recall@50's interval must not pass for nDCG@5's: a value of one metric is shown only in a
    sentence that names that metric."""
    return [f"{{{value.name}}} is a value of {value.location.metric}, but the sentence does not name "
            f"{value.location.metric}: one metric's figure must not pass for another's"
            for value in view.shown if value.location is not None and value.location.metric is not None
            and not names_metric(view.said, value.location.metric)]


@rule("mean-not-share", "A mean is not a share of queries")
def mean_not_share(view: ClaimView) -> list[str]:
    """A mean of a metric is not "63 % of queries": a sentence showing one may not speak of a
    percentage of queries, topics or documents unless it also shows a count it is a share of."""
    share = _SHARE.search(view.said)
    if share is None or any(value.location is not None and value.location.kind in _COUNT_KINDS
                            for value in view.shown):
        return []
    return [f"{{{value.name}}} is a mean of {value.location.metric or 'a metric'} over queries, but the sentence "
            f"gives {share.group(0)!r}: a mean is not a share of queries"
            for value in view.shown if value.location is not None and value.location.kind == "mean"]


@rule("unit-named", "A parameter is shown with its unit")
def unit_named(view: ClaimView) -> list[str]:
    """`max_length` counts tokens, `batch_size` pairs per forward pass, a depth candidates: the
    sentence says so (tokens; batch or pairs per pass; candidates, depth or top)."""
    found = []
    for value in view.shown:
        location = value.location
        if location is None or location.kind != "parameter":
            continue
        unit = location.unit
        if unit in _UNIT_WORDS and not _UNIT_WORDS[unit].search(view.said):
            found.append(f"{{{value.name}}} is {location.name}, counted in {_UNIT_SAID[unit]}: the sentence must "
                         "say so")
    return found
