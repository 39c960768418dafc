"""What any output shows is what `check` re-derived in that run, or it is refused (issue 47, part 1;
generator.claims.tracing.shown).

The held-out round's case: with no claim citing it, a results file whose hybrid per-query nDCG@5
and table mean were raised by 0.3 and re-sealed (a seal is a sha256 anyone can recompute) passed
the gate, the release table showed the forged mean, a decision silently became "cannot be
decided", and `export` printed the table under a header naming the forged file's sha256. Now
every results file an output, a decision or export shows is re-derived from its run files and
judgements or refused; query texts are held to the dataset's queries file where it is; a JSON key
written twice is refused by the strict reader.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from generator.claims.tracing.checker import check_project
from generator.commands.cli import main
from generator.storage.errors import InputError
from generator.project import load_project
from generator.render.export import export_table
from generator.render.renderer import render_project
from generator.core.results import read_results, seal
from tests.conftest import (CLAIMS, WRITER, Outcome, add_design, edit_config, edit_results, ledger_text,
                            one_line_error, write_fixture_results)

def _uncited_project(root: Path, make_project) -> Path:
    """The fixture project whose ledger keeps only the claims without a measured source: no claim
    cites results.json."""
    make_project(root)
    claims = "".join("  - id: " + block for block in CLAIMS.split("  - id: ")[1:]
                     if block.startswith(("rrf-constant", "same-candidates", "struck-speed", "omitted-guess")))
    (root / "claims" / "ledger.yaml").write_text(ledger_text(claims=claims), encoding="utf-8")
    return root


def _raise_hybrid(data: dict, by: float = 0.3) -> None:
    """hybrid's per-query nDCG@5 and its table mean raised by `by`, as the held-out round did."""
    for values in data["per_query"]["hybrid"].values():
        values["nDCG@5"] += by
    row = next(row for row in data["table"] if row["search"] == "hybrid")
    row["nDCG@5"] += by


def _run(root: Path, monkeypatch, capsys, *argv: str) -> Outcome:
    monkeypatch.chdir(root)
    capsys.readouterr()
    code = main(list(argv))
    return Outcome(code, *capsys.readouterr())


def test_a_resealed_forgery_no_claim_cites_fails_check_render_gate_and_export(tmp_path, make_project, monkeypatch,
                                                                              capsys):
    root = _uncited_project(tmp_path / "p", make_project)
    assert _run(root, monkeypatch, capsys, "check", "--no-record", ".").code == 0
    assert _run(root, monkeypatch, capsys, "render", ".").code == 0
    true_mean = read_results(root / "outputs" / "results.json").model.row("hybrid")["nDCG@5"]
    edit_results(root, _raise_hybrid, reseal=True)
    before = {path.name: path.read_bytes() for path in (root / "outputs").iterdir() if path.is_file()}

    checked = _run(root, monkeypatch, capsys, "check", "--no-record", ".")
    assert checked.code == 1, checked.out
    problem = next(line for line in checked.out.splitlines() if line.startswith("outputs/results.json: "))
    assert problem.startswith("outputs/results.json: every report, the readout table, the aar table show it, but it "
                              "does not re-derive from its run files and judgements: "), problem
    assert "per_query.hybrid.q01.nDCG@5 is " in problem, problem
    assert "Check failed: 1 results file shown without re-deriving" in checked.out

    rendered = _run(root, monkeypatch, capsys, "render", ".")
    assert rendered.code == 1 and "results: outputs/results.json: " in rendered.err + rendered.out
    drafted = _run(root, monkeypatch, capsys, "render", "--draft", ".")
    assert drafted.code == 2
    assert one_line_error(drafted).startswith("Error: outputs/results.json: not re-derived by this render's check")
    assert {path.name: path.read_bytes() for path in (root / "outputs").iterdir() if path.is_file()} == before
    assert f"{true_mean + 0.3:.3f}" not in (root / "outputs" / "readout.html").read_text(encoding="utf-8")

    gate = _run(root, monkeypatch, capsys, "gate", "--no-fetch", ".")
    assert gate.code == 1
    exported = _run(root, monkeypatch, capsys, "export", ".")
    assert exported.code == 2 and exported.out == ""
    assert one_line_error(exported).startswith("Error: outputs/results.json: does not re-derive from its run files "
                                               "and judgements, so none of it is shown: per_query.hybrid.q01.nDCG@5")


DECISION = """
## D7. Hybrid is kept only when it is strong

```trigger
decision: D7
when: hybrid > 0.9
fires: keep hybrid alone
otherwise: look further
values:
  hybrid: table[search=hybrid].nDCG@5
```
"""


def test_a_decision_on_a_forged_file_fails_the_check_instead_of_turning_undecided(tmp_path, make_project,
                                                                                  monkeypatch):
    root = _uncited_project(tmp_path / "p", make_project)
    monkeypatch.chdir(root)
    add_design(root, DECISION)
    report = check_project(load_project(root))
    assert report.ok and report.decisions[0].state == "does not fire", report.decisions[0].reason
    edit_results(root, lambda data: _raise_hybrid(data, 0.65), reseal=True)
    report = check_project(load_project(root))
    assert not report.ok
    assert report.results_problems[0].startswith("outputs/results.json: every report, the readout table, the aar "
                                                 "table, decision D7 show it, but it does not re-derive")


def test_a_render_reads_only_the_bytes_its_check_re_derived(tmp_path, make_project, monkeypatch):
    root = make_project(tmp_path / "p")
    monkeypatch.chdir(root)
    project = load_project(root)
    report = check_project(project)
    assert report.ok
    # Another real, re-derivable results file put in place between the check and the render.
    write_fixture_results(root / "outputs", hybrid_variant=1)
    with pytest.raises(InputError) as refused:
        render_project(project, report=report)
    assert str(refused.value).startswith("outputs/results.json: not re-derived by this render's check")
    assert render_project(project).ok   # checked again, it renders


def test_export_prints_a_re_derived_table_under_its_sha256(tmp_path, make_project):
    root = make_project(tmp_path / "p")
    text = export_table(load_project(root), fmt="latex")
    digest = hashlib.sha256((root / "outputs" / "results.json").read_bytes()).hexdigest()
    assert text.startswith(f"% generated by readout export from outputs/results.json sha256 {digest} ")


# --- the since_baseline section -------------------------------------------------------------------

REGRESSION = """# Regression

```regression
rows: [hybrid]
metrics: [nDCG@5]
margin: 0.01
```
"""


def _with_baseline(root: Path, make_project) -> Path:
    make_project(root)
    add_design(root, REGRESSION, "regression.md")
    baseline = root / "baseline"
    baseline.mkdir()
    shutil.copy(root / "outputs" / "results.json", baseline / "results.json")
    shutil.copytree(root / "outputs" / "runs", baseline / "runs")

    def show(config):
        config["regression"] = {"baseline": "baseline/results.json"}
        config["outputs"]["readout"]["sections"][-1].setdefault("show", []).append("since_baseline")
    edit_config(root, show)
    return root


def test_the_baseline_a_since_baseline_section_shows_is_re_derived_from_its_own_runs(tmp_path, make_project,
                                                                                    monkeypatch):
    root = _with_baseline(tmp_path / "p", make_project)
    monkeypatch.chdir(root)
    report = check_project(load_project(root))
    assert report.results_problems == []
    assert str((root / "baseline" / "results.json").resolve()) in report.rederived
    assert render_project(load_project(root), report=report).ok
    path = root / "baseline" / "results.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    _raise_hybrid(data, -0.2)   # a worse baseline makes any change look like no regression
    path.write_text(json.dumps(seal(data, WRITER)), encoding="utf-8")
    report = check_project(load_project(root))
    assert [problem.split(": but")[0] for problem in report.results_problems] == [
        "baseline/results.json: the since_baseline section shows it, but it does not re-derive from its run "
        "files and judgements: " + report.results_problems[0].split("judgements: ", 1)[1]]
    assert "per_query.hybrid.q01.nDCG@5 is " in report.results_problems[0]


# --- query texts ------------------------------------------------------------------------------------


def _with_queries(root: Path, make_project, texts: dict[str, str]) -> Path:
    """The fixture project with a dataset folder holding its queries file, which results.json names
    with its sha256 and whose texts it records."""
    make_project(root)
    (root / "data").mkdir()
    queries = "".join(json.dumps({"_id": query, "text": text}) + "\n" for query, text in sorted(texts.items()))
    (root / "data" / "queries.jsonl").write_text(queries, encoding="utf-8")

    def point(data):
        data["manifest"]["data_directory"] = "data"
        data["manifest"]["inputs"]["queries.jsonl"] = {"sha256": hashlib.sha256(queries.encode()).hexdigest(),
                                                       "bytes": len(queries.encode())}
        data["query_texts"] = dict(texts)
    edit_results(root, point, reseal=True)
    return root


TEXTS = {f"q{number:02d}": f"what does protein {number} do" for number in range(1, 21)}


def test_query_texts_are_held_to_the_datasets_queries_file(tmp_path, make_project):
    root = _with_queries(tmp_path / "p", make_project, TEXTS)
    assert check_project(load_project(root)).ok
    # A text with a right-to-left override, as the held-out round forged it.
    edit_results(root, lambda data: data["query_texts"].update(q03="what does protein \u202e3 do"), reseal=True)
    report = check_project(load_project(root))
    assert not report.ok
    assert ("query_texts.q03 is \"what does protein \\u202e3 do\", but the dataset's queries.jsonl gives \"what does "
            "protein 3 do\"") in report.results_problems[0]


def test_query_texts_without_the_dataset_stay_as_recorded(tmp_path, make_project):
    root = _with_queries(tmp_path / "p", make_project, TEXTS)
    shutil.rmtree(root / "data")   # a CI job without the dataset: nothing to hold them to
    assert check_project(load_project(root)).ok


# --- a key written twice ------------------------------------------------------------------------------


def test_a_json_key_written_twice_is_refused_though_its_seal_holds(tmp_path, make_project, monkeypatch, capsys):
    root = make_project(tmp_path / "p")
    path = root / "outputs" / "results.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    text = json.dumps(data)
    row = next(row for row in data["table"] if row["search"] == "hybrid")
    written = json.dumps(row)
    # The first hybrid mean a first-wins reader takes; the seal covers the last, which Python keeps.
    doubled = written.replace('"nDCG@5": ', '"nDCG@5": 0.99, "nDCG@5": ', 1)
    path.write_text(text.replace(written, doubled, 1), encoding="utf-8")
    assert json.loads(path.read_text(encoding="utf-8")) == data   # Python's reader sees the sealed file
    with pytest.raises(InputError) as refused:
        read_results(path)
    assert str(refused.value) == ("outputs/results.json: not a results file: duplicate key 'nDCG@5': written twice in "
                                  "one object (readers disagree on which value it holds)").replace(
        "outputs/results.json", str(path))
    checked = _run(root, monkeypatch, capsys, "check", "--no-record", ".")
    assert checked.code == 2 and "duplicate key 'nDCG@5'" in one_line_error(checked)
