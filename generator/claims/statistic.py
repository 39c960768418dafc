"""The right statistic under the right name: a value's path says what it is, and the sentence must
say it that way (the rows it belongs to are generator.claims.attribution's).

Each rule reads the placeholders a claim shows and the sentence a reader sees:

- **A change keeps its direction.** A change (`delta_nDCG@5_vs_dense`, `comparisons.R_vs_B`,
  `paired_vs_B`) is R minus B: the sentence may not present R as the baseline ("over R", "than R",
  "against R", "relative to R", ...), or hybrid's lift over dense reads as dense's lift over hybrid.
- **An interval end is an interval end.** `ci95_low` and `ci95_high` are shown only in a sentence
  that says interval (or confidence interval, bounds, range, "between"): an interval's upper end
  must not pass for the effect.
- **A ceiling is a ceiling.** The oracle ceiling of a row's candidates (`ceiling...ceiling`) is
  shown only with ceiling, at most, upper bound, oracle or "could reach": it is a bound that reads
  the labels, never a quality a row achieved.
- **The metric of the path.** A value of one metric (`...nDCG@5`, `recall@50`, `metrics.nDCG@5...`)
  is shown only in a sentence that names that metric: Recall@50's interval must not pass for
  nDCG@5's.
- **A mean is not a share of queries.** A row's mean of a metric is not "63 % of queries": a
  sentence showing one may not speak of a percentage of queries, topics or documents unless it
  also shows the count it is a share of.
- **Parameters carry their nouns.** `max_length` counts tokens, `batch_size` pairs per forward
  pass, `depth` candidates: a sentence showing one names its unit (tokens; batch or pairs per
  pass; candidates or depth or top).

- **A value with its own query set** (`query_set_reasons`): where a sentence shows the query counts
  of two results files, each value is read with the count before it (or, before any, the first
  after it), which must be its own file's.
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
from generator.results import Step

_BASELINE_WORDS = r"(?:over|than|versus|vs\.?|against|relative\s+to|compared\s+(?:with|to)|beside|on\s+top\s+of)"
_INTERVAL = re.compile(r"\b(?:interval|intervals|confidence|bounds?|range|between|ci|ci95)\b", re.IGNORECASE)
_CEILING = re.compile(r"\b(?:ceiling|ceilings|at\s+most|upper\s+bound|oracle|(?:could|would)\s+(?:reach|lift|get)|"
                      r"best\s+possible|any\s+reordering)\b", re.IGNORECASE)
_SHARE = re.compile(r"%\s+of\s+(?:the\s+|all\s+)?(?:queries|topics|documents|pairs|candidates)\b", re.IGNORECASE)
_METRIC_KEY = re.compile(r"^(?:recall|ndcg|p|mrr|map|precision|r)@\d+(?::\w+)?$", re.IGNORECASE)
_COUNT_KEYS = frozenset({"wins", "ties", "losses", "queries", "candidate miss", "ordering problem", "none",
                         "documents", "pairs", "topics"})
_NOUNS = {"max_length": (re.compile(r"\btokens?\b", re.IGNORECASE), "tokens"),
          "rerank_max_length": (re.compile(r"\btokens?\b", re.IGNORECASE), "tokens"),
          "batch_size": (re.compile(r"\bbatch(?:es)?\b|\bpairs?\s+per\s+(?:forward\s+)?pass", re.IGNORECASE),
                         "a batch (pairs per forward pass)"),
          "candidate_depth": (re.compile(r"\bcandidates?\b|\bdepth\b|\btop\b", re.IGNORECASE), "candidates"),
          "depth": (re.compile(r"\bcandidates?\b|\bdepth\b|\btop\b", re.IGNORECASE), "candidates")}


def _keys(steps: tuple[Step, ...]) -> list[str]:
    return [step.key for step in steps if step.kind == "key" and step.key is not None]


def metric_of(steps: tuple[Step, ...]) -> str | None:
    """The metric a value is of, when its path names one."""
    for key in reversed(_keys(steps)):
        if _METRIC_KEY.match(key):
            return key
    return None


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
    """One reason for every value the sentence names as another statistic than its path's."""
    shown = list(shown)
    reasons = []
    counts = any(set(_keys(value.steps)) & _COUNT_KEYS for value in shown)
    for value in shown:
        keys = _keys(value.steps)
        last = keys[-1] if keys else None
        baseline, row = baseline_of(value.steps), row_of(value.steps)
        if baseline is not None and row is not None and row != baseline and (
                said := _presented_as_baseline(text, row)):
            reasons.append(f"{{{value.name}}} is {row} minus {baseline}, but the sentence says {said!r}: a change "
                           f"is named with its own baseline ({baseline}), never its row's")
        if last in ("ci95_low", "ci95_high") and not _INTERVAL.search(text):
            reasons.append(f"{{{value.name}}} is an end of an interval ({last}), but the sentence does not say "
                           "interval: an interval's end must not pass for the effect")
        if keys and keys[0] == "ceiling" and last == "ceiling" and not _CEILING.search(text):
            reasons.append(f"{{{value.name}}} is the oracle ceiling of a row's candidates, but the sentence does not "
                           "say ceiling (or at most, upper bound): a bound must not pass for a quality achieved")
        metric = metric_of(value.steps)
        if metric is not None and not _names_metric(text, metric):
            reasons.append(f"{{{value.name}}} is a value of {metric}, but the sentence does not name {metric}: one "
                           "metric's figure must not pass for another's")
        if metric is not None and keys and keys[0] in ("table", "ceiling") and _SHARE.search(text) and not counts:
            reasons.append(f"{{{value.name}}} is a mean of {metric} over queries, but the sentence gives "
                           f"{_SHARE.search(text).group(0)!r}: a mean is not a share of queries")
        if last in _NOUNS and not _NOUNS[last][0].search(text):
            reasons.append(f"{{{value.name}}} is {last}, counted in {_NOUNS[last][1]}: the sentence must say so")
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


def query_set_reasons(shown: list[ShownValue], counts: dict[str, str]) -> list[str]:
    """In a sentence that shows the query counts of two results files, each value is read with
    the count that governs it: the nearest count before it ("on all {n300} queries, ... {d300}"),
    or, before any count, the first one after it. The 300-query interval must not be read with the
    20-query count. `shown` is in the order the sentence shows it; `counts` maps a file to its
    count's placeholder."""
    if len(counts) < 2:
        return []
    position = {name: index for index, name in enumerate(value.name for value in shown)}
    count_at = sorted((position[name], file) for file, name in counts.items() if name in position)
    reasons = []
    for index, value in enumerate(shown):
        if value.name in counts.values() or value.file not in counts:
            continue
        before = [file for at, file in count_at if at < index]
        governing = before[-1] if before else next((file for at, file in count_at if at > index), None)
        if governing is not None and governing != value.file:
            reasons.append(f"{{{value.name}}} comes from {value.file} but is read with {{{counts[governing]}}}, the "
                           f"query count of {governing}: a value goes with its own query set's count")
    return reasons
