"""Git that cannot be read is an error naming the fix, never "no history" (issue 47, part 2).

A project in a git work tree is held to what git shows of its order (generator.claims.record.
anchoring). When git refuses the repository (a clone owned by another user: git's "dubious
ownership", as in a container CI job) or is not installed, `check` and the gate exit 2 with the
fix (`safe.directory`, install git), since a record git would contradict would otherwise pass; a
directory that is no work tree keeps the "no git history" behaviour.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from generator.commands.cli import main
from tests.conftest import Outcome, git_commit, one_line_error, run_git, run_tool

OTHER_UID = 54321


def _check(root: Path, monkeypatch, capsys, *options: str, command: str = "check") -> Outcome:
    monkeypatch.chdir(root)
    capsys.readouterr()
    code = main([command, *options, "."] if command == "check" else [command, "--no-fetch", "."])
    return Outcome(code, *capsys.readouterr())


@pytest.fixture
def git_home(tmp_path, monkeypatch) -> Path:
    """No user or system git configuration: nothing trusts a repository unless the test says so."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("READOUT_CACHE", str(tmp_path / "cache"))
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_CONFIG_COUNT"):
        monkeypatch.delenv(name, raising=False)
    return home


def _committed_project(root: Path, make_project) -> Path:
    make_project(root)
    run_git(root, "init", "-q")
    git_commit(root, "design, freeze, results and ledger", ".")
    return root


def _owned_by_another_user(root: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("giving a repository to another user needs root")
    run_tool("chown", "-R", f"{OTHER_UID}:{OTHER_UID}", str(root), check=True)


def test_a_repository_owned_by_another_user_is_an_error_naming_safe_directory(tmp_path, make_project, git_home,
                                                                              monkeypatch, capsys):
    root = _committed_project(tmp_path / "p", make_project)
    trusted = _check(root, monkeypatch, capsys, "--no-record")
    assert trusted.code == 0, trusted.out + trusted.err
    assert "no git history" not in trusted.out and "first draft anchored to commit" in trusted.out
    _owned_by_another_user(root)
    for outcome in (_check(root, monkeypatch, capsys, "--no-record"), _check(root, monkeypatch, capsys,
                                                                             command="gate")):
        assert outcome.code == 2, outcome.out + outcome.err
        assert "no git history" not in outcome.out
        assert one_line_error(outcome) == (
            "Error: .: git refuses to read this repository, which another user owns (\"dubious ownership\"), so the "
            f"order of design and results cannot be read; trust it with `git config --global --add safe.directory "
            f"{root}`")
    # The fix it names is the fix: trusted, the same clone is read again.
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "safe.directory")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", str(root))
    again = _check(root, monkeypatch, capsys, "--no-record")
    assert again.code == 0 and "first draft anchored to commit" in again.out, again.out + again.err


def test_a_rewritten_freeze_git_contradicts_is_not_passed_as_no_history(tmp_path, make_project, git_home,
                                                                        monkeypatch, capsys):
    root = _committed_project(tmp_path / "p", make_project)
    freeze = root / "claims" / "design-freeze.json"
    record = json.loads(freeze.read_text(encoding="utf-8"))
    record["freezes"][0]["frozen_at"] = "2026-11-29T06:00:00Z"   # rewritten after the commit, chain kept
    freeze.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    refused = _check(root, monkeypatch, capsys, "--no-record")
    assert refused.code == 1 and "is not an append-only continuation" in refused.out
    _owned_by_another_user(root)
    unreadable = _check(root, monkeypatch, capsys, "--no-record")
    assert unreadable.code == 2 and "safe.directory" in one_line_error(unreadable), unreadable.out + unreadable.err


def _path_without_git(tmp_path: Path) -> str:
    """A PATH whose only directory holds nothing: no git (the checks run in this process)."""
    bin_dir = tmp_path / "bin-without-git"
    bin_dir.mkdir()
    return str(bin_dir)


def test_a_work_tree_without_a_git_program_is_an_error_naming_the_fix(tmp_path, make_project, git_home,
                                                                      monkeypatch, capsys):
    root = _committed_project(tmp_path / "p", make_project)
    monkeypatch.setenv("PATH", _path_without_git(tmp_path))
    assert shutil.which("git") is None
    for outcome in (_check(root, monkeypatch, capsys, "--no-record"), _check(root, monkeypatch, capsys,
                                                                             command="gate")):
        assert outcome.code == 2, outcome.out + outcome.err
        assert one_line_error(outcome) == (
            "Error: .: a git work tree, but no git program is on PATH, so the order of design and results cannot be "
            "read; install git (e.g. `apt-get install git`)")


@pytest.mark.parametrize("git_on_path", [True, False], ids=["with-git", "without-git"])
def test_a_directory_that_is_no_work_tree_still_has_no_git_history(tmp_path, make_project, git_home, monkeypatch,
                                                                   capsys, git_on_path):
    root = make_project(tmp_path / "p")
    if not git_on_path:
        monkeypatch.setenv("PATH", _path_without_git(tmp_path))
    outcome = _check(root, monkeypatch, capsys, "--no-record")
    assert outcome.code == 0, outcome.out + outcome.err
    assert "not anchored (no git history)" in outcome.out
