"""`readout gate`: what a readout project's CI runs (the GitHub Action's step, the `readout-gate`
command installed with the package), the same on any machine.

1. In a shallow clone (`actions/checkout` fetches one commit by default), fetch the whole history
   first: the order of design and results is read from it, and `check` refuses a clone that does
   not hold it. The fetch shows git's progress (a line at most every PROGRESS_SECONDS) and gives
   up, saying so, when the remote sends nothing for `--fetch-timeout` seconds (default
   FETCH_SILENCE_SECONDS) or the fetch takes longer than FETCH_TIMEOUT_SECONDS in all; `check`
   then refuses the shallow clone with the fix. `--no-fetch` leaves the clone alone.
2. `readout check --no-record`: every claim traces, and git shows the order the freeze records.
3. The committed results still describe their inputs (generator.commands.build.stale_results): every
   results file the project configures is there, and each run file a row reads, the release
   sample an every-query file was compared with and (where the dataset folder is here) each
   dataset file has the sha256 the results record. Nothing is evaluated: the gate installs no
   model stack (the `gate` requirement set of pyproject.toml).
4. `readout render --check`: the committed reports are what a fresh render writes. A render reads
   no git, so this step gives the same answer in a shallow and in a full clone of one commit.

Exit codes are readout's own: 0 pass, 1 findings, 2 usage or input error.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Callable

from generator.commands import cli, ledger, reports
from generator.commands.build import stale_results
from generator.claims.record.git_questions import git_session, partial_history
from generator.storage.errors import InputError, clip
from generator.project import load_project

# The fetch gives up after this long without a byte from git (a remote that accepts the connection
# and never answers), and after FETCH_TIMEOUT_SECONDS in all however it progresses.
FETCH_SILENCE_SECONDS = 60
FETCH_TIMEOUT_SECONDS = 900
PROGRESS_SECONDS = 10
STOP_GRACE_SECONDS = 5


def configure_gate(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("project", nargs="?", type=Path, default=Path("."),
                        help="project directory (readout.yaml, design/, claims/, outputs/); default: .")
    parser.add_argument("--format", choices=("text", "json", "github"), default=None,
                        help="check's output format; default: github under GitHub Actions "
                             "(annotations on the ledger lines), text elsewhere")
    parser.add_argument("--no-fetch", action="store_true",
                        help="do not fetch the full history of a shallow clone (check then refuses it)")
    parser.add_argument("--fetch-timeout", default=str(FETCH_SILENCE_SECONDS), metavar="SECONDS",
                        help="give up fetching a shallow clone's history when the remote sends nothing for this "
                             f"long (default {FETCH_SILENCE_SECONDS}; the fetch never runs longer than "
                             f"{FETCH_TIMEOUT_SECONDS} in all)")


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= FETCH_TIMEOUT_SECONDS:
        raise InputError(f"a number of seconds above 0 and at most {FETCH_TIMEOUT_SECONDS}, got {clip(text, 40)!r}",
                         field="--fetch-timeout")
    return value


class _Relay:
    """git's stderr, read as it comes: the newest progress line relayed at most every
    PROGRESS_SECONDS (and the last one at the end), and when the last byte came."""

    def __init__(self, stream: IO[bytes], say: Callable[[str], None]):
        self.stream, self.say = stream, say
        self.last_byte = time.monotonic()
        self.last_said = 0.0
        self.latest = ""
        self.said = ""
        self.lines: list[str] = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        pending = b""
        while chunk := self.stream.read1(4096) if hasattr(self.stream, "read1") else self.stream.read(4096):
            self.last_byte = time.monotonic()
            pending += chunk
            *done, pending = pending.replace(b"\r", b"\n").split(b"\n")
            for raw in done:
                line = raw.decode("utf-8", "replace").strip()
                if line:
                    self.latest = line
                    self.lines = (self.lines + [line])[-5:]
            self.tick()
        if pending.strip():
            self.latest = pending.decode("utf-8", "replace").strip()
            self.lines = (self.lines + [self.latest])[-5:]

    def tick(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.latest and self.latest != self.said and (force or now - self.last_said >= PROGRESS_SECONDS):
            self.say(f"gate: git: {self.latest[:160]}")
            self.said, self.last_said = self.latest, now


def _stop(process: subprocess.Popen) -> None:
    """End the fetch this gate started (its process group: git and the transport it runs)."""
    for sent, wait in ((signal.SIGTERM, STOP_GRACE_SECONDS), (signal.SIGKILL, None)):
        try:
            os.killpg(process.pid, sent)
        except (ProcessLookupError, PermissionError):
            return
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def deepen_shallow_clone(root: Path, silence: float = FETCH_SILENCE_SECONDS,
                         say: Callable[[str], None] | None = None) -> str | None:
    """Fetch the history a shallow clone lacks, relaying git's progress through `say`; returns
    the closing line to print, or None when the clone was not shallow (or not a git clone)."""
    say = say or (lambda line: print(line, file=sys.stderr, flush=True))
    with git_session():
        if not root.is_dir() or "shallow" not in (partial_history(root) or ""):
            return None
    say(f"gate: a shallow clone; fetching its full history (giving up after {silence:g} s without a byte from the "
        f"remote, or {FETCH_TIMEOUT_SECONDS} s in all)")
    started = time.monotonic()
    try:
        process = subprocess.Popen(["git", "fetch", "--unshallow", "--progress"], cwd=root, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
                                   env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_SSH_COMMAND":
                                        os.environ.get("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")})
    except OSError as error:
        return f"gate: a shallow clone; fetching its full history failed ({error.strerror or type(error).__name__})"
    relay = _Relay(process.stderr, say)
    gave_up = None
    while process.poll() is None:
        time.sleep(0.1)
        relay.tick()
        now = time.monotonic()
        if now - relay.last_byte > silence:
            gave_up = f"the remote sent nothing for {silence:g} s"
        elif now - started > FETCH_TIMEOUT_SECONDS:
            gave_up = f"it ran for {FETCH_TIMEOUT_SECONDS} s"
        if gave_up:
            _stop(process)
            break
    relay.thread.join(timeout=STOP_GRACE_SECONDS)
    relay.tick(force=True)
    if gave_up:
        return (f"gate: a shallow clone; fetching its full history gave up after {time.monotonic() - started:.0f} s: "
                f"{gave_up} (is the remote reachable?); the check below refuses the shallow clone: fetch the history "
                "(actions/checkout with fetch-depth: 0) or run the gate where the remote answers")
    if process.returncode != 0:
        why = relay.lines[-1][:160] if relay.lines else "git fetch"
        return f"gate: a shallow clone; fetching its full history failed ({why})"
    return "gate: a shallow clone; fetched its full history (fetch-depth: 0 in actions/checkout skips this)"


def run_gate(args: argparse.Namespace) -> int:
    silence = _seconds(args.fetch_timeout)
    if not args.no_fetch:
        line = deepen_shallow_clone(args.project, silence)
        if line is not None:
            print(line, file=sys.stderr)
    output_format = args.format or ("github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text")
    status = ledger.run_check(argparse.Namespace(project=args.project, format=output_format, no_record=True))
    if status != cli.EXIT_OK:
        return status
    sys.stdout.flush()
    stale = stale_results(load_project(args.project))
    for line in stale:
        print(f"::error title=readout gate::{line}" if output_format == "github" else line)
    if stale:
        print(f"Gate failed: the committed results do not describe the committed inputs ({len(stale)} "
              f"finding{'s' if len(stale) != 1 else ''}).")
        return cli.EXIT_FINDINGS
    return reports.run_render(argparse.Namespace(project=args.project, check_only=True, draft=False))


def run() -> None:
    """The `readout-gate` command: `readout gate` under a name a CI step can call directly."""
    sys.argv = [sys.argv[0], "gate", *sys.argv[1:]]
    cli.run()
