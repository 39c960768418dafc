"""The right statistic under the right name: a value's path says what it is, and the sentence must
say it that way (the rows it belongs to are generator.claims.attribution's).

Each rule reads the placeholders a claim shows and the sentence a reader sees:

What a value is (its kind, its unit, its row, baseline and metric) is read from the results
schema (generator.results.schema), never from its path's spelling:

- **A change keeps its direction.** A change (kind `change`: `delta_nDCG@5_vs_dense`,
  `comparisons.R_vs_B...delta`) is R minus B: the sentence may not present R as the baseline ("over
  R", "than R", "against R", "relative to R", ...), or hybrid's lift over dense reads as dense's
  lift over hybrid.
- **An interval end is an interval end.** A value of kind `interval end` is shown only in a
  sentence that says interval (or confidence interval, bounds, range, "between"): an interval's
  upper end must not pass for the effect.
- **A ceiling is a ceiling.** A value of kind `bound` (the oracle ceiling of a row's candidates and
  the headroom under it, in `ceiling` or the frontier) is shown only with ceiling, at most, upper
  bound, oracle or "could reach": it is a bound that reads the labels, never a quality a row
  achieved.
- **The metric of the path.** A value of one metric is shown only in a sentence that names that
  metric: Recall@50's interval must not pass for nDCG@5's.
- **A mean is not a share of queries.** A mean of a metric (kind `mean`) is not "63 % of
  queries": a sentence showing one may not speak of a percentage of queries, topics or documents
  unless it also shows a count it is a share of.
- **Parameters carry their nouns.** A parameter is shown with its unit: `max_length` counts
  tokens, `batch_size` pairs per forward pass, a depth candidates (tokens; batch or pairs per
  pass; candidates or depth or top).

The query set a value belongs to is generator.claims.attribution's third rule.

- **A predicate compares what it names** (`idle_predicate`): naming two values and holding each
  against an arbitrary constant (`h > -1 and d > -1`) compares nothing.

Limits: the rules read words, not grammar. A sentence that names the right words in a misleading
order ("dense, whose lift over hybrid ..." written about hybrid's change) can still pass, and
a sentence that names each count after its values ("... {d} on {n} queries and {d300} on all
{n300}") reads the second value with the first count: name a count before its values.
"""

from __future__ import annotations

import ast
import re
from typing import Iterable

from generator.claims.attribution import ROW_ALIASES, ShownValue, baseline_of, row_of

_BASELINE_WORDS = r"(?:over|than|versus|vs\.?|against|relative\s+to|compared\s+(?:with|to)|beside|on\s+top\s+of)"
_INTERVAL = re.compile(r"\b(?:interval|intervals|confidence|bounds?|range|between|ci|ci95)\b", re.IGNORECASE)
_CEILING = re.compile(r"\b(?:ceiling|ceilings|at\s+most|upper\s+bound|oracle|(?:could|would)\s+(?:reach|lift|get)|"
                      r"best\s+possible|any\s+reordering)\b", re.IGNORECASE)
_SHARE = re.compile(r"%\s+of\s+(?:the\s+|all\s+)?(?:queries|topics|documents|pairs|candidates)\b", re.IGNORECASE)
# The words a unit is named by, for each unit a parameter is declared in.
_UNIT_WORDS = {"tokens": re.compile(r"\btokens?\b", re.IGNORECASE),
               "pairs per forward pass": re.compile(r"\bbatch(?:es)?\b|\bpairs?\s+per\s+(?:forward\s+)?pass",
                                                    re.IGNORECASE),
               "candidates": re.compile(r"\bcandidates?\b|\bdepth\b|\btop\b", re.IGNORECASE)}
_UNIT_SAID = {"tokens": "tokens", "pairs per forward pass": "a batch (pairs per forward pass)",
              "candidates": "candidates"}
_COUNT_KINDS = ("count", "query count")


def _names_metric(text: str, metric: str) -> bool:
    base = metric.split(":")[0]
    return re.search(r"(?<![\w@])" + re.escape(base) + r"(?![\w@])", text, re.IGNORECASE) is not None


def _presented_as_baseline(text: str, row: str) -> str | None:
    for alias in ROW_ALIASES.get(row, (row,)):
        match = re.search(rf"\b{_BASELINE_WORDS}\s+(?:the\s+)?{re.escape(alias)}(?![\w+]|-(?=\w))", text,
                          re.IGNORECASE)
        if match:
            return match.group(0)
    return None


def statistic_reasons(shown: Iterable[ShownValue], text: str) -> list[str]:
    """One reason for every value the sentence names as another statistic than its own."""
    shown = list(shown)
    reasons = []
    counts = any(value.location is not None and value.location.kind in _COUNT_KINDS for value in shown)
    for value in shown:
        location = value.location
        if location is None:
            continue
        baseline, row = baseline_of(value), row_of(value)
        if baseline is not None and row is not None and row != baseline and (
                said := _presented_as_baseline(text, row)):
            reasons.append(f"{{{value.name}}} is {row} minus {baseline}, but the sentence says {said!r}: a change "
                           f"is named with its own baseline ({baseline}), never its row's")
        if location.kind == "interval end" and not _INTERVAL.search(text):
            reasons.append(f"{{{value.name}}} is an end of an interval ({location.name}), but the sentence does not "
                           "say interval: an interval's end must not pass for the effect")
        if location.kind == "bound" and not _CEILING.search(text):
            reasons.append(f"{{{value.name}}} is the oracle ceiling of a row's candidates, but the sentence does not "
                           "say ceiling (or at most, upper bound): a bound must not pass for a quality achieved")
        metric = location.metric
        if metric is not None and not _names_metric(text, metric):
            reasons.append(f"{{{value.name}}} is a value of {metric}, but the sentence does not name {metric}: one "
                           "metric's figure must not pass for another's")
        if location.kind == "mean" and _SHARE.search(text) and not counts:
            reasons.append(f"{{{value.name}}} is a mean of {metric or 'a metric'} over queries, but the sentence "
                           f"gives {_SHARE.search(text).group(0)!r}: a mean is not a share of queries")
        unit = location.unit
        if location.kind == "parameter" and unit in _UNIT_WORDS and not _UNIT_WORDS[unit].search(text):
            reasons.append(f"{{{value.name}}} is {location.name}, counted in {_UNIT_SAID[unit]}: the sentence must "
                           "say so")
    return reasons


def idle_predicate(tree: ast.Expression, names: frozenset[str]) -> str | None:
    """Why a predicate names values without comparing them, or None. A predicate that names two or
    more values must compare two of them with each other, or hold one against zero (the sign of a
    change, an interval that clears zero), an exact count or a category: `h > -1 and d > -1` names
    both values and holds neither (nDCG is never below -1), and passes whatever the results say."""
    if len(names) < 2:
        return None
    compares = [node for node in ast.walk(tree) if isinstance(node, ast.Compare)]
    compared = set().union(*(_names_in(node) for node in compares)) if compares else set()
    # A value tested for truth outside any comparison (`not measured`) is a flag, read as it is.
    if not compares or names - compared or any(_holds(node, names) for node in compares):
        return None
    return (f"the predicate names {', '.join(sorted(names))} but compares none of them with another, nor with "
            "zero, an exact count or a category: it holds whatever the results say")


def _holds(node: ast.Compare, names: frozenset[str]) -> bool:
    """Whether one comparison says something of the results: two values against each other, a value
    against zero, or an exact value or category (== and !=)."""
    operands = [node.left, *node.comparators]
    if len(set().union(*(_names_in(operand) for operand in operands)) & names) >= 2:
        return True
    if all(isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in node.ops):
        return True
    for operand in operands:
        value = _constant(operand)
        if value is not None and (isinstance(value, str) or value == 0):
            return True
    return False


def _constant(node: ast.AST):
    if isinstance(node, ast.Constant) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)) and isinstance(node.operand,
                                                                                                     ast.Constant):
        return -node.operand.value if isinstance(node.op, ast.USub) else node.operand.value
    return None


def _names_in(node: ast.AST) -> set[str]:
    return {child.id for child in ast.walk(node) if isinstance(child, ast.Name)}
