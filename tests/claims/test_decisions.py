"""Decisions computed, not written: budgets and reversal triggers in design documents, evaluated
by `readout check` with three-valued logic, cited by verdict claims; and the split between a cost
measured by shape (traceable) and the quality nobody measured (untraceable)."""

import json
import re

import pytest

from generator.claims.tracing.checker import check_project
from generator.claims.record.design_rules import read_design_rules
from generator.commands.cli import main
from generator.storage.errors import InputError
from generator.project import load_project
from generator.render.renderer import render_project

from tests.conftest import BUDGET_REQUIREMENTS, FIXTURE_QUERIES, d5_record, refreeze

VERDICT = """
- id: computed-verdict
  output: readout
  section: verdict
  kind: recommendation
  text: "{text}"
  sources:
    - decision: {{trigger: D5, state: "{state}"}}
"""


def _with_trigger(project, p95_path="rerank_cost.p95_milliseconds"):
    design = project / "design"
    (design / "requirements.md").write_text(BUDGET_REQUIREMENTS, encoding="utf-8")
    with (design / "decisions.md").open("a", encoding="utf-8") as handle:
        handle.write(d5_record(p95_path))
    refreeze(project)
    return project


def _project(make_project, tmp_path, extra_claims="", **results):
    return _with_trigger(make_project(tmp_path / "p", extra_claims=extra_claims, results=results))


def _decision(project):
    report = check_project(load_project(project))
    (row,) = [row for row in report.decisions if row.trigger.decision == "D5"]
    return report, row


def test_design_rules_are_read_with_their_lines(make_project, tmp_path):
    project = _project(make_project, tmp_path, shape_milliseconds=900)
    rules = read_design_rules(project / "design")
    assert rules.budgets["rerank_p95_milliseconds"].value == 500.0
    assert rules.budgets["rerank_p95_milliseconds"].document == "requirements.md"
    (trigger,) = rules.triggers
    assert trigger.title.startswith("D5.") and trigger.fires == "ship the reranker"
    lines = (project / "design" / "decisions.md").read_text().splitlines()
    assert lines[trigger.line - 1] == "decision: D5"


def test_p95_by_shape_over_budget_does_not_fire_although_quality_was_not_measured(make_project, tmp_path):
    _, row = _decision(_project(make_project, tmp_path, shape_milliseconds=900))
    assert row.state == "does not fire" and row.outcome == "do not ship the reranker"
    assert row.read["lift_low"]["measured"] is False and row.read["lift_p"]["measured"] is False
    assert row.read["p95"]["value"] == pytest.approx(900 + 0.95 * 19)
    assert row.read["p95"]["how"] == "measured by shape"
    assert row.read["budget"] == {"path": "budget.rerank_p95_milliseconds", "value": 500.0, "measured": True,
                                  "from": "design", "source": "requirements.md:6"}


def test_a_p95_within_budget_with_unmeasured_quality_cannot_be_decided(make_project, tmp_path):
    _, row = _decision(_project(make_project, tmp_path, shape_milliseconds=100))
    assert row.state == "cannot be decided"
    assert "not measured" in row.reason


def test_a_measured_lift_within_budget_fires_and_changes_the_decision_table(make_project, tmp_path):
    fast = {q: 40.0 for q in FIXTURE_QUERIES}
    slow = {q: 40.0 + 30 * index for index, q in enumerate(FIXTURE_QUERIES)}
    fired = _project(make_project, tmp_path / "a", rerank_milliseconds=fast)
    held = _project(make_project, tmp_path / "b", rerank_milliseconds=slow)
    _, fired_row = _decision(fired)
    _, held_row = _decision(held)
    assert fired_row.read["lift_low"]["value"] > 0 and fired_row.read["lift_p"]["value"] < 0.05
    assert fired_row.state == "fires" and fired_row.outcome == "ship the reranker"
    assert held_row.state == "does not fire" and held_row.read["p95"]["value"] > 500
    tables = []
    for project in (fired, held):
        render_project(load_project(project), draft=True)  # the fixture ledger says the rerank row was not measured
        html = (project / "outputs" / "readout.html").read_text()
        table = re.search(r'<table class="decisions">.*?</table>', html, re.S)
        assert table, "the decision table is rendered"
        tables.append(table.group(0))
    assert "ship the reranker" in tables[0] and "do not ship" not in tables[0]
    assert "do not ship the reranker" in tables[1]


def test_a_trigger_over_a_missing_path_is_an_input_error(make_project, tmp_path, capsys):
    project = _with_trigger(make_project(tmp_path / "p", results={"shape_milliseconds": 900}),
                            p95_path="rerank_cost.p99_milliseconds")
    with pytest.raises(InputError) as raised:
        check_project(load_project(project))
    assert raised.value.field == "values.p95" and "p99_milliseconds" in raised.value.reason
    assert main(["check", str(project)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and re.match(r".*design/decisions\.md:\d+: values\.p95: ", err[0])


@pytest.mark.parametrize("broken, field", [
    ("budget: budget.nope", "values.budget"),
    ("when: lift_low > 0 and p95 <= budget and nobody", "when"),
    ("fires: do not ship the reranker", "otherwise"),
    ("when: __import__('os')", "when"),
])
def test_malformed_triggers_are_refused_with_their_line(make_project, tmp_path, broken, field):
    project = _with_trigger(make_project(tmp_path / "p", results={"shape_milliseconds": 900}))
    path = project / "design" / "decisions.md"
    key = broken.split(":")[0]
    text = path.read_text()
    if key == "budget":
        text = text.replace("  budget: budget.rerank_p95_milliseconds", "  " + broken)
    else:
        text = re.sub(rf"^{key}: .*$", broken, text, count=1, flags=re.M)
    path.write_text(text)
    with pytest.raises(InputError) as raised:
        read_design_rules(project / "design")
    assert raised.value.field == field and raised.value.line is not None


def test_a_trigger_outside_its_decision_record_is_refused(make_project, tmp_path):
    project = _with_trigger(make_project(tmp_path / "p", results={"shape_milliseconds": 900}))
    path = project / "design" / "decisions.md"
    path.write_text(path.read_text().replace("## D5. A reranker", "## Reranker"))
    with pytest.raises(InputError, match="under its decision record"):
        read_design_rules(project / "design")


# --- verdict claims cite the decision ------------------------------------------------------


def _verdict(make_project, tmp_path, text, state, **results):
    project = _project(make_project, tmp_path, extra_claims=VERDICT.format(text=text, state=state), **results)
    return check_project(load_project(project)).result("computed-verdict")


def test_a_verdict_that_follows_from_the_trigger_traces(make_project, tmp_path):
    result = _verdict(make_project, tmp_path, "Do not ship the reranker: the trigger computes it.",
                      "does not fire", shape_milliseconds=900)
    assert result.traceable, result.reasons
    assert [e.kind for e in result.evidence] == ["decision"]


@pytest.mark.parametrize("text, state, expected", [
    # The declared state is not what the trigger computes.
    ("Ship the reranker.", "fires", "the trigger does not fire"),
    # The state is right but the sentence says the other outcome.
    ("Ship the reranker now.", "does not fire", "must say 'do not ship the reranker'"),
    # Both outcomes in one sentence: it says nothing.
    ("Do not ship the reranker, or ship the reranker.", "does not fire", "but also"),
    # The computed outcome, negated.
    ("We will never do not ship the reranker.", "does not fire", "negates"),
])
def test_a_verdict_the_trigger_does_not_give_is_untraceable(make_project, tmp_path, text, state, expected):
    result = _verdict(make_project, tmp_path, text, state, shape_milliseconds=900)
    assert not result.traceable
    assert any(expected in reason for reason in result.reasons), result.reasons


def test_a_hand_written_verdict_is_untraceable(make_project, tmp_path):
    extra = """
- id: hand-verdict
  output: readout
  section: verdict
  kind: recommendation
  text: "We ship hybrid search with the reranker."
  sources:
    - design: {document: decisions.md, quote: "Hybrid uses RRF with constant 60 over both top-50 lists."}
"""
    project = _project(make_project, tmp_path, extra_claims=extra, shape_milliseconds=900)
    result = check_project(load_project(project)).result("hand-verdict")
    assert not result.traceable
    assert any("no decision record computes" in reason for reason in result.reasons)


def test_an_unknown_decision_is_untraceable(make_project, tmp_path):
    project = make_project(tmp_path / "p", results={"shape_milliseconds": 900},
                           extra_claims=VERDICT.format(text="Do not ship the reranker.", state="does not fire"))
    result = check_project(load_project(project)).result("computed-verdict")
    assert any("has no trigger block" in reason for reason in result.reasons)


def test_the_check_reports_every_decision_in_json(make_project, tmp_path, capsys):
    project = _project(make_project, tmp_path, shape_milliseconds=900)
    main(["check", str(project), "--format", "json", "--no-record"])
    (decision,) = json.loads(capsys.readouterr().out)["decisions"]
    assert decision["decision"] == "D5" and decision["state"] == "does not fire"
    assert decision["values"]["lift_low"]["measured"] is False


# --- cost by shape traces; quality it never measured does not ---------------------------------


COST_CLAIM = """
- id: shape-cost
  output: readout
  section: cost
  kind: performance
  text: "{text}"
  sources:
    - measured:
        values: {{p95: rerank_cost.p95_milliseconds}}
"""


def _cost_claim(make_project, tmp_path, text, **results):
    project = make_project(tmp_path / "p", extra_claims=COST_CLAIM.format(text=text),
                           results=results or {"shape_milliseconds": 900})
    return check_project(load_project(project)).result("shape-cost")


def test_a_cost_measured_by_shape_traces_when_the_sentence_says_so(make_project, tmp_path):
    result = _cost_claim(make_project, tmp_path,
                         "The reranker, measured by shape, takes {p95:,.0f} ms per query at p95; its quality "
                         "was not measured.")
    assert result.traceable, result.reasons


@pytest.mark.parametrize("text, expected", [
    ("The reranker takes {p95:,.0f} ms per query at p95.", "does not say so"),
    ("The reranker, measured by shape, takes {p95:,.0f} ms per query and lifts nDCG@5.", "speaks of quality"),
    ("Measured by shape, the reranker's better ranking costs {p95:,.0f} ms per query.", "speaks of quality"),
    ("Measured by shape, the reranker costs {p95:,.0f} ms per query for its **qual**ity.", "speaks of quality"),
])
def test_quality_beside_a_cost_measured_by_shape_is_untraceable(make_project, tmp_path, text, expected):
    result = _cost_claim(make_project, tmp_path, text)
    assert not result.traceable
    assert any(expected in reason for reason in result.reasons), result.reasons


def test_the_quality_of_a_cost_only_row_is_untraceable(make_project, tmp_path):
    extra = """
- id: shape-quality
  output: readout
  section: cost
  kind: performance
  text: "The reranker, measured by shape, reaches nDCG@5 {n:.3f} over hybrid."
  sources:
    - measured:
        values: {n: "comparisons.hybrid+rerank_vs_hybrid.metrics.nDCG@5.delta"}
"""
    project = make_project(tmp_path / "p", extra_claims=extra, results={"shape_milliseconds": 900})
    result = check_project(load_project(project)).result("shape-quality")
    assert not result.traceable
    assert any("was not measured" in reason for reason in result.reasons), result.reasons


def test_a_rows_own_cost_needs_no_shape_wording(make_project, tmp_path):
    times = {q: 40.0 + index for index, q in enumerate(FIXTURE_QUERIES)}
    result = _cost_claim(make_project, tmp_path, "The reranker takes {p95:,.0f} ms per query at p95.",
                         rerank_milliseconds=times)
    assert result.traceable, result.reasons


def test_a_fired_trigger_is_not_said_by_its_opposite_or_its_negation(make_project, tmp_path):
    fast = {q: 40.0 for q in FIXTURE_QUERIES}
    texts = {"Ship the reranker.": True, "Do not ship the reranker.": False,
             "Never ship the reranker.": False, "We would not ship the reranker.": False,
             # A cited decision licenses its own outcome word for word, never another verdict beside it.
             "Recommend it: ship the reranker, as D5 computes.": False,
             "Ship the reranker, as D5 computes.": True}
    for number, (text, traces) in enumerate(texts.items()):
        project = _project(make_project, tmp_path / str(number), rerank_milliseconds=fast,
                           extra_claims=VERDICT.format(text=text, state="fires"))
        result = check_project(load_project(project)).result("computed-verdict")
        assert result.traceable is traces, (text, result.reasons)


# --- trying to get round the rules ------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "We should **de**ploy the reranker.",          # Markdown splits the word; the reader sees it whole
    "S&#104;ip the reranker.",                     # an entity spells it
    'The plan: "ship the reranker" this week.',   # quoted, but quoting no design document
    "Roll it out: the reranker goes live.",
])
def test_a_verdict_in_another_spelling_still_needs_its_decision(make_project, tmp_path, text):
    extra = f"""
- id: sneaky-verdict
  output: readout
  section: verdict
  kind: recommendation
  text: '{text}'
  sources:
    - design: {{document: decisions.md, quote: "Hybrid uses RRF with constant 60 over both top-50 lists."}}
"""
    project = _project(make_project, tmp_path, extra_claims=extra, shape_milliseconds=900)
    result = check_project(load_project(project)).result("sneaky-verdict")
    assert not result.traceable
    assert any("no decision record computes" in reason for reason in result.reasons), result.reasons


@pytest.mark.parametrize("text, values, missing", [
    # Hybrid's change over dense presented as a bare lift.
    ("Hybrid lifts nDCG@5 by {d:+.3f}.", '{d: "table[search=hybrid].delta_nDCG@5_vs_dense"}', "dense"),
    # A comparison with dense read out as if it were against hybrid.
    ("Sparse changes nDCG@5 by {d:+.3f} against hybrid.",
     '{d: "comparisons.sparse_vs_dense.metrics.nDCG@5.delta"}', "dense"),
    # The row of a comparison is named only by its baseline.
    ("Against dense the change is {d:+.3f}.", '{d: "comparisons.hybrid_vs_dense.metrics.nDCG@5.delta"}', "hybrid"),
])
def test_a_change_names_its_row_and_its_baseline(make_project, tmp_path, text, values, missing):
    extra = f"""
- id: unnamed-baseline
  output: readout
  section: results
  kind: performance
  text: "{text}"
  sources:
    - measured:
        values: {values}
"""
    project = make_project(tmp_path / "p", extra_claims=extra)
    result = check_project(load_project(project)).result("unnamed-baseline")
    assert not result.traceable
    assert any(f"name {missing}" in reason or "not name that row" in reason for reason in result.reasons), \
        result.reasons


def test_a_cost_by_shape_from_another_sample_is_not_measured_there(make_project, tmp_path):
    """The 300-query file measures no cost by shape: the release sample's cost cannot be cited from it."""
    from generator.evaluate.pipeline import not_measured_cost, write_sealed_results
    from tests.conftest import fixture_evaluation

    project = make_project(tmp_path / "p", results={"shape_milliseconds": 900}, extra_claims="""
- id: cost-elsewhere
  output: readout
  section: cost
  kind: performance
  text: "Measured by shape on {queries} queries, the reranker takes {p95:,.0f} ms per query at p95."
  sources:
    - measured:
        file: results-all.json
        values: {p95: rerank_cost.p95_milliseconds, queries: queries}
""")
    evaluation = fixture_evaluation(hybrid_variant=1)
    evaluation.results["rerank_cost"] = not_measured_cost("BAAI/bge-reranker-v2-m3",
                                                          "cost by shape is measured on the release sample only")
    write_sealed_results(project / "outputs" / "results-all.json", project / "outputs" / "runs-all", evaluation)
    result = check_project(load_project(project)).result("cost-elsewhere")
    assert not result.traceable
    assert any("not measured" in reason for reason in result.reasons), result.reasons


def test_a_quality_word_spelled_through_markup_beside_a_shape_cost_is_caught(make_project, tmp_path):
    result = _cost_claim(make_project, tmp_path,
                         "Measured by shape, the reranker costs {p95:,.0f} ms per query and **re**call rises.")
    assert not result.traceable
    assert any("speaks of quality ('recall" in reason for reason in result.reasons), result.reasons
