"""Typed thresholds: every number of the design that a sentence measures a result against (a time
budget, a non-inferiority or equivalence margin, the smallest effect that matters) carries what it
is a number of, and the design freeze says when its value was fixed.

A frame names a threshold by reference:

- `budget.NAME` (or `NAME`): a number of a fenced `budget` block (generator.claims.record.triggers);
  its unit is its name's last word (`..._milliseconds` or `..._ms` is a time in ms, `..._seconds`
  in s). A budget whose name states no unit is a threshold of nothing and is refused.
- `regression`: the margin of the design's `regression` block (generator.claims.record.noninferiority), a
  margin of each metric the block lists.
- a decision id (`D5`) or `effect.D5`: the `minimum` of that decision's pre-registered `effect`,
  an effect of the effect's metric.

A frame accepts only a threshold of its own metric (a margin or an effect) or unit (a budget): a
500 ms latency budget is never the margin of an nDCG. When its value was fixed is read from the
design freeze: the freeze entry that last set the value in force, and whether results existed
then. A threshold fixed after the results, or that no freeze holds, is post hoc, and the sentence
that uses it says so.
"""

from __future__ import annotations

from typing import Any, Callable

from generator.core.dataclass import dataclass
from generator.core.text.wording import with_article

BUDGET = "budget"
MARGIN = "margin"
EFFECT = "effect"
REGRESSION = "regression"
# A budget's unit, from the last word of its name.
UNITS = {"milliseconds": "ms", "ms": "ms", "seconds": "s"}
BEFORE = "before any results"
AFTER = "after the results"
UNFROZEN = "in no freeze"


@dataclass(frozen=True)
class Threshold:
    reference: str          # as the frame names it
    kind: str               # budget | margin | effect
    value: float
    unit: str | None        # a budget's unit (ms, s)
    metrics: tuple[str, ...]    # what a margin or an effect is a threshold of
    where: str              # design document and line
    fixed: str              # BEFORE | AFTER | UNFROZEN
    freeze: int | None      # the freeze entry that fixed the value in force

    @property
    def post_hoc(self) -> bool:
        return self.fixed != BEFORE

    def of(self) -> str:
        """What it is a threshold of, for a message: `ms`, `nDCG@5`."""
        return self.unit or ", ".join(self.metrics) or "nothing"


def unit_of(budget_name: str) -> str | None:
    """A budget's unit from its name's last word (`rerank_p95_milliseconds` is in ms), or None."""
    return UNITS.get(budget_name.rsplit("_", 1)[-1].lower())


def _when(log: Any, current: Any, read: Callable[[dict[str, Any]], Any]) -> tuple[str, int | None]:
    """When the value in force was fixed: the last freeze entry whose rules set it to `current`
    (after a different or absent value), and whether results existed then."""
    entries = list(getattr(log, "entries", None) or [])
    fixed_by = None
    previous: Any = None
    for entry in entries:
        value = read(entry.rules)
        if value != previous:
            fixed_by = entry if value == current else None
        previous = value
    if fixed_by is None or previous != current:
        return UNFROZEN, None
    return (AFTER if fixed_by.results_existed else BEFORE), fixed_by.number


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def resolve(reference: str, rules: Any, frozen_regression: Any, log: Any) -> tuple[Threshold | None, str | None]:
    """The threshold `reference` names, or why there is none. `rules` are the design's budgets,
    triggers and regression block (DesignRules), `frozen_regression` that block as the freeze holds
    it (generator.claims.record.frozen_rules.frozen_regression; None when the freeze does not), `log` the
    design freeze (or None)."""
    text = reference.strip()
    if text == REGRESSION or text == f"{REGRESSION}.{MARGIN}":
        block = getattr(rules, "regression", None)
        if block is None:
            return None, "the design has no regression block, so it fixes no regression margin"
        if frozen_regression is None:
            fixed, number = UNFROZEN, None
        else:
            fixed = AFTER if frozen_regression.post_hoc else BEFORE
            number = frozen_regression.entry.number
        return Threshold(REGRESSION, MARGIN, float(block.margin), None, tuple(block.metrics),
                         f"{block.document}:{block.lines.get(MARGIN, block.line)}", fixed, number), None
    decision = text[len(EFFECT) + 1:] if text.startswith(EFFECT + ".") else text
    trigger = next((trigger for trigger in rules.triggers if trigger.decision == decision), None)
    if trigger is not None:
        if not trigger.effect:
            return None, f"decision {decision} states no effect (effect: comparison, metric, minimum)"
        minimum = trigger.effect.get("minimum")
        value = _as_number(minimum)
        if value is None and isinstance(minimum, str) and minimum.startswith(BUDGET + "."):
            budget = rules.budgets.get(minimum.split(".", 1)[1])
            value = budget.value if budget is not None else None
        if value is None:
            return None, f"decision {decision}'s effect has no minimum number"
        fixed, number = _when(log, trigger.effect, lambda snapshot: (snapshot.get("triggers", {}).get(decision) or {})
                              .get(EFFECT))
        return Threshold(f"{decision}", EFFECT, value, None, (str(trigger.effect.get("metric")),),
                         f"{trigger.document}:{trigger.line}", fixed, number), None
    name = text[len(BUDGET) + 1:] if text.startswith(BUDGET + ".") else text
    budget = rules.budgets.get(name)
    if budget is None:
        known = sorted([f"budget.{key}" for key in rules.budgets] + [trigger.decision for trigger in rules.triggers
                                                                      if trigger.effect]
                       + ([REGRESSION] if getattr(rules, "regression", None) is not None else []))
        return None, f"no threshold {reference!r} in the design; known: {', '.join(known) or '(none)'}"
    fixed, number = _when(log, budget.value, lambda snapshot: _as_number(snapshot.get("budgets", {}).get(name)))
    return Threshold(f"budget.{name}", BUDGET, budget.value, unit_of(name), (), f"{budget.document}:{budget.line}",
                     fixed, number), None


def require_metric(threshold: Threshold, metric: str) -> str | None:
    """Why `threshold` cannot be a margin or effect of `metric` (None when it can)."""
    if threshold.kind == BUDGET:
        what = f"a budget in {threshold.unit}" if threshold.unit else "a budget that states no unit"
        return f"{threshold.reference} is {what}, not a threshold of {metric}"
    if metric not in threshold.metrics:
        return f"{threshold.reference} is {with_article(threshold.kind)} of {threshold.of()}, not of {metric}"
    return None


def require_unit(threshold: Threshold, unit: str) -> str | None:
    """Why `threshold` cannot be a limit in `unit` (None when it can)."""
    if threshold.kind != BUDGET:
        return f"{threshold.reference} is {with_article(threshold.kind)} of {threshold.of()}, not a budget in {unit}"
    if threshold.unit != unit:
        stated = threshold.unit or "no unit (name it ..._milliseconds)"
        return f"{threshold.reference} is a budget in {stated}, not in {unit}"
    return None
