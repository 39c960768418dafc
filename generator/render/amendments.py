"""Rules set or moved after the results: one line per post hoc decision for the first screen, and
the full record, each change a diff of the rule's fields.

A decision's rule is its trigger block (`when`, `fires`, `otherwise`, `file`, every value it reads,
the effect it states) and the budgets it reads. A change is shown field by field, before and
after, only the fields that moved: an amendment that only added an effect size reads "effect.minimum:
none → 0.02", never two identical rules side by side. The first screen holds one line per
decision (what moved, in which freeze and when, why), linked to its record further down the page.
"""

from __future__ import annotations

from typing import Any

from generator.render.doors import Door
from generator.render.labels import Labels
from generator.render.values import raw_json

MOVED_LABELS = {"added": "rule_written_after_results", "trigger": "trigger_changed_after_results",
                "outcome": "outcome_changed_after_results", "budget": "budget_changed_after_results"}
# The keys of a rule that say nothing of what it decides: where it is written, and its id.
_NOT_RULE = ("document", "decision")
REASON_CHARS = 110


def rule_fields(rule: dict[str, Any] | None, budgets: dict[str, float]) -> dict[str, str]:
    """A rule as {field: value text}: nested mappings flattened (`values.p95`, `effect.minimum`),
    budgets as `budget.NAME`."""
    fields: dict[str, str] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for key in sorted(value, key=str):
                walk(f"{prefix}.{key}" if prefix else str(key), value[key])
        else:
            fields[prefix] = value if isinstance(value, str) else raw_json(value)

    for key in sorted(rule or {}, key=str):
        if key not in _NOT_RULE:
            walk(str(key), (rule or {})[key])
    for name, value in sorted(budgets.items()):
        fields[f"budget.{name}"] = f"{value:g}"
    return fields


def rule_diff(change: Any) -> list[tuple[str, str | None, str | None]]:
    """(field, before, after) of every field the change moved, in field order; None: absent."""
    before = rule_fields(change.old, change.old_budgets)
    after = rule_fields(change.new, change.new_budgets)
    return [(name, before.get(name), after.get(name)) for name in sorted(set(before) | set(after))
            if before.get(name) != after.get(name)]


def _moved(change: Any, labels: Labels) -> list[Any]:
    return [labels[MOVED_LABELS[part]] for part in change.parts if part in MOVED_LABELS]


def _groups(diff: list[tuple[str, str | None, str | None]]) -> list[str]:
    """The top-level fields a diff touches (`effect`, `when`, `budget`), in order, once each."""
    seen: list[str] = []
    for name, _, _ in diff:
        group = name.split(".")[0]
        if group not in seen:
            seen.append(group)
    return seen


def _clip(text: str) -> str:
    return text if len(text) <= REASON_CHARS else text[:REASON_CHARS - 1].rstrip() + "…"


def record_anchor(decision: str) -> str:
    return "amendment-" + "".join(char if char.isalnum() or char in "-_" else "-" for char in decision)


def post_hoc_lines(report: Any, door: Door, labels: Labels) -> list[dict]:
    """One line per decision whose rule was set or moved after results existed: the decision, what
    moved and which fields, the last freeze that moved it and its reason, and its record's anchor."""
    lines = []
    for row in report.decisions:
        changes = row.post_hoc
        if not changes:
            continue
        moved: list[Any] = []
        for change in changes:
            for label in _moved(change, labels):
                if str(label) not in map(str, moved):
                    moved.append(label)
        fields = []
        for change in changes:
            if change.old is not None:   # a rule written afresh changed every field: none is named
                fields += [group for group in _groups(rule_diff(change)) if group not in fields]
        last = changes[-1]
        reason = (door.data(_clip(last.entry.reason)) if last.entry.reason else labels.no_reason_given)
        lines.append({"decision": door.data(row.trigger.decision), "moved": door.join(moved, ", "),
                      "fields": door.join([door.code(field) for field in fields], ", ") if fields else None,
                      "freeze": door.join([labels.freeze_number, door.data(last.entry.number),
                                           door.data(last.entry.frozen_at)]),
                      "reason": reason, "anchor": record_anchor(row.trigger.decision)})
    return lines


def amendment_records(report: Any, door: Door, labels: Labels) -> list[dict]:
    """The full record of every post hoc decision: each change with what moved, its freeze, its
    reason and the diff of its rule, field by field."""
    records = []
    for row in report.decisions:
        if not row.post_hoc:
            continue
        changes = []
        for change in row.post_hoc:
            diff = [{"field": door.code(name),
                     "before": door.code(before) if before is not None else labels.no_rule_field,
                     "after": door.code(after) if after is not None else labels.no_rule_field,
                     "kind": "added" if before is None else "removed" if after is None else "changed"}
                    for name, before, after in rule_diff(change)]
            changes.append({"moved": door.join(_moved(change, labels), ", "),
                            "freeze": door.join([labels.freeze_number, door.data(change.entry.number),
                                                 door.data(change.entry.frozen_at)]),
                            "reason": door.data(change.entry.reason) if change.entry.reason
                            else labels.no_reason_given,
                            "diff": diff})
        records.append({"decision": door.data(row.trigger.decision), "title": door.data(row.trigger.title),
                        "anchor": record_anchor(row.trigger.decision), "changes": changes})
    return records
