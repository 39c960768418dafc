"""A `readout` child process that pauses where a test says, for tests that run processes at once or
send real signals (tests/test_concurrency.py, tests/test_signals.py).

The child script is CHILD_PRELUDE, then what a test module adds (hooks of its own), then
CHILD_RUN. The prelude reads its spec from argv[1]: `ready` and `go` paths for the pause, and
optionally `at` (a regular expression of a rename target), `nth` and `when` ("before" or "after"),
to pause at the N-th rename whose target matches, through generator.storage.fileio._replace, the one rename
every write ends with. A pause writes the child's pid to `ready` and waits for `go` (or a signal).
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

from tests.conftest import Outcome, run_python
from tests.one_thread import ONE_THREAD_ENV

CHILD_PRELUDE = r'''
import json, os, re, signal, sys, time
from pathlib import Path

# Ctrl-C as a terminal delivers it, even when the test runner itself runs with SIGINT ignored (a
# background job), which a child would inherit.
signal.signal(signal.SIGINT, signal.default_int_handler)
spec = json.loads(sys.argv[1])
ready, go = Path(spec["ready"]), Path(spec["go"])


def pause():
    temporary = ready.with_name(ready.name + ".tmp")
    temporary.write_text(str(os.getpid()))
    os.replace(temporary, ready)
    deadline = time.monotonic() + 120
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.01)

'''

CHILD_HOOKS = r'''
from generator.commands import cli
from generator.storage import fileio

real_replace, renames = fileio._replace, []


def replace(source, target):
    if spec.get("at") and re.search(spec["at"], str(target)):
        renames.append(str(target))
        if len(renames) == spec["nth"]:
            if spec.get("when") == "after":
                real_replace(source, target)
                pause()
                return
            pause()
    real_replace(source, target)


fileio._replace = replace
'''

CHILD_RUN = r'''
sys.argv = ["readout", *spec["argv"]]
cli.run()
'''


class PausingChild:
    """`script` run as a child process with this spec (started at once, in a thread of the test)."""

    def __init__(self, script: str, tmp_path: Path, argv: list = (), cwd: Path | None = None,
                 cache: Path | None = None, **spec):
        self.ready, self.go = tmp_path / f"ready-{id(self)}", tmp_path / f"go-{id(self)}"
        spec = {"argv": [str(word) for word in argv], "ready": str(self.ready), "go": str(self.go), **spec}
        # One torch thread (tests/one_thread.py): a child that encodes or reranks runs beside the other
        # xdist worker (or another child) on two cores.
        env = {**os.environ, "READOUT_CACHE": str(cache or tmp_path / "readout-cache"), "HF_HUB_OFFLINE": "1",
               **ONE_THREAD_ENV}
        self.completed = None
        self.thread = threading.Thread(target=self._run, args=(script, json.dumps(spec), cwd or tmp_path, env),
                                       daemon=True)
        self.thread.start()

    def _run(self, script: str, spec: str, cwd: Path, env: dict) -> None:
        self.completed = run_python("-c", script, spec, cwd=cwd, env=env, timeout=240)

    def paused_pid(self, timeout: float = 180) -> int:
        deadline = time.monotonic() + timeout
        while not self.ready.exists():
            assert self.thread.is_alive(), self.outcome().err[-3000:]
            assert time.monotonic() < deadline, "the child never reached its pause"
            time.sleep(0.02)
        return int(self.ready.read_text())

    def resume(self) -> None:
        self.go.touch()

    def outcome(self) -> Outcome:
        self.thread.join(240)
        assert self.completed is not None, "the child did not finish"
        return Outcome(self.completed.returncode, self.completed.stdout, self.completed.stderr)
