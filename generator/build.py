"""`readout build [PROJECT]`: bring a project's outputs up to date in one command.

1. results: a `kind: beir` project is evaluated only when its inputs or parameters changed since
   the last results (`generator.evaluation.results_are_current` compares the manifest of
   outputs/results.json, input sha256s and parameters, with today's); a `kind: sandbox`
   project runs the sandbox, which needs no model and takes well under a second;
2. the claim check, then the render (`generator.rendering.render_project`): the build stops
   with exit 1 when the check fails or an output holds orphan text, exactly like `readout render`.

Example: ``readout build examples/l03``
"""

from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import Callable, TextIO


def refresh_results(project, *, out: TextIO) -> str:
    """Make outputs/results.json current for the project's kind; returns what was done."""
    if project.kind == "beir":
        from generator import evaluation

        current, why = evaluation.results_are_current(project)
        if current:
            message = f"results: up to date ({why}); evaluation skipped"
            print(message, file=out)
            return message
        print(f"results: evaluating ({why})", file=out)
        evaluation.evaluate_project(project, log=lambda line: print(line, file=out))
        return f"results: evaluated ({why})"
    if project.kind == "sandbox":
        from generator import sandbox

        print("results: running the sandbox", file=out)
        run: Callable | None = getattr(sandbox, "run_sandbox", None)
        if run is not None:
            run(project)
        else:
            code = sandbox.sandbox_command(SimpleNamespace(project=project.root, report_visibility=False))
            if code != 0:
                from generator.errors import FindingsError

                raise FindingsError(f"the sandbox run failed (exit {code}); nothing rendered")
        return "results: sandbox run"
    from generator.errors import InputError  # load_project already refuses other kinds

    raise InputError(f"unknown kind {project.kind!r}", path=str(project.config_path), field="kind")


def build_project(project, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    from generator.rendering import render_project

    out = out or sys.stdout
    err = err or sys.stderr
    refresh_results(project, out=out)
    return render_project(project, out=out, err=err)


def build_command(args) -> int:
    from generator.project import load_project

    return build_project(load_project(args.project))
