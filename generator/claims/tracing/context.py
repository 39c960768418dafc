"""What every claim of one check shares: the design documents, the results files read, the design
rules (budgets and triggers) and the decisions their triggers compute, each read once."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

from generator.claims.record.design import DesignLibrary
from generator.claims.record.design_rules import read_design_rules
from generator.claims.record.frozen_rules import frozen_regression, rule_changes
from generator.claims.record.triggers import DecisionRow, DesignRules, evaluate_trigger
from generator.claims.tracing.identifiers import KnownIdentifiers
from generator.claims.tracing.measured import ResultsFiles, changes_since_baseline
from generator.core.options import SKIP_RERANK_REASON
from generator.storage.errors import InputError
from generator.storage.paths import display_path
from generator.project import Project
from generator.core.text.verdicts import normalise


def _data_dir(project: Project) -> Path | None:
    try:
        return project.data_dir
    except (InputError, AttributeError, TypeError):
        return None


def _skip_rerank_reason(project: Project) -> str | None:
    """The reason readout.yaml gives for not running the rerank row, when it asks for that."""
    block = project.evaluate if isinstance(project.evaluate, dict) else {}
    if block.get("skip_rerank") is not True:
        return None
    reason = block.get("skip_rerank_reason")
    return reason if isinstance(reason, str) else SKIP_RERANK_REASON


class CheckContext:
    """The project as every rule of one check reads it."""

    def __init__(self, project: Project, ledger_display: str, languages: tuple[str, ...] = (),
                 claim_ids: tuple[str, ...] = (), freeze_log: Any = None):
        self.project = project
        self.languages = languages
        self.freeze_log = freeze_log    # the design freeze (generator.claims.record.freeze): what is post hoc
        self.claim_ids = claim_ids
        self._identifiers: KnownIdentifiers | None = None
        self.data_dir = _data_dir(project)
        self.design = DesignLibrary(project.design_dir)
        self.results = ResultsFiles(project.outputs_dir, project.root, _skip_rerank_reason(project))
        self.outputs_dir = project.outputs_dir
        self.design_dir = project.design_dir
        self.ledger_display = ledger_display
        self._rules: DesignRules | None = None
        self._decisions: list[DecisionRow] | None = None
        self._shared: dict[Any, Any] = {}

    def shared(self, key: Any, compute: Callable[[], Any]) -> Any:
        """What a rule computes from the project alone (not from one claim), computed once per check."""
        if key not in self._shared:
            self._shared[key] = compute()
        return self._shared[key]

    @property
    def identifiers(self) -> KnownIdentifiers:
        """What a digit-bearing identifier in a claim may name (generator.claims.tracing.identifiers)."""
        if self._identifiers is None:
            self._identifiers = KnownIdentifiers(
                lambda: set(self.claim_ids) | {row.trigger.decision for row in self.decisions},
                self.outputs_dir, self.data_dir)
        return self._identifiers

    @property
    def outcomes(self) -> re.Pattern | None:
        """Every decision's outcome words, one pattern (None without decisions)."""
        if not hasattr(self, "_outcomes"):
            phrases = sorted({normalise(phrase) for row in self.decisions
                              for phrase in (row.trigger.fires, row.trigger.otherwise)}, key=len, reverse=True)
            self._outcomes = re.compile(r"(?<![\w-])(?:" + "|".join(map(re.escape, phrases)) + r")(?![\w])",
                                        re.IGNORECASE) if phrases else None
        return self._outcomes

    @property
    def rules(self) -> DesignRules:
        """The budgets and reversal triggers the design documents write (read once)."""
        if self._rules is None:
            self._rules = read_design_rules(self.design_dir)
        return self._rules

    @property
    def regression_block(self) -> Any:
        """The design's regression block (generator.claims.record.regression_block), or None."""
        return self.rules.regression

    @property
    def frozen_regression(self) -> Any:
        """The regression block as the freeze holds it (when it was last set or moved), or None
        when the freeze does not hold it as the design says."""
        if not hasattr(self, "_frozen_regression"):
            try:
                self._frozen_regression = frozen_regression(self.project, self.freeze_log)
            except InputError:
                self._frozen_regression = None
        return self._frozen_regression

    def since_baseline(self, row: str, metric: str) -> tuple[Any, str | None]:
        """The paired change of `row` on `metric` since the committed baseline the project names,
        both files re-derived (generator.claims.tracing.measured.changes_since_baseline), or why
        there is none."""
        key = ("since baseline",)
        if key not in self._shared:
            self._shared[key] = self._changes_since()
        changes, problem = self._shared[key]
        if problem:
            return None, problem
        found = next((change for change in changes if change.row == row and change.metric == metric), None)
        if found is None:
            return None, f"the regression block compares no {row} on {metric}"
        return found, None

    def _changes_since(self) -> tuple[list[Any], str | None]:
        if self.regression_block is None:
            return [], "the design has no regression block: nothing is compared since a baseline"
        if self.frozen_regression is None:
            return [], "the regression block is not frozen as the design says: `readout freeze`"
        try:
            return changes_since_baseline(self.project, self.frozen_regression)[0], None
        except InputError as error:
            return [], str(error)

    def all_results(self) -> list[Any]:
        """Every results file of outputs/ (results*.json) that reads and verifies, in name order."""
        def compute() -> list[Any]:
            found = []
            for path in sorted(self.outputs_dir.glob("results*.json")) if self.outputs_dir.is_dir() else ():
                results, problem = self.results.for_decision(path.name)
                if results is not None and not problem:
                    found.append(results)
            return found
        return self.shared(("all results",), compute)

    def budget(self, name: str) -> float | None:
        """A design budget's value (an equivalence margin, a time budget), or None."""
        budget = self.rules.budgets.get(name)
        return budget.value if budget is not None else None

    @property
    def decisions(self) -> list[DecisionRow]:
        """Every reversal trigger of the design documents, evaluated on the results (once)."""
        if self._decisions is None:
            self._decisions = []
            for trigger in self.rules.triggers:
                results, problem = self.results.for_decision(trigger.file)
                row = evaluate_trigger(trigger, self.rules.budgets, results, problem,
                                       display_path(self.design_dir / trigger.document))
                if self.freeze_log is not None:
                    row.changes = rule_changes(self.freeze_log, trigger.decision)
                self._decisions.append(row)
        return self._decisions

    @property
    def example_decision(self) -> str:
        """A decision id for a hint: this project's own first one, never another project's."""
        return self.decisions[0].trigger.decision if self.decisions else "D1"

    def decision(self, decision_id: str) -> DecisionRow | None:
        return next((row for row in self.decisions if row.trigger.decision == decision_id), None)
