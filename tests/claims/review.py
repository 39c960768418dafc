"""Shared by the claim tests: a copy of the committed SciFact review, whose ledger each test
replaces, and the few lines that write a claim of either form (a frame, or the author's text)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from generator.claims.tracing.checker import check_project
from generator.project import load_project
from tests.conftest import REPOSITORY_ROOT

SCIFACT_DATA = (REPOSITORY_ROOT.parent / "shared" / "data" / "scifact").resolve()


@pytest.fixture(scope="module")
def review(tmp_path_factory) -> Path:
    """A copy of the committed SciFact review (design, freeze, results, run files), its ledger
    replaced by each test."""
    root = tmp_path_factory.mktemp("review")
    for name in ("design", "outputs", "claims"):
        shutil.copytree(REPOSITORY_ROOT / name, root / name)
    config = (REPOSITORY_ROOT / "readout.yaml").read_text(encoding="utf-8")
    (root / "readout.yaml").write_text(config.replace("data: ../shared/data/scifact", f"data: {SCIFACT_DATA}"),
                                       encoding="utf-8")
    return root


def framed(claim_id: str, frame: str, *, section: str = "verdict", output: str = "readout",
           kind: str = "evaluative", extra: str = "") -> str:
    return (f"  - {{id: {claim_id}, output: {output}, section: {section}, kind: {kind}, frame: {frame}"
            f"{', ' + extra if extra else ''}}}\n")


def texted(claim_id: str, text: str, sources: str = "", *, section: str = "verdict", output: str = "readout",
           extra: str = "") -> str:
    lines = [f"  - id: {claim_id}", f"    output: {output}", f"    section: {section}", "    kind: factual",
             f"    text: {json.dumps(text, ensure_ascii=False)}"]
    lines += [f"    {line}" for line in extra.splitlines() if line.strip()]
    if sources:
        lines.append("    sources:")
        lines += [f"      {line}" for line in sources.splitlines() if line.strip()]
    return "\n".join(lines) + "\n"


def quote(document: str, text: str) -> str:
    return "- design: " + json.dumps({"document": document, "quote": text}, ensure_ascii=False)


def measured(values: dict, file: str | None = None) -> str:
    return "- measured: " + json.dumps({**({"file": file} if file else {}), "values": values})


def check(root: Path, *claims: str, languages: str = ""):
    ledger = "version: 1\n" + (f"languages: [{languages}]\n" if languages else "") + "claims:\n" + "".join(claims)
    (root / "claims" / "ledger.yaml").write_text(ledger, encoding="utf-8")
    return check_project(load_project(root), record_history=False)


def one(root: Path, claim: str, **options):
    report = check(root, claim, **options)
    assert len(report.results) == 1
    return report.results[0]


def codes(result) -> set[str]:
    return {finding.code for finding in result.findings}


