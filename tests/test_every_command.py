"""Every command once, in process, on the small committed inputs: the smoke that `make test-pythons`
runs on the other interpreters (.ci/other-pythons) beside the modules whose code paths depend on
the interpreter, and that the main suite runs too.

A command that needs the evaluation stack (evaluate, cost, train-reranker: not installed for the
other Pythons) runs as far as its first input check, which every interpreter reaches the same way;
the others do their whole job on a copy of examples/l03 or a project of their own.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from generator.commands.cli import COMMANDS, main
from tests.conftest import REPOSITORY_ROOT

L03 = REPOSITORY_ROOT / "examples" / "l03"
TINY_BEIR = REPOSITORY_ROOT / "examples" / "tiny-beir"


class Places:
    """The inputs a smoke names, each made on first use in the test's own directory."""

    def __init__(self, root: Path):
        self.root = root

    @property
    def l03(self) -> Path:
        copy = self.root / "l03"
        if not copy.exists():
            shutil.copytree(L03, copy)
        return copy

    @property
    def beir(self) -> Path:
        """A BEIR project over examples/tiny-beir that has not been evaluated."""
        project = self.root / "beir"
        if not project.exists():
            project.mkdir()
            (project / "readout.yaml").write_text(yaml.safe_dump({"title": "Smoke", "kind": "beir",
                                                                   "data": str(TINY_BEIR)}), encoding="utf-8")
        return project

    @property
    def draft(self) -> Path:
        path = self.root / "draft.md"
        path.write_text("# Draft\n\nHybrid beats dense on nDCG@5.\n", encoding="utf-8")
        return path

    @property
    def nowhere(self) -> Path:
        return self.root / "nowhere"


# command: (its argv from the places, exit code, a line it prints (stdout, then stderr)).
SMOKES = {
    "init": (lambda at: ["init", str(at.root / "new"), "--data", str(TINY_BEIR)], 0,
             f"Created a readout project in {{root}}/new."),
    "selftest": (lambda at: ["selftest"], 0, "ALL CHECKS PASS"),
    "evaluate": (lambda at: ["evaluate", "--data", str(at.nowhere), str(at.beir)], 2,
                 "Error: {root}/nowhere: dataset directory not found; "),
    "freeze": (lambda at: ["freeze", str(at.l03)], 0,
               "Design freeze unchanged: 5 documents match {root}/l03/claims/design-freeze.json."),
    "check": (lambda at: ["check", "--no-record", str(at.l03)], 0, "All 100 claims trace."),
    "import-draft": (lambda at: ["import-draft", str(at.draft), "--output", "readout", "--ledger",
                                 str(at.root / "ledger.yaml")], 0, "Imported 1 claims into {root}/ledger.yaml. "),
    "render": (lambda at: ["render", str(at.l03)], 0, "wrote {root}/l03/outputs/readout.html ("),
    "build": (lambda at: ["build", str(at.l03)], 0, "wrote {root}/l03/outputs/AAR.md ("),
    "gate": (lambda at: ["gate", "--no-fetch", str(at.l03)], 0, "3 outputs up to date."),
    "regress": (lambda at: ["regress", str(at.l03)], 2, "Error: "),
    "sandbox": (lambda at: ["sandbox", str(at.l03)], 0, "wrote {root}/l03/outputs"),
    "ceiling": (lambda at: ["ceiling"], 0, "Upper bound, not a model: "),
    "cost": (lambda at: ["cost", "cross-encoder/ms-marco-MiniLM-L-6-v2", str(at.beir)], 2,
             "Error: {root}/beir/outputs/results.json: missing: run `readout evaluate` to write it"),
    "train-reranker": (lambda at: ["train-reranker", "--data", str(at.nowhere), str(at.beir)], 2,
                       "Error: {root}/nowhere: dataset directory not found; "),
    "upgrade-ledger": (lambda at: ["upgrade-ledger", str(at.l03)], 0,
                       "Converted 0 claims to frames in {root}/l03/claims/ledger.yaml; 0 still need a frame"),
    "export": (lambda at: ["export", str(at.l03)], 0, "reranked,transparent fixed-set reranker,1.000000,0.888438"),
}


def test_every_command_has_a_smoke():
    assert sorted(SMOKES) == sorted(name for name, *_ in COMMANDS)


@pytest.mark.parametrize("name", sorted(SMOKES))
def test_each_command_runs_in_process(name, tmp_path, monkeypatch, capsys):
    argv, expected_code, expected_line = SMOKES[name]
    monkeypatch.setenv("READOUT_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(REPOSITORY_ROOT)
    code = main(argv(Places(tmp_path)))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err, err
    assert code == expected_code, out + err
    assert any(line.startswith(expected_line.format(root=tmp_path)) for line in (out + err).splitlines()), out + err
    if expected_code == 2:
        assert len(err.splitlines()) == 1, err
