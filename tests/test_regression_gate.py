"""`readout regress` (issue 38): a regression gate against the last release that tells noise from
a loss. A baseline and a changed run with a known per-query shift: a real drop fails (exit 1), a
shift within the margin passes, an interval reaching minus the margin is inconclusive (exit 0, and
said); the baseline read from git (a ref, and the merge base with the default branch); refusals
(other queries, other judgements, no regression block, a baseline file not committed); the JSON;
the GitHub step summary; and the readout's since_baseline section rendered from a file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from generator.results import seal
from tests.conftest import (FIXTURE_QUERIES, WRITER, add_design, edit_config, git_commit, one_line_error, run_cli,
                            run_git, write_fixture_results)

BLOCK = """
## Regression gate

What the release gate compares, and the loss it must rule out.

```regression
rows: [hybrid]
metrics: [nDCG@5]
margin: 0.01
```
"""
BASELINE = Path("outputs") / "baseline" / "results.json"


def _scores(path: Path, shift) -> None:
    """hybrid's nDCG@5 per query set to 0.5 + shift(index), and the file sealed again."""
    data = json.loads(path.read_text(encoding="utf-8"))
    for index, query in enumerate(FIXTURE_QUERIES):
        data["per_query"]["hybrid"][query]["nDCG@5"] = 0.5 + shift(index)
    path.write_text(json.dumps(seal(data, WRITER)), encoding="utf-8")


def _gate_project(root: Path, make_project, shift, *, block: str = BLOCK) -> Path:
    """A project whose design holds the regression block, its committed-to-be baseline at
    outputs/baseline/results.json (hybrid nDCG@5 0.5 on every query) and results.json shifted."""
    make_project(root)
    if block:
        (root / "design" / "regression.md").write_text(block, encoding="utf-8")
    (root / BASELINE).parent.mkdir(parents=True)
    shutil.copy(root / "outputs" / "results.json", root / BASELINE)
    _scores(root / BASELINE, lambda index: 0.0)
    _scores(root / "outputs" / "results.json", shift)
    return root


def _regress(root: Path, monkeypatch, capsys, *options: str):
    return run_cli(root, monkeypatch, capsys, "regress", *options)


# --- the three verdicts -------------------------------------------------------------------------


def test_a_real_drop_fails_the_gate(tmp_path, make_project, monkeypatch, capsys):
    root = _gate_project(tmp_path / "p", make_project, lambda index: -0.05)
    outcome = _regress(root, monkeypatch, capsys, "--baseline", str(BASELINE))
    assert outcome.code == 1, outcome.out + outcome.err
    lines = outcome.out.splitlines()
    assert lines[0] == ("Baseline: outputs/baseline/results.json, named by --baseline (not in a git work tree: not "
                        "checked against git).")
    assert lines[1] == ("Now: outputs/results.json; margin 0.01 (design/regression.md:9); 20 queries on both sides, "
                        "the same judgements.")
    assert lines[2] == ("hybrid nDCG@5: baseline 0.5000, now 0.4500, change -0.0500, 95% interval [-0.0500, "
                        "-0.0500]; 0 better, 0 tied, 20 worse of 20 queries: regression")
    assert lines[-1].startswith("FAIL: 1 of 1 changes is a regression: the interval lies wholly below -0.01")


def test_a_shift_within_the_margin_passes(tmp_path, make_project, monkeypatch, capsys):
    root = _gate_project(tmp_path / "p", make_project, lambda index: -0.002)
    outcome = _regress(root, monkeypatch, capsys, "--baseline", str(BASELINE))
    assert outcome.code == 0, outcome.out + outcome.err
    assert outcome.out.splitlines()[2].endswith("0 better, 0 tied, 20 worse of 20 queries: non-inferior")
    assert outcome.out.splitlines()[-1] == "PASS: the change is non-inferior: its interval lies above -0.01."


def test_an_interval_reaching_minus_the_margin_is_inconclusive_and_said_so(tmp_path, make_project, monkeypatch,
                                                                          capsys):
    # Losses of 0.06 and gains of 0.04 in turn: a mean change of -0.01 whose interval straddles -0.01.
    root = _gate_project(tmp_path / "p", make_project, lambda index: -0.06 if index % 2 else 0.04)
    outcome = _regress(root, monkeypatch, capsys, "--baseline", str(BASELINE), "--format", "json")
    assert outcome.code == 0, outcome.out + outcome.err
    report = json.loads(outcome.out)
    change = report["changes"][0]
    assert change["ci95_low"] < -0.01 < change["ci95_high"]
    assert (change["verdict"], change["wins"], change["ties"], change["losses"]) == ("inconclusive", 10, 0, 10)
    assert report["ok"] is True and report["counts"] == {"inconclusive": 1, "non-inferior": 0, "regression": 0}
    text = _regress(root, monkeypatch, capsys, "--baseline", str(BASELINE))
    assert text.code == 0
    assert text.out.splitlines()[2].endswith(": inconclusive")
    assert text.out.splitlines()[-1].startswith("PASS, 1 of 1 inconclusive: the interval reaches -0.01, so these 20 "
                                                "queries cannot tell noise from a loss of the margin")


# --- the baseline from git ----------------------------------------------------------------------


def _repository(root: Path) -> None:
    run_git(root, "init", "-q", "-b", "main")
    git_commit(root, "the release: design, baseline results", ".")


def test_the_baseline_is_read_from_git_at_the_ref_given(tmp_path, make_project, monkeypatch, capsys):
    root = _gate_project(tmp_path / "p", make_project, lambda index: 0.0)
    _repository(root)   # results.json as released: hybrid nDCG@5 0.5 on every query
    release = run_git(root, "rev-parse", "HEAD")
    _scores(root / "outputs" / "results.json", lambda index: -0.05)
    git_commit(root, "results after a change", "outputs/results.json")
    outcome = _regress(root, monkeypatch, capsys, "--baseline", "HEAD~1")
    assert outcome.code == 1, outcome.out + outcome.err
    assert outcome.out.splitlines()[0] == f"Baseline: {release[:12]}:outputs/results.json, HEAD~1, named by --baseline."
    assert "change -0.0500" in outcome.out and outcome.out.splitlines()[2].endswith(": regression")
    # The same commit as the baseline: nothing changed.
    same = _regress(root, monkeypatch, capsys, "--baseline", "HEAD")
    assert same.code == 0 and "change +0.0000" in same.out


def test_the_default_baseline_is_the_merge_base_with_the_default_branch(tmp_path, make_project, monkeypatch, capsys):
    root = _gate_project(tmp_path / "p", make_project, lambda index: 0.0)
    _repository(root)
    release = run_git(root, "rev-parse", "HEAD")
    run_git(root, "checkout", "-q", "-b", "feature")
    _scores(root / "outputs" / "results.json", lambda index: -0.05)
    git_commit(root, "results after a change", "outputs/results.json")
    outcome = _regress(root, monkeypatch, capsys)
    assert outcome.code == 1, outcome.out + outcome.err
    assert outcome.out.splitlines()[0] == (f"Baseline: {release[:12]}:outputs/results.json, the merge base of HEAD "
                                           "and main.")
    assert json.loads(_regress(root, monkeypatch, capsys, "--format", "json").out)["baseline"]["commit"] == release


def test_a_baseline_file_must_be_committed_and_unchanged_in_a_git_work_tree(tmp_path, make_project, monkeypatch,
                                                                             capsys):
    root = _gate_project(tmp_path / "p", make_project, lambda index: -0.05)
    (root / ".gitignore").write_text("outputs/baseline/\n", encoding="utf-8")
    _repository(root)
    untracked = _regress(root, monkeypatch, capsys, "--baseline", str(BASELINE))
    assert untracked.code == 2
    assert one_line_error(untracked) == (
        "Error: --baseline: outputs/baseline/results.json is not committed: a baseline moves only with a commit; "
        "commit it (git add outputs/baseline/results.json && git commit) or give a git ref")
    run_git(root, "add", "-f", str(BASELINE))
    run_git(root, "commit", "-q", "-m", "the baseline")
    assert _regress(root, monkeypatch, capsys, "--baseline", str(BASELINE)).code == 1
    _scores(root / BASELINE, lambda index: -0.05)
    changed = _regress(root, monkeypatch, capsys, "--baseline", str(BASELINE))
    assert changed.code == 2
    assert "outputs/baseline/results.json differs from its last commit: a baseline moves only with a commit" in \
        one_line_error(changed)


# --- refusals -----------------------------------------------------------------------------------


def test_other_query_sets_are_refused_naming_the_queries(tmp_path, make_project, monkeypatch, capsys):
    root = _gate_project(tmp_path / "p", make_project, lambda index: 0.0)
    data = json.loads((root / "outputs" / "results.json").read_text(encoding="utf-8"))
    for row in data["per_query"].values():
        row.pop("q20", None)
    (root / "outputs" / "results.json").write_text(json.dumps(seal(data, WRITER)), encoding="utf-8")
    outcome = _regress(root, monkeypatch, capsys, "--baseline", str(BASELINE))
    assert outcome.code == 2
    assert one_line_error(outcome) == (
        "Error: outputs/results.json: the query sets differ from the baseline's (outputs/baseline/results.json) in "
        "row hybrid: 19 queries now, 20 in the baseline; only now: (none); only in the baseline: q20 (compare runs "
        "on the same queries)")


def test_other_judgements_are_refused(tmp_path, make_project, monkeypatch, capsys):
    root = _gate_project(tmp_path / "p", make_project, lambda index: 0.0)
    # Another run whose judgements differ (the fixture's variant draws other relevant documents).
    other = tmp_path / "other" / "outputs"
    other.mkdir(parents=True)
    written = write_fixture_results(other, hybrid_variant=1)
    shutil.copy(other / "results.json", root / BASELINE)
    now = json.loads((root / "outputs" / "results.json").read_text(encoding="utf-8"))
    assert written["manifest"]["qrels_copy"]["sha256"] != now["manifest"]["qrels_copy"]["sha256"]
    outcome = _regress(root, monkeypatch, capsys, "--baseline", str(BASELINE))
    assert outcome.code == 2
    line = one_line_error(outcome)
    assert line.startswith("Error: outputs/results.json: the judgements differ from the baseline's "
                           "(outputs/baseline/results.json): qrels sha256 "
                           f"{now['manifest']['qrels_copy']['sha256'][:12]} now, "
                           f"{written['manifest']['qrels_copy']['sha256'][:12]} in the baseline"), line


def test_no_regression_block_is_refused_saying_how_to_add_one(tmp_path, make_project, monkeypatch, capsys):
    root = _gate_project(tmp_path / "p", make_project, lambda index: 0.0, block="")
    outcome = _regress(root, monkeypatch, capsys, "--baseline", str(BASELINE))
    assert outcome.code == 2
    line = one_line_error(outcome)
    assert line.startswith("Error: design: no regression block in the design: add a fenced ```regression block to a "
                           "design document (design/*.md) holding rows: [ROW, ...], metrics: [METRIC, ...] and "
                           "margin: NUMBER"), line


@pytest.mark.parametrize("block, expected", [
    (BLOCK.replace("rows: [hybrid]", "rows: [hybrid, colbert]"),
     "Error: design/regression.md:7: rows: unknown row colbert: not in outputs/results.json (its rows: dense, sparse, "
     "hybrid, hybrid+rerank)"),
    (BLOCK.replace("metrics: [nDCG@5]", "metrics: [nDCG@5, MAP@7]"),
     "Error: design/regression.md:8: metrics: unknown metric MAP@7: not measured per query in outputs/results.json"),
    (BLOCK.replace("rows: [hybrid]", "rows: [hybrid+rerank]"),
     "Error: design/regression.md:7: rows: hybrid+rerank not measured query by query in outputs/results.json"),
    (BLOCK.replace("margin: 0.01", "margin: 0"),
     "Error: design/regression.md:9: margin: the non-inferiority margin in the metric's units: a number > 0, got 0"),
    (BLOCK.replace("margin: 0.01", "margin: 0.01\ntolerance: 0.02"),
     "Error: design/regression.md:10: tolerance: unknown key; a regression block holds rows, metrics, margin, "
     "baseline"),
    (BLOCK + BLOCK, "Error: design/regression.md:17: a second regression block (the first is at "
                    "design/regression.md:7): the design fixes one"),
])
def test_an_unknown_row_or_metric_or_a_bad_block_is_refused_with_its_line(tmp_path, make_project, monkeypatch,
                                                                          capsys, block, expected):
    root = _gate_project(tmp_path / "p", make_project, lambda index: 0.0, block=block)
    outcome = _regress(root, monkeypatch, capsys, "--baseline", str(BASELINE))
    assert outcome.code == 2
    assert one_line_error(outcome).startswith(expected), one_line_error(outcome)


def test_an_unsealed_results_file_is_refused(tmp_path, make_project, monkeypatch, capsys):
    root = _gate_project(tmp_path / "p", make_project, lambda index: 0.0)
    data = json.loads((root / BASELINE).read_text(encoding="utf-8"))
    data["per_query"]["hybrid"]["q01"]["nDCG@5"] = 0.9   # edited by hand, seal left as it was
    (root / BASELINE).write_text(json.dumps(data), encoding="utf-8")
    outcome = _regress(root, monkeypatch, capsys, "--baseline", str(BASELINE))
    assert outcome.code == 2
    assert one_line_error(outcome).startswith("Error: outputs/baseline/results.json: seal broken")


# --- what it writes -----------------------------------------------------------------------------


def test_the_json_report_has_a_stable_shape(tmp_path, make_project, monkeypatch, capsys):
    root = _gate_project(tmp_path / "p", make_project, lambda index: -0.05)
    outcome = _regress(root, monkeypatch, capsys, "--baseline", str(BASELINE), "--format", "json")
    assert outcome.code == 1
    report = json.loads(outcome.out)
    assert list(report) == ["baseline", "changes", "counts", "design", "now", "ok", "queries", "summary"]
    assert list(report["changes"][0]) == ["baseline", "change", "ci95_high", "ci95_low", "interval_method", "losses",
                                          "metric", "now", "queries", "row", "ties", "verdict", "wins"]
    change = report["changes"][0]
    assert (change["row"], change["metric"], change["queries"], change["verdict"]) == ("hybrid", "nDCG@5", 20,
                                                                                       "regression")
    assert change["baseline"] == pytest.approx(0.5) and change["change"] == pytest.approx(-0.05)
    assert report["ok"] is False and report["counts"]["regression"] == 1
    assert report["design"] == {"baseline": None, "document": "design/regression.md", "line": 7, "margin": 0.01,
                                "metrics": ["nDCG@5"], "rows": ["hybrid"]}
    assert report["baseline"]["kind"] == "file" and report["baseline"]["shown"] == "outputs/baseline/results.json"
    assert outcome.out == _regress(root, monkeypatch, capsys, "--baseline", str(BASELINE), "--format", "json").out


def test_github_annotations_and_the_step_summary_table(tmp_path, make_project, monkeypatch, capsys):
    root = _gate_project(tmp_path / "p", make_project, lambda index: -0.05)
    summary = tmp_path / "step-summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    outcome = _regress(root, monkeypatch, capsys, "--baseline", str(BASELINE), "--format", "github")
    assert outcome.code == 1
    lines = outcome.out.splitlines()
    assert lines[0].startswith("::error file=design/regression.md,line=7,title=readout regress%3A hybrid nDCG@5::"
                               "hybrid nDCG@5: baseline 0.5000, now 0.4500")
    assert lines[1].startswith("::error title=readout regress::FAIL: 1 of 1 changes is a regression")
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n### readout regress: FAIL\n")   # appended, never replaced
    assert ("| Row | Metric | Baseline | Now | Change | 95% interval | Verdict |\n"
            "| --- | --- | ---: | ---: | ---: | --- | --- |\n"
            "| hybrid | nDCG@5 | 0.5000 | 0.4500 | -0.0500 | [-0.0500, -0.0500] | **regression** |\n") in text
    # Written whatever the format; a passing run says so.
    _scores(root / "outputs" / "results.json", lambda index: 0.0)
    assert _regress(root, monkeypatch, capsys, "--baseline", str(BASELINE)).code == 0
    assert summary.read_text(encoding="utf-8").count("### readout regress:") == 2
    assert "| hybrid | nDCG@5 | 0.5000 | 0.5000 | +0.0000 | [+0.0000, +0.0000] | non-inferior |" in \
        summary.read_text(encoding="utf-8")


# --- the readout's since_baseline section ---------------------------------------------------------


def _since_baseline_project(root: Path, make_project) -> Path:
    """The fixture project as released, its design holding the regression block, and a committed-to-be
    baseline file whose hybrid nDCG@5 was 0.05 higher on every query: the release lost 0.05."""
    make_project(root)
    add_design(root, BLOCK, "regression.md")
    data = json.loads((root / "outputs" / "results.json").read_text(encoding="utf-8"))
    for values in data["per_query"]["hybrid"].values():
        values["nDCG@5"] += 0.05
    (root / BASELINE).parent.mkdir(parents=True)
    (root / BASELINE).write_text(json.dumps(seal(data, WRITER)), encoding="utf-8")

    def configure(config):
        config["regression"] = {"baseline": BASELINE.as_posix()}
        config["outputs"]["readout"]["sections"].append(
            {"id": "since-release", "title": "Since the last release", "show": ["since_baseline"]})
    edit_config(root, configure)
    return root


def test_the_readout_section_renders_from_the_baseline_file_without_git(tmp_path, make_project, monkeypatch, capsys):
    root = _since_baseline_project(tmp_path / "p", make_project)
    outcome = run_cli(root, monkeypatch, capsys, "render")
    assert outcome.code == 0, outcome.err
    html = (root / "outputs" / "readout.html").read_text(encoding="utf-8")
    section = html[html.index('<section id="section-since-release">'):]
    section = section[:section.index("</section>")]
    assert "<caption>Change since the baseline" in section
    assert ("<thead><tr><th scope=\"col\">Row</th><th scope=\"col\" class=\"text\">Metric</th><th scope=\"col\">"
            "Baseline</th><th scope=\"col\">Now</th><th scope=\"col\">Change</th><th scope=\"col\">Paired interval"
            "</th><th scope=\"col\" class=\"text\">Verdict against the margin</th></tr></thead>") in section
    row = next(line for line in section.splitlines() if line.startswith('<tr><th scope="row"><code>hybrid'))
    assert "<td>-0.050</td><td>[-0.050, -0.050]</td><td class=\"text\">regression</td>" in row
    assert "Baseline file <code>outputs/baseline/results.json</code>; non-inferiority margin 0.01" in section
    assert run_cli(root, monkeypatch, capsys, "render", "--check").code == 0


def test_the_section_reads_the_baseline_file_and_never_git(tmp_path, make_project, monkeypatch):
    import subprocess

    from generator.project import load_project
    from generator.render.baseline import since_baseline_view
    from generator.render.doors import HtmlDoor
    from generator.render.labels import Labels, load_labels
    from generator.render.orphans import strip_marks
    from generator.render.renderer import load_project_results

    root = _since_baseline_project(tmp_path / "p", make_project)
    monkeypatch.chdir(root)
    project = load_project(root)

    def no_git(*args, **kwargs):
        raise AssertionError(f"a render ran a program: {args[0] if args else kwargs}")

    monkeypatch.setattr(subprocess, "run", no_git)
    monkeypatch.setattr(subprocess, "Popen", no_git)
    labels_path = project.templates_dir / "labels.yaml"
    labels = Labels(load_labels(labels_path), HtmlDoor(), "labels.yaml")
    view = since_baseline_view(project, project.outputs["readout"], load_project_results(project), HtmlDoor(), labels)
    assert [(strip_marks(row["row"]), strip_marks(row["verdict"])) for row in view["rows"]] == [
        ("<code>hybrid</code>", "regression")]
    assert strip_marks(view["margin"]) == "0.01"
    # An output that does not show the block reads nothing.
    assert since_baseline_view(project, project.outputs["aar"], load_project_results(project), HtmlDoor(),
                               labels) is None


def test_a_changed_baseline_file_makes_the_readout_stale(tmp_path, make_project, monkeypatch, capsys):
    root = _since_baseline_project(tmp_path / "p", make_project)
    assert run_cli(root, monkeypatch, capsys, "render").code == 0
    data = json.loads((root / BASELINE).read_text(encoding="utf-8"))
    for values in data["per_query"]["hybrid"].values():
        values["nDCG@5"] -= 0.05
    (root / BASELINE).write_text(json.dumps(seal(data, WRITER)), encoding="utf-8")
    outcome = run_cli(root, monkeypatch, capsys, "render", "--check")
    assert outcome.code == 1 and "outputs/readout.html: stale" in outcome.out


def test_since_baseline_needs_the_baseline_file_in_readout_yaml(tmp_path, make_project, monkeypatch, capsys):
    root = _since_baseline_project(tmp_path / "p", make_project)
    edit_config(root, lambda config: config.pop("regression"))
    outcome = run_cli(root, monkeypatch, capsys, "render")
    assert outcome.code == 2
    line = one_line_error(outcome)
    assert line.startswith("Error: readout.yaml:") and "outputs.readout.sections[" in line
    assert line.endswith("since_baseline needs regression.baseline in readout.yaml: the committed baseline results "
                         "file it compares with")
    edit_config(root, lambda config: config.update(regression={"baseline": "/etc/results.json"}))
    assert "regression.baseline: a results file (.json) inside the project" in one_line_error(
        run_cli(root, monkeypatch, capsys, "render"))
