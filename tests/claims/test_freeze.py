"""`readout freeze`: record the design documents' hashes; a later change fails the check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.commands.cli import main

REPOSITORY = Path(__file__).resolve().parents[2]


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "p"
    (root / "design").mkdir(parents=True)
    (root / "claims").mkdir()
    (root / "outputs").mkdir()
    (root / "readout.yaml").write_text("title: T\nkind: beir\n")
    (root / "design" / "brief.md").write_text("# Brief\n\nRetrieval on public scientific claims.\n")
    (root / "design" / "plan.md").write_text("# Plan\n\nSetup 5 minutes.\n")
    (root / "claims" / "ledger.yaml").write_text(
        "version: 1\nclaims:\n  - id: a\n    output: readout\n    section: limits\n    kind: factual\n"
        "    text: Retrieval on public scientific claims.\n    sources:\n"
        "      - design: {document: brief.md, quote: Retrieval on public scientific claims.}\n")
    monkeypatch.chdir(root)
    return root


def test_freeze_records_every_design_document(project, capsys):
    assert main(["freeze"]) == 0
    out = capsys.readouterr().out
    record = json.loads((project / "claims" / "design-freeze.json").read_text())
    assert sorted(record["documents"]) == ["brief.md", "plan.md"]
    assert record["version"] == 2
    (entry,) = record["freezes"]
    assert (entry["results"], entry["previous_sha256"], entry["reason"]) == ("none yet", "genesis", None)
    assert record["texts"]["plan.md"] == "# Plan\n\nSetup 5 minutes.\n"
    assert out.splitlines()[-1] == "Froze 2 design documents in claims/design-freeze.json (freeze 1, before any results)."


def test_freeze_again_without_change_writes_nothing(project, capsys):
    main(["freeze"])
    freeze = project / "claims" / "design-freeze.json"
    before = (freeze.read_bytes(), freeze.stat().st_mtime_ns)
    capsys.readouterr()
    assert main(["freeze"]) == 0
    assert capsys.readouterr().out == "Design freeze unchanged: 2 documents match claims/design-freeze.json.\n"
    assert (freeze.read_bytes(), freeze.stat().st_mtime_ns) == before


def test_check_without_freeze_exits_1(project, capsys):
    assert main(["check"]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0] == ("design/: design documents are not frozen (claims/design-freeze.json is missing); "
                                   "run `readout freeze` once the design is committed")


def test_edit_after_freeze_fails_until_renewed(project, capsys):
    main(["freeze"])
    assert main(["check"]) == 0
    (project / "design" / "plan.md").write_text("# Plan\n\nSetup 6 minutes.\n")
    capsys.readouterr()
    assert main(["check"]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("design/plan.md: changed since the freeze (sha256 ")
    assert main(["freeze"]) == 0
    assert "design/plan.md: re-frozen at sha256 " in capsys.readouterr().out
    assert main(["check"]) == 0


def test_freeze_refuses_link_out_of_design(project, capsys, tmp_path):
    (tmp_path / "elsewhere.md").write_text("x\n")
    (project / "design" / "link.md").symlink_to(tmp_path / "elsewhere.md")
    assert main(["freeze"]) == 2
    assert "design/link.md: resolves outside design/" in capsys.readouterr().err


def test_invalid_freeze_record_exits_2(project, capsys):
    (project / "claims" / "design-freeze.json").write_text("{not json")
    assert main(["check"]) == 2
    assert capsys.readouterr().err.startswith("Error: claims/design-freeze.json:1: not valid JSON")


def test_repository_design_is_frozen_and_intact():
    record = json.loads((REPOSITORY / "claims" / "design-freeze.json").read_text())
    from generator.storage.fileio import sha256_file

    design = REPOSITORY / "design"
    assert sorted(record["documents"]) == sorted(p.name for p in design.iterdir() if not p.name.startswith("."))
    for name, digest in record["documents"].items():
        assert sha256_file(design / name) == digest, name
