"""The gate's fetch of a shallow clone's history (issue 47, part 6): it shows progress, and a remote
that accepts the connection and never answers makes it give up within the bound it states (the
silence bound, `--fetch-timeout`), saying so, instead of waiting in silence; the check then refuses
the shallow clone with the fix, exit 2."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from generator.commands.gate import deepen_shallow_clone
from tests.conftest import git_commit, run_cli, run_git


def _shallow_clone(tmp_path: Path) -> tuple[Path, Path]:
    origin = tmp_path / "origin"
    origin.mkdir()
    run_git(origin, "init", "-q", "-b", "main")
    for number in range(3):
        (origin / "notes.md").write_text(f"note {number}\n", encoding="utf-8")
        git_commit(origin, f"note {number}", "notes.md")
    clone = tmp_path / "clone"
    run_git(tmp_path, "clone", "-q", "--depth", "1", origin.as_uri(), str(clone))
    assert run_git(clone, "rev-parse", "--is-shallow-repository") == "true"
    return origin, clone


@pytest.fixture
def silent_remote():
    """A TCP listener that accepts every connection and never sends a byte: git:// waits on it."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept():
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"git://127.0.0.1:{listener.getsockname()[1]}/review.git"
    stop.set()
    thread.join()
    for connection in held:
        connection.close()
    listener.close()


def test_the_fetch_shows_what_it_does_and_fetches_the_history(tmp_path):
    _, clone = _shallow_clone(tmp_path)
    said: list[str] = []
    line = deepen_shallow_clone(clone, 30, said.append)
    assert line == "gate: a shallow clone; fetched its full history (fetch-depth: 0 in actions/checkout skips this)"
    assert said[0] == ("gate: a shallow clone; fetching its full history (giving up after 30 s without a byte from the "
                       "remote, or 900 s in all)")
    assert run_git(clone, "rev-parse", "--is-shallow-repository") == "false"
    assert deepen_shallow_clone(clone, 30, said.append) is None    # no longer shallow: nothing to do


def test_a_remote_that_never_answers_is_given_up_within_the_stated_bound(tmp_path, silent_remote):
    _, clone = _shallow_clone(tmp_path)
    run_git(clone, "remote", "set-url", "origin", silent_remote)
    said: list[str] = []
    started = time.monotonic()
    line = deepen_shallow_clone(clone, 2, said.append)
    elapsed = time.monotonic() - started
    assert elapsed < 2 + 5 + 3, elapsed      # the silence bound, the grace to stop git, and slack
    assert line.startswith("gate: a shallow clone; fetching its full history gave up after ")
    assert line.endswith("s: the remote sent nothing for 2 s (is the remote reachable?); the check below refuses the "
                         "shallow clone: fetch the history (actions/checkout with fetch-depth: 0) or run the gate "
                         "where the remote answers")
    assert run_git(clone, "rev-parse", "--is-shallow-repository") == "true"


def test_the_gate_gives_up_on_a_silent_remote_and_refuses_the_shallow_clone(tmp_path, silent_remote, monkeypatch,
                                                                           capsys):
    _, clone = _shallow_clone(tmp_path)
    (clone / "readout.yaml").write_text("title: A review\nkind: beir\n", encoding="utf-8")
    run_git(clone, "remote", "set-url", "origin", silent_remote)
    started = time.monotonic()
    outcome = run_cli(clone, monkeypatch, capsys, "gate", "--fetch-timeout", "2")
    assert time.monotonic() - started < 30
    assert "fetching its full history gave up after" in outcome.err
    assert outcome.code == 2, outcome.out + outcome.err


@pytest.mark.parametrize("value", ["0", "-1", "901", "soon"])
def test_the_fetch_timeout_is_a_number_of_seconds_within_the_bound(tmp_path, monkeypatch, capsys, value):
    outcome = run_cli(tmp_path, monkeypatch, capsys, "gate", "--fetch-timeout", value)
    assert outcome.code == 2 and "--fetch-timeout: a number of seconds above 0 and at most 900" in outcome.err
