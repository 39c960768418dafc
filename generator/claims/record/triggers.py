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

import functools
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from generator.text.characters import describe, hidden_character
from generator.claims.record.design import DesignDocument, design_files
from generator.core.sample_size import too_few_queries
from generator.storage.memo import default_memo
from generator.claims.language.predicates import (UNKNOWN, Predicate, PredicateEvaluationError, PredicateSyntaxError,
                                         compile_predicate, evaluate_three_valued)
from generator.storage.errors import InputError, clip
from generator.storage.bounded_reads import read_input
from generator.storage.fileio import sha256_text
from generator.storage.paths import display_path, reading
from generator.text.numeral_values import numeral_value
from generator.text.numerals import find_numerals
from generator.results import RESULTS_NAME, PathSyntaxError, Results, cost_block, parse_path, path_text
from generator.results.model import cheapest_within, within_budget
from generator.results.schema import FRONTIER as FRONTIER_BLOCK
from generator.storage.safe_yaml import load_config_with_lines, parse_yaml
from generator.text.wording import label_problem

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

FIRES = "fires"
DOES_NOT_FIRE = "does not fire"
UNDECIDED = "cannot be decided"
STATES = (FIRES, DOES_NOT_FIRE, UNDECIDED)
BUDGET_PREFIX = "budget"
FRONTIER = FRONTIER_BLOCK.name
FRONTIER_QUERIES = ("fitting", "cheapest_within")
FRONTIER_FIELDS = ("p95_milliseconds", "p50_milliseconds", "ceiling", "headroom", "depth", "max_length")
TRIGGER_KEYS = {"decision", "when", "fires", "otherwise", "values", "file", "effect"}
EFFECT_KEYS = {"comparison", "metric", "minimum", "power", "alpha"}
DEFAULT_POWER, DEFAULT_ALPHA = 0.8, 0.05
# The design's `regression` block: what `readout regress` compares, and what it must rule out.
REGRESSION_INFO = "regression"
REGRESSION_KEYS = ("rows", "metrics", "margin", "inconclusive", "file", "baseline")
# What an inconclusive change (or one the sample cannot decide) does to the gate, pre-registered
# with the margin: `warn` (exit 0, said) when the block says nothing, so a design written before
# the policy existed reads as it always has; `fail` (exit 1).
INCONCLUSIVE_POLICIES = ("warn", "fail")
DEFAULT_INCONCLUSIVE = "warn"
# Every measure readout computes (recall, precision, reciprocal rank, average precision, nDCG;
# generator.core.metrics) lies in [0, 1], so a change lies in [-1, 1]: a margin of 1 or more
# rules out no loss at all.
METRIC_RANGE = (0.0, 1.0)
# A margin is written as a plain decimal: YAML 1.1 would read `0x10` as 16 and `1_000` as 1000.
_DECIMAL = re.compile(r"^[+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$")
HOW_TO_ADD_REGRESSION = ("add a fenced ```regression block to a design document (design/*.md) holding rows: "
                         "[ROW, ...], metrics: [METRIC, ...] and margin: NUMBER (the non-inferiority margin, > 0), "
                         "then `readout freeze`")
_DECISION_ID = re.compile(r"^[A-Z][A-Za-z0-9-]{0,15}$")
_VALUE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,39}$")


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
    # What the design freeze says of the rule (generator.claims.record.freeze.RuleChange, oldest first) and
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


@dataclass(frozen=True)
class RegressionBlock:
    """The design's `regression` block: what is compared, the margin a loss must clear, and what an
    inconclusive change does. Frozen like a decision's rule (generator.claims.record.freeze)."""

    rows: tuple[str, ...]
    metrics: tuple[str, ...]
    margin: float
    baseline: str | None
    document: str                   # the design document, as a path is shown
    line: int                       # the block's first line
    lines: dict[str, int] = field(default_factory=dict)   # key -> line
    inconclusive: str = DEFAULT_INCONCLUSIVE
    file: str = RESULTS_NAME        # the results file in outputs/ whose query set decides
    name: str = ""                  # the design document's name in design/

    def where(self, key: str) -> dict[str, Any]:
        """InputError's location of one of the block's keys."""
        return {"path": self.document, "line": self.lines.get(key, self.line), "field": key}

    def as_dict(self) -> dict[str, Any]:
        return {"rows": list(self.rows), "metrics": list(self.metrics), "margin": self.margin,
                "inconclusive": self.inconclusive, "file": self.file, "baseline": self.baseline,
                "document": self.document, "line": self.line}

    def snapshot(self) -> dict[str, Any]:
        """What a freeze keeps of the block: everything that decides a verdict."""
        return {"rows": list(self.rows), "metrics": list(self.metrics), "margin": self.margin,
                "inconclusive": self.inconclusive, "file": self.file, "baseline": self.baseline,
                "document": self.name}


@dataclass
class DesignRules:
    budgets: dict[str, Budget] = field(default_factory=dict)
    triggers: list[Trigger] = field(default_factory=list)
    regression: RegressionBlock | None = None


@functools.lru_cache(maxsize=1)
def _commonmark() -> MarkdownIt:
    from markdown_it import MarkdownIt   # only when a design document's fences are not remembered

    return MarkdownIt("commonmark")


@functools.lru_cache(maxsize=32)
def _fences(text: str) -> tuple[tuple[str, str, int, str | None], ...]:
    """(info, content, first content line, heading above) of every fenced block of a Markdown text
    (remembered: one check reads the design rules for the freeze and for the decisions; across
    checks, a signed memo by the text's sha256, generator.storage.memo)."""
    found = default_memo().remembered("design fences", sha256_text(text),
                              lambda: _fence_record(text))
    return tuple((info, content, line, heading) for info, content, line, heading in found)


def _fence_record(text: str) -> list[list]:
    found: list[list] = []
    heading = None
    tokens = _commonmark().parse(text)
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and index + 1 < len(tokens):
            heading = tokens[index + 1].content.strip()
        if token.type == "fence" and token.map:
            found.append([token.info.strip(), token.content, token.map[0] + 2, heading])
    return found


def design_fences(design_dir: Path, kinds: tuple[str, ...]) -> list[tuple[str, str, int, str | None, str, str]]:
    """(info, content, first content line, heading above, document name, shown path) of every
    fenced block of the Markdown design documents whose info is one of `kinds`, in name order."""
    blocks = []
    for name, path in sorted(design_files(design_dir).items()):
        if path.suffix.lower() not in (".md", ".markdown"):
            continue
        shown = display_path(path)
        try:
            with reading(path):
                text = read_input(path, "design document", shown).decode("utf-8")
        except UnicodeDecodeError as error:
            raise InputError(f"not UTF-8 text (byte {error.start})", path=shown) from None
        blocks += [(info, content, line, heading, name, shown) for info, content, line, heading in _fences(text)
                   if info in kinds]
    return blocks


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


def read_regression_block(design_dir: Path) -> RegressionBlock | None:
    """The `regression` block of the design documents, validated; None when there is none."""
    return _regression_block(design_fences(design_dir, (REGRESSION_INFO,)))


def _regression_block(found: list[tuple[str, str, int, str | None, str, str]]) -> RegressionBlock | None:
    if not found:
        return None
    if len(found) > 1:
        first, second = found[0], found[1]
        raise InputError(f"a second regression block (the first is at {first[5]}:{first[2]}): the design fixes one",
                         path=second[5], line=second[2])
    _, content, line, _, name, shown = found[0]
    data, line_of = _block(content, line, shown, what="a regression block holds a YAML mapping of rows, metrics, "
                                                       "margin and (optionally) inconclusive, file and baseline")
    unknown = sorted(str(key) for key in data if key not in REGRESSION_KEYS)
    if unknown:
        raise InputError(f"unknown key; a regression block holds {', '.join(REGRESSION_KEYS)}", path=shown,
                         line=line_of(unknown[0]), field=clip(unknown[0], 40))
    for key in ("rows", "metrics", "margin"):
        if key not in data:
            raise InputError(f"missing; {HOW_TO_ADD_REGRESSION}", path=shown, line=line, field=key)
    names = {}
    for key, what in (("rows", "rows of the results table, e.g. [hybrid]"), ("metrics", "metrics, e.g. [nDCG@5]")):
        value = data[key]
        if not isinstance(value, list) or not value or not all(isinstance(item, str) and item.strip()
                                                               for item in value):
            raise InputError(f"a non-empty list of {what}", path=shown, line=line_of(key), field=key)
        stripped = [item.strip() for item in value]
        repeated = sorted(item for item, times in Counter(stripped).items() if times > 1)   # linear in the names
        if repeated:
            raise InputError(f"{clip(repeated[0], 40)!r} is listed twice", path=shown, line=line_of(key), field=key)
        names[key] = tuple(stripped)
    margin = _margin(content, data["margin"], shown, line_of("margin"))
    policy = data.get("inconclusive", DEFAULT_INCONCLUSIVE)
    if policy not in INCONCLUSIVE_POLICIES:
        raise InputError(f"what an inconclusive change does to the gate: {' or '.join(INCONCLUSIVE_POLICIES)} "
                         f"(default {DEFAULT_INCONCLUSIVE}), got {clip(str(policy), 40)!r}", path=shown,
                         line=line_of("inconclusive"), field="inconclusive")
    results_file = data.get("file", RESULTS_NAME)
    if (not isinstance(results_file, str) or not re.fullmatch(r"results(?:-[A-Za-z0-9_-]{1,40})?\.json",
                                                               results_file)):
        raise InputError("the results file in outputs/ whose query set decides, e.g. results.json or "
                         "results-all.json", path=shown, line=line_of("file"), field="file")
    baseline = data.get("baseline")
    if baseline is not None and (not isinstance(baseline, str) or not baseline.strip() or "\x00" in baseline):
        raise InputError("a results file (relative to the project) or a git ref, e.g. v1.2 or "
                         "baseline/results.json", path=shown, line=line_of("baseline"), field="baseline")
    return RegressionBlock(rows=names["rows"], metrics=names["metrics"], margin=margin,
                           baseline=baseline.strip() if baseline else None, document=shown, line=line,
                           lines={str(key): line_of(str(key)) for key in data}, inconclusive=policy,
                           file=results_file, name=name)


def _margin(content: str, value: Any, shown: str, line: int) -> float:
    """The margin as written: a plain decimal strictly inside the metric's range. The text is read,
    not YAML's typing of it, so `0x10` or `1_000` (YAML 1.1's 16 and 1000) are refused."""
    low, high = METRIC_RANGE
    shape = (f"the non-inferiority margin in the metric's units: a plain decimal above {low:g} and below "
             f"{high - low:g} (every metric lies in [{low:g}, {high:g}]), e.g. 0.01")
    written = None
    if isinstance(value, (int, float, str)) and not isinstance(value, bool):
        root = parse_yaml(content, shown)
        node = root.value.get("margin") if root is not None and isinstance(root.value, dict) else None
        written = node[1].value if node is not None and isinstance(node[1].value, str) else None
    if written is None or not _DECIMAL.match(written.strip()):
        raise InputError(f"{shape}, got {clip(str(written if written is not None else value), 40)}", path=shown,
                         line=line, field="margin")
    margin = float(written.strip())
    if not math.isfinite(margin) or not 0.0 < margin < high - low:
        raise InputError(f"{shape}, got {clip(written.strip(), 40)}", path=shown, line=line, field="margin")
    return margin


def _block(content: str, line: int, shown: str,
           what: str = "a fenced block holds a YAML mapping") -> tuple[dict[str, Any], Callable[[str], int]]:
    try:
        data, lines = load_config_with_lines(content, shown)
    except InputError as error:
        raise InputError(error.reason, path=shown, line=line + (error.line or 1) - 1) from None
    if not isinstance(data, dict):
        raise InputError(what, path=shown, line=line)
    return data, lambda key: line + (lines.line(key) or 1) - 1


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
