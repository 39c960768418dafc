"""The fixture project of conftest.py is itself sound: it checks clean with the real checker and
uses the repository's own `outputs:` block."""

from __future__ import annotations

from generator.claims.tracing.checker import check_project
from generator.project import load_project


def test_fixture_project_checks_clean(tmp_path, make_project):
    report = check_project(load_project(make_project(tmp_path / "p")))
    assert [(r.claim.id, r.traceable) for r in report.results if not r.traceable] == [("struck-speed", False),
                                                                                      ("omitted-guess", False)]
    assert report.ok
    assert (report.untraceable, report.total, report.first_draft) == (0, 7, (4, 7))


def test_fixture_uses_the_repository_outputs_block(tmp_path, make_project, repository):
    project = load_project(make_project(tmp_path / "p"))
    assert project.outputs == load_project(repository).outputs
    assert list(project.outputs["readout"].section_ids) == [
        "verdict", "results", "cost", "uncertainty", "context", "checked", "provenance", "limits"]
