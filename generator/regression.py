"""`readout regress`: a regression gate against the last release that tells noise from a loss.

A fixed tolerance ("fail when nDCG@5 drops by more than 0.01") fails on noise and passes real
losses: on a few dozen queries a mean moves by more than that between two runs of the same
system, and a loss of twice the tolerance can hide in a noisy mean. This gate pairs the two runs
query by query instead and asks whether the interval of the change rules the loss out
(generator.noninferiority):

1. What is compared and the margin come from the design's `regression` block (design/*.md), so
   they move only with a freeze, never in a CI file edited on the day a gate fails.
2. The baseline: `--baseline`, else the block's `baseline`, else the results the project
   committed at the merge base of HEAD with the repository's default branch (origin/HEAD, then
   origin/main, main, master), read with `git show COMMIT:path/to/outputs/results.json`. A git
   ref is read the same way; a results file given as a path must be committed and unchanged
   when the project is in a git work tree (a baseline moves only with a commit).
3. Refused (exit 2), with what differs: other judgements, other queries, an unknown row or
   metric, an unsealed file, no regression block.
4. Each row and metric: the paired change, its interval, wins, ties and losses, and the verdict:
   **regression** (exit 1), **inconclusive** (exit 0, said so) or **non-inferior**.

Output: text, `--format json`, or `--format github` (annotations); and, whenever
GITHUB_STEP_SUMMARY names a file, a Markdown table appended to it. Exit codes are readout's own:
0 pass, 1 a regression, 2 usage or input error.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.errors import InputError, clip
from generator.fileio import display_path, dumps_json, path_option
from generator.noninferiority import (INCONCLUSIVE, NON_INFERIOR, REGRESSION, VERDICTS, Change, RegressionBlock,
                                      changes_since, require_regression_block)
from generator.project import Project, load_project
from generator.results import RESULTS_NAME, Results, read_results

GIT_TIMEOUT_SECONDS = 60
DEFAULT_BRANCHES = ("origin/HEAD", "origin/main", "main", "master")
SUMMARY_VARIABLE = "GITHUB_STEP_SUMMARY"
EXIT_OK, EXIT_REGRESSION = 0, 1
FORMATS = ("text", "json", "github")
ANNOTATION = {REGRESSION: "error", INCONCLUSIVE: "warning", NON_INFERIOR: "notice"}


def configure_regress(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("project", nargs="?", type=path_option, default=Path("."),
                        help="project directory (readout.yaml, design/, outputs/); default: .")
    parser.add_argument("--baseline", default=None, metavar="REF_OR_FILE",
                        help="what to compare with: a git ref (a tag, a branch, HEAD~1) whose commit holds the "
                             "project's outputs/results.json, or a results file committed in git; default: the "
                             "design's regression block's baseline, else the merge base of HEAD with the default "
                             "branch (origin/HEAD, origin/main, main, master)")
    parser.add_argument("--format", choices=FORMATS, default="text",
                        help="text for people (default), json for machines, github for CI annotations; whenever "
                             f"${SUMMARY_VARIABLE} names a file (GitHub Actions sets it), a Markdown table is also "
                             "appended to it")


# --------------------------------------------------------------------------- the baseline


@dataclass(frozen=True)
class Baseline:
    results: Results
    shown: str               # how a message names it: "1a2b3c4d5e6f:outputs/results.json" or a path
    kind: str                # "git" or "file"
    how: str                 # how it was chosen, for people
    ref: str | None = None
    commit: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "shown": self.shown, "how": self.how, "ref": self.ref, "commit": self.commit,
                "sha256": self.results.sha256}


def _git(root: Path, *args: str) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, timeout=GIT_TIMEOUT_SECONDS,
                              env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"})
    except (OSError, subprocess.SubprocessError):
        return None


def _git_text(root: Path, *args: str) -> str | None:
    """git's first line of output, or None when git fails (or is not there)."""
    completed = _git(root, *args)
    if completed is None or completed.returncode != 0:
        return None
    return completed.stdout.decode("utf-8", "replace").strip()


def _work_tree(root: Path) -> Path | None:
    """The top of the git work tree holding `root`, or None."""
    if _git_text(root, "rev-parse", "--is-inside-work-tree") != "true":
        return None
    top = _git_text(root, "rev-parse", "--show-toplevel")
    return Path(top).resolve() if top else None


def _commit(root: Path, ref: str) -> str | None:
    if ref.startswith("-"):
        return None
    return _git_text(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")


def _inside(path: Path, top: Path) -> str | None:
    try:
        return path.resolve().relative_to(top).as_posix()
    except ValueError:
        return None


def _shallow_hint(root: Path) -> str:
    if _git_text(root, "rev-parse", "--is-shallow-repository") == "true":
        return " (a shallow clone: fetch its history, e.g. actions/checkout with fetch-depth: 0)"
    return ""


def _results_at(project: Project, top: Path, commit: str, ref: str, how: str, where: dict[str, Any]) -> Baseline:
    """The project's results.json as committed at `commit`."""
    relative = _inside(project.outputs_dir / RESULTS_NAME, top)
    if relative is None:
        raise InputError("the project's outputs/ lies outside its git work tree", **where)
    completed = _git(top, "show", f"{commit}:{relative}")
    if completed is None or completed.returncode != 0:
        raise InputError(f"{clip(ref, 60)} ({commit[:12]}) holds no {relative}: the results were not committed "
                         "there; give --baseline another ref or a committed results file", **where)
    shown = f"{commit[:12]}:{relative}"
    with tempfile.TemporaryDirectory(prefix="readout-baseline-") as directory:
        path = Path(directory) / RESULTS_NAME
        path.write_bytes(completed.stdout)
        try:
            results = read_results(path, RESULTS_NAME)
        except InputError as error:
            raise InputError(error.reason, path=shown, line=error.line, field=error.field) from None
    results = dataclasses.replace(results, path=Path(shown))
    return Baseline(results, shown, "git", how, ref=ref, commit=commit)


def _default_branch(root: Path) -> tuple[str, str]:
    """(the first of DEFAULT_BRANCHES that names a commit, as people read it; its commit)."""
    for name in DEFAULT_BRANCHES:
        commit = _commit(root, name)
        if commit is not None:
            if name == "origin/HEAD":
                target = _git_text(root, "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD")
                name = f"origin/HEAD ({target})" if target and target != name else name
            return name, commit
    raise InputError(f"no default branch to compare with (tried {', '.join(DEFAULT_BRANCHES)}): give --baseline "
                     "a git ref or a committed results file, or name one in the design's regression block")


def _file_baseline(path: Path, top: Path | None, how: str, where: dict[str, Any]) -> Baseline:
    shown = display_path(path)
    if top is not None:
        relative = _inside(path, top)
        if relative is None:
            raise InputError(f"{shown} lies outside the project's git work tree ({display_path(top)}): a baseline "
                             "file must be committed there, so that it moves only with a commit", **where)
        tracked = _git(top, "ls-files", "--error-unmatch", "--", relative)
        if tracked is None or tracked.returncode != 0:
            raise InputError(f"{shown} is not committed: a baseline moves only with a commit; commit it "
                             f"(git add {relative} && git commit) or give a git ref", **where)
        status = _git_text(top, "status", "--porcelain", "--", relative)
        if status is None or status:
            raise InputError(f"{shown} differs from its last commit: a baseline moves only with a commit; commit the "
                             f"change or restore it (git restore --staged --worktree {relative})", **where)
    results = read_results(path, path.name, missing="missing: no results file here")
    return Baseline(results, shown, "file", how + (", committed and unchanged" if top is not None else
                                                     " (not in a git work tree: not checked against git)"))


def resolve_baseline(project: Project, option: str | None, block: RegressionBlock) -> Baseline:
    """The baseline results: `option` (--baseline), else the block's, else the merge base of HEAD
    with the default branch."""
    root = project.root
    top = _work_tree(root)
    if option is not None:
        spec, where, said = option, {"field": "--baseline"}, "--baseline"
        candidates = [Path(option), project.resolve(option)]
    elif block.baseline is not None:
        spec, where = block.baseline, block.where("baseline")
        said = f"the regression block's baseline ({block.document})"
        candidates = [project.resolve(block.baseline)]
    else:
        if top is None:
            raise InputError("not in a git work tree, so there is no last release to compare with: give --baseline "
                             "a results file, or name one in the design's regression block")
        branch, tip = _default_branch(root)
        base = _git_text(root, "merge-base", "HEAD", tip)
        if not base:
            raise InputError(f"HEAD and {branch} share no commit here{_shallow_hint(root)}: give --baseline a ref "
                             "or a committed results file")
        return _results_at(project, top, base, branch, f"the merge base of HEAD and {branch}", {})
    found = next((path for path in candidates if path.is_file()), None)
    if found is not None:
        return _file_baseline(found, top, f"named by {said}", where)
    commit = _commit(root, spec) if top is not None else None
    if commit is None:
        raise InputError(f"{clip(spec, 80)!r} is neither a results file nor a commit of "
                         f"{'this repository' if top is not None else 'a git work tree'}", **where)
    return _results_at(project, top, commit, spec, f"{clip(spec, 80)}, named by {said}", where)


# --------------------------------------------------------------------------- the gate


@dataclass(frozen=True)
class RegressOutcome:
    block: RegressionBlock
    baseline: Baseline
    now: str                    # the current results file, as shown
    now_sha256: str
    changes: list[Change]

    def count(self, verdict: str) -> int:
        return sum(1 for change in self.changes if change.verdict == verdict)

    @property
    def ok(self) -> bool:
        return self.count(REGRESSION) == 0

    @property
    def queries(self) -> int:
        return self.changes[0].queries if self.changes else 0

    def summary(self) -> str:
        total, margin = len(self.changes), f"-{self.block.margin:g}"
        regressions, inconclusive = self.count(REGRESSION), self.count(INCONCLUSIVE)
        if regressions:
            verb = "is a regression" if regressions == 1 else "are regressions"
            return (f"FAIL: {regressions} of {total} changes {verb}: the interval lies wholly below {margin}, a loss "
                    "beyond the margin, not noise" + (f" ({inconclusive} inconclusive)." if inconclusive else "."))
        if inconclusive:
            return (f"PASS, {inconclusive} of {total} inconclusive: the interval reaches {margin}, so these "
                    f"{self.queries:,} queries cannot tell noise from a loss of the margin (more queries would "
                    "decide); no regression shown.")
        return (f"PASS: {'the change is' if total == 1 else f'all {total} changes are'} non-inferior: "
                f"{'its interval lies' if total == 1 else 'every interval lies'} above {margin}.")

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "summary": self.summary(), "design": self.block.as_dict(),
                "baseline": self.baseline.as_dict(), "now": {"shown": self.now, "sha256": self.now_sha256},
                "queries": self.queries, "counts": {verdict: self.count(verdict) for verdict in VERDICTS},
                "changes": [change.as_dict() for change in self.changes]}


def regress(project: Project, baseline_option: str | None) -> RegressOutcome:
    block = require_regression_block(project.design_dir)
    baseline = resolve_baseline(project, baseline_option, block)
    path = project.outputs_dir / RESULTS_NAME
    current = read_results(path, RESULTS_NAME, missing="missing: run `readout evaluate` (or `readout build`) first")
    now = display_path(path)
    return RegressOutcome(block, baseline, now, current.sha256,
                          changes_since(block, baseline.results, baseline.shown, current, now))


def _interval(change: Change) -> str:
    return f"[{change.low:+.4f}, {change.high:+.4f}]"


def change_line(change: Change) -> str:
    return (f"{change.row} {change.metric}: baseline {change.baseline:.4f}, now {change.now:.4f}, change "
            f"{change.change:+.4f}, 95% interval {_interval(change)}; {change.wins} better, {change.ties} tied, "
            f"{change.losses} worse of {change.queries:,} queries: {change.verdict}")


def header_lines(outcome: RegressOutcome) -> list[str]:
    block = outcome.block
    return [f"Baseline: {outcome.baseline.shown}, {outcome.baseline.how}.",
            f"Now: {outcome.now}; margin {block.margin:g} ({block.document}:{block.lines.get('margin', block.line)}); "
            f"{outcome.queries:,} queries on both sides, the same judgements."]


def format_text(outcome: RegressOutcome) -> str:
    return "\n".join([*header_lines(outcome), *map(change_line, outcome.changes), outcome.summary()]) + "\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def format_github(outcome: RegressOutcome) -> str:
    """One annotation per row and metric on the design's regression block, then the summary."""
    block = outcome.block
    place = f"file={_escape_property(block.document)},line={block.line}"
    lines = [f"::{ANNOTATION[change.verdict]} {place},"
             f"title={_escape_property(f'readout regress: {change.row} {change.metric}')}"
             f"::{_escape_data(change_line(change))}" for change in outcome.changes]
    level = "error" if not outcome.ok else "warning" if outcome.count(INCONCLUSIVE) else "notice"
    lines.append(f"::{level} title=readout regress::{_escape_data(outcome.summary())}")
    return "\n".join([*lines, *header_lines(outcome), outcome.summary()]) + "\n"


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def summary_markdown(outcome: RegressOutcome) -> str:
    """The step summary: a heading, the baseline, and one table row per row and metric."""
    rows = [f"| {_cell(change.row)} | {_cell(change.metric)} | {change.baseline:.4f} | {change.now:.4f} | "
            f"{change.change:+.4f} | {_interval(change)} | "
            f"{f'**{change.verdict}**' if change.verdict == REGRESSION else change.verdict} |"
            for change in outcome.changes]
    return "\n".join([
        f"### readout regress: {'FAIL' if not outcome.ok else 'PASS'}", "",
        *("- " + _cell(line) for line in header_lines(outcome)), "",
        "| Row | Metric | Baseline | Now | Change | 95% interval | Verdict |",
        "| --- | --- | ---: | ---: | ---: | --- | --- |", *rows, "", _cell(outcome.summary()), "", ""])


def append_step_summary(outcome: RegressOutcome) -> str | None:
    """Append the Markdown table to the file GITHUB_STEP_SUMMARY names (GitHub's protocol is to
    append); returns a warning line when that file cannot be written, None otherwise."""
    target = os.environ.get(SUMMARY_VARIABLE, "").strip()
    if not target:
        return None
    try:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(summary_markdown(outcome))
    except OSError as error:
        return f"regress: cannot append to ${SUMMARY_VARIABLE} ({clip(target, 80)}): {error.strerror or error}"
    return None


def run_regress(args: argparse.Namespace) -> int:
    outcome = regress(load_project(args.project), args.baseline)
    if args.format == "json":
        sys.stdout.write(dumps_json(outcome.as_dict()))
    elif args.format == "github":
        sys.stdout.write(format_github(outcome))
    else:
        sys.stdout.write(format_text(outcome))
    warning = append_step_summary(outcome)
    if warning is not None:
        print(warning, file=sys.stderr)
    return EXIT_OK if outcome.ok else EXIT_REGRESSION
