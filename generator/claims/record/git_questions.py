"""Asking git about a project's history: each question asked once per check (several at once when
a check knows them ahead), and git that cannot answer told apart from a project with no history.

Only `git rev-parse`, `git log`, `git cat-file` (each committed version of a file, read in one
batch) and `git merge-base` are run, with a timeout, with replacement objects ignored. Within one
check (`git_session`) the same question is asked of git once; the questions a check knows ahead
are asked in a thread while it reads the ledger (`in_background`), and whether one commit precedes
another is read from the parents of the history already listed where that listing holds both.

"No git history" means only that: the project lies in no git work tree. Git that cannot be read
where there is one is an input error naming the fix (`check` and the gate exit 2), never "no
history", since a record git would contradict then passes unchallenged: a clone owned by another
user, which git refuses ("dubious ownership", as in a container CI job: `safe.directory`), a work
tree (a `.git` in the project or above it) where no git program is found (install git), a git that
fails or does not answer within GIT_TIMEOUT_SECONDS (`GitUnreadable`).
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import threading
from pathlib import Path
from typing import Callable, Iterator

from generator.storage.errors import InputError, clip
from generator.storage.paths import display_path

MAX_COMMITTED_VERSIONS = 50
GIT_TIMEOUT_SECONDS = 10


_session: dict[tuple[str, ...], bytes | None] | None = None
_history_read = True
_background: list[threading.Thread] = []
_parents_read: dict[tuple[str, ...], dict[str, list[str]]] = {}


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
    global _session, _history_read, _background, _parents_read
    outer, _session = _session, {}
    outer_read, _history_read = _history_read, history
    outer_background, _background = _background, []
    outer_parents, _parents_read = _parents_read, {}
    try:
        yield
    finally:
        for thread in _background:   # no question outlives its session, whatever ended it
            thread.join()
        _session, _history_read, _background, _parents_read = outer, outer_read, outer_background, outer_parents


def in_background(ask: Callable[[], None]) -> Callable[[], None]:
    """Within a `git_session`, start `ask` (questions for git, answered into the session) in a
    thread, and return `wait`: it waits for them and raises what `ask` raised. A check starts its
    questions as soon as it knows them and waits where it used to ask, so git answers while the
    check reads the ledger and the results, and a refusal still comes where it came before."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            ask()
        except BaseException as error:   # raised again by wait(), in the check's own thread
            raised.append(error)

    thread = threading.Thread(target=run, name="git questions", daemon=True)
    thread.start()
    _background.append(thread)

    def wait() -> None:
        thread.join()
        if raised:
            raise raised[0]
    return wait


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
    """Whether commit `earlier` is an ancestor of `later` and not the same commit: read from the
    parents of the history this session has listed where it holds the answer, else asked of git."""
    if earlier == later:
        return False
    listed = _listed_ancestry(earlier, later)
    if listed is not None:
        return listed
    return _git(["merge-base", "--is-ancestor", earlier, later], cwd) is not None


def _listed_ancestry(earlier: str, later: str) -> bool | None:
    """Whether `earlier` is an ancestor of `later` in a history this session has listed with its
    parents (`_HOLDING_QUESTION`), or None where no listing holds both commits. Git walks the same
    parents (a commit's parents are part of its id; a shallow clone's oldest commits show none, to
    git as to the listing), so the answer is the one `git merge-base --is-ancestor` gives."""
    for key, listing in (_session or {}).items():
        if listing is None or list(key[1:-1]) != _HOLDING_QUESTION:
            continue
        parents = _parents(key)
        if later not in parents or earlier not in parents:
            continue
        seen, waiting = {later}, [later]
        while waiting:
            for parent in parents.get(waiting.pop(), ()):
                if parent == earlier:
                    return True
                if parent not in seen:
                    seen.add(parent)
                    waiting.append(parent)
        return False
    return None


def _parents(key: tuple[str, ...]) -> dict[str, list[str]]:
    """{commit: its parents} of the session's `_HOLDING_QUESTION` listing under `key`, read once."""
    if key not in _parents_read:
        listing = (_session or {}).get(key) or b""
        _parents_read[key] = {fields[1]: fields[2:] for line in listing.decode("utf-8", "surrogateescape").splitlines()
                              if line.startswith("commit ") and len(fields := line.split()) >= 2}
    return _parents_read[key]


def at_or_before(earlier: str, later: str, cwd: Path) -> bool:
    return earlier == later or strictly_before(earlier, later, cwd)


def _blobs_question(path: Path) -> list[str]:
    return ["log", "--format=", "--raw", "--no-abbrev", "--no-renames", "--", path.name]


_HOLDING_QUESTION = ["log", "--reverse", "--topo-order", "--format=commit %H %P", "--raw", "--no-abbrev", "--no-renames",
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
            commit = line.split()[1]
        elif line.startswith(":") and commit is not None:
            fields = line.split("\t", 1)[0].split()
            if len(fields) >= 5 and fields[3] in wanted:
                return commit, wanted[fields[3]]
    return None
