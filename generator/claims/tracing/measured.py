"""Measured values as evidence: reading a claim's values out of a results file in outputs/.

A measured source holds when its results file is in outputs/, every declared path resolves (see
`generator.core.results`; a path in format 1's spelling is read as the current format's) to a value that is not null and not inside a row with `"measured": false`
(except that row's `search`, `measured` and `not_measured_reason`), and its predicate, if any,
evaluates to true (see `generator.claims.language.predicates`).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import field
from pathlib import Path
from typing import Any

from generator.claims.record.design import inside
from generator.claims.record.noninferiority import changes_since
from generator.claims.language.ledger import Claim, MeasuredSource
from generator.claims.language.predicates import PredicateEvaluationError
from generator.claims.evidence import Evidence
from generator.core.dataclass import dataclass
from generator.storage.errors import InputError
from generator.storage.fileio import sha256_file
from generator.storage.paths import display_path, reading
from generator.storage.memo import Memo, default_memo
from generator.claims.tracing.dataset import SIDE_FILE_NAMES, project_problem
from generator.core.results import RESULTS_NAME, Results, read_results, seal_problem
from generator.core.results.seal import rederiving


class ResultsFiles:
    """The results files of one check, each read and verified once (generator.claims.tracing.rederive)."""

    def __init__(self, outputs_dir: Path, project_root: Path | None = None, skip_rerank_reason: str | None = None,
                 memo: Memo | None = None):
        self.outputs_dir = outputs_dir
        self.memo = memo if memo is not None else default_memo()
        self.derived: dict[str, dict[str, Any]] = {}
        self.project_root = project_root
        self.skip_rerank_reason = skip_rerank_reason
        self.read: dict[str, Results] = {}
        self.problems: dict[str, str | None] = {}
        self.inside: dict[str, bool] = {}      # whether each cited name stays in outputs/ (resolved once)

    def _load(self, name: str, missing: str) -> Results:
        if name not in self.read:
            path = self.outputs_dir / name
            with reading(path):
                self.read[name] = read_results(path, name, missing=missing)
        return self.read[name]

    def _stays_inside(self, name: str) -> bool:
        # Resolving walks every component of both paths; a check asks once per frame read.
        if name not in self.inside:
            self.inside[name] = inside(self.outputs_dir / name, self.outputs_dir)
        return self.inside[name]

    def get(self, name: str, claim: Claim, line: int, ledger_display: str) -> tuple[Results, str | None]:
        """The file and, when it cannot be cited, why not (unsealed, changed, or not re-derivable)."""
        if not self._stays_inside(name):
            raise InputError(f"claim {claim.id}: results file {name!r} resolves outside outputs/",
                             path=ledger_display, line=line, field="file")
        results = self._load(name, f"results file not found (cited by claim {claim.id} at {ledger_display}:{line}); "
                                   "run `readout evaluate` to write it")
        if name not in self.problems:
            self.problems[name] = self._problem(results)
        return results, self.problems[name]

    def for_decision(self, name: str) -> tuple[Results | None, str | None]:
        """A results file a decision record's trigger reads, and why it cannot be used (a trigger on
        a missing, unsealed or non-re-deriving file cannot be decided)."""
        path = self.outputs_dir / name
        if not self._stays_inside(name):
            return None, f"{name} resolves outside outputs/"
        if name not in self.read and not path.is_file():
            return None, f"outputs/{name} does not exist: `readout build` writes it"
        results = self._load(name, "results file not found")
        if name not in self.problems:
            self.problems[name] = self._problem(results)
        return results, self.problems[name]

    def _problem(self, results: Results) -> str | None:
        derived = self._derivation(results)
        if derived["seal"] is None:
            problem = derived["problem"]
            if problem is None and self.project_root is not None:
                problem = project_problem(results, self.project_root, self.skip_rerank_reason)
            return problem
        if results.name not in SIDE_FILE_NAMES:
            return derived["seal"]
        primary = None
        if results.name != RESULTS_NAME and (self.outputs_dir / RESULTS_NAME).is_file():
            candidate = self._other(RESULTS_NAME)
            if self._derivation(candidate)["seal"] is None:
                primary = candidate if self.problems.setdefault(RESULTS_NAME, self._problem(candidate)) is None else None
        # Only a side file (the sandbox's) needs the derivations themselves: imported here.
        from generator.claims.tracing.rederive import side_file_problem

        return side_file_problem(results, primary)

    def _derivation(self, results: Results) -> dict[str, Any]:
        """Whether the file's seal holds and what re-deriving it finds, remembered by its name and
        sha256 (generator.storage.memo) and good only while every file it read has the same bytes."""
        if results.name not in self.derived:
            self.derived[results.name] = self.memo.remembered(
                "results derivation", {"name": results.name, "sha256": results.sha256},
                lambda: self._derive(results), self._still_valid)
        return self.derived[results.name]

    def _derive(self, results: Results) -> dict[str, Any]:
        seal = seal_problem(results.written)
        if seal is not None:
            return {"seal": seal}
        compared: dict[str, str] = {}

        def other(name: str) -> Results:
            found = self._other(name)
            compared[name] = found.sha256
            return found

        # The derivation and everything it draws with, loaded only when no memo answers.
        from generator.claims.tracing.rederive import derive_results

        with reading(results.path):
            problem, read = derive_results(results, self.outputs_dir, other)
        return {"seal": None, "problem": problem, "files": read, "results": compared}

    def _still_valid(self, derived: Any) -> bool:
        """A remembered derivation holds while each file it read has the bytes it read (the
        results files it was compared with are read again, as the derivation reads them)."""
        if not isinstance(derived, dict) or "seal" not in derived:
            return False
        if derived["seal"] is not None:
            return isinstance(derived["seal"], str)
        files, compared = derived.get("files"), derived.get("results")
        if not isinstance(files, dict) or not isinstance(compared, dict):
            return False
        for path_text, digest in files.items():
            path = self.outputs_dir / path_text
            if (sha256_file(path) if path.is_file() else None) != digest:
                return False
        try:
            return all(self._other(name).sha256 == digest for name, digest in compared.items())
        except InputError:
            return False

    def _other(self, name: str) -> Results:
        return self._load(name, "missing: a results file this one was compared with")

    def measures_queries(self, name: str) -> bool:
        """Whether the file was measured on a query set (it holds an integer query count)."""
        results = self.read.get(name)
        return results is not None and results.model.measures_queries

    def sha256(self) -> dict[str, str]:
        return {name: results.sha256 for name, results in sorted(self.read.items())}


def short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass
class MeasuredCheck:
    """What one measured source contributed: its evidence, the values it resolved, its failures."""

    evidence: dict[str, Evidence] = field(default_factory=dict)   # by value name
    values: dict[str, Any] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)


def resolve_measured_source(source: MeasuredSource, results: Results, outputs_dir: Path) -> MeasuredCheck:
    """Resolve every declared path; a failing path is a reason, never an exception."""
    found = MeasuredCheck()
    for name, steps in source.steps.items():
        resolution = results.model.resolve(steps)
        found.evidence[name] = Evidence("measured", ok=resolution.ok, file=source.file, path=source.values[name],
                                        name=name, value=resolution.value, predicate=source.predicate)
        if resolution.ok:
            found.values[name] = resolution.value
        elif resolution.unmeasured:
            found.reasons.append(f"{name} = {source.values[name]}: {resolution.reason}")
        else:
            found.reasons.append(f"path {source.values[name]} not found in "
                                 f"{display_path(outputs_dir / source.file)}: {resolution.reason}")
    return found


def evaluate_predicate(source: MeasuredSource, values: dict[str, Any]) -> tuple[bool | None, str | None]:
    """(holds, reason): whether the source's predicate is true on the claim's values.

    `holds` is None when it cannot be decided (an error, or a result that is not a boolean);
    the reason then says why. Call only when every name it uses has a value.
    """
    assert source.compiled is not None and source.predicate is not None
    try:
        outcome = source.compiled.evaluate(values)
    except PredicateEvaluationError as error:
        return None, f"predicate {source.predicate!r} cannot be evaluated: {error}"
    if not isinstance(outcome, bool):
        return None, f"predicate {source.predicate!r} must give true or false, gave {short(outcome)}"
    if not outcome:
        shown = ", ".join(f"{name}={short(values[name])}" for name in sorted(source.compiled.names))
        return False, f"predicate false: expected {source.predicate}, found {shown}"
    return True, None


def rederived_file(outputs_dir: Path, name: str, shown: str, missing: str, refusal: str) -> Results:
    """A results file re-derived from the run files and judgements beside it, or an input error."""
    with rederiving():   # what is read here is re-derived here, before anything shows it
        results, problem = ResultsFiles(outputs_dir).for_decision(name)
    if results is None:
        raise InputError(missing, path=shown)
    if problem is not None:
        raise InputError(f"{refusal}: {problem}", path=shown)
    return dataclasses.replace(results, path=Path(shown))


def read_baseline(project) -> Results:
    """The baseline results file readout.yaml names (read as a file: no git), re-derived from the
    run files and judgements beside it."""
    if project.regression_baseline is None:
        raise InputError("since_baseline needs regression.baseline: the committed baseline results file",
                         path=display_path(project.config_path), field="regression.baseline")
    path = project.resolve(project.regression_baseline)
    return rederived_file(path.parent, path.name, display_path(path),
                          "missing: the baseline results file readout.yaml's regression.baseline names (copy the "
                          "last release's results file and its runs folder there and commit them)",
                          "the baseline does not re-derive from the run files and judgements beside it (copy the "
                          "release's runs folder beside it too), so it is not compared")


def changes_since_baseline(project, rule) -> tuple[list, Results]:
    """Each row and metric of the frozen regression block (`rule`, generator.claims.record.frozen_rules.
    frozen_regression) since the committed baseline, both files re-derived; and the current file."""
    block = rule.block
    baseline = read_baseline(project)
    shown = display_path(project.outputs_dir / block.file)
    current = rederived_file(project.outputs_dir, block.file, shown,
                             f"missing: `readout build` writes it (the design's regression block compares "
                             f"{block.file})", "does not re-derive from its run files and judgements, so it is not "
                                               "compared")
    return changes_since(block, baseline, display_path(project.resolve(project.regression_baseline or "")), current,
                         shown), current
