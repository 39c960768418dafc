"""Many processes writing a project's records at once (issue 47, part 5): `import-draft` (the ledger),
`freeze` (the design freeze log) and `check` (the trace history) each read, change and write one
file, under the project's records lock (generator.storage.locks.records_lock). Concurrent runs wait for
one another: every claim, freeze entry and history line a run reports as written is in the file
afterwards, and the chains stay whole. A lock held past the wait is one line naming the holder.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from subprocess import PIPE

import pytest
import yaml

from generator.claims.record.freeze import read_freeze_log
from generator.claims.record.freeze_check import log_problems
from generator.claims.record.history import read_history
from generator.commands.cli import main
from generator.storage.locks import LOCK_NAME
from generator.project import load_project
from tests.child_process import CHILD_PRELUDE, PausingChild
from tests.conftest import Outcome, one_line_error, start_python

PROCESSES = 6
ROUNDS = 4

# One child process: `rounds` runs of the CLI in a loop, each printing what it reported, all
# children released together by a start file so their runs overlap.
LOOP = r'''
import contextlib, io, json, os, sys, time
from pathlib import Path

from generator.commands.cli import main

spec = json.loads(sys.argv[1])
start = Path(spec["start"])
while not start.exists():
    time.sleep(0.005)
reports = []
for index, argv in enumerate(spec["runs"]):
    if spec.get("before"):
        exec(spec["before"], {"index": index, "spec": spec, "Path": Path, "os": os})
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    reports.append({"code": code, "out": out.getvalue(), "err": err.getvalue()})
print(json.dumps(reports))
'''


def _environment(tmp_path: Path) -> dict:
    return {**os.environ, "READOUT_CACHE": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}


def _run_together(tmp_path: Path, specs: list[dict], cwd: Path) -> list[list[dict]]:
    """Start one child per spec, release them at once, and return each child's reports."""
    start = tmp_path / f"start-{time.monotonic_ns()}"
    children = [start_python("-c", LOOP, json.dumps({**spec, "start": str(start)}), cwd=cwd,
                             env=_environment(tmp_path), stdout=PIPE, stderr=PIPE, text=True) for spec in specs]
    time.sleep(0.5)   # every child has imported the CLI and waits for the start file
    start.touch()
    found = []
    for child in children:
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err[-3000:]
        assert "Traceback" not in out + err, err[-3000:]
        found.append(json.loads(out.strip().splitlines()[-1]))
    return found


def _sentences(process: int, run: int, count: int = 2) -> str:
    return " ".join(f"Process {process} run {run} wrote sentence {number} here." for number in range(count))


def test_concurrent_imports_keep_every_claim_they_report(tmp_path, make_project):
    project = make_project(tmp_path / "p")
    before = {claim["id"] for claim in yaml.safe_load((project / "claims" / "ledger.yaml").read_text())["claims"]}
    specs = []
    for process in range(PROCESSES):
        runs = []
        for run in range(ROUNDS):
            draft = tmp_path / f"draft-{process}-{run}.md"
            draft.write_text(_sentences(process, run) + "\n", encoding="utf-8")
            runs.append(["import-draft", str(draft), "--output", "readout", "--ledger",
                         str(project / "claims" / "ledger.yaml")])
        specs.append({"runs": runs})
    reported = []
    for reports in _run_together(tmp_path, specs, project):
        for report in reports:
            assert report["code"] == 0, report["err"]
            assert "Imported 2 claims" in report["out"], report["out"]
            reported += re.findall(r": claim (\S+) \(", report["out"])
    assert len(reported) == PROCESSES * ROUNDS * 2 == len(set(reported))
    ledger = yaml.safe_load((project / "claims" / "ledger.yaml").read_text(encoding="utf-8"))
    kept = [claim["id"] for claim in ledger["claims"]]
    assert len(kept) == len(set(kept))
    assert set(kept) == before | set(reported)
    assert not list((project / "claims").glob("*.tmp")) and not (project / "claims" / LOCK_NAME).exists()


# Each run changes the child's own design document (renamed into place, so no freeze reads it half
# written) and freezes it.
CHANGE_DOCUMENT = r'''
document = Path(spec["design"]) / f"process-{spec['process']}.md"
# Written beside design/, not in it: every file under design/ is a design document, so a freeze
# running at that moment would rightly list the half-written one (and find it gone when it reads).
temporary = document.parent.parent / (document.name + ".part")
temporary.write_text(f"# Process {spec['process']}\n\nRevision {index} of this design note.\n", encoding="utf-8")
os.replace(temporary, document)
'''


def test_concurrent_freezes_keep_every_entry_they_report(tmp_path, make_project):
    project = make_project(tmp_path / "p")
    specs = [{"runs": [["freeze", str(project), "--reason", f"process {process} revises its note"]] * ROUNDS,
              "before": CHANGE_DOCUMENT, "design": str(project / "design"), "process": process}
             for process in range(PROCESSES)]
    numbers = []
    for reports in _run_together(tmp_path, specs, project):
        for report in reports:
            assert report["code"] == 0, report["err"]
            numbers += [int(number) for number in re.findall(r"\(freeze (\d+), ", report["out"])]
    log = read_freeze_log(load_project(project))
    # Every entry a run reported is in the log, under the number it reported; none twice.
    assert len(numbers) == len(set(numbers)), sorted(numbers)
    assert set(numbers) <= {entry.number for entry in log.entries}
    assert len(log.entries) == 1 + len(numbers)   # the fixture's own freeze, then one per reported entry
    assert log_problems(load_project(project), log, design_matches=False) == []
    assert not (project / "claims" / LOCK_NAME).exists()


# Each run writes the shared ledger with a comment of its own (a ledger version never checked
# before), then checks it: the check records the version it read.
NEW_LEDGER_VERSION = r'''
ledger = Path(spec["ledger"])
text = ledger.read_text(encoding="utf-8").split("\n# run ")[0]
temporary = ledger.with_name(ledger.name + f".{os.getpid()}.part")
temporary.write_text(text + f"\n# run {spec['process']}-{index}\n", encoding="utf-8")
os.replace(temporary, ledger)
'''


def test_concurrent_checks_keep_every_history_line_they_report(tmp_path, make_project):
    project = make_project(tmp_path / "p")
    specs = [{"runs": [["check", str(project), "--format", "json"]] * ROUNDS, "before": NEW_LEDGER_VERSION,
              "ledger": str(project / "claims" / "ledger.yaml"), "process": process}
             for process in range(PROCESSES)]
    recorded = []
    for reports in _run_together(tmp_path, specs, project):
        for report in reports:
            assert report["code"] in (0, 1), report["err"]
            data = json.loads(report["out"])
            if data["history_recorded"]:
                recorded.append(data["ledger_sha256"])
    assert recorded, "no check recorded a ledger version"
    history = read_history(load_project(project))
    assert history.problems == []
    kept = [entry["ledger_sha256"] for entry in history.entries]
    assert len(kept) == len(set(kept)), "a ledger version was recorded twice"
    assert set(recorded) <= set(kept)
    assert len(kept) == 1 + len(recorded)   # the fixture's first draft, then each version a check recorded


# --- a lock held too long ---------------------------------------------------------------------------

HOLD = CHILD_PRELUDE + r'''
from generator.storage.locks import records_lock

with records_lock(Path(spec["hold"])):
    pause()
'''


def test_a_records_lock_held_past_the_wait_is_one_line_naming_the_holder(tmp_path, make_project, monkeypatch,
                                                                          capsys):
    import generator.storage.locks

    project = make_project(tmp_path / "p")
    holder = PausingChild(HOLD, tmp_path, hold=str(project / "claims"))
    pid = holder.paused_pid()
    monkeypatch.setattr(generator.storage.locks, "RECORDS_WAIT_SECONDS", 0.3)
    monkeypatch.chdir(project)
    before = (project / "claims" / "design-freeze.json").read_bytes()
    (project / "design" / "decisions.md").write_text("# Decisions\n\nA new design.\n", encoding="utf-8")
    started = time.monotonic()
    code = main(["freeze", ".", "--reason", "a change while another process writes"])
    outcome = Outcome(code, *capsys.readouterr())
    assert time.monotonic() - started < 10
    assert code == 2 and outcome.out == ""
    assert one_line_error(outcome) == (
        f"Error: claims is being written by another readout process (pid {pid}, lock claims/{LOCK_NAME}) and "
        "was not let go within 0.3 s; run this command again once it has finished")
    assert (project / "claims" / "design-freeze.json").read_bytes() == before
    holder.resume()
    assert holder.outcome().code == 0
    assert not (project / "claims" / LOCK_NAME).exists()
