"""`readout build [PROJECT]`: bring a project's outputs up to date in one call.

1. results: a `kind: beir` project keeps every results file it configures current (the release
   sample's `results.json`, and the every-query file `evaluate.all_results` names whenever
   readout.yaml names it, the file is already in outputs/, or a design rule reads it), the
   sample first (the every-query file is compared with it). Each is evaluated only when its
   inputs, run files or parameters changed since it was made
   (`generator.evaluate.pipeline.results_are_current`, by content,
   generator.evaluate.currency), reusing the embedding, index and rerank caches; a `kind:
   sandbox` project runs the sandbox, which needs no model and takes well under a second;
2. the claim check, then the render (`generator.render.renderer.render_project`): the build
   stops when the check fails or an output holds orphan text, exactly like `readout render`.

The whole build holds the outputs directory's write lock (generator.storage.locks): a second `build`,
`render`, `evaluate` or `sandbox` of the same project stops at once instead of mixing its files
with this one's; and this one stops at once, before evaluating, while another holds it.

`stale_results` is the gate's side of step 1 (generator.commands.gate): the same configured files, each
held to the inputs it records, without evaluating anything (no model, no numpy).
"""

from __future__ import annotations

from typing import Callable

from generator.claims.record.design_rules import read_design_rules
from generator.core.dataclass import dataclass
from generator.core.options import RESULTS_FILE, RESULTS_NAME
from generator.storage.errors import InputError
from generator.evaluate.currency import input_problems
from generator.storage.paths import display_path
from generator.storage.locks import outputs_lock
from generator.project import Project
from generator.render.renderer import RenderOutcome, render_project
from generator.sandbox.runner import SandboxOutcome, run_sandbox


@dataclass
class BuildOutcome:
    results_step: str
    sandbox: SandboxOutcome | None = None
    render: RenderOutcome | None = None

    @property
    def ok(self) -> bool:
        if self.sandbox is not None and not self.sandbox.valid:
            return False
        return self.render is not None and self.render.ok


def all_results_name(project: Project) -> str:
    return str(project.evaluate.get("all_results", RESULTS_FILE["all"]))


def configured_query_sets(project: Project) -> dict[str, str]:
    """The query sets whose results a BEIR project keeps current, each with why: the release
    sample always; every test query when readout.yaml names its file (evaluate.all_results), the
    file is in outputs/ already, or a design rule reads it (a trigger's or the regression block's
    `file`). A design that cannot be read here is left to the check, which says why."""
    sets = {"sample": f"{RESULTS_NAME}, the release sample"}
    if project.kind != "beir":
        return sets
    name = all_results_name(project)
    readers: list[str] = []
    try:
        rules = read_design_rules(project.design_dir)
        readers = [f"decision {trigger.decision}" for trigger in rules.triggers if trigger.file == name]
        if rules.regression is not None and rules.regression.file == name:
            readers.append("the regression block")
    except InputError:
        pass
    if "all_results" in project.evaluate:
        sets["all"] = f"{name}, which readout.yaml names (evaluate.all_results)"
    elif (project.outputs_dir / name).is_file():
        sets["all"] = f"{name}, which is in outputs/"
    elif readers:
        sets["all"] = f"{name}, which {' and '.join(readers)} read{'s' if len(readers) == 1 else ''}"
    return sets


def refresh_results(project: Project, log: Callable[[str], None]) -> tuple[str, SandboxOutcome | None]:
    """Make every configured results file current for the project's kind; returns what was done."""
    if project.kind == "sandbox":
        log("results: running the sandbox")
        return "results: sandbox run", run_sandbox(project.sandbox_config())
    # The evaluation stage imports numpy, torch and bm25s; a sandbox build must start without them.
    from generator.evaluate.pipeline import prepare_data, results_are_current, run_and_write

    steps = []
    for query_set in configured_query_sets(project):
        options = project.evaluation_options(query_set=query_set)
        name = "" if query_set == "sample" else f" {options.results_path.name}"
        if not steps:
            prepare_data(options, log)
        current, why = results_are_current(options)
        if current:
            message = f"results{name}: up to date ({why}); evaluation skipped"
            log(message)
            steps.append(message)
            continue
        log(f"results{name}: evaluating ({why})")
        run_and_write(options, log=log)
        steps.append(f"results{name}: evaluated ({why})")
    return "; ".join(steps), None


def stale_results(project: Project) -> list[str]:
    """Every configured results file whose recorded inputs differ from the files now (each run file
    a row reads, by content; the release sample an every-query file was compared with; the dataset
    files, where the dataset folder is here), and every configured file that is missing: one line
    each, saying what to run. Nothing is evaluated: what the gate asks of committed results."""
    if project.kind != "beir":
        return []
    problems = []
    for query_set, why in configured_query_sets(project).items():
        options = project.evaluation_options(query_set=query_set)
        path = options.results_path
        if not path.is_file():
            problems.append(f"{display_path(path)}: missing ({why}): `readout build` writes it")
            continue
        data = options.data if options.data_source is None else None
        problems += [f"{display_path(path)}: {problem}: the results no longer describe their inputs; `readout "
                     "build` makes them again (commit what it writes)"
                     for problem in input_problems(path, project.root, data)]
    return problems


def build_project(project: Project, log: Callable[[str], None] = print, *, draft: bool = False) -> BuildOutcome:
    with outputs_lock(project.outputs_dir):
        step, sandbox = refresh_results(project, log)
        outcome = BuildOutcome(results_step=step, sandbox=sandbox)
        if sandbox is not None and not sandbox.valid:
            return outcome
        outcome.render = render_project(project, draft=draft)
        return outcome
