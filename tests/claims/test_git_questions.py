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
def test_asking_ahead_changes_no_answer_and_leaves_only_the_ancestry_questions(root):
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
    assert set(asked_later) <= {"merge-base"}, asked_later


def test_outside_a_work_tree_nothing_is_asked_ahead(tmp_path, make_project):
    project = load_project(make_project(tmp_path / "p"))
    with git_session():
        ask_git_ahead(project, read_freeze_log(project))
        assert [key for key in git_questions._session if key[1] != "rev-parse"] == []
