"""What the reports, the decisions and `export` show of the results files: re-derived by the check
that vouches for them, or refused.

A results file a claim cites is re-derived because the claim cites it (generator.claims.tracing.
measured). Every other results file something shows is re-derived here, in the same check and with
the same remembered derivations (generator.storage.memo): the release sample's `results.json`, which every
report reads (its per-query table, its charts, its costs); each file a report's table reads
(readout.yaml `table.file`); each file a decision record's trigger reads; and the baseline a
`since_baseline` section compares with, from the run files and judgements beside it. One that
exists and does not re-derive fails the check with its first mismatch, naming what shows it.

The check's report lists every results file it re-derived, by its real path, with the sha256 of the
bytes it re-derived (`CheckReport.rederived`). A render reads results only through that list
(generator.core.results.seal.only_rederived): a file not on it, or whose bytes changed since, is refused,
in a draft too. `export` re-derives the file it exports (`rederived_results`) before it prints a
value or the file's sha256.

`query_texts` are not made from runs and judgements: where the dataset's queries file is reachable
with the sha256 the manifest records, every recorded text must be the file's text of that query;
elsewhere (a CI job without the dataset) they stay as recorded, which the results schema declares
(`derived: false`) and a source citing one says.
"""

from __future__ import annotations

import json
import os
from dataclasses import field
from pathlib import Path
from typing import Any, Iterable

from generator.claims.record.triggers import DecisionRow
from generator.claims.tracing.context import _skip_rerank_reason
from generator.claims.tracing.measured import ResultsFiles
from generator.core.dataclass import dataclass
from generator.core.textlines import lines
from generator.storage.errors import InputError
from generator.storage.fileio import sha256_file
from generator.storage.paths import display_path
from generator.storage.memo import default_memo
from generator.project import Project
from generator.core.results import RESULTS_NAME, Results, clip, strict_json
from generator.core.results.schema import QUERY_TEXTS

QUERIES_INPUT_NAMES = ("queries.jsonl", "queries.jsonl.gz")


@dataclass
class Shown:
    """What one check vouches for: why each results file something shows cannot be shown, and every
    file it re-derived (real path -> sha256 of the bytes re-derived)."""

    problems: list[str] = field(default_factory=list)
    rederived: dict[str, str] = field(default_factory=dict)


def shown_results(project: Project, decisions: Iterable[DecisionRow]) -> dict[str, list[str]]:
    """Every results file of outputs/ that something shows, by name, with what shows it."""
    shown: dict[str, list[str]] = {}
    if project.outputs:
        shown.setdefault(RESULTS_NAME, []).append("every report")
        for name, spec in project.outputs.items():
            if spec.table is not None:
                shown.setdefault(spec.table.file, []).append(f"the {name} table")
    for row in decisions:
        shown.setdefault(row.trigger.file, []).append(f"decision {row.trigger.decision}")
    return shown


def _shows_since_baseline(project: Project) -> bool:
    return any("since_baseline" in section.show for spec in (project.outputs or {}).values()
               for section in spec.sections)


def vouch_for_shown(project: Project, files: ResultsFiles, decisions: Iterable[DecisionRow]) -> Shown:
    """Re-derive every results file something shows (with the check's own `files`, so a file a
    claim cites is derived once) and say which do not re-derive; list every file re-derived."""
    found = Shown()
    for name, readers in sorted(shown_results(project, decisions).items()):
        if not (files.outputs_dir / name).exists() and name not in files.read:
            continue   # missing: what reads it says so (a render, "run readout evaluate")
        results, problem = files.for_decision(name)
        if results is not None and problem is None:
            problem = query_texts_problem(results, project.root)
            files.problems[name] = problem
        if problem is not None:
            found.problems.append(_problem_line(files.outputs_dir / name, readers, problem))
    if _shows_since_baseline(project) and project.regression_baseline is not None:
        found.problems.extend(_baseline_problems(project, found))
    for name, results in files.read.items():
        if files.problems.get(name) is None and name in files.problems:
            found.rederived[os.path.realpath(results.path)] = results.sha256
    return found


def _problem_line(path: Path, readers: list[str], problem: str) -> str:
    return (f"{display_path(path)}: {', '.join(readers)} show{'s' if len(readers) == 1 else ''} it, but it does not "
            f"re-derive from its run files and judgements: {problem}")


def _baseline_problems(project: Project, found: Shown) -> list[str]:
    """The baseline a since_baseline section compares with, re-derived from the run files and
    judgements beside it (its own outputs folder), never from this project's."""
    path = project.resolve(project.regression_baseline or "")
    if not path.exists():
        return []
    files = ResultsFiles(path.parent)
    results, problem = files.for_decision(path.name)
    if results is not None and problem is None:
        found.rederived[os.path.realpath(results.path)] = results.sha256
        return []
    return [_problem_line(path, ["the since_baseline section"], problem or "it cannot be read")]


def rederived_results(project: Project, results: Results) -> Results:
    """`results`, once re-derived from its run files and judgements (and its query texts from the
    dataset, where it is here); an InputError naming the first mismatch otherwise."""
    directory = results.path.parent
    in_outputs = os.path.realpath(directory) == os.path.realpath(project.outputs_dir)
    files = ResultsFiles(directory, project.root if in_outputs else None,
                         _skip_rerank_reason(project) if in_outputs else None)
    files.read[results.path.name] = results
    _, problem = files.for_decision(results.path.name)
    if problem is None:
        problem = query_texts_problem(results, project.root)
    if problem is not None:
        raise InputError(f"does not re-derive from its run files and judgements, so none of it is shown: {problem}",
                         path=display_path(results.path))
    return results


# --- query texts ---------------------------------------------------------------------------------


def _queries_file(results: Results, project_root: Path) -> tuple[Path, str] | None:
    """The dataset's queries file the manifest names, with its recorded sha256, when it is here
    with those bytes; None otherwise (the texts then stay as recorded)."""
    model = results.model
    folder = model.manifest.get("data_directory")
    inputs = model.manifest_block("inputs")
    for name in QUERIES_INPUT_NAMES:
        entry = inputs.get(name)
        if isinstance(folder, str) and isinstance(entry, dict) and isinstance(entry.get("sha256"), str):
            path = project_root / folder / name
            try:
                if path.is_file() and sha256_file(path) == entry["sha256"]:
                    return path, entry["sha256"]
            except OSError:
                return None
    return None


def query_texts_problem(results: Results, project_root: Path | None) -> str | None:
    """Whether every recorded query text is its query's text in the dataset's queries file (when
    that file is here, with the recorded sha256); None when they agree or cannot be compared."""
    recorded = results.model.query_texts
    if not recorded or project_root is None:
        return None
    found = _queries_file(results, project_root)
    if found is None:
        return None
    path, digest = found
    problem = default_memo().remembered("query texts", {"results": results.sha256, "queries_file": digest},
                                        lambda: _texts_problem(recorded, set(results.model.query_ids), path))
    return problem if isinstance(problem, str) else None


def _texts_problem(recorded: dict[str, str], evaluated: set[str], path: Path) -> str | None:
    wanted = set(recorded)
    texts: dict[str, Any] = {}
    try:
        for _, line in lines(path):
            if line.strip():
                record = strict_json(line)
                if isinstance(record, dict) and record.get("_id") in wanted:
                    texts.setdefault(record["_id"], record.get("text"))
    except (InputError, ValueError):
        return None   # evaluate says what is wrong with the file; the texts cannot be compared here
    for query in sorted(recorded):
        if query not in evaluated:
            return f"{QUERY_TEXTS.name}.{clip(query, 40)} is a query that was not evaluated"
        if recorded[query] != texts.get(query):
            written, given = (clip(json.dumps(text, ensure_ascii=True), 60) for text in (recorded[query], texts.get(query)))
            return f"{QUERY_TEXTS.name}.{clip(query, 40)} is {written}, but the dataset's {path.name} gives {given}"
    return None
