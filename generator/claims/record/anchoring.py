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

How git is asked, and what it means when it cannot answer, is
generator.claims.record.git_questions'.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import field
from pathlib import Path
from typing import Callable

from generator.claims.record.freeze import FreezeLog, entry_sha256
from generator.claims.record.git_questions import (_blobs_ever_at, ask_ahead, at_or_before, committed_versions,
                                                   first_commit_adding, first_commit_holding, in_work_tree,
                                                   require_full_history, strictly_before)
from generator.core.dataclass import dataclass
from generator.project import FIRST_DRAFT_NAME, Project

ANCHORED = "anchored"
NOT_ANCHORED = "not anchored"
NO_GIT = "no git history"


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
