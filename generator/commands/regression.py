"""`readout regress`: a regression gate against the last release that tells noise from a loss.

A fixed tolerance ("fail when nDCG@5 drops by more than 0.01") fails on noise and passes real
losses: on a few dozen queries a mean moves by more than that between two runs of the same
system, and a loss of twice the tolerance can hide in a noisy mean. This gate pairs the two runs
query by query instead and asks whether the interval of the change rules the loss out
(generator.claims.record.noninferiority):

1. What is compared, the margin and what an inconclusive change does come from the design's
   `regression` block as the freeze holds it (generator.claims.record.frozen_rules.frozen_regression):
   a block changed and not frozen is refused, and one set or moved after results existed makes
   the verdict **post hoc**, said on its own line. They move only with a freeze, never in a CI
   file edited on the day a gate fails.
2. Which results file: the block's `file` (default results.json), one the project declares.
3. The baseline: `--baseline`, else the block's `baseline`, else the results the project
   committed at the merge base of HEAD with the repository's default branch (origin/HEAD, then
   origin/main, main, master). A git ref is read from that commit: the results file and every
   run file and judgements copy it names, with `git cat-file`. A results file given as a path
   must be committed and unchanged when the project is in a git work tree (a baseline moves only
   with a commit), and is read with the run files and judgements beside it.
4. Both sides are re-derived from those run files and judgements (generator.claims.tracing:
   every per-query value, every figure), never believed: a sealed file anyone can reseal proves
   nothing. A baseline that is this very commit, unchanged, is refused: it shows no change.
5. Refused (exit 2), with what differs: another corpus, other queries, other judgements, another
   metric definition, an unknown row or metric, no regression block.
6. Each row and metric: the paired change, its interval, wins, ties and losses, and the verdict:
   **regression** (exit 1), **inconclusive** or **cannot be decided** (exit 1 when the block says
   `inconclusive: fail`, else 0, said so, with the queries that would decide it), or
   **non-inferior**.

Output: text, `--format json`, or `--format github` (annotations); and, whenever
GITHUB_STEP_SUMMARY names a file, a Markdown table appended to it. Exit codes are readout's own:
0 pass, 1 a regression (or an inconclusive change the design fails on), 2 usage or input error.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Iterator

from generator.claims.record.frozen_rules import FrozenRegression, frozen_regression
from generator.claims.tracing.measured import ResultsFiles
from generator.storage.errors import InputError, clip
from generator.storage.fileio import display_path, dumps_json, path_option
from generator.claims.record.noninferiority import (INCONCLUSIVE, NON_INFERIOR, REGRESSION, UNDECIDED, VERDICTS, Change,
                                      RegressionBlock, changes_since, deciding_decimals)
from generator.project import Project, load_project
from generator.results import MAX_RESULTS_BYTES, Results
from generator.results.model import ResultsModel

GIT_TIMEOUT_SECONDS = 60
DEFAULT_BRANCHES = ("origin/HEAD", "origin/main", "main", "master")
SUMMARY_VARIABLE = "GITHUB_STEP_SUMMARY"
EXIT_OK, EXIT_REGRESSION = 0, 1
FORMATS = ("text", "json", "github")
ANNOTATION = {REGRESSION: "error", INCONCLUSIVE: "warning", UNDECIDED: "warning", NON_INFERIOR: "notice"}
# The largest run file or judgements copy read out of git for a baseline (a run of a million queries
# at depth 100 is about 5 GB; nothing a release sample or a test set needs comes near this).
MAX_BASELINE_FILE_BYTES = 4 * 1024 ** 3
FIX_SAME_COMMIT = "give --baseline the last release (a tag, HEAD~1) or fetch the default branch (git fetch origin main)"


def configure_regress(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("project", nargs="?", type=path_option, default=Path("."),
                        help="project directory (readout.yaml, design/, outputs/); default: .")
    parser.add_argument("--baseline", default=None, metavar="REF_OR_FILE",
                        help="what to compare with: a git ref (a tag, a branch, HEAD~1) whose commit holds the "
                             "results file the design's regression block names, or a results file committed in git "
                             "with its run files and judgements beside it; default: the block's baseline, else the "
                             "merge base of HEAD with the default branch (origin/HEAD, origin/main, main, master)")
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


def _git(root: Path, *args: str, stdout: Any = subprocess.PIPE) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(["git", *args], cwd=root, stdout=stdout, stderr=subprocess.PIPE,
                              timeout=GIT_TIMEOUT_SECONDS,
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


def _named_files(data: Any) -> Iterator[str]:
    """Every file of outputs/ a results file's manifest names: its run files, its judgements copy,
    the results file it was compared with and the side files it vouches for."""
    model = ResultsModel(data)
    entries = [*model.manifest_block("run_files").values(), model.manifest_block("qrels_copy"),
               model.manifest_block("compared_with")]
    yield from (entry["path"] for entry in entries if isinstance(entry, dict) and isinstance(entry.get("path"), str))
    yield from (name for name in model.manifest_block("files") if isinstance(name, str))


def _safe_relative(text: str) -> PurePosixPath | None:
    path = PurePosixPath(text)
    if not text or path.is_absolute() or ".." in path.parts or "\\" in text or "\x00" in text:
        return None
    return path


def _extract(top: Path, commit: str, outputs: str, name: str, into: Path, seen: set[str]) -> None:
    """Write `outputs/name` as committed at `commit` into `into/name`, then (for a results file)
    every file its manifest names, the way they lie beside it; a file the commit lacks is left out
    (the derivation then says which). Sizes are asked before anything is read."""
    relative = _safe_relative(name)
    if relative is None or name in seen:
        return
    seen.add(name)
    spec = f"{commit}:{outputs}/{relative.as_posix()}"
    size = _git_text(top, "cat-file", "-s", spec)
    if size is None or not size.isdigit():
        return
    bound = MAX_RESULTS_BYTES if name.endswith(".json") else MAX_BASELINE_FILE_BYTES
    if int(size) > bound:
        raise InputError(f"{spec}: {int(size):,} bytes, more than a {'results' if name.endswith('.json') else 'run'} "
                         f"file may hold ({bound:,})")
    target = into / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "wb") as handle:
        completed = _git(top, "cat-file", "blob", spec, stdout=handle)
    if completed is None or completed.returncode != 0:
        target.unlink(missing_ok=True)
        return
    if name.endswith(".json"):
        try:
            data = json.loads(target.read_bytes())
        except ValueError:
            return   # not a results file: reading it says so
        for named in _named_files(data):
            _extract(top, commit, outputs, named, into, seen)


def _derived(outputs_dir: Path, name: str, shown: str, refusal: str) -> Results:
    """A results file of `outputs_dir`, re-derived from the run files and judgements beside it
    (generator.claims.tracing.measured: the checker's own derivation, remembered by a signed memo);
    refused with `refusal` when it does not re-derive."""
    files = ResultsFiles(outputs_dir)
    results, problem = files.for_decision(name)
    if results is None:
        raise InputError(f"missing: {problem}", path=shown)
    if problem is not None:
        raise InputError(f"{refusal}: {problem}", path=shown)
    return dataclasses.replace(results, path=Path(shown))


def _results_at(project: Project, top: Path, commit: str, ref: str, how: str, where: dict[str, Any],
                name: str) -> Baseline:
    """The project's results file `name` as committed at `commit`, re-derived from the run files and
    judgements committed beside it."""
    outputs = _inside(project.outputs_dir, top)
    if outputs is None:
        raise InputError("the project's outputs/ lies outside its git work tree", **where)
    relative = f"{outputs}/{name}"
    shown = f"{commit[:12]}:{relative}"
    with tempfile.TemporaryDirectory(prefix="readout-baseline-") as directory:
        _extract(top, commit, outputs, name, Path(directory), set())
        if not (Path(directory) / name).is_file():
            raise InputError(f"{clip(ref, 60)} ({commit[:12]}) holds no {relative}: the results were not committed "
                             "there; give --baseline another ref or a committed results file", **where)
        try:
            results = _derived(Path(directory), name, shown,
                               f"does not re-derive from the run files and judgements committed beside it at "
                               f"{commit[:12]}, so it is not compared")
        except InputError as error:
            raise InputError(error.reason, path=shown, line=error.line, field=error.field) from None
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
    results = _derived(path.parent, path.name, shown,
                       "does not re-derive from the run files and judgements beside it (a baseline file is compared "
                       "only with them: copy the release's runs folder beside it too)")
    return Baseline(results, shown, "file", how + (", committed and unchanged" if top is not None else
                                                     " (not in a git work tree: not checked against git)"))


@dataclass(frozen=True)
class FirstRelease:
    """The default baseline, a merge base whose commit holds no results file at all: the first
    release, with nothing before it to compare (a baseline named by --baseline or the design must
    hold one)."""

    commit: str
    how: str

    def as_dict(self) -> dict[str, Any]:
        return {"kind": "none", "shown": None, "how": self.how, "ref": None, "commit": self.commit, "sha256": None}


def _holds_results(project: Project, top: Path, commit: str) -> bool:
    """Whether `commit` holds any results file of the project's outputs/ (results*.json)."""
    outputs = _inside(project.outputs_dir, top)
    listed = _git_text(top, "ls-tree", "--name-only", commit, "--", f"{outputs}/") if outputs else None
    return listed is None or any(PurePosixPath(line).name.startswith("results") and line.endswith(".json")
                                 for line in listed.splitlines())


def resolve_baseline(project: Project, option: str | None, block: RegressionBlock) -> Baseline | FirstRelease:
    """The baseline results: `option` (--baseline), else the block's, else the merge base of HEAD
    with the default branch (FirstRelease when that commit holds no results at all)."""
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
        how = f"the merge base of HEAD and {branch}"
        if not _holds_results(project, top, base):
            return FirstRelease(base, how)
        return _results_at(project, top, base, branch, how, {}, block.file)
    found = next((path for path in candidates if path.is_file()), None)
    if found is not None:
        return _file_baseline(found, top, f"named by {said}", where)
    commit = _commit(root, spec) if top is not None else None
    if commit is None:
        raise InputError(f"{clip(spec, 80)!r} is neither a results file nor a commit of "
                         f"{'this repository' if top is not None else 'a git work tree'}", **where)
    return _results_at(project, top, commit, spec, f"{clip(spec, 80)}, named by {said}", where, block.file)


def _refuse_the_same_commit(project: Project, baseline: Baseline, current_path: Path) -> None:
    """A baseline that is HEAD itself while the current file is as HEAD holds it compares a commit
    with itself: nothing can have changed (a single-branch clone's default branch is HEAD)."""
    if baseline.kind != "git" or baseline.commit is None:
        return
    top = _work_tree(project.root)
    head = _commit(project.root, "HEAD")
    relative = _inside(current_path, top) if top is not None else None
    if head != baseline.commit or relative is None:
        return
    committed = _git(top, "cat-file", "blob", f"{head}:{relative}")
    if committed is not None and committed.returncode == 0 and committed.stdout == current_path.read_bytes():
        raise InputError(f"the baseline ({baseline.how}) is HEAD itself ({head[:12]}), {relative} unchanged: a commit "
                         f"compared with itself shows no change; {FIX_SAME_COMMIT}")


# --------------------------------------------------------------------------- the gate


@dataclass(frozen=True)
class RegressOutcome:
    rule: FrozenRegression
    baseline: Baseline | FirstRelease
    now: str                    # the current results file, as shown
    now_sha256: str
    changes: list[Change]

    @property
    def block(self) -> RegressionBlock:
        return self.rule.block

    def count(self, *verdicts: str) -> int:
        return sum(1 for change in self.changes if change.verdict in verdicts)

    @property
    def undecided(self) -> int:
        """Changes the sample cannot tell from a loss of the margin: inconclusive, or too few queries."""
        return self.count(INCONCLUSIVE, UNDECIDED)

    @property
    def ok(self) -> bool:
        return self.count(REGRESSION) == 0 and not (self.block.inconclusive == "fail" and self.undecided)

    @property
    def queries(self) -> int:
        return self.changes[0].queries if self.changes else 0

    @property
    def decimals(self) -> int:
        return deciding_decimals(self.changes, self.block.margin)

    def _needed(self) -> str:
        needed = [change.queries_needed for change in self.changes if change.verdict in (INCONCLUSIVE, UNDECIDED)]
        counted = [count for count in needed if count is not None and count > self.queries]
        if not counted:
            return ""
        return f" (about {max(counted):,} queries would decide {'it' if len(needed) == 1 else 'them'})"

    def summary(self) -> str:
        total, margin = len(self.changes), f"-{self.block.margin:g}"
        regressions, undecided = self.count(REGRESSION), self.undecided
        post_hoc = f" The verdict is post hoc: {self.rule.sentence()}." if self.rule.post_hoc else ""
        if isinstance(self.baseline, FirstRelease):
            return (f"PASS: a first release: {self.baseline.how} ({self.baseline.commit[:12]}) holds no results, so "
                    "there is nothing to compare and no regression.")
        said = f" ({undecided} inconclusive or undecided)" if undecided else ""
        if regressions:
            verb = "is a regression" if regressions == 1 else "are regressions"
            return (f"FAIL: {regressions} of {total} changes {verb}: a loss the interval tells from noise, beyond the "
                    f"margin ({margin}){said}.{post_hoc}")
        if undecided and self.block.inconclusive == "fail":
            return (f"FAIL, {undecided} of {total} inconclusive or undecided: these {self.queries:,} queries cannot "
                    f"tell noise from a loss of the margin ({margin}){self._needed()}, and the design fails such a "
                    f"change (inconclusive: fail).{post_hoc}")
        if undecided:
            return (f"PASS, {undecided} of {total} inconclusive: the interval reaches {margin}, so these "
                    f"{self.queries:,} queries cannot tell noise from a loss of the margin{self._needed()}; no "
                    f"regression shown (the design warns on such a change: inconclusive: warn).{post_hoc}")
        return (f"PASS: {'the change is' if total == 1 else f'all {total} changes are'} non-inferior: "
                f"{'its interval lies' if total == 1 else 'every interval lies'} above {margin}.{post_hoc}")

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "summary": self.summary(), "design": self.block.as_dict(),
                "frozen": self.rule.as_dict(), "baseline": self.baseline.as_dict(),
                "now": {"shown": self.now, "sha256": self.now_sha256}, "queries": self.queries,
                "counts": {verdict: self.count(verdict) for verdict in VERDICTS},
                "changes": [change.as_dict() for change in self.changes]}


def current_results(project: Project, block: RegressionBlock) -> Results:
    """The results file the block names, one the project declares, re-derived from the run files and
    judgements beside it."""
    if block.file not in project.results_files:
        raise InputError(f"{block.file} is not a results file this project declares "
                         f"({', '.join(project.results_files)})",
                         **block.where("file"))
    shown = display_path(project.outputs_dir / block.file)
    if not (project.outputs_dir / block.file).is_file():
        raise InputError(f"missing: `readout build` writes it (the design's regression block compares {block.file})",
                         path=shown)
    return _derived(project.outputs_dir, block.file, shown,
                    "does not re-derive from its run files and judgements, so it is not compared (`readout build` "
                    "makes it again)")


def regress(project: Project, baseline_option: str | None) -> RegressOutcome:
    rule = frozen_regression(project)
    block = rule.block
    current = current_results(project, block)
    baseline = resolve_baseline(project, baseline_option, block)
    path = project.outputs_dir / block.file
    now = display_path(path)
    if isinstance(baseline, FirstRelease):
        return RegressOutcome(rule, baseline, now, current.sha256, [])
    _refuse_the_same_commit(project, baseline, path)
    return RegressOutcome(rule, baseline, now, current.sha256,
                          changes_since(block, baseline.results, baseline.shown, current, now))


def _figure(value: float | None, decimals: int, sign: bool = False) -> str:
    return "not drawn" if value is None else f"{value:{'+' if sign else ''}.{decimals}f}"


def _interval(change: Change, decimals: int) -> str:
    if change.low is None or change.high is None:
        return "not drawn"
    return f"[{_figure(change.low, decimals, True)}, {_figure(change.high, decimals, True)}]"


def _verdict_said(change: Change, margin: float) -> str:
    """The verdict, and for one the sample cannot settle, why and the queries that would."""
    if change.verdict == UNDECIDED:
        return change.why or UNDECIDED
    if change.verdict != INCONCLUSIVE:
        return change.verdict
    if change.queries_needed is None:
        return f"inconclusive; more queries than can be counted would detect a change of the margin ({margin:g})"
    if change.queries_needed <= change.queries:
        return (f"inconclusive; these {change.queries:,} queries already detect a change of the margin ({margin:g}) "
                "at power 0.8: the change itself lies near it")
    return (f"inconclusive; about {change.queries_needed:,} queries would decide it (a change of the margin, "
            f"{margin:g}, detected at power 0.8)")


def change_line(change: Change, decimals: int, margin: float) -> str:
    return (f"{change.row} {change.metric}: baseline {_figure(change.baseline, decimals)}, now "
            f"{_figure(change.now, decimals)}, change {_figure(change.change, decimals, True)}, 95% interval "
            f"{_interval(change, decimals)}; {change.wins} better, {change.ties} tied, {change.losses} worse of "
            f"{change.queries:,} queries: {_verdict_said(change, margin)}")


def header_lines(outcome: RegressOutcome) -> list[str]:
    block, rule, baseline = outcome.block, outcome.rule, outcome.baseline
    return [f"Baseline: {baseline.shown}, {baseline.how}; re-derived from its run files and judgements."
            if isinstance(baseline, Baseline) else f"Baseline: none, {baseline.how} holds no results.",
            f"Now: {outcome.now}, re-derived; {outcome.queries:,} queries on both sides, the same corpus and "
            "judgements." if outcome.changes else f"Now: {outcome.now}, re-derived.",
            f"Rule: margin {block.margin:g}, inconclusive {block.inconclusive} "
            f"({block.document}:{block.lines.get('margin', block.line)}); {rule.describe()}."]


def _lines(outcome: RegressOutcome) -> list[str]:
    decimals = outcome.decimals
    return [change_line(change, decimals, outcome.block.margin) for change in outcome.changes]


def format_text(outcome: RegressOutcome) -> str:
    return "\n".join([*header_lines(outcome), *_lines(outcome), outcome.summary()]) + "\n"


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
             f"::{_escape_data(line)}" for change, line in zip(outcome.changes, _lines(outcome))]
    level = "error" if not outcome.ok else "warning" if outcome.undecided or outcome.rule.post_hoc else "notice"
    lines.append(f"::{level} title=readout regress::{_escape_data(outcome.summary())}")
    return "\n".join([*lines, *header_lines(outcome), outcome.summary()]) + "\n"


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def summary_markdown(outcome: RegressOutcome) -> str:
    """The step summary: a heading, the baseline and the rule, and one table row per row and metric."""
    decimals = outcome.decimals
    rows = [f"| {_cell(change.row)} | {_cell(change.metric)} | {_figure(change.baseline, decimals)} | "
            f"{_figure(change.now, decimals)} | {_figure(change.change, decimals, True)} | "
            f"{_interval(change, decimals)} | "
            f"{f'**{change.verdict}**' if change.verdict == REGRESSION else _cell(change.verdict)} |"
            for change in outcome.changes]
    return "\n".join([
        f"### readout regress: {'FAIL' if not outcome.ok else 'PASS'}"
        + (" (post hoc verdict)" if outcome.rule.post_hoc else ""), "",
        *("- " + _cell(line) for line in header_lines(outcome)), "",
        *(["| Row | Metric | Baseline | Now | Change | 95% interval | Verdict |",
           "| --- | --- | ---: | ---: | ---: | --- | --- |", *rows, ""] if rows else []),
        _cell(outcome.summary()), "", ""])


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
