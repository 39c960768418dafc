"""`readout regress` (issues 38, 46 and 47): a regression gate against the last release that tells
noise from a loss, on the query set the design names, trusting nothing it cannot re-derive.

Every project here is a real one a team would make: `readout init` with the team's own TREC run,
the design (its `regression` block) frozen and committed first, then releases whose results are
evaluated from the run files (no model: the rows are BM25 and the team's run) and committed. The
releases differ only in the team's run, placed query by query, so each change is known:

- release 1: the first relevant document at rank 1 + i % 4 for the i-th query (qrels order);
- release 2: at rank 1 + i % 3, a gain;
- release 3: as release 2, but one query in fifteen loses it past rank 10 and one in twenty gains
  rank 1: on all 120 queries a loss whose interval lies wholly below zero and whose estimate is
  beyond the 0.01 margin, while the interval's top lies above -0.01 (the case the old rule called
  "inconclusive" and passed); on the 20-query sample the same change is within the noise.

Covered: the three verdicts and "cannot be decided"; the all-queries file and the sample; the
inconclusive policy; the baseline from git (a ref, the merge base, a first release) and from a
committed file with its runs beside it; forged baselines and a forged current file refused; a
commit compared with itself refused; the block as frozen (an unfrozen margin refused, a margin
moved after the results post hoc in regress and on the page); YAML 1.1 margins and margins
outside the metric's range refused; another corpus, query set, judgements or metric refused
naming what differs; a run file replaced after the results (build re-evaluates, the gate refuses
the stale readout); the JSON, the GitHub annotations and the step summary; the readout's
since_baseline section; and the three-release walk-through of docs/commands.md."""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import re
import shutil
from pathlib import Path
from typing import NamedTuple

import pytest
import yaml

from generator.commands.cli import main
from generator.claims.record.noninferiority import Change, deciding_decimals
from generator.core.results import seal
from tests.conftest import WRITER, git_commit, make_small_dataset, one_line_error, run_cli, run_git, run_program

QUERIES, DOCUMENTS = 120, 200
MARGIN = 0.01


def rank_release_1(index: int) -> int | None:
    return 1 + index % 4


def rank_release_2(index: int) -> int | None:
    return 1 + index % 3


def rank_release_3(index: int) -> int | None:
    if index % 15 == 3:
        return 12          # past rank 10: nDCG@10 0 on this query
    if index % 20 == 7:
        return 1
    return rank_release_2(index)


def regression_block(file: str = "results-all.json", margin: str = "0.01", extra: str = "") -> str:
    return f"""# Regression gate

A release may cost the team run at most 0.01 nDCG@10 on the same queries and judgements.

```regression
rows: [team]
metrics: [nDCG@10]
margin: {margin}
file: {file}
{extra}```
"""


DECISIONS = """# Decision records

## D1. Keep the team's run as a row

The team's run stays a row of the readout while it is maintained.
"""
LEDGER = """version: 1
claims:
  - id: margin
    output: readout
    section: limits
    kind: factual
    frame: {quote: regression.md, text: "A release may cost the team run at most 0.01 nDCG@10 on the same queries and judgements.", phrasing: rule}
"""
OUTPUTS = {"readout": {"file": "readout.html", "template": "readout.html.j2",
                       "sections": [{"id": "results", "title": "The team run", "show": ["table"]},
                                    {"id": "limits", "title": "Limits"},
                                    {"id": "provenance", "title": "Provenance", "show": ["provenance"]}],
                       "table": {"columns": [{"key": "nDCG@10", "label": "nDCG@10"}]}}}


def _judged(data: Path) -> list[tuple[str, list[str]]]:
    relevant: dict[str, list[str]] = {}
    for line in (data / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        query, document, _ = line.split("\t")
        relevant.setdefault(query, []).append(document)
    return list(relevant.items())


def write_team_run(path: Path, data: Path, rank_of) -> None:
    """A TREC run of 20 documents per query: the first relevant document at rank_of(i) for the i-th
    query in qrels order (None: absent), the rest drawn the same way every time."""
    rng = random.Random(1)
    documents = [f"doc{number:03d}" for number in range(DOCUMENTS)]
    lines = []
    for index, (query, relevant) in enumerate(_judged(data)):
        ranked = rng.sample([doc for doc in documents if doc not in relevant], 20)
        rank = rank_of(index)
        if rank is not None:
            ranked.insert(rank - 1, relevant[0])
        lines += [f"{query} Q0 {doc} {place} {1.0 - place / 100:.4f} team" for place, doc in enumerate(ranked[:20], 1)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def release_project(tmp_path: Path, block: str | None = None, sample_size: int | None = None) -> Path:
    """`readout init` with the team's release-1 run; rows BM25 and the team's run, every test query
    kept in results-all.json; the design (with its regression block) frozen and committed on main
    before any result."""
    data = make_small_dataset(tmp_path / "data", documents=DOCUMENTS, queries=QUERIES, seed=3)
    write_team_run(tmp_path / "team.trec", data, rank_release_1)
    root = tmp_path / "review"
    assert main(["init", str(root), "--data", str(data), "--run", str(tmp_path / "team.trec"),
                 "--run-name", "team"]) == 0
    config = yaml.safe_load((root / "readout.yaml").read_text(encoding="utf-8"))
    config["data"] = "../data"   # beside the project, so that a copy of both builds the same
    config["evaluate"] = {"rows": [{"name": "sparse", "kind": "sparse"},
                                   {"name": "team", "kind": "run", "file": "runs/team.trec"}],
                          "metrics": ["nDCG@10", "recall@10"], "all_results": "results-all.json", "progress": False,
                          **({"sample": {"size": sample_size}} if sample_size else {})}
    config["outputs"] = OUTPUTS
    (root / "readout.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    (root / "design" / "decisions.md").write_text(DECISIONS, encoding="utf-8")
    (root / "design" / "regression.md").write_text(block or regression_block(), encoding="utf-8")
    (root / "claims" / "ledger.yaml").write_text(LEDGER, encoding="utf-8")
    assert main(["freeze", str(root)]) == 0
    run_git(root, "init", "-q", "-b", "main")
    git_commit(root, "the design, frozen before any results", ".")
    return root


def data_of(root: Path) -> Path:
    return root / yaml.safe_load((root / "readout.yaml").read_text(encoding="utf-8"))["data"]


def evaluate_release(root: Path, rank_of) -> None:
    """The team's run of this release, evaluated on the sample and on every test query."""
    write_team_run(root / "runs" / "team.trec", data_of(root), rank_of)
    assert main(["evaluate", str(root)]) == 0
    assert main(["evaluate", str(root), "--queries", "all"]) == 0


def release(root: Path, rank_of, name: str) -> str:
    """Evaluate and commit a release on its own branch from main; returns the commit."""
    run_git(root, "checkout", "-q", "-b", name, "main")
    evaluate_release(root, rank_of)
    return git_commit(root, name, ".")


def merge(root: Path, name: str) -> None:
    run_git(root, "checkout", "-q", "main")
    run_git(root, "merge", "-q", "--ff-only", name)


def regress(root: Path, monkeypatch, capsys, *options: str):
    return run_cli(root, monkeypatch, capsys, "regress", *options)


def two_releases(tmp_path: Path, third=rank_release_3, block: str | None = None, sample_size: int | None = None):
    """Releases 1 and 2 merged into main, then release 3 committed on its branch."""
    root = release_project(tmp_path, block, sample_size)
    release(root, rank_release_1, "release-1")
    merge(root, "release-1")
    release(root, rank_release_2, "release-2")
    merge(root, "release-2")
    release(root, third, "release-3")
    return root


def committed(root: Path, spec: str) -> str:
    """A file as a commit holds it (`git show REF:PATH`), byte for byte."""
    completed = run_program(["git", "show", spec], cwd=root, env=dict(os.environ))
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


def copy_release(root: Path, ref: str, into: Path, names=("results.json", "results-all.json")) -> None:
    """Results files of a release and the run files and judgements beside them, as `ref` holds them
    (the every-query file with the release sample it was compared with)."""
    into.mkdir(parents=True, exist_ok=True)
    for name in names:
        (into / name).write_text(committed(root, f"{ref}:outputs/{name}"), encoding="utf-8")
        runs = "runs" if name == "results.json" else "runs-" + name[len("results-"):-len(".json")]
        (into / runs).mkdir(exist_ok=True)
        for run in ("sparse.trec", "team.trec", "qrels.tsv"):
            (into / runs / run).write_text(committed(root, f"{ref}:outputs/{runs}/{run}"), encoding="utf-8")


@pytest.fixture(scope="module")
def released_once(tmp_path_factory) -> Path:
    """Releases 1 and 2 merged into main and release 3 on its branch, built once per module."""
    return two_releases(tmp_path_factory.mktemp("released")).parent


@pytest.fixture
def released(released_once: Path, tmp_path: Path) -> Path:
    """A copy of `released_once` (the repository, its data beside it) that a test may change."""
    shutil.copytree(released_once, tmp_path / "copy", symlinks=True)
    return tmp_path / "copy" / "review"


def reseal(path: Path, change) -> None:
    """Edit a results file and recompute its seal, as anyone can."""
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(seal(data, WRITER)), encoding="utf-8")


def lower_team(amount: float):
    def change(data):
        for values in data["per_query"]["team"].values():
            values["nDCG@10"] -= amount
        for entry in data["table"]:
            if entry["search"] == "team":
                entry["nDCG@10"] -= amount
    return change


# --- the verdicts, on the file that decides -----------------------------------------------------


def test_a_loss_wholly_below_zero_and_beyond_the_margin_fails_on_the_all_queries_file(released, monkeypatch,
                                                                                       capsys):
    root = released
    outcome = regress(root, monkeypatch, capsys, "--format", "json")
    assert outcome.code == 1, outcome.out + outcome.err
    report = json.loads(outcome.out)
    change = report["changes"][0]
    # The case the old rule passed as "inconclusive": the interval's top is above -0.01.
    assert change["ci95_high"] < 0 and change["ci95_high"] > -MARGIN and change["change"] < -MARGIN
    assert (change["queries"], change["verdict"], change["losses"], change["wins"]) == (QUERIES, "regression", 8, 4)
    assert report["ok"] is False and report["counts"]["regression"] == 1
    text = regress(root, monkeypatch, capsys)
    lines = text.out.splitlines()
    assert lines[1] == ("Now: outputs/results-all.json, re-derived; 120 queries on both sides, the same corpus and "
                        "judgements.")
    assert lines[3].startswith("team nDCG@10: baseline ") and lines[3].endswith(
        "; 4 better, 108 tied, 8 worse of 120 queries: regression")
    assert lines[-1] == ("FAIL: 1 of 1 changes is a regression: a loss the interval tells from noise, beyond the "
                         "margin (-0.01).")


def test_the_same_change_on_the_20_query_sample_is_inconclusive_with_the_queries_that_would_decide_it(
        tmp_path, monkeypatch, capsys):
    root = two_releases(tmp_path, block=regression_block(file="results.json"))
    outcome = regress(root, monkeypatch, capsys, "--format", "json")
    assert outcome.code == 0, outcome.out + outcome.err
    change = json.loads(outcome.out)["changes"][0]
    assert change["queries"] == 20 and change["verdict"] == "inconclusive"
    assert change["ci95_low"] < -MARGIN < 0 <= change["ci95_high"]
    assert change["queries_needed"] > 20
    text = regress(root, monkeypatch, capsys)
    assert text.out.splitlines()[3].endswith(
        f"of 20 queries: inconclusive; about {change['queries_needed']:,} queries would decide it (a change of the "
        "margin, 0.01, detected at power 0.8)")
    assert text.out.splitlines()[-1].startswith(
        "PASS, 1 of 1 inconclusive: the interval reaches -0.01, so these 20 queries cannot tell noise from a loss "
        f"of the margin (about {change['queries_needed']:,} queries would decide it); no regression shown")


def test_an_inconclusive_change_fails_when_the_design_says_so(tmp_path, monkeypatch, capsys):
    root = two_releases(tmp_path, block=regression_block(file="results.json", extra="inconclusive: fail\n"))
    outcome = regress(root, monkeypatch, capsys)
    assert outcome.code == 1, outcome.out + outcome.err
    assert outcome.out.splitlines()[-1].startswith("FAIL, 1 of 1 inconclusive or undecided: these 20 queries cannot "
                                                   "tell noise from a loss of the margin (-0.01)")
    assert "(design/regression.md:8); pre-registered: freeze" in outcome.out.splitlines()[2]
    assert "inconclusive fail" in outcome.out.splitlines()[2]


def test_a_gain_is_non_inferior(tmp_path, monkeypatch, capsys):
    root = release_project(tmp_path)
    release(root, rank_release_1, "release-1")
    merge(root, "release-1")
    release(root, rank_release_2, "release-2")
    outcome = regress(root, monkeypatch, capsys)
    assert outcome.code == 0, outcome.out + outcome.err
    assert outcome.out.splitlines()[3].endswith(": non-inferior")
    assert outcome.out.splitlines()[-1] == "PASS: the change is non-inferior: its interval lies above -0.01."


def test_a_sample_too_small_to_decide_says_so_and_draws_no_interval(tmp_path, monkeypatch, capsys):
    root = two_releases(tmp_path, block=regression_block(file="results.json"), sample_size=5,
                        third=lambda index: 12 if index < 5 else rank_release_2(index))
    outcome = regress(root, monkeypatch, capsys, "--format", "json")
    assert outcome.code == 0, outcome.out + outcome.err
    change = json.loads(outcome.out)["changes"][0]
    assert change["verdict"] == "cannot be decided" and change["ci95_low"] is None and change["losses"] == 5
    assert change["why"] == ("cannot be decided with 5 queries: a paired test at alpha 0.05 needs at least 6 (on 5 "
                             "queries the sign-flip test's smallest p-value is 0.0625)")
    text = regress(root, monkeypatch, capsys)
    assert "95% interval not drawn" in text.out and text.out.splitlines()[3].endswith(change["why"])


def test_the_precision_shown_never_rounds_an_endpoint_across_the_margin_or_zero():
    def change(low, high, estimate):
        return Change("team", "nDCG@10", 50, 0.5, 0.5 + estimate, estimate, low, high, "BCa", 1, 1, 1, "inconclusive")

    # -0.01004 at four decimals reads -0.0100: "reaches the margin" where it lies beyond it.
    assert deciding_decimals([change(-0.01004, 0.02, 0.001)], 0.01) == 5
    assert deciding_decimals([change(-0.0099996, 0.02, 0.001)], 0.01) == 7
    assert deciding_decimals([change(-0.05, -0.00004, -0.02)], 0.01) == 5      # a top just below zero
    assert deciding_decimals([change(-0.05, 0.02, -0.01)], 0.01) == 4          # exactly at the margin: no flip
    assert deciding_decimals([change(-0.05, 0.02, -0.011)], 0.01, least=3) == 3


# --- the baseline --------------------------------------------------------------------------------


def test_the_first_release_has_nothing_to_compare_and_passes(tmp_path, monkeypatch, capsys):
    root = release_project(tmp_path)
    design = run_git(root, "rev-parse", "HEAD")
    release(root, rank_release_1, "release-1")
    outcome = regress(root, monkeypatch, capsys)
    assert outcome.code == 0, outcome.out + outcome.err
    assert outcome.out.splitlines()[-1] == (f"PASS: a first release: the merge base of HEAD and main ({design[:12]}) "
                                            "holds no results, so there is nothing to compare and no regression.")
    # A baseline named explicitly must hold results.
    named = regress(root, monkeypatch, capsys, "--baseline", "main")
    assert named.code == 2 and "holds no outputs/results-all.json" in one_line_error(named)


def test_a_git_ref_and_the_merge_base_are_read_with_the_run_files_committed_there(released, monkeypatch, capsys):
    root = released
    release_2 = run_git(root, "rev-parse", "main")
    by_ref = regress(root, monkeypatch, capsys, "--baseline", "release-2")
    default = regress(root, monkeypatch, capsys)
    assert by_ref.code == default.code == 1
    assert by_ref.out.splitlines()[0] == (f"Baseline: {release_2[:12]}:outputs/results-all.json, release-2, named by "
                                          "--baseline; re-derived from its run files and judgements.")
    assert default.out.splitlines()[0] == (f"Baseline: {release_2[:12]}:outputs/results-all.json, the merge base of "
                                           "HEAD and main; re-derived from its run files and judgements.")
    assert by_ref.out.splitlines()[3:] == default.out.splitlines()[3:]


def test_a_commit_compared_with_itself_is_refused_as_a_single_branch_clone_would(released, monkeypatch, capsys):
    root = released
    merge(root, "release-3")
    clone = root.parent / "clone"
    run_git(root.parent, "clone", "-q", "--single-branch", "--branch", "main", root.as_uri(), str(clone))
    outcome = regress(clone, monkeypatch, capsys)
    assert outcome.code == 2
    head = run_git(clone, "rev-parse", "HEAD")
    assert one_line_error(outcome) == (
        f"Error: the baseline (the merge base of HEAD and origin/HEAD (origin/main)) is HEAD itself ({head[:12]}), "
        "outputs/results-all.json unchanged: a commit compared with itself shows no change; give --baseline the last "
        "release (a tag, HEAD~1) or fetch the default branch (git fetch origin main)")
    assert regress(clone, monkeypatch, capsys, "--baseline", "HEAD~1").code == 1


def test_a_baseline_file_is_read_with_its_runs_beside_it_and_must_be_committed(released, monkeypatch, capsys):
    root = released
    baseline = root / "baseline"
    baseline.mkdir()
    (baseline / "results-all.json").write_text(committed(root, "release-2:outputs/results-all.json"))
    option = "baseline/results-all.json"
    alone = regress(root, monkeypatch, capsys, "--baseline", option)
    assert alone.code == 2 and "is not committed: a baseline moves only with a commit" in one_line_error(alone)
    git_commit(root, "the baseline, without its runs", "baseline")
    without_runs = regress(root, monkeypatch, capsys, "--baseline", option)
    assert without_runs.code == 2
    assert one_line_error(without_runs).startswith(
        "Error: baseline/results-all.json: does not re-derive from the run files and judgements beside it (a "
        "baseline file is compared only with them: copy the release's runs folder beside it too): ")
    copy_release(root, "release-2", baseline)
    git_commit(root, "its runs beside it", "baseline")
    outcome = regress(root, monkeypatch, capsys, "--baseline", option)
    assert outcome.code == 1, outcome.out + outcome.err
    assert outcome.out.splitlines()[0] == ("Baseline: baseline/results-all.json, named by --baseline, "
                                           "committed and unchanged; re-derived from its run files and judgements.")
    by_ref = regress(root, monkeypatch, capsys, "--baseline", "release-2")
    assert outcome.out.splitlines()[3:] == by_ref.out.splitlines()[3:]


# --- what it trusts ------------------------------------------------------------------------------


def test_a_forged_baseline_with_lowered_values_cannot_turn_a_regression_into_a_pass(released, monkeypatch, capsys):
    root = released
    assert regress(root, monkeypatch, capsys, "--baseline", "release-2").code == 1
    # At a git ref: release 2's results lowered by 0.1 per query and resealed, committed as a release.
    run_git(root, "checkout", "-q", "-b", "forged", "release-2")
    reseal(root / "outputs" / "results-all.json", lower_team(0.1))
    git_commit(root, "release 2, lowered", ".")
    run_git(root, "checkout", "-q", "release-3")
    by_ref = regress(root, monkeypatch, capsys, "--baseline", "forged")
    assert by_ref.code == 2, by_ref.out
    forged = run_git(root, "rev-parse", "forged")
    assert one_line_error(by_ref).startswith(
        f"Error: {forged[:12]}:outputs/results-all.json: does not re-derive from the run files and judgements "
        f"committed beside it at {forged[:12]}, so it is not compared: per_query.team.")
    # As a committed file, with the real runs beside it.
    baseline = root / "baseline"
    copy_release(root, "forged", baseline)
    git_commit(root, "a forged baseline file", "baseline")
    by_file = regress(root, monkeypatch, capsys, "--baseline", "baseline/results-all.json")
    assert by_file.code == 2 and "does not re-derive" in one_line_error(by_file)


def test_a_forged_current_file_is_refused(released, monkeypatch, capsys):
    root = released
    reseal(root / "outputs" / "results-all.json", lower_team(-0.2))   # release 3 raised to hide its loss
    outcome = regress(root, monkeypatch, capsys)
    assert outcome.code == 2
    assert one_line_error(outcome).startswith(
        "Error: outputs/results-all.json: does not re-derive from its run files and judgements, so it is not compared "
        "(`readout build` makes it again): per_query.team.")


# --- the rule, as frozen -------------------------------------------------------------------------


def _move_margin(root: Path, margin: str) -> None:
    path = root / "design" / "regression.md"
    path.write_text(path.read_text(encoding="utf-8").replace("margin: 0.01", f"margin: {margin}"), encoding="utf-8")


def test_a_margin_moved_and_not_frozen_is_refused(released, monkeypatch, capsys):
    root = released
    _move_margin(root, "0.5")
    outcome = regress(root, monkeypatch, capsys)
    assert outcome.code == 2
    assert one_line_error(outcome).startswith(
        "Error: design/regression.md:6: the regression block's document changed since the last freeze (sha256 ")
    assert one_line_error(outcome).endswith(
        "the block decides only as frozen; run `readout freeze` (once results exist, with --reason and --post-hoc "
        "regression)")


def test_a_margin_moved_after_the_results_is_post_hoc_in_regress_and_on_the_page(released, monkeypatch, capsys):
    root = released
    _move_margin(root, "0.05")
    refused = run_cli(root, monkeypatch, capsys, "freeze", "--reason", "a looser margin")
    assert refused.code == 2 and "--post-hoc regression" in one_line_error(refused)
    frozen = run_cli(root, monkeypatch, capsys, "freeze", "--reason", "a looser margin", "--post-hoc", "regression")
    assert frozen.code == 0, frozen.err
    outcome = regress(root, monkeypatch, capsys, "--format", "json")
    report = json.loads(outcome.out)
    assert outcome.code == 0 and report["frozen"]["post_hoc"] is True and report["frozen"]["moved"] == ["margin"]
    assert report["frozen"]["acknowledged"] is True and report["frozen"]["reason"] == "a looser margin"
    text = regress(root, monkeypatch, capsys)
    number = report["frozen"]["freeze"]
    assert f"post hoc: freeze {number} (" in text.out.splitlines()[2]
    assert text.out.splitlines()[2].endswith("set or moved the regression block (margin) after results existed; "
                                             "reason: a looser margin.")
    said = report["frozen"]["said"]
    assert said.startswith("post hoc: ")
    assert text.out.splitlines()[-1].endswith(f" The verdict is post hoc: {said[len('post hoc: '):]}.")
    # The page's since-baseline section says the same.
    page = _since_baseline_page(root, monkeypatch, capsys)
    assert '<mark class="post-hoc">' in page and "post hoc" in page
    assert "set or moved the regression block (margin) after results existed" in page


@pytest.mark.parametrize("margin, shown", [("0x10", "0x10"), ("1_000", "1_000"), ("1.5", "1.5"), ("1", "1"),
                                           ("0", "0"), ("-0.01", "-0.01"), (".inf", ".inf"), ("'ten'", "ten")])
def test_a_margin_outside_the_metric_range_or_in_a_yaml_1_1_spelling_is_refused(tmp_path, monkeypatch, capsys,
                                                                                 margin, shown):
    design = tmp_path / "design"
    design.mkdir()
    (design / "regression.md").write_text(regression_block(margin=margin), encoding="utf-8")
    from generator.claims.record.regression_block import read_regression_block
    from generator.storage.errors import InputError

    with pytest.raises(InputError) as raised:
        read_regression_block(design)
    assert raised.value.field == "margin" and raised.value.line == 8
    assert raised.value.reason == ("the non-inferiority margin in the metric's units: a plain decimal above 0 and "
                                   f"below 1 (every metric lies in [0, 1]), e.g. 0.01, got {shown}")


def test_a_margin_in_decimal_spellings_is_read_as_written(tmp_path):
    from generator.claims.record.regression_block import read_regression_block

    for written, value in (("0.01", 0.01), ("1e-2", 0.01), ("+0.25", 0.25), (".5", 0.5)):
        (tmp_path / "regression.md").write_text(regression_block(margin=written), encoding="utf-8")
        assert read_regression_block(tmp_path).margin == value


# --- what differs is named -----------------------------------------------------------------------


def test_a_baseline_on_another_query_set_is_refused_naming_both_sets(released, monkeypatch, capsys):
    root = released
    copy_release(root, "release-2", root / "outputs" / "sample", names=("results.json",))
    git_commit(root, "the release sample as a baseline", "outputs/sample")
    other = regress(root, monkeypatch, capsys, "--baseline", "outputs/sample/results.json")
    assert other.code == 2
    line = one_line_error(other)
    assert line == ("Error: outputs/results-all.json: the query sets differ: 120 queries, every test query now, 20 "
                    "queries, the release sample in the baseline (outputs/sample/results.json); 100 only now, 0 only "
                    "in the baseline (first: q100, q101); compare with a baseline of results-all.json")


def test_a_baseline_on_another_corpus_is_refused_naming_both_hashes(released, monkeypatch, capsys):
    root = released
    release_2 = json.loads(committed(root, "release-2:outputs/results-all.json"))
    now = json.loads((root / "outputs" / "results-all.json").read_text(encoding="utf-8"))
    corpus = data_of(root) / "corpus.jsonl"
    corpus.write_text(corpus.read_text(encoding="utf-8").replace("protein", "proteins", 1), encoding="utf-8")
    evaluate_release(root, rank_release_3)
    git_commit(root, "release 3 on an edited corpus", ".")
    outcome = regress(root, monkeypatch, capsys, "--baseline", "release-2")
    assert outcome.code == 2
    then = release_2["manifest"]["inputs"]["corpus.jsonl"]["sha256"]
    edited = json.loads((root / "outputs" / "results-all.json").read_text(encoding="utf-8"))
    assert edited["manifest"]["inputs"]["corpus.jsonl"]["sha256"] != now["manifest"]["inputs"]["corpus.jsonl"]["sha256"]
    assert one_line_error(outcome) == (
        "Error: outputs/results-all.json: measured on another corpus than the baseline "
        f"({run_git(root, 'rev-parse', 'release-2')[:12]}:outputs/results-all.json): corpus.jsonl sha256 "
        f"{edited['manifest']['inputs']['corpus.jsonl']['sha256'][:12]} now, corpus.jsonl sha256 {then[:12]} in the "
        "baseline: not a change of the system; measure the baseline again on this corpus")


def test_other_judgements_and_another_metric_definition_are_refused_naming_what_differs(released, monkeypatch,
                                                                                         capsys):
    from generator.claims.record.regression_block import read_regression_block
    from generator.storage.errors import InputError
    from generator.claims.record.noninferiority import changes_since
    from generator.core.results import read_results

    root = released
    block = read_regression_block(root / "design")
    current = read_results(root / "outputs" / "results-all.json")
    baseline_path = root.parent / "baseline.json"
    baseline_path.write_text(committed(root, "release-2:outputs/results-all.json"))

    def refusal(change) -> str:
        reseal(baseline_path, change)
        with pytest.raises(InputError) as raised:
            changes_since(block, read_results(baseline_path), "baseline.json", current, "now.json")
        return raised.value.reason

    assert refusal(lambda data: data["manifest"]["qrels_copy"].update(sha256="ab" * 32)).startswith(
        "the judgements differ from the baseline's (baseline.json): qrels sha256 ")
    baseline_path.write_text(committed(root, "release-2:outputs/results-all.json"))
    said = refusal(lambda data: data["manifest"]["metrics"]["nDCG@10"].update(gain="exponential"))
    assert said.startswith("metric nDCG@10 is defined otherwise than in the baseline (baseline.json): ") and \
        "'gain': 'exponential'" in said and said.endswith("(measure the baseline again with this definition)")


# --- a run file is an input ----------------------------------------------------------------------


def _release_build(root: Path, rank_of, capsys) -> str:
    write_team_run(root / "runs" / "team.trec", data_of(root), rank_of)
    capsys.readouterr()
    assert main(["build", str(root)]) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def test_a_run_file_replaced_after_the_results_is_re_evaluated_by_build_and_fails_the_gate(tmp_path, monkeypatch,
                                                                                           capsys):
    root = release_project(tmp_path)
    _release_build(root, rank_release_1, capsys)
    git_commit(root, "release 1", ".")
    assert run_cli(root, monkeypatch, capsys, "gate").code == 0
    # The team replaces its run and commits it without building: the readout keeps release 1's figures.
    write_team_run(root / "runs" / "team.trec", data_of(root), rank_release_3)
    git_commit(root, "a new run, not built", "runs/team.trec")
    gate = run_cli(root, monkeypatch, capsys, "gate")
    assert gate.code == 1, gate.out + gate.err
    stale = [line for line in gate.out.splitlines() if "run file runs/team.trec (row team) changed" in line]
    assert [line.split(":", 1)[0] for line in stale] == ["outputs/results.json", "outputs/results-all.json"]
    assert stale[0].endswith("the results no longer describe their inputs; `readout build` makes them again (commit "
                             "what it writes)")
    out = _release_build(root, rank_release_3, capsys)
    assert out.splitlines()[0].startswith("results: evaluating (run file runs/team.trec (row team) changed after "
                                          "results.json was made from it: sha256 ")
    assert any(line.startswith("results results-all.json: evaluating (run file runs/team.trec") for line in
               out.splitlines())
    git_commit(root, "release 3, built", ".")
    assert run_cli(root, monkeypatch, capsys, "gate").code == 0
    # Built again with nothing changed: both files are current, nothing is evaluated.
    again = _release_build(root, rank_release_3, capsys)
    assert again.splitlines()[:2] == [
        "results: up to date (inputs and parameters unchanged); evaluation skipped",
        "results results-all.json: up to date (inputs and parameters unchanged); evaluation skipped"]


def test_a_configured_results_file_that_is_missing_fails_the_gate_naming_the_command(tmp_path, monkeypatch, capsys):
    root = release_project(tmp_path)
    _release_build(root, rank_release_1, capsys)
    (root / "outputs" / "results-all.json").unlink()
    git_commit(root, "release 1 without its every-query file", ".")
    gate = run_cli(root, monkeypatch, capsys, "gate")
    assert gate.code == 1
    assert ("outputs/results-all.json: missing (results-all.json, which readout.yaml names (evaluate.all_results)): "
            "`readout build` writes it") in gate.out


def test_a_decision_on_a_missing_results_file_names_it_and_the_command_that_writes_it(tmp_path, make_project,
                                                                                      monkeypatch, capsys):
    from generator.commands.build import configured_query_sets
    from generator.project import load_project
    from tests.conftest import add_design

    root = make_project(tmp_path / "p")
    add_design(root, """
## D9. Every test query says the same

```trigger
decision: D9
when: low > 0
fires: use hybrid
otherwise: keep dense
file: results-all.json
values:
  low: comparisons.hybrid_vs_dense.metrics.nDCG@5.ci95_low
```
""")
    outcome = run_cli(root, monkeypatch, capsys, "check", "--no-record")
    assert ("Decision D9: trigger cannot be decided (when low > 0; low = not measured); outputs/results-all.json does "
            "not exist: `readout build` writes it") in outcome.out.splitlines()
    # ... and build does: the design reads it, so it is a results file the project keeps current.
    assert configured_query_sets(load_project(root))["all"] == "results-all.json, which decision D9 reads"


# --- what it writes ------------------------------------------------------------------------------


def test_the_json_report_has_a_stable_shape(released, monkeypatch, capsys):
    root = released
    outcome = regress(root, monkeypatch, capsys, "--format", "json")
    report = json.loads(outcome.out)
    assert list(report) == ["baseline", "changes", "counts", "design", "frozen", "now", "ok", "queries", "summary"]
    assert list(report["changes"][0]) == ["baseline", "change", "ci95_high", "ci95_low", "interval_method", "losses",
                                          "metric", "now", "queries", "queries_needed", "row", "sd_difference", "ties",
                                          "verdict", "why", "wins"]
    assert report["design"] == {"baseline": None, "document": "design/regression.md", "file": "results-all.json",
                                "inconclusive": "warn", "line": 6, "margin": 0.01, "metrics": ["nDCG@10"],
                                "rows": ["team"]}
    assert report["counts"] == {"cannot be decided": 0, "inconclusive": 0, "non-inferior": 0, "regression": 1}
    assert report["baseline"]["kind"] == "git" and report["frozen"]["post_hoc"] is False
    assert outcome.out == regress(root, monkeypatch, capsys, "--format", "json").out


def test_github_annotations_and_the_step_summary_table(released, monkeypatch, capsys):
    root = released
    summary = root.parent / "step-summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    outcome = regress(root, monkeypatch, capsys, "--format", "github")
    assert outcome.code == 1
    lines = outcome.out.splitlines()
    assert lines[0].startswith("::error file=design/regression.md,line=6,title=readout regress%3A team nDCG@10::"
                               "team nDCG@10: baseline ")
    assert lines[1].startswith("::error title=readout regress::FAIL: 1 of 1 changes is a regression")
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n### readout regress: FAIL\n")   # appended, never replaced
    assert ("| Row | Metric | Baseline | Now | Change | 95% interval | Verdict |\n"
            "| --- | --- | ---: | ---: | ---: | --- | --- |\n| team | nDCG@10 | ") in text
    assert text.count("| **regression** |") == 1


# --- the readout's since_baseline section ---------------------------------------------------------


def _since_baseline_page(root: Path, monkeypatch, capsys) -> str:
    """The release-2 results and runs committed as the baseline file readout.yaml names, and a
    section that shows it: the page's section, rendered."""
    baseline = root / "baseline"
    if not baseline.is_dir():
        copy_release(root, "release-2", baseline)
        config = yaml.safe_load((root / "readout.yaml").read_text(encoding="utf-8"))
        config["regression"] = {"baseline": "baseline/results-all.json"}
        config["outputs"]["readout"]["sections"].append(
            {"id": "since-release", "title": "Since the last release", "show": ["since_baseline"]})
        (root / "readout.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    outcome = run_cli(root, monkeypatch, capsys, "render")
    assert outcome.code == 0, outcome.err
    html = (root / "outputs" / "readout.html").read_text(encoding="utf-8")
    section = html[html.index('<section id="section-since-release">'):]
    return section[:section.index("</section>")]


def test_the_readout_section_renders_the_regression_from_the_baseline_file(released, monkeypatch, capsys):
    root = released
    section = _since_baseline_page(root, monkeypatch, capsys)
    assert "<caption>Change since the baseline" in section
    row = next(line for line in section.splitlines() if line.startswith('<tr><th scope="row"><code>team'))
    assert '<td class="text">regression</td>' in row and "post-hoc" not in section
    assert "Baseline file <code>baseline/results-all.json</code>; non-inferiority margin 0.01" in section
    assert run_cli(root, monkeypatch, capsys, "render", "--check").code == 0


def test_the_section_refuses_a_forged_baseline_file(released, monkeypatch, capsys):
    root = released
    _since_baseline_page(root, monkeypatch, capsys)
    page_before = (root / "outputs" / "readout.html").read_bytes()
    reseal(root / "baseline" / "results-all.json", lower_team(0.1))
    outcome = run_cli(root, monkeypatch, capsys, "render")
    # The check re-derives what a section shows before the render reads it: a finding, not a page.
    assert outcome.code == 1
    assert outcome.err.startswith("results: baseline/results-all.json: the since_baseline section shows it, but it "
                                  "does not re-derive"), outcome.err
    assert "per_query.team" in outcome.err
    assert (root / "outputs" / "readout.html").read_bytes() == page_before


def test_the_section_reads_the_baseline_file_and_never_git(released, monkeypatch, capsys):
    import subprocess

    root = released
    _since_baseline_page(root, monkeypatch, capsys)

    def no_git(*args, **kwargs):
        raise AssertionError(f"a render ran a program: {args[0] if args else kwargs}")

    monkeypatch.setattr(subprocess, "run", no_git)
    monkeypatch.setattr(subprocess, "Popen", no_git)
    assert run_cli(root, monkeypatch, capsys, "render", "--check").code == 0


def test_since_baseline_needs_the_baseline_file_in_readout_yaml(released, monkeypatch, capsys):
    root = released
    _since_baseline_page(root, monkeypatch, capsys)
    config = yaml.safe_load((root / "readout.yaml").read_text(encoding="utf-8"))
    config.pop("regression")
    (root / "readout.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    line = one_line_error(run_cli(root, monkeypatch, capsys, "render"))
    assert line.startswith("Error: readout.yaml:") and line.endswith(
        "since_baseline needs regression.baseline in readout.yaml: the committed baseline results file it compares "
        "with")



def test_a_baseline_under_outputs_is_refused_with_where_it_belongs(released, monkeypatch, capsys):
    """outputs/ holds only what readout writes: a baseline kept there would fail the gate's
    ownership check later, so readout.yaml is refused at once, naming the field."""
    root = released
    _since_baseline_page(root, monkeypatch, capsys)
    config = yaml.safe_load((root / "readout.yaml").read_text(encoding="utf-8"))
    config["regression"] = {"baseline": "outputs/baseline/results-all.json"}
    (root / "readout.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    outcome = run_cli(root, monkeypatch, capsys, "render")
    assert outcome.code == 2
    line = one_line_error(outcome)
    assert line.startswith("Error: readout.yaml:") and "regression.baseline" in line
    assert line.endswith("keep it outside outputs/, e.g. baseline/results.json with its runs folder beside it")

# --- the three-release walk-through of docs/commands.md ---------------------------------------------


@pytest.fixture(scope="module")
def walkthrough(tmp_path_factory):
    """init, the design frozen and committed, then three releases, each built and committed on its
    branch, the gate and regress run as CI runs them on the pull request, and merged. Returns the
    project, regress's exit codes and the step summary it appended to."""
    monkeypatch, capsys = pytest.MonkeyPatch(), _Capture()
    base = tmp_path_factory.mktemp("walkthrough")
    root = release_project(base)
    summary = base / "step-summary.md"
    codes, gates, said = [], [], []
    try:
        for number, rank_of in ((1, rank_release_1), (2, rank_release_2), (3, rank_release_3)):
            run_git(root, "checkout", "-q", "-b", f"release-{number}", "main")
            _release_build(root, rank_of, capsys)
            git_commit(root, f"release {number}", ".")
            gates.append(run_cli(root, monkeypatch, capsys, "gate").code)
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                assert main(["regress", str(root)]) in (0, 1)
            said.append(printed.getvalue())
            monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
            codes.append(regress(root, monkeypatch, capsys, "--format", "github").code)
            monkeypatch.delenv("GITHUB_STEP_SUMMARY")
            merge(root, f"release-{number}")
    finally:
        monkeypatch.undo()
    return root, codes, gates, summary.read_text(encoding="utf-8"), said


class _Capture:
    """capsys for a module fixture, which cannot have pytest's: what main() prints is left alone."""

    def readouterr(self) -> _Captured:
        return _Captured("", "")


class _Captured(NamedTuple):
    out: str
    err: str


def test_three_releases_from_init_pass_pass_and_fail_with_the_step_summary(walkthrough):
    _, codes, gates, summary, said = walkthrough
    assert gates == [0, 0, 0] and codes == [0, 0, 1]
    tables = summary.split("### readout regress: ")[1:]
    assert [table.split("\n", 1)[0] for table in tables] == ["PASS", "PASS", "FAIL"]
    assert "| Row |" not in tables[0] and "a first release" in tables[0]
    assert "| team | nDCG@10 | 0.3927 | 0.4355 | +0.0429 | [+0.0104, +0.0770] | non-inferior |" in tables[1]
    assert "| team | nDCG@10 | 0.4355 | 0.4035 | -0.0320 | [-0.0678, -0.0083] | **regression** |" in tables[2]
    # docs/commands.md shows this run's output: each verdict line and summary, as printed here.
    from tests.conftest import REPOSITORY_ROOT

    def commits_left_out(text: str) -> str:   # a commit's id follows the time it was made
        return re.sub(r"\b[0-9a-f]{12}\b", "COMMIT", text)

    guide = commits_left_out((REPOSITORY_ROOT / "docs" / "commands.md").read_text(encoding="utf-8"))
    for printed in said:
        for line in printed.splitlines()[3:]:
            assert commits_left_out(line) in guide, line
    assert tables[2].split("| --- | --- |", 1)[1].split("\n", 1)[1].strip() in guide


# The model stack: `readout gate` and `readout regress` run from an install without it (the `gate`
# requirement set of pyproject.toml, which the GitHub Action installs).
MODEL_STACK = ("torch", "sentence_transformers", "bm25s", "transformers")
# A child interpreter as the light install would be: every installed distribution outside what the
# gate set installs (`allowed`) is not there, the model stack above all; an optional import (bs4
# tries charset_normalizer) meets the ImportError it would meet there.
_AS_THE_GATE_SET_INSTALLS = """
import importlib.abc, importlib.metadata, json, sys
from packaging.utils import canonicalize_name
ALLOWED = set(json.loads(sys.argv[2]))
OWNERS = importlib.metadata.packages_distributions()

class NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.split(".")[0]
        owners = {{canonicalize_name(owner) for owner in OWNERS.get(top, ())}}
        if top != "generator" and (top in {blocked!r} or (owners and not owners & ALLOWED)):
            raise ImportError(f"{{name}} is not installed where the gate runs")
        return None

sys.meta_path.insert(0, NotInstalled())
from generator.commands.cli import main
codes = [main(["gate", "--no-fetch", sys.argv[1]]), main(["regress", sys.argv[1], "--baseline", "release-2"])]
print(json.dumps({{"codes": codes, "modules": sorted(sys.modules)}}))
"""


def _gate_requirements() -> tuple[list[str], list[str]]:
    import tomllib

    from tests.conftest import REPOSITORY_ROOT

    project = tomllib.loads((REPOSITORY_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return project["project"]["dependencies"], project["dependency-groups"]["gate"]


def _distributions_needed(requirements: list[str]) -> set[str]:
    """The distributions `requirements` install, with everything they require, as installed here."""
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    needed: set[str] = set()
    pending = [Requirement(text) for text in requirements]
    while pending:
        requirement = pending.pop()
        name = canonicalize_name(requirement.name)
        if name in needed or (requirement.marker and not requirement.marker.evaluate({"extra": ""})):
            continue
        needed.add(name)
        pending += [Requirement(text) for text in metadata.requires(requirement.name) or ()]
    return needed


def test_the_gate_requirement_set_is_the_dependencies_without_the_model_stack():
    dependencies, gate = _gate_requirements()
    heavy = [text for text in dependencies if text.split(">")[0].split("=")[0] in ("bm25s", "sentence-transformers",
                                                                                  "torch")]
    assert len(heavy) == 3 and gate == [text for text in dependencies if text not in heavy]


def test_the_gate_and_regress_run_on_what_the_gate_set_installs_without_the_model_stack(walkthrough, tmp_path):
    from tests.conftest import run_python

    root = walkthrough[0]
    allowed = sorted(_distributions_needed(_gate_requirements()[1]))
    assert not {"torch", "sentence-transformers", "bm25s", "transformers"} & set(allowed)
    completed = run_python("-c", _AS_THE_GATE_SET_INSTALLS.format(blocked=MODEL_STACK), str(root), json.dumps(allowed),
                           cwd=root, env={**os.environ, "READOUT_CACHE": str(tmp_path / "cache")}, timeout=300)
    assert completed.returncode == 0, completed.stderr[-3000:]
    ran = json.loads(completed.stdout.strip().splitlines()[-1])
    assert ran["codes"] == [0, 1]          # the gate passes release 3; regress finds its loss
    assert not {module.split(".")[0] for module in ran["modules"]} & set(MODEL_STACK)
