"""`readout build`: evaluate only when inputs or parameters changed, then check, then render; the
sandbox project is run, checked and rendered with the same templates."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from generator.commands.cli import main
from generator.evaluate import pipeline

REPOSITORY = Path(__file__).resolve().parents[1]
L03 = REPOSITORY / "examples" / "l03"


@pytest.fixture
def beir_project(tmp_path, monkeypatch, make_project):
    root = make_project(tmp_path / "p")
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def fake_evaluation(monkeypatch, write_fixture_results):
    """Replace the evaluation stage: `fake_evaluation(current, why)` returns the list of calls."""

    def install(current: bool, why: str) -> list:
        calls = []

        def results_are_current(options):
            calls.append(("current?", options.outputs_dir.parent.name))
            return current, why

        def run_and_write(options, log=print):
            calls.append(("evaluate", options.outputs_dir.parent.name))
            write_fixture_results(options.outputs_dir, hybrid_variant=1)  # a fresh run with other numbers
            log("evaluated (fake)")
            return options.outputs_dir / "results.json"

        monkeypatch.setattr(pipeline, "results_are_current", results_are_current)
        monkeypatch.setattr(pipeline, "run_and_write", run_and_write)
        return calls

    return install


def test_build_skips_evaluation_when_inputs_and_parameters_are_unchanged(beir_project, fake_evaluation, capsys):
    calls = fake_evaluation(True, "inputs and parameters unchanged")
    assert main(["build"]) == 0
    out = capsys.readouterr().out
    assert calls == [("current?", "p")]
    assert out.splitlines()[0] == "results: up to date (inputs and parameters unchanged); evaluation skipped"
    assert "wrote outputs/readout.html" in out
    hybrid, dense = _ndcg(beir_project, "hybrid"), _ndcg(beir_project, "dense")
    assert f"{hybrid:.3f} and dense's is {dense:.3f}" in (beir_project / "outputs" / "readout.html").read_text()


def test_build_evaluates_when_inputs_changed_then_renders_the_new_numbers(beir_project, fake_evaluation, capsys):
    calls = fake_evaluation(False, "input files changed")
    before = _ndcg(beir_project, "hybrid")
    assert main(["build"]) == 0
    out = capsys.readouterr().out
    assert calls == [("current?", "p"), ("evaluate", "p")]
    assert out.splitlines()[:2] == ["results: evaluating (input files changed)", "evaluated (fake)"]
    html = (beir_project / "outputs" / "readout.html").read_text()
    hybrid, dense = _ndcg(beir_project, "hybrid"), _ndcg(beir_project, "dense")
    assert f"{hybrid:.3f}" != f"{before:.3f}"  # the fake run changed the figure the verdict shows
    assert f"Hybrid's nDCG@5 is {hybrid:.3f} and dense's is {dense:.3f}." in html
    assert main(["render", "--check"]) == 0


def test_build_stops_when_the_check_fails(beir_project, fake_evaluation, capsys):
    fake_evaluation(True, "inputs and parameters unchanged")
    ledger = beir_project / "claims" / "ledger.yaml"
    ledger.write_text(ledger.read_text() + "  - id: bare\n    output: aar\n    section: why\n    kind: factual\n"
                      "    text: \"Nothing supports this.\"\n")
    assert main(["build"]) == 1
    assert "Render refused" in capsys.readouterr().err
    assert not (beir_project / "outputs" / "readout.html").exists()


def _ndcg(root, row: str) -> float:
    table = json.loads((root / "outputs" / "results.json").read_text())["table"]
    return next(entry["nDCG@5"] for entry in table if entry["search"] == row)


def test_results_are_current_compares_the_manifest_with_todays_inputs(tmp_path, small_dataset, make_project):
    """The real comparison the build relies on (the lead's evaluation module): a changed input
    file or parameter makes the results out of date."""
    from generator.evaluate.data import hash_inputs
    from generator.project import load_project

    root = make_project(tmp_path / "p")
    config = yaml.safe_load((root / "readout.yaml").read_text())
    config["data"] = str(small_dataset)
    (root / "readout.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    project = load_project(root)
    options = project.evaluation_options()
    results = json.loads((root / "outputs" / "results.json").read_text())
    results["manifest"].update(inputs=hash_inputs(small_dataset), parameters=options.parameters())
    (root / "outputs" / "results.json").write_text(json.dumps(results))
    assert pipeline.results_are_current(options) == (True, "inputs and parameters unchanged")
    with open(small_dataset / "queries.jsonl", "a", encoding="utf-8") as handle:
        handle.write('{"_id": "extra", "text": "one more query"}\n')
    assert pipeline.results_are_current(options) == (False, "input files changed")


# --- the sandbox project ------------------------------------------------------------------------

SANDBOX_OUTPUTS = {
    "readout": {
        "file": "readout.html",
        "template": "readout.html.j2",
        "sections": [{"id": "verdict", "title": "Verdict"},
                     {"id": "results", "title": "The rows on the documents", "show": ["table"]},
                     {"id": "provenance", "title": "Provenance", "show": ["provenance"]}],
        "table": {"rows": "table", "name": "search", "columns": [
            {"key": "label", "label": "What"},
            {"key": "recall@3", "label": "Recall@3", "format": ".6f"},
            {"key": "nDCG@3", "label": "nDCG@3", "format": ".6f"}]},
        "provenance": ["documents", "topics", "parameters.alpha", "parameters.cutoff"],
    },
    "aar": {"file": "AAR.md", "template": "report.md.j2",
            "sections": [{"id": "happened", "title": "What happened", "show": ["table"]}],
            "table": {"columns": [{"key": "nDCG@3", "label": "nDCG@3", "format": ".6f"}]}},
}

SANDBOX_LEDGER = """\
version: 1
claims:
  - id: hybrid-ndcg
    output: readout
    section: verdict
    kind: evaluative
    text: "Hybrid reaches NDCG@3 {hybrid:.6f} and BM25 {bm25:.6f}."
    sources:
      - measured:
          values: {hybrid: "table[search=hybrid].nDCG@3", bm25: "table[search=bm25].nDCG@3"}
          predicate: "hybrid > bm25"
  - id: happened
    output: aar
    section: happened
    kind: performance
    text: "The reranker reaches NDCG@3 {reranked:.6f}."
    sources:
      - measured:
          values: {reranked: "table[search=reranked].nDCG@3"}
"""


@pytest.fixture
def sandbox_project(tmp_path, monkeypatch):
    from generator.claims.record.freeze import freeze_project
    from generator.project import load_project

    root = tmp_path / "l03"
    root.mkdir()
    for name in ("data", "design"):
        shutil.copytree(L03 / name, root / name)
    config = yaml.safe_load((L03 / "readout.yaml").read_text())
    config["outputs"] = SANDBOX_OUTPUTS
    (root / "readout.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    (root / "claims").mkdir()
    (root / "claims" / "ledger.yaml").write_text(SANDBOX_LEDGER)
    freeze_project(load_project(root))
    monkeypatch.chdir(root)
    return root


def test_build_runs_the_sandbox_then_checks_and_renders_with_the_same_templates(sandbox_project, capsys):
    assert main(["build", "."]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "results: running the sandbox"
    html = (sandbox_project / "outputs" / "readout.html").read_text()
    # spec section 5's published macro figures, as the claim and the table show them
    assert "Hybrid reaches NDCG@3 0.888438 and BM25 0.855971." in html
    assert "<td class=\"text\">min-max hybrid, alpha on BM25</td><td>1.000000</td><td>0.888438</td>" in html
    assert "<svg" not in html  # no charts configured for this project
    aar = (sandbox_project / "outputs" / "AAR.md").read_text()
    assert "| reranked | 0.888438 |" in aar
    assert "The reranker reaches NDCG@3 0.888438.[^1]" in aar
    assert main(["render", "--check", "."]) == 0


def test_build_stops_when_the_sandbox_run_is_invalid(sandbox_project, capsys):
    assert main(["build", "."]) == 0
    config = yaml.safe_load((sandbox_project / "readout.yaml").read_text())
    config["sandbox"]["parameters"]["alpha"] = 0.6  # changed without a documented branch
    (sandbox_project / "readout.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    before = (sandbox_project / "outputs" / "readout.html").read_bytes()
    assert main(["build", "."]) == 1
    assert "run invalid" in capsys.readouterr().err
    assert (sandbox_project / "outputs" / "readout.html").read_bytes() == before
