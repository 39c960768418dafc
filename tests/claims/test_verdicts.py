"""A verdict must be computed, wherever it appears (generator.core.text.verdicts, generator.claims.tracing.checker).

A fixture per rule, Vale-style: a passing case, a failing case and other spellings of the failing
case, each through the real checker.
"""

from __future__ import annotations

import pytest

from generator.claims.tracing.checker import check_project
from generator.commands.cli import main
from generator.project import load_project
from generator.core.text.verdicts import find_verdicts
from generator.core.text.wording import data_text_problem, label_problem, with_article
from tests.conftest import BUDGET_REQUIREMENTS, FIXTURE_QUERIES, FUSION, claim, d5_record, edit_config, refreeze

def _project(make_project, tmp_path, extra: str, **results):
    root = make_project(tmp_path / "p", extra_claims=extra, results=results)
    with (root / "design" / "decisions.md").open("a", encoding="utf-8") as handle:
        handle.write(d5_record())
    (root / "design" / "requirements.md").write_text(BUDGET_REQUIREMENTS, encoding="utf-8")
    refreeze(root)
    return root


def _result(make_project, tmp_path, text: str, source: str = FUSION, **results):
    root = _project(make_project, tmp_path, claim("v", text, source, kind="recommendation", section="verdict"),
                    **results)
    return check_project(load_project(root)).result("v")


# Verdicts a reader reads in a claim that cites no decision: each is refused.
UNCOMPUTED = [
    "We should adopt the reranker.", "Ship it.", "The reranker goes live next week.", "Roll the reranker out.",
    "Switch the reranker on.", "Turn it off.", "Keep the cross-encoder.", "Drop the reranker from the pipeline.",
    "We recommend hybrid+rerank.", "The reranker pays for itself.", "Reranking is not worth its time here.",
    "Put the reranker into production.", "Whoever says we should not ship the reranker is wrong.",
    'The plan is "deploy the reranker" this week.', "It was green-lit.", "We would never ship the reranker.",
    "Don\u2019t deploy it yet.", "Use the reranker in production.",
]


@pytest.mark.parametrize("text", UNCOMPUTED)
def test_a_verdict_without_its_decision_is_untraceable(make_project, tmp_path, text):
    result = _result(make_project, tmp_path, text)
    assert not result.traceable
    assert any("gives a verdict" in reason and "no decision record computes" in reason for reason in result.reasons)


# Sentences that name the reranker or the release without deciding anything.
NOT_VERDICTS = ['The decision records say: "Hybrid uses RRF with constant 60 over both top-50 lists."', "The release sample is twenty queries.",
                "The cross-encoder reorders the same candidates.", "Hybrid uses RRF over both lists.",
                "A reranker scores each query-document pair."]


@pytest.mark.parametrize("text", NOT_VERDICTS)
def test_a_sentence_that_decides_nothing_is_not_a_verdict(text):
    assert find_verdicts(text) == []


def test_a_cited_decision_licenses_its_outcome_and_no_other_verdict(make_project, tmp_path):
    source = "- decision: {trigger: D5, state: does not fire}"
    shape = {"shape_milliseconds": 900}
    assert _result(make_project, tmp_path / "a", "Do not ship the reranker.", source, **shape).traceable
    for number, text in enumerate(["Do not ship the reranker; deploy the hybrid instead.",
                                   "Do not ship the reranker, but switch it on for a trial.",
                                   "Do not ship the reranker, and adopt it next quarter."]):
        result = _result(make_project, tmp_path / f"b{number}", text, source, **shape)
        assert not result.traceable, text
        assert any("which no cited decision computes" in reason for reason in result.reasons), result.reasons


def test_an_undecided_decision_reads_naturally(make_project, tmp_path):
    source = "- decision: {trigger: D5, state: cannot be decided}"
    shape = {"shape_milliseconds": 100}
    assert _result(make_project, tmp_path / "a", "Whether to ship the reranker cannot be decided yet.", source,
                   **shape).traceable
    result = _result(make_project, tmp_path / "b", "Ship the reranker: it cannot be decided yet.", source, **shape)
    assert not result.traceable


def test_verdicts_in_a_declared_language_are_recognised(make_project, tmp_path):
    text = "Wir sollten den Reranker ausrollen."
    root = _project(make_project, tmp_path / "de", claim("v", text, FUSION))
    ledger = root / "claims" / "ledger.yaml"
    ledger.write_text(ledger.read_text(encoding="utf-8").replace("version: 1\n", "version: 1\nlanguages: [de]\n", 1),
                      encoding="utf-8")
    result = check_project(load_project(root)).result("v")
    assert not result.traceable and "'ausrollen'" in result.reasons[-1]


def test_an_unknown_language_is_refused_when_the_ledger_loads(make_project, tmp_path, capsys):
    root = make_project(tmp_path / "p")
    ledger = root / "claims" / "ledger.yaml"
    ledger.write_text(ledger.read_text(encoding="utf-8").replace("version: 1\n", "version: 1\nlanguages: [xx]\n", 1),
                      encoding="utf-8")
    assert main(["check", "--no-record", str(root)]) == 2
    assert "no verdict lexicon for language 'xx'" in capsys.readouterr().err


@pytest.mark.parametrize("text", ["ship the reranker", "Deploy it", "the reranker pays for itself",
                                  "keep the cross-encoder", "ausrollen"])
def test_labels_and_table_words_carry_no_verdict(text):
    assert "verdict" in (label_problem(text) or "")
    assert "verdict" in (data_text_problem(text) or "")


def test_a_question_heading_may_name_a_verdict():
    assert label_problem("Should we ship the reranker") is None
    assert label_problem("When reranking is not worth its time") is None


def test_a_strike_reason_carries_no_verdict(make_project, tmp_path, capsys):
    extra = claim("s", "A guess.", extra='status: struck\nstrike_reason: "we ship the reranker anyway"')
    root = make_project(tmp_path / "p", extra_claims=extra)
    assert main(["check", "--no-record", str(root)]) == 2
    assert "gives a verdict ('ship')" in capsys.readouterr().err


def test_a_section_title_carries_no_verdict(make_project, tmp_path, capsys):
    root = make_project(tmp_path / "p")
    edit_config(root, lambda data: data["outputs"]["readout"]["sections"][0].update(title="Ship the reranker"))
    assert main(["check", "--no-record", str(root)]) == 2
    assert "a label that gives a verdict" in capsys.readouterr().err


def test_the_fixture_queries_are_twenty():
    assert len(FIXTURE_QUERIES) == 20


def test_an_identifier_that_names_nothing_is_a_number_typed_by_hand(make_project, tmp_path):
    extra = (claim("T-03", 'The decision records say: "Hybrid uses RRF with constant 60 over both top-50 lists."', FUSION)
             + claim("named", 'Claim T-03 says: "Hybrid uses RRF with constant 60 over both top-50 lists."', FUSION)
             + claim("invented", 'Query P-629 says: "Hybrid uses RRF with constant 60 over both top-50 lists."', FUSION))
    report = check_project(load_project(make_project(tmp_path / "p", extra_claims=extra)))
    assert report.result("named").traceable
    assert "number 'P-629' is typed by hand" in "; ".join(report.result("invented").reasons)


@pytest.mark.parametrize("noun, written", [("effect", "an effect"), ("interval end", "an interval end"),
                                           ("margin", "a margin"), ("budget", "a budget"), ("change", "a change"),
                                           ("Outcome", "an Outcome"), ("query count", "a query count")])
def test_a_kind_is_named_after_its_indefinite_article(noun, written):
    assert with_article(noun) == written
