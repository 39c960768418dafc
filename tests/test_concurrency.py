"""Processes that really run at once (issue 24): two `readout build` of one project, writers against
a held lock, a holder killed with SIGKILL, and several processes sharing one cache directory.

The policy under test (generator/storage/locks.py): a command that writes a project's outputs holds the
directory's lock for its whole run; a second one stops at once with exit 2 and one line naming
the holder's pid and the lock; `check` and `render --check` take no lock and never load filelock.
A cache is shared without a project lock: a rerank entry is one file renamed into place, and an
embedding entry's two files are written and read under the entry's own lock.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import threading
import time
from pathlib import Path

import pytest
import yaml

from generator.commands.build import build_project
from generator.commands.cli import main
from generator.storage.locks import LOCK_NAME
from generator.project import load_project
from tests.child_process import CHILD_HOOKS, CHILD_PRELUDE, CHILD_RUN, PausingChild
from tests.conftest import REPOSITORY_ROOT, Outcome, one_line_error, run_python

L03 = REPOSITORY_ROOT / "examples" / "l03"
BUSY = ("Error: {shown} is being written by another readout process (pid {pid}, lock {shown}/.readout.lock); "
        "run this command again once it has finished")

# `readout ARGV` through the real entry point, optionally paused before (or after) the N-th rename
# whose target matches `at` (tests/child_process.py), or inside `outputs_lock` with nothing else to
# do (`hold`), or running `exec` instead of a command.
CHILD = CHILD_PRELUDE + r'''
if spec.get("hold"):
    from generator.storage.locks import outputs_lock

    with outputs_lock(Path(spec["hold"])):
        pause()
    sys.exit(0)
''' + CHILD_HOOKS + r'''
if spec.get("exec"):
    exec(spec["exec"], {"spec": spec})
    sys.exit(0)
''' + CHILD_RUN


class Child(PausingChild):
    """A child process that must not print a traceback."""

    def __init__(self, tmp_path: Path, argv: list = (), cwd: Path | None = None, cache: Path | None = None,
                 **spec):
        super().__init__(CHILD, tmp_path, argv, cwd, cache, **spec)

    def outcome(self) -> Outcome:
        outcome = super().outcome()
        assert "Traceback" not in outcome.out + outcome.err, outcome.err[-3000:]
        return outcome


def _tree(directory: Path) -> dict[str, str]:
    return {path.relative_to(directory).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(directory.rglob("*")) if path.is_file()}


def _l03(target: Path, *, stale: bool = False) -> Path:
    shutil.copytree(L03, target)
    if stale:   # every file a build writes changed by hand, so a build must replace all of them
        for path in (target / "outputs").rglob("*"):
            if path.is_file() and path.suffix in (".trec", ".json", ".csv", ".md", ".html", ".tsv"):
                path.write_bytes(path.read_bytes() + b" ")
    return target


@pytest.fixture
def l03_reference(tmp_path) -> dict[str, str]:
    """What a build of an l03 copy outside git writes, built alone."""
    project = _l03(tmp_path / "reference")
    assert build_project(load_project(project), log=lambda _: None).ok
    return _tree(project / "outputs")


# --- two builds of one project -------------------------------------------------------------------


def test_a_second_build_stops_at_once_while_the_first_finishes_a_whole_set(tmp_path, l03_reference):
    project = _l03(tmp_path / "l03", stale=True)
    # The first build is paused with its first set staged beside the outputs, before any rename:
    # exactly the temporaries a second writer would take for a killed run's and delete.
    first = Child(tmp_path, ["build", project], at=r"/outputs/", nth=1)
    pid = first.paused_pid()
    second = Child(tmp_path, ["build", project]).outcome()
    assert second.code == 2 and second.out == ""
    assert one_line_error(second) == BUSY.format(shown="l03/outputs", pid=pid)
    assert (project / "outputs" / LOCK_NAME).read_text().strip() == str(pid)
    first.resume()
    assert first.outcome().code == 0
    assert _tree(project / "outputs") == l03_reference
    assert not (project / "outputs" / LOCK_NAME).exists()


def test_two_builds_started_together_leave_one_complete_set(tmp_path, l03_reference):
    project = _l03(tmp_path / "l03", stale=True)
    outcomes = [child.outcome() for child in [Child(tmp_path, ["build", project]) for _ in range(2)]]
    assert sorted(outcome.code for outcome in outcomes) in ([0, 0], [0, 2])
    for outcome in outcomes:
        if outcome.code == 2:
            assert "is being written by another readout process (pid " in one_line_error(outcome)
    assert _tree(project / "outputs") == l03_reference
    assert sorted(path.name for path in project.rglob("*.tmp")) == []


# --- a held lock: who stops, who does not -------------------------------------------------------------


def _beir_project(root: Path, make_project, data: Path) -> Path:
    project = make_project(root)
    config = yaml.safe_load((project / "readout.yaml").read_text(encoding="utf-8"))
    config["data"] = str(data)
    (project / "readout.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return project


@pytest.mark.parametrize("command", ["evaluate", "build", "render", "sandbox"])
def test_every_writing_command_stops_at_once_while_another_process_holds_the_outputs(
        command, tmp_path, make_project, small_dataset, monkeypatch, capsys):
    project = _l03(tmp_path / "l03") if command == "sandbox" else _beir_project(tmp_path / "p", make_project,
                                                                               small_dataset)
    before = _tree(project)
    holder = Child(tmp_path, hold=str(project / "outputs"))
    pid = holder.paused_pid()
    monkeypatch.chdir(project)
    capsys.readouterr()
    code = main([command, str(project)])
    out, err = capsys.readouterr()
    # One line and nothing else: no evaluation, sandbox run or check was even started.
    assert (code, out) == (2, "")
    assert one_line_error(Outcome(code, out, err)) == BUSY.format(shown="outputs", pid=pid)
    holder.resume()
    assert holder.outcome().code == 0
    assert _tree(project) == before   # nothing written, and the holder's lock file gone with it


def test_check_and_render_check_neither_take_the_lock_nor_load_filelock(tmp_path, make_project):
    project = make_project(tmp_path / "p")
    holder = Child(tmp_path, hold=str(project / "outputs"))
    holder.paused_pid()
    code = ("import json, sys; from generator.commands.cli import main; rc = main(sys.argv[1:]); "
            "print(json.dumps(sorted(m for m in sys.modules if m.partition('.')[0] == 'filelock'))); sys.exit(rc)")
    try:
        for argv in (["check", "--no-record", str(project)], ["render", "--check", str(project)]):
            completed = run_python("-c", code, *argv, cwd=tmp_path,
                                   env={**os.environ, "READOUT_CACHE": str(tmp_path / "cache")})
            assert completed.returncode in (0, 1), completed.stderr
            assert "being written" not in completed.stderr
            assert json.loads(completed.stdout.strip().splitlines()[-1]) == []
    finally:
        holder.resume()
    assert holder.outcome().code == 0


def test_a_lock_left_by_a_killed_holder_blocks_nobody(tmp_path, make_project, monkeypatch, capsys):
    project = make_project(tmp_path / "p")
    holder = Child(tmp_path, hold=str(project / "outputs"))
    os.kill(holder.paused_pid(), signal.SIGKILL)
    holder.thread.join(60)
    assert holder.completed.returncode == -signal.SIGKILL
    assert (project / "outputs" / LOCK_NAME).exists()   # kill -9 runs no cleanup, but the kernel dropped the lock
    monkeypatch.chdir(project)
    assert main(["render", str(project)]) == 0, capsys.readouterr().err
    assert not (project / "outputs" / LOCK_NAME).exists()


# --- one cache shared by several processes -----------------------------------------------------------

# Writers store their own version of one entry over and over while a reader loads it, all for the
# same stretch of time; the reader reports every load.
CACHE_CHILD = r'''
import json, sys, time
from pathlib import Path

import numpy as np

from generator.evaluate.cache import EmbeddingCache, RerankCache

kind, role, root, start, seconds = sys.argv[1], sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]), float(sys.argv[5])
CANDIDATES = [f"d{number}" for number in range(40)]


def matrix(variant):
    rows = np.random.default_rng(variant).normal(size=(300, 16)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


cache = EmbeddingCache(root) if kind == "embeddings" else RerankCache(root, "model")
start.with_name(f"{start.name}-{role}").touch()
while not start.exists():
    time.sleep(0.005)
stop, loads, warnings = time.monotonic() + seconds, [], []
while time.monotonic() < stop:
    if role == "reader":
        if kind == "embeddings":
            found = cache.load("k", 300, normalized=True, warn=warnings.append)
            loads.append(None if found is None else int(round(float(found[0, 0] * 1e6))))
        else:
            found = cache.load("k", query_id="q1", candidates=CANDIDATES, warn=warnings.append)
            loads.append(None if found is None else found["milliseconds"])
    elif kind == "embeddings":
        cache.store("k", matrix(int(role)), {"normalized": True})
    else:
        cache.store("k", {"query_id": "q1", "candidates": CANDIDATES, "milliseconds": float(role) + 1,
                          "scores": [float(role) + number for number in range(40)]})
print(json.dumps({"loads": loads, "warnings": warnings}))
'''


@pytest.mark.parametrize("kind", ["rerank", "embeddings"])
def test_processes_sharing_a_cache_never_read_a_mixed_or_partial_entry(tmp_path, kind):
    import numpy as np

    start = tmp_path / "start"
    results: dict[str, object] = {}

    def run(role: str) -> None:
        results[role] = run_python("-c", CACHE_CHILD, kind, role, str(tmp_path / "cache"), str(start), "2.5",
                                   cwd=tmp_path)

    threads = [threading.Thread(target=run, args=(role,), daemon=True) for role in ("0", "1", "reader")]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 120
    while not all(start.with_name(f"start-{role}").exists() for role in ("0", "1", "reader")):
        assert time.monotonic() < deadline, "the processes never got ready"
        time.sleep(0.02)
    start.touch()
    for thread in threads:
        thread.join(120)
    for role in ("0", "1"):
        assert results[role].returncode == 0, results[role].stderr
    reader = json.loads(results["reader"].stdout)
    assert reader["warnings"] == [], reader["warnings"][:3]
    first = next(index for index, value in enumerate(reader["loads"]) if value is not None)
    assert None not in reader["loads"][first:], "an entry, once there, is always there whole"
    if kind == "embeddings":
        expected = {int(round(float(row[0, 0] * 1e6))) for row in (
            (lambda rows: rows / np.linalg.norm(rows, axis=1, keepdims=True))(
                np.random.default_rng(variant).normal(size=(300, 16)).astype(np.float32)) for variant in (0, 1))}
    else:
        expected = {1.0, 2.0}
    assert set(reader["loads"][first:]) <= expected
    assert len(reader["loads"]) > 20


@pytest.mark.model
def test_two_evaluations_of_different_projects_share_one_cache_at_once(tmp_path, small_dataset):
    from generator.evaluate.cache import EmbeddingCache

    cache = tmp_path / "shared-cache"
    projects = []
    for name in ("a", "b"):
        root = tmp_path / name
        root.mkdir()
        (root / "readout.yaml").write_text(yaml.safe_dump({
            "title": name, "kind": "beir", "data": str(small_dataset),
            "evaluate": {"progress": False, "dense_model": "minilm-offline", "skip_rerank": True,
                         "bootstrap_resamples": 200}}), encoding="utf-8")
        projects.append(root)
    outcomes = [child.outcome() for child in [Child(tmp_path, ["evaluate", root, "--cache-dir", cache], cache=cache)
                                              for root in projects]]
    for outcome in outcomes:
        assert outcome.code == 0, outcome.err[-3000:]
        assert "cache: ignoring corrupt" not in outcome.err
    tables = [json.loads((root / "outputs" / "results.json").read_text())["table"] for root in projects]
    assert tables[0] == tables[1]
    [meta] = (cache / "embeddings").glob("*.json")
    key = json.loads(meta.read_text())["key"]
    warnings: list[str] = []
    assert EmbeddingCache(cache).load(key, 80, normalized=True, warn=warnings.append) is not None
    assert warnings == []
    assert sorted(path.name for path in cache.rglob("*.tmp")) == []


# An `irds:` dataset exported into the shared cache by a stand-in ir_datasets (the network is not
# needed to race two exports), through the pipeline's own `prepare_data`.
EXPORT = r'''
import json, sys, types
from collections import namedtuple
from pathlib import Path

from generator.core.options import build_options
from generator.evaluate.pipeline import prepare_data

beir = Path(spec["beir"])
Doc = namedtuple("Doc", "doc_id title text")
Query = namedtuple("Query", "query_id text")
Qrel = namedtuple("Qrel", "query_id doc_id relevance iteration")


class Small:
    def has_docs(self):
        return True

    has_queries = has_qrels = has_docs

    def docs_iter(self):
        return (Doc(r["_id"], r["title"], r["text"]) for r in map(json.loads, (beir / "corpus.jsonl").open()))

    def queries_iter(self):
        return (Query(r["_id"], r["text"]) for r in map(json.loads, (beir / "queries.jsonl").open()))

    def qrels_iter(self):
        lines = (beir / "qrels" / "test.tsv").read_text().splitlines()[1:]
        return (Qrel(*line.split("\t")[:2], int(line.split("\t")[2]), "0") for line in lines)


sys.modules["ir_datasets"] = types.SimpleNamespace(load=lambda identifier: Small(), __version__="0.0-fake")
options = build_options(Path("irds:fake/small"), Path(spec["outputs"]), {"cache_dir": spec["cache_dir"]})
Path(spec["started"]).write_text("started")
prepare_data(options, log=print)
'''


def test_two_processes_exporting_one_dataset_into_a_shared_cache_export_it_once(tmp_path, small_dataset):
    from generator.core.data_source import export_dir
    from generator.evaluate.irds import is_exported

    spec = {"exec": EXPORT, "beir": str(small_dataset), "outputs": str(tmp_path / "outputs"),
            "cache_dir": str(tmp_path / "cache")}
    # The first export is paused with its files staged in the cache, before any rename.
    first = Child(tmp_path, at=r"/irds/", nth=1, started=str(tmp_path / "first"), **spec)
    first.paused_pid()
    second = Child(tmp_path, started=str(tmp_path / "second"), **spec)
    deadline = time.monotonic() + 120
    while not (tmp_path / "second").exists():
        assert time.monotonic() < deadline and second.thread.is_alive(), second.outcome().err
        time.sleep(0.02)
    time.sleep(1.0)   # the second is now at the export: waiting for the first, or (unlocked) done with it
    first.resume()
    outcomes = [first.outcome(), second.outcome()]
    assert [outcome.code for outcome in outcomes] == [0, 0], outcomes[0].err[-2000:] + outcomes[1].err[-2000:]
    assert "exporting irds:fake/small" in outcomes[0].out
    assert "exporting" not in outcomes[1].out, "the second re-uses the first's export"
    assert is_exported(export_dir("fake/small", tmp_path / "cache"), "fake/small")
    assert sorted(path.name for path in (tmp_path / "cache").rglob("*.tmp")) == []
