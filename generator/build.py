"""`readout build [PROJECT]`: bring a project's outputs up to date in one call.

1. results: a `kind: beir` project is evaluated only when its inputs or parameters changed since
   the last results (`generator.evaluate.pipeline.results_are_current` compares the manifest of
   outputs/results.json, input sha256s and parameters, with today's); a `kind: sandbox` project
   runs the sandbox, which needs no model and takes well under a second;
2. the claim check, then the render (`generator.render.renderer.render_project`): the build
   stops when the check fails or an output holds orphan text, exactly like `readout render`.

The whole build holds the outputs directory's write lock (generator.locks): a second `build`,
`render`, `evaluate` or `sandbox` of the same project stops at once instead of mixing its files
with this one's; and this one stops at once, before evaluating, while another holds it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from generator.locks import outputs_lock
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


def refresh_results(project: Project, log: Callable[[str], None]) -> tuple[str, SandboxOutcome | None]:
    """Make outputs/results.json current for the project's kind; returns what was done."""
    if project.kind == "sandbox":
        log("results: running the sandbox")
        return "results: sandbox run", run_sandbox(project.sandbox_config())
    # The evaluation stage imports numpy, torch and bm25s; a sandbox build must start without them.
    from generator.evaluate.pipeline import prepare_data, results_are_current, run_and_write

    options = project.evaluation_options()
    prepare_data(options, log)
    current, why = results_are_current(options)
    if current:
        message = f"results: up to date ({why}); evaluation skipped"
        log(message)
        return message, None
    log(f"results: evaluating ({why})")
    run_and_write(options, log=log)
    return f"results: evaluated ({why})", None


def build_project(project: Project, log: Callable[[str], None] = print, *, draft: bool = False) -> BuildOutcome:
    with outputs_lock(project.outputs_dir):
        step, sandbox = refresh_results(project, log)
        outcome = BuildOutcome(results_step=step, sandbox=sandbox)
        if sandbox is not None and not sandbox.valid:
            return outcome
        outcome.render = render_project(project, draft=draft)
        return outcome
