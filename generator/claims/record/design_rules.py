"""Reading the design's rules: every `budget` and `trigger` block of the design documents (and the
`regression` block beside them), validated, with the prose held to the budgets' numbers.

The formats are described in generator.claims.record.triggers, which evaluates what is read here;
every refusal names the design document's line, so a rule that cannot be read never becomes a
silent "not measured".
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Callable

from generator.core.text.characters import describe, hidden_character
from generator.claims.record.design import DesignDocument, design_files
from generator.claims.record.fences import _block, design_fences
from generator.claims.record.regression_block import REGRESSION_INFO, _regression_block
from generator.claims.record.triggers import (BUDGET_PREFIX, FRONTIER, FRONTIER_FIELDS, FRONTIER_QUERIES, Budget,
                                              DesignRules, Trigger)
from generator.claims.language.predicates import PredicateSyntaxError, compile_predicate
from generator.storage.errors import InputError
from generator.storage.paths import display_path
from generator.core.text.numeral_values import numeral_value
from generator.core.text.numerals import find_numerals
from generator.core.results import RESULTS_NAME, PathSyntaxError, parse_path, path_text
from generator.core.text.wording import label_problem

TRIGGER_KEYS = {"decision", "when", "fires", "otherwise", "values", "file", "effect"}
EFFECT_KEYS = {"comparison", "metric", "minimum", "power", "alpha"}
DEFAULT_POWER, DEFAULT_ALPHA = 0.8, 0.05
_DECISION_ID = re.compile(r"^[A-Z][A-Za-z0-9-]{0,15}$")
_VALUE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,39}$")


def read_design_rules(design_dir: Path) -> DesignRules:
    """Every `budget` and `trigger` block and the `regression` block of the design documents,
    validated."""
    rules = DesignRules()
    blocks = design_fences(design_dir, ("budget", "trigger", REGRESSION_INFO))
    rules.regression = _regression_block([block for block in blocks if block[0] == REGRESSION_INFO])
    for info, content, line, heading, name, shown in blocks:
        if info == "budget":
            _read_budget(content, line, name, shown, rules)
    for info, content, line, heading, name, shown in blocks:
        if info == "trigger":
            rules.triggers.append(_read_trigger(content, line, heading, name, shown, rules))
    seen: dict[str, Trigger] = {}
    for trigger in rules.triggers:
        if trigger.decision in seen:
            raise InputError(f"decision {trigger.decision} has a second trigger (first at "
                             f"{seen[trigger.decision].document}:{seen[trigger.decision].line})",
                             path=display_path(design_dir / trigger.document), line=trigger.line, field="decision")
        seen[trigger.decision] = trigger
    rules.triggers.sort(key=lambda trigger: _natural(trigger.decision))
    _hold_prose_to_budgets(design_dir, rules)
    return rules


# A budget named `..._milliseconds` is stated in milliseconds; prose may say it in any of these.
_UNIT_SCALE = {"milliseconds": {"ms": 1.0, "millisecond": 1.0, "milliseconds": 1.0, "msec": 1.0,
                                "s": 1000.0, "sec": 1000.0, "second": 1000.0, "seconds": 1000.0,
                                "minute": 60000.0, "minutes": 60000.0},
               "seconds": {"ms": 0.001, "millisecond": 0.001, "milliseconds": 0.001, "s": 1.0, "sec": 1.0,
                           "second": 1.0, "seconds": 1.0, "minute": 60.0, "minutes": 60.0}}


def _budget_subject(name: str) -> tuple[list[str], dict[str, float] | None]:
    """The words a sentence about budget `name` names (every part of the name but its unit) and the
    units it may be stated in (None: any number in such a sentence states it)."""
    parts = [part for part in name.lower().split("_") if part]
    scale = _UNIT_SCALE.get(parts[-1]) if parts else None
    if scale is not None:
        parts = parts[:-1]
    else:
        scale = {parts[-1]: 1.0, parts[-1].rstrip("s"): 1.0} if parts else None
    return parts, scale


def _hold_prose_to_budgets(design_dir: Path, rules: DesignRules) -> None:
    """One budget, one number: a design sentence that names everything a budget's name says (its
    unit apart) and gives a number in that unit must give the budget's own value; otherwise the
    prose and the block disagree, and the design is refused (the trigger reads the block)."""
    if not rules.budgets:
        return
    for name, path in sorted(design_files(design_dir).items()):
        if path.suffix.lower() not in (".md", ".markdown"):
            continue
        document = DesignDocument(name, path)
        for text, line in document.prose_units():
            for budget in rules.budgets.values():
                _check_budget_sentence(budget, text, line, display_path(path))


def _check_budget_sentence(budget: Budget, text: str, line: int, shown: str) -> None:
    subject, scale = _budget_subject(budget.name)
    words = re.findall(r"[a-z0-9]+", text.lower())
    if not subject or not all(any(word.startswith(part) for word in words) for part in subject):
        return
    for numeral in find_numerals(text):
        value = numeral_value(numeral)
        unit = re.match(r"[\s-]*([A-Za-z]+)\b", text[numeral.end:])
        if value is None or unit is None or scale is None or unit.group(1).lower() not in scale:
            continue
        stated = value * scale[unit.group(1).lower()]
        if not math.isclose(stated, budget.value, rel_tol=1e-9, abs_tol=1e-12):
            raise InputError(f"the prose states {numeral.token} {unit.group(1)} for budget {budget.name}, but its "
                             f"budget block ({budget.document}:{budget.line}) says {budget.value:g}: one budget, one "
                             "number (change both, or neither)", path=shown, line=line)


def _natural(text: str) -> tuple:
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))


def _read_budget(content: str, line: int, name: str, shown: str, rules: DesignRules) -> None:
    data, line_of = _block(content, line, shown)
    for key, value in data.items():
        where = line_of(key)
        if not isinstance(key, str) or not _VALUE_NAME.match(key):
            raise InputError("a budget name is a plain identifier", path=shown, line=where, field=str(key)[:40])
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise InputError(f"a budget is a finite number >= 0, got {value!r}"[:120], path=shown, line=where,
                             field=key)
        if key in rules.budgets:
            first = rules.budgets[key]
            raise InputError(f"budget {key} is set twice (first at {first.document}:{first.line})", path=shown,
                             line=where, field=key)
        rules.budgets[key] = Budget(key, float(value), name, where)


def _read_trigger(content: str, line: int, heading: str | None, name: str, shown: str,
                  rules: DesignRules) -> Trigger:
    data, line_of = _block(content, line, shown)
    unknown = sorted(set(map(str, data)) - TRIGGER_KEYS)
    if unknown:
        raise InputError(f"unknown key; a trigger holds {', '.join(sorted(TRIGGER_KEYS))}", path=shown,
                         line=line_of(unknown[0]), field=unknown[0][:40])
    for key in ("decision", "when", "fires", "otherwise", "values"):
        if key not in data:
            raise InputError("missing", path=shown, line=line, field=key)
    decision = data["decision"]
    if not isinstance(decision, str) or not _DECISION_ID.match(decision):
        raise InputError("a decision id such as D5", path=shown, line=line_of("decision"), field="decision")
    if heading is None or not re.match(rf"{re.escape(decision)}\b", heading):
        raise InputError(f"a trigger sits under its decision record's heading (## {decision}. ...); it is under "
                         f"{heading!r}"[:200], path=shown, line=line_of("decision"), field="decision")
    if hidden := hidden_character(heading):
        # The heading is the decision's title in the readout: what a reader sees, the checker reads.
        raise InputError(f"the decision record's heading above this trigger holds the invisible, private-use or "
                         f"control character {describe(hidden)}: remove it (a reader would not see it)",
                         path=shown, line=line_of("decision"), field="heading")
    for key in ("fires", "otherwise"):
        if not isinstance(data[key], str) or (problem := label_problem(data[key], verdict=True)):
            raise InputError(f"the decision in a few plain words: {problem or 'it is not text'}", path=shown,
                             line=line_of(key), field=key)
    if data["fires"].strip().lower() == data["otherwise"].strip().lower():
        raise InputError("fires and otherwise say the same: the trigger would decide nothing", path=shown,
                         line=line_of("otherwise"), field="otherwise")
    if not isinstance(data["when"], str):
        raise InputError("a predicate, e.g. lift_low > 0 and p95 <= budget", path=shown, line=line_of("when"),
                         field="when")
    try:
        predicate = compile_predicate(data["when"])
    except PredicateSyntaxError as error:
        raise InputError(str(error), path=shown, line=line_of("when"), field="when") from None
    values = _trigger_values(data["values"], line_of, shown, rules)
    missing = sorted(predicate.names - set(values))
    if missing:
        raise InputError(f"the predicate uses {', '.join(missing)}, which values does not bind", path=shown,
                         line=line_of("when"), field="when")
    unused = sorted(set(values) - predicate.names)
    if unused:
        raise InputError(f"{', '.join(unused)} is read but the predicate never uses it", path=shown,
                         line=line_of("values"), field="values")
    results_file = data.get("file", RESULTS_NAME)
    if not isinstance(results_file, str) or not results_file or "/" in results_file or results_file.startswith("."):
        raise InputError("a results file name in outputs/, e.g. results.json", path=shown, line=line_of("file"),
                         field="file")
    effect = _trigger_effect(data["effect"], line_of, shown, rules) if "effect" in data else None
    return Trigger(decision=decision, title=heading, predicate=predicate, fires=data["fires"].strip(),
                   otherwise=data["otherwise"].strip(), values=dict(values), file=results_file, document=name,
                   line=line_of("decision"), effect=effect)


def _trigger_effect(effect: Any, line_of: Callable[[str], int], shown: str, rules: DesignRules) -> dict[str, Any]:
    """A trigger's `effect:`: the comparison and metric, the minimum change that matters (a
    number or a known budget) and the power and alpha wanted."""
    where = line_of("effect")
    if not isinstance(effect, dict):
        raise InputError("a mapping: {comparison: ROW_vs_BASELINE, metric: METRIC, minimum: NUMBER or budget.NAME}",
                         path=shown, line=where, field="effect")
    unknown = sorted(set(map(str, effect)) - EFFECT_KEYS)
    if unknown:
        raise InputError(f"unknown key; an effect holds {', '.join(sorted(EFFECT_KEYS))}", path=shown,
                         line=line_of(f"effect.{unknown[0]}"), field=f"effect.{unknown[0][:40]}")
    for key in ("comparison", "metric", "minimum"):
        if key not in effect:
            raise InputError("missing", path=shown, line=where, field=f"effect.{key}")
    for key in ("comparison", "metric"):
        if not isinstance(effect[key], str) or not effect[key].strip() or len(effect[key]) > 80:
            raise InputError("a name, e.g. hybrid+rerank_vs_hybrid and nDCG@5", path=shown,
                             line=line_of(f"effect.{key}"), field=f"effect.{key}")
    minimum = effect["minimum"]
    if isinstance(minimum, str):
        steps = minimum.split(".")
        if len(steps) != 2 or steps[0] != BUDGET_PREFIX or steps[1] not in rules.budgets:
            raise InputError(f"a number > 0 or budget.NAME of a known budget; known: "
                             f"{', '.join(sorted(rules.budgets)) or '(none)'}", path=shown,
                             line=line_of("effect.minimum"), field="effect.minimum")
        budget = rules.budgets[steps[1]]
        if not budget.value > 0:
            # No sample detects a change of 0: the queries it needs cannot be counted.
            raise InputError(f"the smallest change that matters must be above 0, and budget {budget.name} is "
                             f"{budget.value:g} ({budget.document}:{budget.line}): no sample can detect a change of "
                             "0; give a number > 0 or a budget above 0", path=shown,
                             line=line_of("effect.minimum"), field="effect.minimum")
    elif isinstance(minimum, bool) or not isinstance(minimum, (int, float)) or not math.isfinite(minimum) or minimum <= 0:
        raise InputError("the smallest change that matters: a number > 0 or budget.NAME", path=shown,
                         line=line_of("effect.minimum"), field="effect.minimum")
    read = {"comparison": effect["comparison"].strip(), "metric": effect["metric"].strip(), "minimum": minimum}
    for key, default in (("power", DEFAULT_POWER), ("alpha", DEFAULT_ALPHA)):
        value = effect.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
            raise InputError("a probability strictly between 0 and 1", path=shown, line=line_of(f"effect.{key}"),
                             field=f"effect.{key}")
        read[key] = float(value)
    if read["power"] <= read["alpha"]:
        # A two-sided test at level alpha already rejects with probability alpha when nothing
        # changed: a lower power asks for nothing, and the power kernel refuses it.
        raise InputError(f"the power wanted ({read['power']:g}) must be above alpha ({read['alpha']:g}): a test at "
                         f"level alpha rejects with probability alpha when nothing changed", path=shown,
                         line=line_of("effect.power" if "power" in effect else "effect.alpha"),
                         field="effect.power" if "power" in effect else "effect.alpha")
    return read


def _trigger_values(values: Any, line_of: Callable[[str], int], shown: str, rules: DesignRules) -> dict[str, str]:
    """A trigger's `values:` block: each name bound to a results path or to a known budget."""
    if not isinstance(values, dict) or not values:
        raise InputError("a mapping of name: results path or budget.NAME", path=shown, line=line_of("values"),
                         field="values")
    for value_name, path in values.items():
        where = line_of(f"values.{value_name}")
        if not isinstance(value_name, str) or not _VALUE_NAME.match(value_name):
            raise InputError("a value name is a plain identifier", path=shown, line=where, field="values")
        if not isinstance(path, str):
            raise InputError("expected a results path or budget.NAME", path=shown, line=where,
                             field=f"values.{value_name}")
        try:
            steps = parse_path(path)
        except PathSyntaxError as error:
            raise InputError(str(error), path=shown, line=where, field=f"values.{value_name}") from None
        if steps[0].key == BUDGET_PREFIX and (len(steps) != 2 or steps[1].key not in rules.budgets):
            raise InputError(f"no budget {path_text(steps[1:]) or '(none)'} in any design document's budget block; "
                             f"known: {', '.join(sorted(rules.budgets)) or '(none)'}", path=shown, line=where,
                             field=f"values.{value_name}")
        if steps[0].key == FRONTIER and len(steps) > 1 and steps[1].key in FRONTIER_QUERIES:
            if problem := _frontier_query_problem(steps, rules):
                raise InputError(problem, path=shown, line=where, field=f"values.{value_name}")
    return values


def _frontier_query_problem(steps: tuple, rules: DesignRules) -> str | None:
    """Why a `frontier.fitting.BUDGET` or `frontier.cheapest_within.BUDGET.FIELD` value is malformed."""
    query = steps[1].key
    wanted = 3 if query == "fitting" else 4
    shape = "frontier.fitting.BUDGET" if query == "fitting" else "frontier.cheapest_within.BUDGET.FIELD"
    if len(steps) != wanted or any(step.kind != "key" for step in steps):
        return f"expected {shape}"
    if steps[2].key not in rules.budgets:
        return (f"no budget {steps[2].key} in any design document's budget block; known: "
                f"{', '.join(sorted(rules.budgets)) or '(none)'}")
    if query == "cheapest_within" and steps[3].key not in FRONTIER_FIELDS:
        return f"a configuration's field is one of {', '.join(FRONTIER_FIELDS)}"
    return None
