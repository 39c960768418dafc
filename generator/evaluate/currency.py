"""Whether a results file still describes what it was made from, by content: what `build` asks
before it evaluates again, and what the gate asks of committed results (no model, no numpy).

A results file records every input it read (generator.evaluate.pipeline writes the manifest):

- `inputs`: each dataset file with its sha256 (the corpus, the queries, the judgements);
- `supplied_runs`: each run row's TREC file, by its path in the project and its sha256, so a
  team's run file replaced after the results makes them out of date, as a changed corpus does;
- `run_files` and `qrels_copy`: the run files and judgements written beside it, one set;
- `compared_with`: for the every-query file, the release sample's results it was compared with;
- `parameters`: what the evaluation was asked to do (readout.yaml's `evaluate:` block).

`input_problems` says which of these differ from the files as they are now, each as one
sentence naming the file; `results_problem` adds the parameters and is what `build` reads. The
parameters a cost by shape or the frontier need are the release sample's only (neither is ever
measured on every test query), so the every-query file is not out of date when only they moved.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from generator.core.options import RESULTS_FILE, EvaluationOptions
from generator.storage.errors import InputError
from generator.evaluate.data import check_dataset_layout, hash_inputs
from generator.storage.fileio import sha256_file
from generator.storage.paths import display_path
from generator.core.results import read_results

# Measured on the release sample only (generator.evaluate.pipeline: shape costs and the frontier).
SAMPLE_ONLY_PARAMETERS = ("rerank_cost", "frontier")
UNCHANGED = "inputs and parameters unchanged"


def set_problem(results_path: Path) -> str | None:
    """Why the files beside a results file are not the set it records (an interrupted write, or
    a file changed by hand): the first run file or judgements copy whose sha256 differs."""
    try:
        model = read_results(results_path).model
    except (InputError, OSError):
        return f"{results_path.name} cannot be read"
    recorded = dict(model.manifest_block("run_files"))
    if model.manifest_block("qrels_copy"):
        recorded["judgements copy"] = model.manifest_block("qrels_copy")
    for name, entry in sorted(recorded.items()):
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            return f"{results_path.name} records no path for {name}"
        path = results_path.parent / entry["path"]
        if not path.is_file():
            return f"{display_path(path)} is missing"
        if sha256_file(path) != entry.get("sha256"):
            return f"{display_path(path)} is not the file {results_path.name} records (an interrupted write?)"
    return None


def _figures_parameters(parameters: Any, query_set: str) -> Any:
    """The parameters that change a results file of `query_set`'s figures."""
    if query_set == "sample" or not isinstance(parameters, dict):
        return parameters
    return {key: value for key, value in parameters.items() if key not in SAMPLE_ONLY_PARAMETERS}


def _short(digest: Any) -> str:
    return digest[:12] if isinstance(digest, str) else "none"


def input_problems(results_path: Path, project_root: Path, data: Path | None) -> list[str]:
    """Every recorded input of the results file at `results_path` that differs from the file now,
    each one sentence naming the file:
    each run file a row read (by its path in the project), the release sample the every-query file
    was compared with, and, when `data` is a dataset folder that is here, each dataset file. Empty
    when all agree (or the file records none of them)."""
    name = results_path.name
    manifest = read_results(results_path).model.manifest
    problems = []
    supplied = manifest.get("supplied_runs")
    for row, entry in sorted(supplied.items()) if isinstance(supplied, dict) else ():
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            continue
        path = project_root / entry["path"]
        now = sha256_file(path) if path.is_file() else None
        if now != entry.get("sha256"):
            state = f"{_short(now)} now" if now else "no file now"
            problems.append(f"run file {entry['path']} (row {row}) changed after {name} was made from it: sha256 "
                            f"{_short(entry.get('sha256'))} then, {state}")
    compared = manifest.get("compared_with")
    if isinstance(compared, dict) and isinstance(compared.get("path"), str):
        sample = results_path.parent / compared["path"]
        now = sha256_file(sample) if sample.is_file() else None
        if now != compared.get("sha256"):
            problems.append(f"the release sample {compared['path']} changed after {name} was compared with it: "
                            f"sha256 {_short(compared.get('sha256'))} then, {_short(now)} now")
    if data is not None and data.is_dir() and isinstance(manifest.get("inputs"), dict):
        try:
            today = hash_inputs(data)
        except InputError:
            today = None
        if today is not None and today != manifest["inputs"]:
            changed = sorted(name for name in set(today) | set(manifest["inputs"])
                             if today.get(name) != manifest["inputs"].get(name))
            problems.append(f"the dataset files {', '.join(changed)} in {display_path(data)} changed after {name} "
                            "was made from them")
    return problems


def results_problem(options: EvaluationOptions) -> str | None:
    """Why the results file `options` names was not made from today's inputs and parameters; None
    when it was (what `build` asks before it evaluates)."""
    path = options.results_path
    if not path.is_file():
        return f"{path.name} does not exist"
    try:
        manifest = read_results(path).model.manifest
    except (InputError, OSError):
        return f"{path.name} has no readable manifest"
    if not manifest or (_figures_parameters(manifest.get("parameters"), options.query_set)
                        != _figures_parameters(options.parameters(), options.query_set)):
        return "parameters changed"
    problem = set_problem(path)
    if problem:
        return problem
    check_dataset_layout(options.data)
    if manifest.get("inputs") != hash_inputs(options.data):
        return "input files changed"
    problems = input_problems(path, options.outputs_dir.resolve().parent, None)
    if options.query_set != "sample" and not isinstance(manifest.get("compared_with"), dict) and \
            (options.outputs_dir / RESULTS_FILE["sample"]).is_file():
        problems.append(f"{path.name} was not compared with the release sample, which is here now")
    return problems[0] if problems else None
