"""Decisions the checker computes: latency budgets and reversal triggers written in design documents.

A decision record carries its reversal trigger as a fenced block inside the frozen document, so
the rule cannot change without breaking the design freeze::

    ```trigger
    decision: D5
    when: lift_low > 0 and lift_p < 0.05 and p95 <= budget
    fires: ship the reranker
    otherwise: do not ship the reranker
    values:
      lift_low: comparisons.hybrid+rerank_vs_hybrid.metrics.nDCG@5.ci95_low
      lift_p: comparisons.hybrid+rerank_vs_hybrid.metrics.nDCG@5.p_value
      p95: rerank_cost.p95_milliseconds
      budget: budget.rerank_p95_milliseconds
    ```

`when` is a predicate in the claim predicate language (generator.claims.language.predicates); each value
is a results path (in `file`, default results.json) or `budget.NAME`, a number of a fenced
`budget` block of any design document::

    ```budget
    rerank_p95_milliseconds: 500
    ```

Two values read the reranker frontier (generator.core.frontier) against a budget:
`frontier.fitting.BUDGET` is how many priced configurations have a p95 within it, and
`frontier.cheapest_within.BUDGET.FIELD` is a field (p95_milliseconds, p50_milliseconds, ceiling,
headroom, depth, max_length) of the cheapest configuration that fits; when none fits, that value
is unknown, with the reason.

A trigger may state, pre-registered with it, the smallest effect that matters and the power
wanted (`effect:`): which comparison and metric, the `minimum` change (a number or
`budget.NAME`), and optionally `power` (default 0.8) and `alpha` (default 0.05)::

    effect: {comparison: hybrid+rerank_vs_hybrid, metric: nDCG@5, minimum: budget.rerank_min_lift}

From the per-query differences of that comparison in the trigger's results file, `check` computes
the minimum detectable effect at the file's query count (a paired two-sided test at `alpha`, an
analytic paired-t approximation, generator.core.power) and the queries the stated effect needs.
A trigger that does not fire on a change its test could not tell from zero, on a sample whose
minimum detectable effect is above the stated minimum, **cannot be decided**: "cannot be decided
with N queries; about M needed", never a silent "does not fire".

`check` evaluates every trigger with three-valued logic: a value that was not measured is
unknown, and the trigger **fires**, **does not fire** or **cannot be decided** (when the outcome
depends on an unknown value, or the sample cannot detect the effect the rule needs). `fires` and `otherwise` are what the decision then is, in words a
verdict claim must use (generator.claims.tracing.checker). A path that does not exist at all is an input
error, not an unknown: a typo must not read as "not measured".
"""

from __future__ import annotations

import math
from dataclasses import field
from typing import Any

from generator.claims.record.regression_block import RegressionBlock
from generator.core.dataclass import dataclass
from generator.core.sample_size import too_few_queries
from generator.storage.memo import default_memo
from generator.claims.language.predicates import (UNKNOWN, Predicate, PredicateEvaluationError,
                                                  evaluate_three_valued)
from generator.storage.errors import InputError
from generator.storage.fileio import sha256_text
from generator.core.results import Results, cost_block, parse_path
from generator.core.results.model import cheapest_within, within_budget
from generator.core.results.schema import FRONTIER as FRONTIER_BLOCK

FIRES = "fires"
DOES_NOT_FIRE = "does not fire"
UNDECIDED = "cannot be decided"
STATES = (FIRES, DOES_NOT_FIRE, UNDECIDED)
BUDGET_PREFIX = "budget"
FRONTIER = FRONTIER_BLOCK.name
FRONTIER_QUERIES = ("fitting", "cheapest_within")
FRONTIER_FIELDS = ("p95_milliseconds", "p50_milliseconds", "ceiling", "headroom", "depth", "max_length")


@dataclass(frozen=True)
class Budget:
    name: str
    value: float
    document: str
    line: int


@dataclass(frozen=True)
class Trigger:
    decision: str
    title: str                  # the record's heading, e.g. "D5. A reranker ships only when it pays for itself"
    predicate: Predicate
    fires: str
    otherwise: str
    values: dict[str, str]      # name -> results path or budget.NAME
    file: str
    document: str
    line: int
    # The smallest effect that matters, pre-registered with the rule: comparison, metric, minimum
    # (a number or budget.NAME), power, alpha; None when the rule states none.
    effect: dict[str, Any] | None = None

    def outcome(self, state: str) -> str:
        return self.fires if state == FIRES else self.otherwise if state == DOES_NOT_FIRE else UNDECIDED


@dataclass
class DecisionRow:
    """One trigger evaluated: what the decision table shows and a verdict claim cites."""

    trigger: Trigger
    state: str
    read: dict[str, dict[str, Any]] = field(default_factory=dict)   # name -> {path, value, measured, reason}
    reason: str | None = None    # why it cannot be decided
    # What the design freeze says of the rule (generator.claims.record.frozen_rules.RuleChange, oldest first) and
    # what git shows of the entry that last set it (generator.claims.record.anchoring.Anchor).
    changes: list[Any] = field(default_factory=list)
    anchor: Any = None
    # What the sample can detect, when the rule states its effect (generator.core.power).
    power: dict[str, Any] | None = None

    @property
    def outcome(self) -> str:
        return self.trigger.outcome(self.state)

    @property
    def post_hoc(self) -> list[Any]:
        """The freezes that set or moved this rule after results existed: its verdict is post hoc."""
        return [change for change in self.changes if change.post_hoc]

    @property
    def acknowledged(self) -> bool:
        return all(change.decision_acknowledged for change in self.post_hoc)

    def as_dict(self) -> dict[str, Any]:
        return {"decision": self.trigger.decision, "title": self.trigger.title,
                "trigger": self.trigger.predicate.source, "state": self.state, "outcome": self.outcome,
                "file": self.trigger.file, "document": self.trigger.document, "line": self.trigger.line,
                "values": self.read, "reason": self.reason, "post_hoc": bool(self.post_hoc),
                "acknowledged": self.acknowledged, "changes": [change.as_dict() for change in self.changes],
                "anchor": self.anchor.describe() if self.anchor is not None else None, "power": self.power}


@dataclass
class DesignRules:
    budgets: dict[str, Budget] = field(default_factory=dict)
    triggers: list[Trigger] = field(default_factory=list)
    regression: RegressionBlock | None = None


def effect_budget(effect: Any) -> str | None:
    """The budget an effect's minimum reads, if any."""
    minimum = effect.get("minimum") if isinstance(effect, dict) else None
    return minimum.split(".", 1)[1] if isinstance(minimum, str) and minimum.startswith(BUDGET_PREFIX + ".") else None


def budget_read_by(path: Any) -> str | None:
    """The budget a trigger value's path reads, if any: `budget.NAME`, or the NAME inside a
    frontier query (`frontier.fitting.NAME`, `frontier.cheapest_within.NAME.FIELD`). Moving that
    budget moves the rule as surely as editing the predicate."""
    if not isinstance(path, str):
        return None
    parts = path.split(".")
    if parts[0] == "budget" and len(parts) > 1:
        return ".".join(parts[1:])
    if parts[0] == FRONTIER and len(parts) > 2 and parts[1] in FRONTIER_QUERIES:
        return parts[2]
    return None


def _frontier_value(results: Results, steps: tuple, budgets: dict[str, Budget]) -> tuple[Any, str | None, str]:
    """(value, why it is unknown, how it was measured) of a frontier query; a results file
    without a frontier block is an input error for the caller, like any missing path."""
    frontier = results.model.frontier
    if frontier is None or not isinstance(frontier.get("configurations"), list):
        raise LookupError(f"{results.name} holds no frontier block (evaluate.frontier)")
    budget = budgets[steps[2].key]
    if steps[1].key == "fitting":
        return len(within_budget(frontier, budget.value)), None, "measured by shape"
    chosen = cheapest_within(frontier, budget.value)
    if chosen is None:
        return UNKNOWN, f"no configuration of the frontier fits {budget.name} ({budget.value:g})", "measured by shape"
    return chosen[steps[3].key], None, str(chosen.get("cost"))


def evaluate_trigger(trigger: Trigger, budgets: dict[str, Budget], results: Results | None,
                     results_problem: str | None, design_display: str) -> DecisionRow:
    """Read the trigger's values and evaluate it. `results_problem` says why the results cannot be
    cited (unsealed, not re-derivable); the trigger then cannot be decided on them."""
    row = DecisionRow(trigger, UNDECIDED)
    values: dict[str, Any] = {}
    unknown_reasons = []
    for name, path in sorted(trigger.values.items()):
        steps = parse_path(path)
        if steps[0].key == BUDGET_PREFIX:
            budget = budgets[steps[1].key]
            values[name] = budget.value
            row.read[name] = {"path": path, "value": budget.value, "measured": True, "from": "design",
                              "source": f"{budget.document}:{budget.line}"}
            continue
        if results is None or results_problem:
            values[name] = UNKNOWN
            # Which file, and why it cannot be read (missing: the command that writes it).
            row.read[name] = {"path": path, "value": None, "measured": False, "source": trigger.file,
                              "unreadable": results_problem}
            unknown_reasons.append(f"{trigger.file} cannot be read: {results_problem}")
            continue
        if steps[0].key == FRONTIER and len(steps) > 1 and steps[1].key in FRONTIER_QUERIES:
            try:
                value, why, how = _frontier_value(results, steps, budgets)
            except LookupError as error:
                raise InputError(f"decision {trigger.decision}: {path}: {error}", path=design_display,
                                 line=trigger.line, field=f"values.{name}") from None
            values[name] = value
            row.read[name] = {"path": path, "value": None if why else value, "measured": why is None,
                              "from": "results", "source": trigger.file, "how": how,
                              "budget": budgets[steps[2].key].value,
                              **({"reason": why} if why else {})}
            if why:
                unknown_reasons.append(f"{name}: {why}")
            continue
        resolution = results.model.resolve(steps)
        if resolution.ok and _is_number_or_bool(resolution.value):
            values[name] = resolution.value
            row.read[name] = {"path": path, "value": resolution.value, "measured": True, "from": "results",
                              "source": trigger.file, "how": _how_measured(results, steps)}
        elif resolution.ok:
            raise InputError(f"{path} is {str(resolution.value)[:40]!r}, not a number or true/false",
                             path=design_display, line=trigger.line, field=f"values.{name}")
        elif resolution.unmeasured:
            values[name] = UNKNOWN
            row.read[name] = {"path": path, "value": None, "measured": False, "source": trigger.file,
                              "reason": resolution.reason}
            unknown_reasons.append(f"{name}: {resolution.reason}")
        else:
            raise InputError(f"decision {trigger.decision}: {path} is not in {trigger.file}: {resolution.reason}"[:300],
                             path=design_display, line=trigger.line, field=f"values.{name}")
    try:
        outcome = evaluate_three_valued(trigger.predicate, values)
    except PredicateEvaluationError as error:
        raise InputError(f"decision {trigger.decision}: the trigger cannot be evaluated: {error}",
                         path=design_display, line=trigger.line, field="when") from None
    if outcome is UNKNOWN:
        row.state = UNDECIDED
        row.reason = "; ".join(dict.fromkeys(unknown_reasons)) or "a value was not measured"
    elif isinstance(outcome, bool):
        row.state = FIRES if outcome else DOES_NOT_FIRE
    else:
        raise InputError(f"decision {trigger.decision}: the trigger gives {outcome!r}, not true or false",
                         path=design_display, line=trigger.line, field="when")
    if trigger.effect is not None and results is not None and not results_problem:
        _weigh_the_sample(row, budgets, results, design_display)
    return row


def _detectable(differences: list[float], minimum: float, alpha: float, power: float) -> dict[str, Any]:
    """The minimum detectable effect and the queries `minimum` needs (SciPy: only on a memo miss)."""
    from generator.core.power import minimum_detectable_effect, queries_needed

    detectable = minimum_detectable_effect(differences, alpha=alpha, power=power)
    sd = detectable.get("sd_difference")
    return {**detectable, "queries_needed": queries_needed(sd, minimum, alpha=alpha, power=power) if sd else None}


def _weigh_the_sample(row: DecisionRow, budgets: dict[str, Budget], results: Results, design_display: str) -> None:
    """What the sample can detect for the rule's stated effect; a "does not fire" on a change the
    test could not tell from zero, from a sample too small for the effect, cannot be decided."""
    trigger, effect = row.trigger, row.trigger.effect
    budget = effect_budget(effect)
    minimum = budgets[budget].value if budget is not None else float(effect["minimum"])
    comparison = results.model.comparisons.get(effect["comparison"])
    where = dict(path=design_display, line=trigger.line, field="effect")
    if not isinstance(comparison, dict):
        raise InputError(f"decision {trigger.decision}: {trigger.file} holds no comparison "
                         f"{effect['comparison']!r}; known: {', '.join(sorted(results.model.comparisons)) or '(none)'}"
                         [:300], **where)
    figures = {"comparison": effect["comparison"], "metric": effect["metric"], "minimum_effect": minimum,
               "alpha": effect["alpha"], "power": effect["power"], "file": trigger.file}
    row.power = figures
    if comparison.get("measured") is False or not isinstance(comparison.get("metrics"), dict):
        figures["reason"] = f"{effect['comparison']} was not measured"
        return
    stats = comparison["metrics"].get(effect["metric"])
    if not isinstance(stats, dict):
        raise InputError(f"decision {trigger.decision}: {effect['comparison']} has no metric {effect['metric']!r}",
                         **where)
    differences = results.model.paired_differences(comparison["row"], comparison["baseline"], effect["metric"])
    too_few = too_few_queries(len(differences), effect["alpha"])
    if too_few is not None:
        # One query gives no spread, a handful no test that can reject: whatever the trigger read,
        # the sample decides nothing (generator.core.sample_size).
        figures.update(queries=len(differences), minimum_detectable_effect=None, queries_needed=None,
                       reason=too_few)
        row.state, row.reason = UNDECIDED, too_few
        return
    detectable = default_memo().remembered(
        "decision power", sha256_text(repr((differences, minimum, effect["alpha"], effect["power"]))),
        lambda: _detectable(differences, minimum, effect["alpha"], effect["power"]))
    smallest = detectable.get("minimum_detectable_effect")
    figures.update(queries=detectable["queries"], minimum_detectable_effect=smallest,
                   queries_needed=detectable["queries_needed"])
    if smallest is None:
        figures["reason"] = detectable.get("why") or "the differences do not vary"
        return
    told_apart = isinstance(stats.get("p_value"), (int, float)) and stats["p_value"] < effect["alpha"]
    if row.state == DOES_NOT_FIRE and not told_apart and smallest > minimum:
        needed = figures["queries_needed"]
        row.state = UNDECIDED
        row.reason = (f"cannot be decided with {detectable['queries']} queries: at power {effect['power']:g} they "
                      f"detect a change of {smallest:.3g} or more, and {trigger.decision} needs {minimum:g}; "
                      + (f"about {needed} queries needed" if needed else "more queries than can be counted needed"))


def _is_number_or_bool(value: Any) -> bool:
    return isinstance(value, bool) or (isinstance(value, (int, float)) and math.isfinite(value))


def _how_measured(results: Results, steps: tuple) -> str:
    """"measured by shape" when the value lies in a block whose cost was measured by shape."""
    block = cost_block(results.data, results.model.canonical(steps)[0])
    cost = block.get("cost") if block is not None else None
    return cost if isinstance(cost, str) and cost.startswith("measured by shape") else "measured"
