"""What the design freeze says of one rule: every freeze that set or moved a decision's rule, and the
design's regression block as the freeze holds it, each with whether it was fixed before the results.

A verdict is labelled post hoc from here (the decision table, the regression gate), so the rule
read is the one the log recorded, never the design as it reads today.
"""

from __future__ import annotations

from typing import Any

from generator.claims.record.freeze import (ADDED, FREEZE_VERSION, REMOVED, FreezeEntry, FreezeLog, _budgets_read,
                                            read_freeze_log, regression_moved)
from generator.claims.record.regression_block import (HOW_TO_ADD_REGRESSION, REGRESSION_INFO, RegressionBlock,
                                                      read_regression_block)
from generator.core.dataclass import dataclass
from generator.storage.errors import InputError
from generator.storage.fileio import sha256_file
from generator.storage.paths import display_path
from generator.project import Project


@dataclass(frozen=True)
class RuleChange:
    """One freeze entry that set or moved a decision's rule: the rule before and after it, and the
    budgets it reads on each side."""

    entry: FreezeEntry
    parts: list[str]
    old: dict[str, Any] | None
    new: dict[str, Any] | None
    old_budgets: dict[str, float]
    new_budgets: dict[str, float]

    @property
    def post_hoc(self) -> bool:
        return self.entry.results_existed and self.parts != [REMOVED]

    def as_dict(self) -> dict[str, Any]:
        return {"freeze": self.entry.number, "frozen_at": self.entry.frozen_at, "moved": self.parts,
                "results_existed": self.entry.results_existed, "reason": self.entry.reason,
                "acknowledged": self.decision_acknowledged, "old": self.old, "new": self.new,
                "old_budgets": self.old_budgets, "new_budgets": self.new_budgets}

    @property
    def decision_acknowledged(self) -> bool:
        decision = (self.new or self.old or {}).get("decision")
        return decision in self.entry.post_hoc


def rule_changes(log: FreezeLog | None, decision: str) -> list[RuleChange]:
    """Every entry of the log that set or moved `decision`'s rule, oldest first."""
    if log is None or log.version != FREEZE_VERSION:
        return []
    changes = []
    previous: dict[str, Any] = {"budgets": {}, "triggers": {}}
    for entry in log.entries:
        parts = entry.amended.get(decision)
        if parts:
            old = previous["triggers"].get(decision)
            new = entry.rules["triggers"].get(decision)
            read = _budgets_read(old or {}) | _budgets_read(new or {})
            changes.append(RuleChange(entry, list(parts), _with_id(old, decision), _with_id(new, decision),
                                      {name: previous["budgets"][name] for name in sorted(read)
                                       if name in previous["budgets"]},
                                      {name: entry.rules["budgets"][name] for name in sorted(read)
                                       if name in entry.rules["budgets"]}))
        previous = entry.rules
    return changes


def _with_id(rule: dict[str, Any] | None, decision: str) -> dict[str, Any] | None:
    return {**rule, "decision": decision} if rule is not None else None


# --------------------------------------------------------------------------- the regression block, as frozen


@dataclass(frozen=True)
class FrozenRegression:
    """The design's regression block as the freeze holds it, and whether it was fixed before the
    results: `post_hoc` when the entry that last set or moved it was made once results existed."""

    block: RegressionBlock
    entry: FreezeEntry          # the freeze that last set or moved the block
    moved: list[str]            # what that freeze moved
    recorded: bool              # False: that freeze predates the snapshot, and only its document's hash moved

    @property
    def post_hoc(self) -> bool:
        return self.entry.results_existed

    @property
    def acknowledged(self) -> bool:
        return REGRESSION_INFO in self.entry.post_hoc

    def sentence(self) -> str:
        """When the block was last set or moved, and whether results existed then."""
        entry = self.entry
        if not self.recorded:
            what = f"changed {self.block.document}, which holds the regression block"
        elif self.post_hoc:
            what = f"set or moved the regression block ({', '.join(self.moved)})"
        else:
            what = "set the regression block"
        when = "after results existed" if self.post_hoc else "before any results"
        legacy = "" if self.recorded else " (a freeze made before the block itself was kept)"
        reason = f"; reason: {entry.reason}" if entry.reason and self.post_hoc else ""
        return f"freeze {entry.number} ({entry.frozen_at}) {what} {when}{legacy}{reason}"

    def describe(self) -> str:
        """One sentence: when the margin was fixed, and what that makes the verdict."""
        return f"{'post hoc' if self.post_hoc else 'pre-registered'}: {self.sentence()}"

    def as_dict(self) -> dict[str, Any]:
        return {"post_hoc": self.post_hoc, "freeze": self.entry.number, "frozen_at": self.entry.frozen_at,
                "moved": list(self.moved), "recorded": self.recorded, "acknowledged": self.acknowledged,
                "reason": self.entry.reason, "said": self.describe()}


def frozen_regression(project: Project, log: FreezeLog | None = None) -> FrozenRegression:
    """The design's regression block, refused unless the freeze holds it exactly as the design
    documents say (a margin moved and not frozen would decide a gate), with the freeze that last
    set or moved it."""
    block = read_regression_block(project.design_dir)
    if block is None:
        raise InputError(f"no regression block in the design: {HOW_TO_ADD_REGRESSION}",
                         path=display_path(project.design_dir))
    log = log if log is not None else read_freeze_log(project)
    shown = display_path(project.freeze_path)
    if log is None or log.version != FREEZE_VERSION:
        raise InputError("the design is not frozen (or frozen by a version 1 freeze, which records no results): the "
                         "regression block decides only as frozen; run `readout freeze`", path=shown)
    document = project.design_dir / block.name
    frozen, now = log.documents.get(block.name), sha256_file(document)
    if frozen != now:
        raise InputError("the regression block's document "
                         + (f"changed since the last freeze (sha256 {frozen[:12]} frozen, {now[:12]} now)"
                            if frozen else "is not in the freeze")
                         + ": the block decides only as frozen; run `readout freeze` (once results exist, with "
                           f"--reason and --post-hoc {REGRESSION_INFO})", path=block.document, line=block.line)
    last = log.entries[-1]
    if REGRESSION_INFO in last.rules and last.rules[REGRESSION_INFO] != block.snapshot():
        raise InputError(f"freeze {last.number} records a regression block the design documents do not hold (the "
                         "log was edited)", path=shown)
    moved_at, moved, recorded = last, [ADDED], REGRESSION_INFO in last.rules
    previous: FreezeEntry | None = None
    for entry in log.entries:
        if REGRESSION_INFO in entry.rules:
            parts = regression_moved(previous.data if previous else None, entry.rules, entry.documents)
        else:
            before = previous.documents.get(block.name) if previous else None
            parts = [] if previous is not None and before == entry.documents.get(block.name) else [ADDED]
        if parts:
            moved_at, moved, recorded = entry, parts, REGRESSION_INFO in entry.rules
        previous = entry
    return FrozenRegression(block, moved_at, moved, recorded)
