"""Every input through one bounded reader (issue 47, part 6; generator.storage.bounded_reads.read_input).

Git commits symbolic links, so a pull request can make any project file a link to /dev/zero, and a
checkout can hold a FIFO or a device. Each input is refused before anything reads it: a link leading
out of the project, a FIFO, a device; a regular file is refused once more than its kind's bound has
been read (never by its size on record, which is 0 for a device). Each case runs `readout` in a
child under a 2 GiB address-space cap and a time limit: before, a link to /dev/zero ended in
"internal error: MemoryError" (or took a runner down without a cap) and a FIFO hung for ever.
Parsing stays linear: a regression block of 100,000 names is refused in well under a second.
"""

from __future__ import annotations

import os
import shutil
import stat
import time
from pathlib import Path
from subprocess import TimeoutExpired

import pytest

from generator.storage.errors import InputError
from tests.conftest import REPOSITORY_ROOT, Outcome, one_line_error, run_python

MEMORY_CAP = 2 * 1024 ** 3
SECONDS = 60

# `readout ARGV` with the address space capped: a whole read of /dev/zero fails within the cap.
CAPPED = r'''
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]), int(sys.argv[1])))
from generator.commands.cli import run
sys.argv = ["readout", *sys.argv[2:]]
run()
'''


def _capped(cwd: Path, *argv: str, cache: Path) -> Outcome:
    env = {**os.environ, "READOUT_CACHE": str(cache), "HF_HUB_OFFLINE": "1"}
    try:
        completed = run_python("-c", CAPPED, str(MEMORY_CAP), *argv, cwd=cwd, env=env, timeout=SECONDS)
    except TimeoutExpired:
        pytest.fail(f"readout {' '.join(argv)} did not finish within {SECONDS} s (a read that never ends)")
    assert "Traceback" not in completed.stderr, completed.stderr[-2000:]
    return Outcome(completed.returncode, completed.stdout, completed.stderr)


# The project files `check` reads, each named by its path in the fixture project.
CHECKED = ["readout.yaml", "claims/ledger.yaml", "claims/design-freeze.json", "claims/trace-history.jsonl",
           "claims/ledger.first-draft.yaml", "design/decisions.md", "outputs/results.json"]


def _replace(path: Path, how: str) -> None:
    path.unlink()
    if how == "link to /dev/zero":
        path.symlink_to("/dev/zero")
    elif how == "fifo":
        os.mkfifo(path)
    else:
        try:
            os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 5))   # the device /dev/zero is
        except PermissionError:
            pytest.skip("making a device needs root")


WHAT = {"link to /dev/zero": "is a symbolic link leading out of the project (to /dev/zero)",
        "fifo": "is a FIFO (named pipe), not a regular file",
        "device": "is a character device, not a regular file"}
# Links the checker already refused, before anything read them, by where they lead.
REFUSED_EARLIER = {("design/decisions.md", "link to /dev/zero"):
                   "Error: design/decisions.md: resolves outside design/ (a link out)",
                   ("outputs/results.json", "link to /dev/zero"):
                   "Error: claims/ledger.yaml:9: file: claim verdict-hybrid: results file 'results.json' resolves "
                   "outside outputs/"}


@pytest.mark.parametrize("how", sorted(WHAT))
@pytest.mark.parametrize("name", CHECKED)
def test_check_refuses_each_project_file_that_is_no_regular_file_before_reading_it(tmp_path, make_project, name,
                                                                                    how):
    project = make_project(tmp_path / "p")
    _replace(project / name, how)
    outcome = _capped(project, "check", "--no-record", ".", cache=tmp_path / "cache")
    assert outcome.code == 2, outcome.out + outcome.err
    line = one_line_error(outcome)
    assert line.startswith(REFUSED_EARLIER.get((name, how), f"Error: {name}: {WHAT[how]}")), line


@pytest.mark.parametrize("how", sorted(WHAT))
@pytest.mark.parametrize("name", ["outputs/runs/dense.trec", "outputs/runs/qrels.tsv"])
def test_a_run_file_or_judgements_copy_that_is_no_regular_file_is_not_re_derived(tmp_path, make_project, name, how):
    project = make_project(tmp_path / "p")
    _replace(project / name, how)
    outcome = _capped(project, "check", "--no-record", ".", cache=tmp_path / "cache")
    assert outcome.code in (1, 2), outcome.out + outcome.err
    assert f"{name.removeprefix('outputs/')} {WHAT[how]}" in outcome.out + outcome.err, outcome.out + outcome.err


@pytest.mark.parametrize("how", sorted(WHAT))
def test_import_draft_refuses_a_ledger_or_a_draft_that_is_no_regular_file(tmp_path, make_project, how):
    project = make_project(tmp_path / "p")
    draft = tmp_path / "draft.md"
    draft.write_text("Hybrid is the row to keep.\n", encoding="utf-8")
    _replace(project / "claims" / "ledger.yaml", how)
    outcome = _capped(project, "import-draft", str(draft), "--output", "readout", cache=tmp_path / "cache")
    assert outcome.code == 2 and one_line_error(outcome).startswith(f"Error: claims/ledger.yaml: {WHAT[how]}"), \
        outcome.out + outcome.err
    if how != "link to /dev/zero":   # the draft lies outside the project: only what it is counts
        (project / "claims" / "ledger.yaml").unlink()
        _replace(draft, how)
        outcome = _capped(project, "import-draft", str(draft), "--output", "readout", cache=tmp_path / "cache")
        assert outcome.code == 2 and WHAT[how] in one_line_error(outcome), outcome.out + outcome.err


def test_freeze_refuses_a_design_document_that_is_a_fifo(tmp_path, make_project):
    project = make_project(tmp_path / "p")
    os.mkfifo(project / "design" / "notes.md")
    outcome = _capped(project, "freeze", ".", cache=tmp_path / "cache")
    assert outcome.code == 2
    assert one_line_error(outcome).startswith("Error: design/notes.md: is a FIFO (named pipe), not a regular file"), \
        outcome.err


@pytest.mark.parametrize("how", sorted(WHAT))
def test_the_sandbox_refuses_a_data_file_that_is_no_regular_file(tmp_path, how):
    project = tmp_path / "l03"
    shutil.copytree(REPOSITORY_ROOT / "examples" / "l03", project)
    _replace(project / "data" / "topics.jsonl", how)
    outcome = _capped(project, "sandbox", ".", cache=tmp_path / "cache")
    assert outcome.code == 2, outcome.out + outcome.err
    assert one_line_error(outcome).startswith(f"Error: data/topics.jsonl: {WHAT[how]}"), outcome.err


def test_a_cache_entry_that_is_a_fifo_is_ignored_not_waited_for(tmp_path):
    from generator.evaluate.cache import read_json_entry

    os.mkfifo(tmp_path / "entry.json")
    started = time.monotonic()
    assert read_json_entry(tmp_path / "entry.json") == (None, "unreadable: is a FIFO (named pipe), not a regular file")
    assert time.monotonic() - started < 5


def test_a_link_that_stays_inside_the_project_is_read(tmp_path, make_project, capsys, monkeypatch):
    from generator.commands.cli import main

    project = make_project(tmp_path / "p")
    (project / "claims" / "ledger.yaml").rename(project / "claims" / "kept-ledger.yaml")
    (project / "claims" / "ledger.yaml").symlink_to("kept-ledger.yaml")
    monkeypatch.chdir(project)
    assert main(["check", "--no-record", "."]) == 0, capsys.readouterr()


# --- the bound of each kind ---------------------------------------------------------------------


def test_a_regular_file_beyond_its_kinds_bound_is_refused_having_read_one_byte_more(tmp_path, monkeypatch):
    from generator.storage.bounded_reads import INPUT_BOUNDS, read_input

    monkeypatch.setitem(INPUT_BOUNDS, "trace history", 1000)
    path = tmp_path / "history.jsonl"
    path.write_bytes(b"x" * 1000)
    assert read_input(path, "trace history") == b"x" * 1000
    path.write_bytes(b"x" * 1001)
    with pytest.raises(InputError) as refused:
        read_input(path, "trace history")
    assert str(refused.value) == (f"{path}: larger than 1,000 bytes, the most a trace history may hold: not a trace "
                                  "history readout wrote or a person would write")


def test_every_kind_states_its_bound():
    from generator.storage.bounded_reads import INPUT_BOUNDS

    assert all(isinstance(bound, int) and 0 < bound <= 1024 ** 3 for bound in INPUT_BOUNDS.values())
    assert INPUT_BOUNDS["results file"] == 256 * 1024 ** 2 and INPUT_BOUNDS["ledger"] == 32 * 1024 ** 2


# --- parsing stays linear -----------------------------------------------------------------------


def _refusing_time(root, names: int) -> float:
    """Seconds to refuse a regression block of `names` rows, the first listed twice."""
    from generator.claims.record.regression_block import read_regression_block

    listed = [f"row{number}" for number in range(names)] + ["row0"]
    block = "```regression\nrows: [" + ", ".join(listed) + "]\nmetrics: [nDCG@5]\nmargin: 0.01\n```\n"
    assert len(block.encode()) < 1_000_000   # within the design document limit
    (root / "design").mkdir(parents=True)
    (root / "design" / "regression.md").write_text("# Regression\n\n" + block, encoding="utf-8")
    started = time.monotonic()
    with pytest.raises(InputError) as refused:
        read_regression_block(root / "design")
    assert "'row0' is listed twice" in str(refused.value)
    return time.monotonic() - started


def test_a_regression_block_of_100000_names_is_refused_in_linear_time(tmp_path):
    # Ten times the names takes about ten times as long (a hundred times when each name was
    # counted in the whole list: 166 s for 100,000 names); timed side by side, round by round,
    # the best of three each, so a machine loaded for a moment slows neither alone.
    small, large = [], []
    for round_number in range(3):
        small.append(_refusing_time(tmp_path / f"small-{round_number}", 10_000))
        large.append(_refusing_time(tmp_path / f"large-{round_number}", 100_000))
    assert min(large) < 30 * max(min(small), 0.01), (small, large)
