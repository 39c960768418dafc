"""What git can prove about the order of a review: was the design frozen, and the first draft
kept, before the results they decide on were committed?

A freeze entry (generator.claims.record.freeze) says what results existed when it was made, and the
first-draft history (generator.claims.record.history) says which ledger was scored first; both are files
anyone can rewrite. When the project lies in a git work tree, the history of those files is the
evidence: the first commit whose `claims/design-freeze.json` holds an entry, the first commit that
added a results file, and the first commit that holds the first-draft ledger. A freeze entry is
**anchored to commit C** when C strictly precedes the first commit of the results its decisions
read; an entry committed in the same commit as its results, or after them, is not shown to
precede them (it is labelled, not refused). An entry that says no results existed while git shows
them committed before it is a false record, and `check` refuses it. Without git nothing here can
be verified, and the readout says "not anchored (no git history)": never more than was verified.

The first commit of the results follows their content, not their path: the oldest commit that
holds, at any path, a blob that was ever committed as `outputs/results*.json` (results committed
as `scratch/results.json` and later moved are as old as their first commit). History a clone does
not hold cannot be read: in a shallow or grafted clone `check` refuses with the fix (fetch full
history: `fetch-depth: 0`) instead of reading a truncated order. The rendered outputs never show
what git says (`git_session(history=False)`): a commit cannot name itself, so a report that
stamped the order would be stale the moment the freeze was committed, and would differ between a
shallow and a full clone of one commit; the order is the gate's to verify, every time it runs.

Only `git rev-parse`, `git log`, `git cat-file` (each committed version of a file, read in one
batch) and `git merge-base` are run, with a timeout, with replacement objects ignored. Within one
check (`git_session`) the same question is asked of git once.

"No git history" means only that: the project lies in no git work tree. Git that cannot be read
where there is one is an input error naming the fix (`check` and the gate exit 2), never "no
history", since a record git would contradict then passes unchallenged: a clone owned by another
user, which git refuses ("dubious ownership", as in a container CI job: `safe.directory`), a work
tree (a `.git` in the project or above it) where no git program is found (install git), a git that
fails or does not answer within GIT_TIMEOUT_SECONDS (`GitUnreadable`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from generator.claims.record.freeze import FreezeLog, entry_sha256
from generator.storage.errors import InputError, clip
from generator.storage.paths import display_path
from generator.project import FIRST_DRAFT_NAME, Project

MAX_COMMITTED_VERSIONS = 50
GIT_TIMEOUT_SECONDS = 10

ANCHORED = "anchored"
NOT_ANCHORED = "not anchored"
NO_GIT = "no git history"


_session: dict[tuple[str, ...], bytes | None] | None = None
_history_read = True


class GitUnreadable(InputError):
    """The project lies in a git work tree whose history git cannot give: refused, never read as
    "no history"."""


def _git_environment() -> dict[str, str]:
    """The environment git runs in, as it is now (a PATH set since start-up counts): `git replace`
    can make any commit look like the parent of any other, so the order is read from the commits as
    they are, and git speaks English, so that its refusals can be told apart."""
    return {**os.environ, "GIT_NO_REPLACE_OBJECTS": "1", "LC_ALL": "C", "LANGUAGE": ""}


# Exit codes that answer a question instead of reporting a failure: `rev-parse --verify` of a HEAD
# with no commit yet, `merge-base --is-ancestor` of a commit that is not an ancestor.
_ANSWERING = {("rev-parse", 1), ("merge-base", 1)}
# What git says where there is no history to read: no repository here, or one with no commit yet.
_NO_HISTORY_SAID = ("not a git repository", "does not have any commits yet")
_SAFE_DIRECTORY = re.compile(r"safe\.directory '?([^'\n]+?)'?\s*$", re.M)


def _work_tree_marker(cwd: Path) -> Path | None:
    """The `.git` (a directory, or the file of a linked work tree or submodule) of `cwd` or of a
    directory above it: what says there is a work tree when git itself cannot say."""
    for directory in (Path(os.path.abspath(cwd)), *Path(os.path.abspath(cwd)).parents):
        if os.path.lexists(directory / ".git"):
            return directory / ".git"
    return None


def _refusal(args: list[str], cwd: Path, returncode: int | None, stderr: bytes, *, missing: bool = False,
             timed_out: bool = False) -> GitUnreadable | None:
    """Why git could not answer `args` in `cwd`, as the error to raise; None where its failure is
    an answer (outside any work tree, or a question whose "no" is an exit code)."""
    if missing:
        marker = _work_tree_marker(cwd)
        if marker is None and not os.environ.get("GIT_DIR"):
            return None   # no git and no work tree: there is no history to read
        return GitUnreadable("a git work tree, but no git program is on PATH, so the order of design and results "
                             "cannot be read; install git (e.g. `apt-get install git`)",
                             path=display_path(marker.parent) if marker is not None else "$GIT_DIR")
    if timed_out:
        return GitUnreadable(f"`git {args[0]}` did not answer within {GIT_TIMEOUT_SECONDS} s, so the order of design "
                             "and results cannot be read; run again once the repository is reachable",
                             path=display_path(cwd))
    if (args[0], returncode) in _ANSWERING:
        return None
    text = stderr.decode("utf-8", "replace")
    if any(said in text for said in _NO_HISTORY_SAID):
        return None
    if "dubious ownership" in text:
        found = _SAFE_DIRECTORY.search(text)
        top = found.group(1).strip() if found else os.path.abspath(cwd)
        return GitUnreadable("git refuses to read this repository, which another user owns (\"dubious ownership\"), "
                             "so the order of design and results cannot be read; trust it with "
                             f"`git config --global --add safe.directory {top}`", path=display_path(top))
    said = next((line.strip() for line in text.splitlines() if line.strip()), f"exit code {returncode}")
    return GitUnreadable(f"git cannot read this repository (`git {args[0]}`: {clip(said, 160)}), so the order of "
                         "design and results cannot be read; repair the repository (`git fsck`) or check a fresh "
                         "clone", path=display_path(cwd))

FULL_HISTORY_FIX = ("fetch full history: `git fetch --unshallow`, or `fetch-depth: 0` in actions/checkout "
                    "(`readout gate` does this itself)")


@contextlib.contextmanager
def git_session(*, history: bool = True) -> Iterator[None]:
    """Within the block, each git command is run once per directory: one check asks git the same
    question several times (the freeze log's versions, the first draft's), and the repository
    does not change under it. With `history=False` git is not asked at all: what is rendered
    must not depend on the clone it is rendered in."""
    global _session, _history_read
    outer, _session = _session, {}
    outer_read, _history_read = _history_read, history
    try:
        yield
    finally:
        _session, _history_read = outer, outer_read


def _key(args: list[str], cwd: Path, stdin: bytes | None) -> tuple[str, ...]:
    return (str(cwd), *args, (stdin or b"").decode("utf-8", "surrogateescape"))


def _ask_at_once(questions: list[tuple[list[str], Path, bytes | None]]) -> None:
    """Run every git command of `questions` this session has not asked yet, all at the same time,
    and keep each output for `_git` (a check's questions of one kind do not depend on each other)."""
    if _session is None:
        return
    running = []
    environment = _git_environment()
    for args, cwd, stdin in questions:
        key = _key(args, cwd, stdin)
        if key in _session or any(key == other for other, _, _, _, _ in running):
            continue
        try:
            process = subprocess.Popen(["git", *args], cwd=cwd, stdin=subprocess.PIPE if stdin is not None else
                                       subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       env=environment)
        except OSError:
            continue   # asked again one by one, where a missing git is told from no work tree
        running.append((key, process, stdin, args, cwd))
    refused = None
    for key, process, stdin, args, cwd in running:
        try:
            output, errors = process.communicate(stdin, timeout=GIT_TIMEOUT_SECONDS)
        except subprocess.SubprocessError:
            process.kill()
            process.communicate()
            refused = refused or _refusal(args, cwd, None, b"", timed_out=True)
            continue
        if process.returncode != 0:
            refused = refused or _refusal(args, cwd, process.returncode, errors)
        _session[key] = output if process.returncode == 0 else None
    if refused is not None:
        raise refused


def _git(args: list[str], cwd: Path, stdin: bytes | None = None) -> bytes | None:
    """git's output for `args` in `cwd`; None where git answers "none" (outside a work tree, a
    question whose "no" is an exit code); GitUnreadable where it cannot answer."""
    if not _history_read:
        return None
    key = _key(args, cwd, stdin)
    if _session is not None and key in _session:
        return _session[key]
    if not os.path.isdir(cwd):
        return None   # nothing there to hold a history
    try:
        completed = subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True,
                                   timeout=GIT_TIMEOUT_SECONDS, env=_git_environment())
    except OSError:   # no git program (or none this user may run)
        refused, output = _refusal(args, cwd, None, b"", missing=True), None
    except subprocess.TimeoutExpired:
        refused, output = _refusal(args, cwd, None, b"", timed_out=True), None
    else:
        output = completed.stdout if completed.returncode == 0 else None
        refused = _refusal(args, cwd, completed.returncode, completed.stderr) if completed.returncode else None
    if refused is not None:
        raise refused
    if _session is not None:
        _session[key] = output
    return output


def in_work_tree(path: Path) -> bool:
    """Whether `path` (a directory) lies in a git work tree with at least one commit."""
    return path.is_dir() and _git(["rev-parse", "--verify", "--quiet", "HEAD"], path) is not None


def partial_history(path: Path) -> str | None:
    """Why the clone holding `path` cannot show its whole history (shallow, or grafted), or None."""
    if _git(["rev-parse", "--is-shallow-repository"], path) == b"true\n":
        return "a shallow clone (only the newest commits were fetched)"
    grafts = _git(["rev-parse", "--git-path", "info/grafts"], path)
    if grafts is not None:
        graft_file = Path(grafts.decode("utf-8", "surrogateescape").strip())
        if not graft_file.is_absolute():
            graft_file = path / graft_file
        if graft_file.is_file() and graft_file.stat().st_size:
            return "a grafted history (info/grafts rewrites parents)"
    return None


def require_full_history(path: Path, shown: str) -> None:
    """Refuse to read the order of a review from a clone that does not hold all of it: in a
    depth-1 clone the first commit of every file is the newest, and a rewritten freeze log has
    no older version to contradict it."""
    why = partial_history(path)
    if why is not None:
        raise InputError(f"the git history here is {why}, so the order of design and results cannot be read; "
                         + FULL_HISTORY_FIX, path=shown)


_BATCH_HEADER = re.compile(rb"([0-9a-f]{40,64}) ([a-z]+) (\d+)")


def _shown(specs: list[str], cwd: Path) -> list[bytes | None]:
    """`git show <commit>:./<name>` of every spec, in one `git cat-file --batch`: each file's bytes,
    or None where the commit holds no such file."""
    if not specs or any("\n" in spec for spec in specs):
        return [None] * len(specs)
    output = _git(["cat-file", "--batch"], cwd, "".join(spec + "\n" for spec in specs).encode())
    found: list[bytes | None] = []
    position = 0
    for _ in specs:
        end = output.find(b"\n", position) if output is not None else -1
        if end < 0:
            found.append(None)
            continue
        header = _BATCH_HEADER.fullmatch(output[position:end])
        position = end + 1
        if header is None:   # "<spec> missing" (or ambiguous): no such file in that commit
            found.append(None)
            continue
        size = int(header[3])
        found.append(output[position:position + size] if header[2] == b"blob" else None)
        position += size + 1
    return found


def _versions_question(path: Path) -> list[str]:
    return ["log", f"--max-count={MAX_COMMITTED_VERSIONS}", "--format=%H", "--", path.name]


def _added_question(path: Path) -> list[str]:
    return ["log", "--diff-filter=A", "--format=%H", "--", path.name]


def _contents_question(path: Path, listing: bytes) -> tuple[list[str], bytes]:
    return ["cat-file", "--batch"], "".join(f"{commit}:./{path.name}\n" for commit in listing.decode().split()).encode()


def committed_versions(path: Path, *, oldest_first: bool = False) -> list[tuple[str, bytes]]:
    """(commit, content) of every committed version of `path` (at most MAX_COMMITTED_VERSIONS, the
    newest), newest first unless `oldest_first`; empty outside a git work tree."""
    if not path.parent.is_dir():
        return []
    listing = _git(_versions_question(path), path.parent)
    if listing is None:
        return []
    commits = listing.decode().split()
    contents = _shown([f"{commit}:./{path.name}" for commit in commits], path.parent)
    versions = [(commit, content) for commit, content in zip(commits, contents) if content is not None]
    return versions[::-1] if oldest_first else versions


def ask_ahead(versioned: list[Path], added: list[Path]) -> None:
    """Within a `git_session`, ask git at once what `committed_versions` of each of `versioned`
    and `first_commit_adding` of each of `added` will ask, then every version's content at once:
    a check then waits for git twice instead of a dozen times, and gets the very same answers."""
    _ask_at_once([(_versions_question(path), path.parent, None) for path in versioned if path.parent.is_dir()]
                 + [(question(path), path.parent, None) for path in added if path.parent.is_dir()
                    for question in (_added_question, _blobs_question)]
                 + [(_HOLDING_QUESTION, path.parent, None) for path in added[:1] if path.parent.is_dir()])
    contents = []
    for path in versioned:
        listing = _session.get(_key(_versions_question(path), path.parent, None)) if _session is not None else None
        if listing and listing.split():
            args, stdin = _contents_question(path, listing)
            contents.append((args, path.parent, stdin))
    _ask_at_once(contents)


def first_commit_adding(path: Path) -> str | None:
    """The oldest commit that added `path`, or None (never committed, or no git)."""
    if not path.parent.is_dir():
        return None
    listing = _git(_added_question(path), path.parent)
    commits = listing.decode().split() if listing else []
    return commits[-1] if commits else None


def strictly_before(earlier: str, later: str, cwd: Path) -> bool:
    """Whether commit `earlier` is an ancestor of `later` and not the same commit."""
    return earlier != later and _git(["merge-base", "--is-ancestor", earlier, later], cwd) is not None


def at_or_before(earlier: str, later: str, cwd: Path) -> bool:
    return earlier == later or strictly_before(earlier, later, cwd)


@dataclass(frozen=True)
class Anchor:
    """What git showed about one record: anchored to a commit, not anchored (and why), or no git.

    `why` names the reason a record is not anchored, one of WHY (the renderer has a label for
    each); `results_commit` is the first commit of the results it was held against."""

    status: str
    commit: str | None = None
    why: str | None = None
    results_commit: str | None = None
    results_name: str | None = None

    @property
    def anchored(self) -> bool:
        return self.status == ANCHORED

    def describe(self) -> str:
        if self.status == ANCHORED:
            return f"anchored to commit {short(self.commit)}"
        if self.status == NO_GIT:
            return "not anchored (no git history)"
        why = WHY[self.why].format(commit=short(self.commit), results=short(self.results_commit),
                                   name=self.results_name)
        return f"not anchored ({why})"


WHY = {
    "uncommitted": "the freeze is not committed yet",
    "with_results": "committed with the results in {commit}",
    "after_results": "committed in {commit}, after outputs/{name} was first committed in {results}",
    "draft_after_results": "first committed in {commit}, after the first results commit {results}",
    "draft_uncommitted": "the first-draft ledger is not committed",
    "no_draft": "no first draft recorded yet",
}


NO_HISTORY = Anchor(NO_GIT)


def short(commit: str | None) -> str:
    return commit[:7] if commit else "none"


@dataclass
class Anchoring:
    """The anchors of a project: its design freeze entries, its first draft, and what git refuses."""

    git: bool
    results_commit: str | None = None
    entries: dict[int, Anchor] = field(default_factory=dict)
    first_draft: Anchor = NO_HISTORY
    problems: list[str] = field(default_factory=list)

    def entry(self, number: int) -> Anchor:
        return self.entries.get(number, NO_HISTORY)


def first_results_commit(outputs_dir: Path, names: list[str]) -> tuple[str | None, str | None]:
    """(commit, file name) of the oldest commit holding any version of the results files `names`,
    at any path: the oldest first commit by path, or older where the same content was committed
    elsewhere first (results written to `scratch/` and moved into outputs/ later)."""
    # results.json first, so the release sample is named when several files came in one commit
    found = [(commit, name) for name in sorted(set(names), key=lambda name: (name != "results.json", name))
             if (commit := first_commit_adding(outputs_dir / name)) is not None]
    if not found:
        return None, None
    oldest = found[0]
    for commit, name in found[1:]:
        if strictly_before(commit, oldest[0], outputs_dir):
            oldest = (commit, name)
    by_content = first_commit_holding(outputs_dir, {name: _blobs_ever_at(outputs_dir / name) for _, name in found})
    if by_content is not None and strictly_before(by_content[0], oldest[0], outputs_dir):
        return by_content
    return oldest


def _blobs_question(path: Path) -> list[str]:
    return ["log", "--format=", "--raw", "--no-abbrev", "--no-renames", "--", path.name]


_HOLDING_QUESTION = ["log", "--reverse", "--topo-order", "--format=commit %H", "--raw", "--no-abbrev", "--no-renames",
                     "HEAD"]


def _blobs_ever_at(path: Path) -> set[str]:
    """The blob id of every committed version of `path`."""
    listing = _git(_blobs_question(path), path.parent)
    return {fields[3] for line in (listing or b"").decode("utf-8", "surrogateescape").splitlines()
            if line.startswith(":") and len(fields := line.split("\t", 1)[0].split()) >= 5
            and set(fields[3]) != {"0"}}


def first_commit_holding(cwd: Path, blobs_by_name: dict[str, set[str]]) -> tuple[str, str] | None:
    """(commit, name) of the oldest commit of HEAD's history that adds, at any path, one of the
    blobs of `blobs_by_name`: the first in `git log --reverse --topo-order` (no commit before it
    descends from it), side branches included, so a results file committed on a branch merged
    after the freeze is as old as its branch commit."""
    wanted = {blob: name for name, blobs in blobs_by_name.items() for blob in blobs}
    if not wanted:
        return None
    listing = _git(_HOLDING_QUESTION, cwd)
    if listing is None:
        return None
    commit = None
    for line in listing.decode("utf-8", "surrogateescape").splitlines():
        if line.startswith("commit "):
            commit = line[7:].strip()
        elif line.startswith(":") and commit is not None:
            fields = line.split("\t", 1)[0].split()
            if len(fields) >= 5 and fields[3] in wanted:
                return commit, wanted[fields[3]]
    return None


def entry_commits(freeze_path: Path, entry_hashes: dict[int, str],
                  read_hashes: Callable[[bytes], set[str]]) -> dict[int, str]:
    """The first commit whose freeze file holds each entry (by its hash); `read_hashes` turns a
    committed file's bytes into the set of entry hashes it holds."""
    found: dict[int, str] = {}
    for commit, content in committed_versions(freeze_path, oldest_first=True):
        held = read_hashes(content)
        for number, digest in entry_hashes.items():
            if number not in found and digest in held:
                found[number] = commit
    return found


def anchor_entry(commit: str | None, results_commit: str | None, results_name: str | None, cwd: Path) -> Anchor:
    if commit is None:
        return Anchor(NOT_ANCHORED, None, "uncommitted")
    if results_commit is None or strictly_before(commit, results_commit, cwd):
        return Anchor(ANCHORED, commit, results_commit=results_commit, results_name=results_name)
    why = "with_results" if commit == results_commit else "after_results"
    return Anchor(NOT_ANCHORED, commit, why, results_commit, results_name)


def anchor_first_draft(first_draft: Path, ledger_sha256: str | None, results_commit: str | None,
                       cwd: Path) -> Anchor:
    """The first draft is anchored when the ledger the history scored first was committed no later
    than the first results commit."""
    if ledger_sha256 is None:
        return Anchor(NOT_ANCHORED, None, "no_draft")
    for commit, content in committed_versions(first_draft, oldest_first=True):
        if hashlib.sha256(content).hexdigest() == ledger_sha256:
            if results_commit is None or at_or_before(commit, results_commit, cwd):
                return Anchor(ANCHORED, commit, results_commit=results_commit)
            return Anchor(NOT_ANCHORED, commit, "draft_after_results", results_commit)
    return Anchor(NOT_ANCHORED, None, "draft_uncommitted")



def _entry_hashes_of(content: bytes) -> set[str]:
    """The entry hashes a committed design-freeze.json holds (none for a version 1 file)."""
    try:
        record = json.loads(content.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return set()
    entries = record.get("freezes") if isinstance(record, dict) else None
    return {entry_sha256(entry) for entry in entries if isinstance(entry, dict)} if isinstance(entries, list) else set()


def results_files(project: Project, log: FreezeLog | None) -> list[str]:
    """The results files a project's decisions read, and every results*.json in outputs/."""
    outputs = project.outputs_dir
    names = {path.name for path in outputs.glob("results*.json")} if outputs.is_dir() else set()
    names.add("results.json")
    if log is not None and log.entries:
        names |= {trigger.get("file", "results.json") for trigger in log.entries[-1].rules["triggers"].values()}
    return sorted(names)


def ask_git_ahead(project: Project, log: FreezeLog | None) -> None:
    """Within a `git_session`: every history question a check of `project` asks (the first-draft
    history, the first draft, the freeze log, each results file's first commit), asked at once."""
    cwd = project.claims_dir if project.claims_dir.is_dir() else project.root
    if not in_work_tree(cwd):
        return
    require_full_history(cwd, project.root.name or str(project.root))
    ask_ahead([project.history_path, project.claims_dir / FIRST_DRAFT_NAME, project.freeze_path],
              [project.outputs_dir / name for name in results_files(project, log)])


def project_anchoring(project: Project, log: FreezeLog | None, first_draft_sha256: str | None) -> Anchoring:
    """What git shows of the project's order: each freeze entry's first commit against the first
    commit of its results, the first draft's, and every entry whose "none yet" git contradicts."""
    cwd = project.claims_dir if project.claims_dir.is_dir() else project.root
    if not in_work_tree(cwd):
        return Anchoring(git=False)
    results_commit, results_name = first_results_commit(project.outputs_dir, results_files(project, log))
    anchoring = Anchoring(git=True, results_commit=results_commit)
    entries = log.entries if log is not None else []
    commits = entry_commits(project.freeze_path, {entry.number: entry.sha256 for entry in entries}, _entry_hashes_of)
    for entry in entries:
        commit = commits.get(entry.number)
        anchoring.entries[entry.number] = anchor_entry(commit, results_commit, results_name, cwd)
        if not entry.results_existed and commit is None and results_commit is not None:
            # What the gate will say once this entry is committed, said before the commit (the
            # pre-commit hook runs this check): a commit never turns a passing gate red.
            anchoring.problems.append(
                f"{project.freeze_path.name}: freeze {entry.number} says no results existed, but outputs/"
                f"{results_name} is already committed (in {short(results_commit)}): committed, the record would be "
                "false; freeze again with --reason, acknowledging what is post hoc")
        if not entry.results_existed and commit and results_commit and strictly_before(results_commit, commit, cwd):
            anchoring.problems.append(
                f"{project.freeze_path.name}: freeze {entry.number} says no results existed, but "
                f"outputs/{results_name} "
                f"was committed in {short(results_commit)}, before the freeze was (in {short(commit)}): the record "
                "is false; freeze again with --reason, acknowledging what is post hoc")
    anchoring.problems.extend(committed_freeze_problems(project, entries))
    anchoring.first_draft = anchor_first_draft(project.claims_dir / FIRST_DRAFT_NAME, first_draft_sha256,
                                               results_commit, cwd)
    return anchoring


def committed_freeze_problems(project: Project, entries: list) -> list[str]:
    """Every committed version of the freeze log must be a prefix of today's: entries are appended,
    never edited, removed or reordered (the newest entry, which nothing chains yet, included)."""
    today = [entry.sha256 for entry in entries]
    for commit, content in committed_versions(project.freeze_path):
        try:
            record = json.loads(content.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            continue
        committed = record.get("freezes") if isinstance(record, dict) else None
        if not isinstance(committed, list):
            continue   # a version 1 freeze, before the log: nothing to continue
        hashes = [entry_sha256(entry) for entry in committed if isinstance(entry, dict)]
        if today[:len(hashes)] != hashes:
            return [f"{project.freeze_path.name}: is not an append-only continuation of the version committed in "
                    f"{commit[:12]}: a freeze entry was rewritten"]
    return []
