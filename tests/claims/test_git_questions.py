"""Git is asked each question once per check, and the questions asked ahead get the answers the
check would have got one by one (generator.claims.record.anchoring)."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.claims.record import git_questions
from generator.claims.record.anchoring import ask_git_ahead, project_anchoring
from generator.claims.record.freeze import read_freeze_log
from generator.claims.record.git_questions import git_session
from generator.claims.record.history import read_history
from generator.project import load_project
from tests.conftest import run_git

REPOSITORY = Path(__file__).resolve().parents[2]


def _in_git() -> bool:
    try:
        run_git(REPOSITORY, "rev-parse", "HEAD")
    except Exception:   # no git, or not a work tree
        return False
    return True


def _anchoring(project, ahead: bool):
    with git_session():
        log = read_freeze_log(project)
        if ahead:
            ask_git_ahead(project, log)
        history = read_history(project)
        return project_anchoring(project, log, history.entries[0]["ledger_sha256"] if history.entries else None), \
            history.problems


@pytest.mark.skipif(not _in_git(), reason="the checkout is not a git work tree")
@pytest.mark.parametrize("root", [".", "examples/l03"])
def test_asking_ahead_changes_no_answer_and_leaves_no_question_for_later(root):
    project = load_project(REPOSITORY / root)
    one_by_one = _anchoring(project, ahead=False)
    with git_session():
        log = read_freeze_log(project)
        ask_git_ahead(project, log)
        asked_ahead = set(git_questions._session)
        history = read_history(project)
        ahead = (project_anchoring(project, log, history.entries[0]["ledger_sha256"] if history.entries else None),
                 history.problems)
        asked_later = [key[1] for key in git_questions._session if key not in asked_ahead]
    assert ahead == one_by_one
    # The ancestry questions too are answered by the history listed ahead, with its parents.
    assert asked_later == []


def test_outside_a_work_tree_nothing_is_asked_ahead(tmp_path, make_project):
    project = load_project(make_project(tmp_path / "p"))
    with git_session():
        ask_git_ahead(project, read_freeze_log(project))
        assert [key for key in git_questions._session if key[1] != "rev-parse"] == []


def _history_with_a_merge(root: Path) -> dict[str, str]:
    """A repository whose history forks and merges: main a-b-d-m, a branch c from a, merged at m,
    and a commit e on a side branch never merged."""
    root.mkdir()
    run_git(root, "init", "-q", "-b", "main")
    commits = {}

    def commit(name: str) -> None:
        (root / f"{name}.txt").write_text(name)
        run_git(root, "add", f"{name}.txt")
        run_git(root, "commit", "-q", "-m", name)
        commits[name] = run_git(root, "rev-parse", "HEAD")

    commit("a")
    commit("b")
    run_git(root, "checkout", "-q", "-b", "side", commits["a"])
    commit("c")
    run_git(root, "checkout", "-q", "-b", "unmerged")
    commit("e")
    run_git(root, "checkout", "-q", "main")
    commit("d")
    run_git(root, "merge", "-q", "--no-edit", "side")
    commits["m"] = run_git(root, "rev-parse", "HEAD")
    return commits


@pytest.mark.skipif(not _in_git(), reason="no git program")
def test_ancestry_read_from_the_listed_history_is_gits_answer_for_every_pair(tmp_path):
    root = tmp_path / "repo"
    commits = _history_with_a_merge(root)
    for earlier in commits.values():
        for later in commits.values():
            with git_session():
                asked_git = git_questions.strictly_before(earlier, later, root)
            with git_session():
                git_questions._git(git_questions._HOLDING_QUESTION, root)
                listed = git_questions._listed_ancestry(earlier, later)
                from_listing = git_questions.strictly_before(earlier, later, root)
                asked = [key[1] for key in git_questions._session]
            if commits["e"] in (earlier, later):
                assert listed is None   # not in HEAD's history: git is asked
            elif earlier != later:
                assert listed is not None and "merge-base" not in asked
            assert from_listing == asked_git, (earlier, later)
    assert git_questions.strictly_before(commits["c"], commits["m"], root)
    assert not git_questions.strictly_before(commits["d"], commits["c"], root)


@pytest.mark.skipif(not _in_git(), reason="no git program")
def test_a_shallow_listing_answers_as_git_does_there_and_leaves_the_rest_to_git(tmp_path):
    root = tmp_path / "repo"
    commits = _history_with_a_merge(root)
    shallow = tmp_path / "shallow"
    run_git(tmp_path, "clone", "-q", "--depth", "1", "--no-local", f"file://{root}", str(shallow))
    with git_session():
        git_questions._git(git_questions._HOLDING_QUESTION, shallow)
        # Only m was fetched: a commit the listing does not hold is git's to answer (or refuse).
        assert git_questions._listed_ancestry(commits["a"], commits["m"]) is None
        assert git_questions._listed_ancestry(commits["m"], commits["m"]) is False
