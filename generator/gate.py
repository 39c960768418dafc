"""`readout gate`: what a readout project's CI runs (the GitHub Action's step, the `readout-gate`
command installed with the package), the same on any machine.

1. In a shallow clone (`actions/checkout` fetches one commit by default), fetch the whole history
   first: the order of design and results is read from it, and `check` refuses a clone that does
   not hold it. `--no-fetch` leaves the clone alone (and `check` then refuses with the fix).
2. `readout check --no-record`: every claim traces, and git shows the order the freeze records.
3. `readout render --check`: the committed reports are what a fresh render writes. A render reads
   no git, so this step gives the same answer in a shallow and in a full clone of one commit.

Exit codes are readout's own: 0 pass, 1 findings, 2 usage or input error.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from generator import cli
from generator.claims.record.anchoring import git_session, partial_history

FETCH_TIMEOUT_SECONDS = 300


def configure_gate(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("project", nargs="?", type=Path, default=Path("."),
                        help="project directory (readout.yaml, design/, claims/, outputs/); default: .")
    parser.add_argument("--format", choices=("text", "json", "github"), default=None,
                        help="check's output format; default: github under GitHub Actions "
                             "(annotations on the ledger lines), text elsewhere")
    parser.add_argument("--no-fetch", action="store_true",
                        help="do not fetch the full history of a shallow clone (check then refuses it)")


def deepen_shallow_clone(root: Path) -> str | None:
    """Fetch the history a shallow clone lacks; returns a line to print, or None when the clone
    was not shallow (or not a git clone at all)."""
    with git_session():
        if not root.is_dir() or "shallow" not in (partial_history(root) or ""):
            return None
    try:
        completed = subprocess.run(["git", "fetch", "--unshallow", "--quiet"], cwd=root, capture_output=True,
                                   timeout=FETCH_TIMEOUT_SECONDS, env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
    except (OSError, subprocess.SubprocessError) as error:
        return f"gate: a shallow clone; fetching its full history failed ({type(error).__name__})"
    if completed.returncode != 0:
        why = completed.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"gate: a shallow clone; fetching its full history failed ({why[-1][:160] if why else 'git fetch'})"
    return "gate: a shallow clone; fetched its full history (fetch-depth: 0 in actions/checkout skips this)"


def run_gate(args: argparse.Namespace) -> int:
    if not args.no_fetch:
        line = deepen_shallow_clone(args.project)
        if line is not None:
            print(line, file=sys.stderr)
    output_format = args.format or ("github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text")
    status = cli._run_check(argparse.Namespace(project=args.project, format=output_format, no_record=True))
    if status != cli.EXIT_OK:
        return status
    sys.stdout.flush()
    return cli._run_render(argparse.Namespace(project=args.project, check_only=True, draft=False))


def run() -> None:
    """The `readout-gate` command: `readout gate` under a name a CI step can call directly."""
    sys.argv = [sys.argv[0], "gate", *sys.argv[1:]]
    cli.run()
