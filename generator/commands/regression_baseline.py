"""Which results `readout regress` compares with: the baseline named by --baseline, by the design's
regression block, or the merge base of HEAD with the default branch, read out of git or from a
committed file, and re-derived from the run files and judgements beside it.

Everything regress asks of git is here: every call bounded in time and every file read out of git
bounded in size before it is read, so a baseline cannot hang the gate or fill the disk.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any, Iterator

from generator.claims.record.noninferiority import RegressionBlock
from generator.claims.tracing.measured import ResultsFiles
from generator.core.dataclass import dataclass
from generator.project import Project
from generator.core.results import MAX_RESULTS_BYTES, Results
from generator.core.results.model import ResultsModel
from generator.storage.errors import InputError, clip
from generator.storage.paths import display_path

GIT_TIMEOUT_SECONDS = 60
DEFAULT_BRANCHES = ("origin/HEAD", "origin/main", "main", "master")
# The largest run file or judgements copy read out of git for a baseline (a run of a million queries
# at depth 100 is about 5 GB; nothing a release sample or a test set needs comes near this).
MAX_BASELINE_FILE_BYTES = 4 * 1024 ** 3
FIX_SAME_COMMIT = "give --baseline the last release (a tag, HEAD~1) or fetch the default branch (git fetch origin main)"


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
