"""Nothing outside the project is written, and a file is read for what it is (issue 24, items 3 to 5).

- A writer refuses a symbolic link among the directories between a readout project and the file
  (outputs/, outputs/runs/, claims/): a cloned project whose outputs/ points elsewhere must not
  have evaluate, render or freeze write there. A link above every project stays the user's own.
- A run row's file stays inside the project unless the row says `outside_project: true`: an
  absolute path or `..` is refused where it is configured, a link that leads out when it is read;
  a directory, a FIFO or a device is refused by what it is, before anything opens it.
- A full disk names the file it stopped; a control character in a report's file name and a
  label longer than a heading are refused where they are configured.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from generator.storage import fileio
from generator.core.options import build_options, validate_evaluate_block
from generator.storage.errors import InputError
from generator.storage.bounded_reads import regular_file_problem
from generator.storage.fileio import LINK_IN_PROJECT, atomic_write_text, link_inside_project
from tests.conftest import make_small_dataset, run_cli

SPARSE = {"name": "bm25", "kind": "sparse"}


def _project(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "readout.yaml").write_text("title: t\n", encoding="utf-8")
    return root


# --- links between the project and the file ----------------------------------------------------


@pytest.mark.parametrize("linked", ["outputs", "outputs/runs", "claims"])
def test_a_write_through_a_linked_directory_of_the_project_is_refused_and_writes_nothing(tmp_path, linked):
    project = _project(tmp_path / "project")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = project / linked
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(InputError) as raised:
        atomic_write_text(link / "results.json", "{}")
    assert raised.value.path == str(link) or raised.value.path.endswith(linked)
    assert LINK_IN_PROJECT in str(raised.value)
    assert list(elsewhere.iterdir()) == []


def test_a_link_deeper_than_the_file_or_above_the_project_is_not_in_the_way(tmp_path):
    real = _project(tmp_path / "real" / "project")
    (tmp_path / "via").symlink_to(tmp_path / "real", target_is_directory=True)
    # The project reached through a link of the user's own: allowed.
    assert link_inside_project(tmp_path / "via" / "project" / "outputs" / "results.json") is None
    atomic_write_text(tmp_path / "via" / "project" / "outputs" / "results.json", "{}")
    assert (real / "outputs" / "results.json").read_text(encoding="utf-8") == "{}"
    # Outside every project nothing is a project's link (a cache under a linked home).
    (tmp_path / "cache-link").symlink_to(tmp_path / "real", target_is_directory=True)
    assert link_inside_project(tmp_path / "cache-link" / "entry.json") is None


def test_a_link_pointing_at_another_project_is_still_a_link_inside_this_one(tmp_path):
    project = _project(tmp_path / "project")
    victim = _project(tmp_path / "victim")
    (project / "outputs").symlink_to(victim, target_is_directory=True)
    assert link_inside_project(project / "outputs" / "readout.html") == project / "outputs"
    with pytest.raises(InputError):
        atomic_write_text(project / "outputs" / "readout.html", "x")
    assert sorted(path.name for path in victim.iterdir()) == ["readout.yaml"]


def test_evaluate_writes_nothing_through_a_linked_outputs_directory(tmp_path, write_fixture_results):
    project = _project(tmp_path / "project")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / "outputs").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(InputError, match="symbolic link inside a readout project"):
        write_fixture_results(project / "outputs")
    assert list(elsewhere.rglob("*")) == []


def test_render_through_a_linked_outputs_directory_is_one_line_and_exit_2(tmp_path, make_project, monkeypatch,
                                                                             capsys):
    root = make_project(tmp_path / "review")
    elsewhere = tmp_path / "elsewhere"
    (root / "outputs").rename(elsewhere)
    (root / "outputs").symlink_to(elsewhere, target_is_directory=True)
    before = sorted(path.name for path in elsewhere.iterdir())
    outcome = run_cli(root, monkeypatch, capsys, "render")
    assert outcome.code == 2
    assert outcome.err.strip().count("\n") == 0 and "symbolic link inside a readout project" in outcome.err
    assert "outputs" in outcome.err and "Traceback" not in outcome.err
    assert sorted(path.name for path in elsewhere.iterdir()) == before


# --- a run row's file -------------------------------------------------------------------------


@pytest.mark.parametrize("file", ["/etc/passwd", "../../elsewhere/team.trec", "runs/../../team.trec",
                                  "~/team.trec"])
def test_a_run_file_outside_the_project_is_refused_where_it_is_configured(file):
    with pytest.raises(InputError) as raised:
        validate_evaluate_block({"rows": [SPARSE, {"name": "team", "kind": "run", "file": file}]}, "readout.yaml")
    assert raised.value.field == "evaluate.rows[1].file"
    assert "outside the project" in str(raised.value) and "outside_project: true" in str(raised.value)


def test_outside_project_must_be_said_as_a_boolean_and_then_allows_it():
    rows = validate_evaluate_block({"rows": [SPARSE, {"name": "team", "kind": "run", "file": "/data/team.trec",
                                                      "outside_project": True}]}, "readout.yaml")["rows"]
    assert rows[1].outside_project and rows[1].file == Path("/data/team.trec")
    with pytest.raises(InputError) as raised:
        validate_evaluate_block({"rows": [SPARSE, {"name": "team", "kind": "run", "file": "/data/team.trec",
                                                   "outside_project": "yes"}]}, "readout.yaml")
    assert raised.value.field == "evaluate.rows[1].outside_project"
    with pytest.raises(InputError, match="a sparse row takes"):
        validate_evaluate_block({"rows": [{**SPARSE, "outside_project": True}]}, "readout.yaml")


def _evaluate_with_run(tmp_path: Path, file: str, **row) -> None:
    from generator.evaluate.pipeline import evaluate

    data = make_small_dataset(tmp_path / "data")
    rows = validate_evaluate_block({"rows": [SPARSE, {"name": "team", "kind": "run", "file": file, **row}]},
                                   "readout.yaml")["rows"]
    options = build_options(data, tmp_path / "project" / "outputs", {"rows": rows}, cache_dir=tmp_path / "cache",
                            progress=False, bootstrap_resamples=200)
    evaluate(options, log=lambda _: None)


@pytest.mark.model   # evaluate() resolves its device with torch, even for these rows
@pytest.mark.parametrize("make, what", [
    (lambda path: path.mkdir(), "is a directory"),
    (os.mkfifo, "is a FIFO"),
])
def test_a_run_file_that_is_not_a_regular_file_is_refused_by_what_it_is(tmp_path, make, what):
    project = tmp_path / "project"
    (project / "runs").mkdir(parents=True)
    make(project / "runs" / "team.trec")
    with pytest.raises(InputError) as raised:
        _evaluate_with_run(tmp_path, "runs/team.trec")
    assert what in str(raised.value) and raised.value.field == "evaluate.rows.team.file"


@pytest.mark.model   # evaluate() resolves its device with torch, even for these rows
def test_a_device_is_refused_even_where_outside_files_are_allowed(tmp_path):
    (tmp_path / "project").mkdir()
    with pytest.raises(InputError, match="is a character device"):
        _evaluate_with_run(tmp_path, "/dev/zero", outside_project=True)


@pytest.mark.model   # evaluate() resolves its device with torch, even for these rows
def test_a_link_inside_the_project_that_leads_out_is_refused_when_read(tmp_path):
    secret = tmp_path / "secret.trec"
    secret.write_text("q0 Q0 doc000 1 1.0 x\n", encoding="utf-8")
    (tmp_path / "project" / "runs").mkdir(parents=True)
    (tmp_path / "project" / "runs" / "team.trec").symlink_to(secret)
    with pytest.raises(InputError, match="leads outside the project") as raised:
        _evaluate_with_run(tmp_path, "runs/team.trec")
    assert raised.value.field == "evaluate.rows.team.file"


def test_regular_file_problem_names_each_kind_and_passes_a_file(tmp_path):
    (tmp_path / "file").write_text("x", encoding="utf-8")
    assert regular_file_problem(tmp_path / "file") is None
    assert regular_file_problem(tmp_path / "missing") == "not found"
    assert regular_file_problem(tmp_path / "file" / "below") == "not found"
    assert regular_file_problem(tmp_path) == "is a directory, not a regular file"
    assert regular_file_problem("/dev/null") == "is a character device, not a regular file"


# --- a full disk, a control character in a file name, a title that is not a heading ---------------


def test_a_full_disk_names_the_file_it_stopped_and_leaves_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "outputs" / "readout.html"

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(fileio.os, "fsync", full)
    with pytest.raises(OSError) as raised:
        atomic_write_text(target, "x" * 100)
    assert raised.value.errno == errno.ENOSPC and raised.value.filename == str(target)
    assert list((tmp_path / "outputs").iterdir()) == []
    from generator.commands.cli import error_line

    line = error_line(raised.value)
    assert "No space left on device" in line and "readout.html" in line


@pytest.mark.parametrize("name", ["read\x00out.html", "read\u200bout.html", "a\nb.html"])
def test_a_report_file_name_with_a_control_character_is_refused_where_it_is_configured(tmp_path, make_project,
                                                                                       name):
    from generator.project import load_project
    from tests.conftest import edit_config

    root = make_project(tmp_path / "review")
    edit_config(root, lambda config: config["outputs"]["readout"].update(file=name))
    with pytest.raises(InputError) as raised:
        load_project(root)
    assert raised.value.field == "outputs.readout.file" and "character" in str(raised.value)


def test_a_title_longer_than_a_heading_is_refused_before_anything_renders(tmp_path, make_project):
    from generator.project import load_project
    from tests.conftest import edit_config

    root = make_project(tmp_path / "review")
    edit_config(root, lambda config: config.update(title="word" * 60))
    with pytest.raises(InputError, match="at most 200 characters") as raised:
        load_project(root)
    assert raised.value.field == "title"
    edit_config(root, lambda config: config.update(title=("x" * 19 + " ") * 10))
    assert load_project(root).title.startswith("xxx")


def test_the_run_rule_is_in_the_packaged_schema():
    from generator.project.reference import load_config_schema

    rows = load_config_schema()["properties"]["evaluate"]["properties"]["rows"]["items"]
    assert rows["properties"]["outside_project"]["type"] == "boolean"
    assert json.dumps(rows).count("outside_project") >= 2
