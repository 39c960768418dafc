"""The lexicon as a second net over the author's words (rules/licensing.py): a word of an
assertive class is a result only a frame says, refused wherever the author writes it, with the
frame that would say it; a cause needs the design's mechanism quoted, "pre-registered" a decision
frozen before the results, and a correction the corrected p-value.

The fixture (conftest.fixture_evaluation): nDCG@5 dense 0.351, sparse 0.320, hybrid 0.406 on 20
queries, no pair distinguishable."""

import pytest

from generator.claims.tracing.checker import check_project
from generator.project import load_project
from tests.conftest import add_design, claim, measured

HYBRID, DENSE, SPARSE = "table[search=hybrid].nDCG@5", "table[search=dense].nDCG@5", "table[search=sparse].nDCG@5"
HYBRID_DENSE = {"h": HYBRID, "d": DENSE}


def check(make_project, tmp_path, text, values, predicate=None, *, kind="evaluative", languages=""):
    root = make_project(tmp_path / "p", extra_claims=claim("c", text, measured(values, predicate), kind=kind))
    if languages:
        ledger = root / "claims" / "ledger.yaml"
        ledger.write_text(ledger.read_text(encoding="utf-8").replace("version: 1\n", f"version: 1\nlanguages: [{languages}]\n", 1),
                          encoding="utf-8")
    return check_project(load_project(root)).result("c")


def codes(result) -> set[str]:
    return {finding.code for finding in result.findings}


# --- every assertive word, whatever its predicate says, is a frame's to say ------------------------

@pytest.mark.parametrize("text, predicate, frame", [
    ("Hybrid beats dense on nDCG@5, {h:.3f} against {d:.3f}.", "h > d", "comparison"),
    ("Dense trails hybrid on nDCG@5, {d:.3f} against {h:.3f}.", "h > d", "comparison"),
    ("Hybrid is significantly above dense on nDCG@5, {h:.3f} against {d:.3f}.", "h > d", "comparison"),
    ("Hybrid is as good as dense on nDCG@5, {h:.3f} against {d:.3f}.", None, "equivalence"),
    ("Hybrid and dense show no significant difference on nDCG@5, {h:.3f} against {d:.3f}.", None, "comparison"),
])
def test_an_assertive_word_is_refused_with_the_frame_that_says_it(make_project, tmp_path, text, predicate, frame):
    result = check(make_project, tmp_path, text, HYBRID_DENSE, predicate)
    found = [finding.message for finding in result.findings if finding.code == "word-licensed"]
    assert not result.traceable and found, result.reasons
    assert any(f"frame ({frame}" in message for message in found), found


def test_a_true_predicate_licenses_no_word(make_project, tmp_path):
    result = check(make_project, tmp_path, "Hybrid outperforms dense: {h:.3f} and {d:.3f}.", HYBRID_DENSE, "h > d")
    assert "word-licensed" in codes(result)


def test_the_same_values_without_an_assertive_word_trace(make_project, tmp_path):
    result = check(make_project, tmp_path, "Hybrid's nDCG@5 is {h:.3f} and dense's is {d:.3f}.", HYBRID_DENSE,
                   "h > d")
    assert result.traceable, result.reasons


# --- a correction said of an uncorrected p-value -------------------------------------------------

P_VALUE = "comparisons.hybrid_vs_dense.metrics.nDCG@5.p_value"
P_HOLM = "all_pairs.metrics.nDCG@5.pairs.hybrid_vs_dense.p_holm"


@pytest.mark.parametrize("text", [
    "After Holm's correction, hybrid's nDCG@5 change over dense has p = {p:.2f}.",
    "Hybrid's nDCG@5 change over dense has an adjusted p of {p:.2f}.",
    "Corrected for multiple comparisons, hybrid's nDCG@5 change over dense has p = {p:.2f}.",
    "Hybrid's nDCG@5 change over dense has a family-wise p of {p:.2f}.",
])
def test_an_unadjusted_p_quoted_as_corrected_is_refused(make_project, tmp_path, text):
    result = check(make_project, tmp_path, text, {"p": P_VALUE}, kind="factual")
    assert "correction-named" in codes(result), result.reasons


def test_a_corrected_p_quoted_as_corrected_traces(make_project, tmp_path):
    result = check(make_project, tmp_path, "After Holm's correction, the p of hybrid's nDCG@5 and dense's "
                   "pair is {p:.2f}.", {"p": P_HOLM}, kind="factual")
    assert result.traceable, result.reasons


# --- causes ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "Hybrid reaches nDCG@5 {h:.3f} because fusion recovers what dense misses.",
    "Hybrid reaches nDCG@5 {h:.3f}, which leads to fewer misses.",
    "Thanks to fusion, hybrid reaches nDCG@5 {h:.3f}.",
])
def test_a_cause_without_the_designs_mechanism_is_refused(make_project, tmp_path, text):
    result = check(make_project, tmp_path, text, {"h": HYBRID}, kind="causal")
    assert "word-licensed" in codes(result), result.reasons


# --- "pre-registered" -------------------------------------------------------------------------------

PREREGISTERED = [
    "Ship the reranker: its D5 rule was pre-registered.",
    "Ship the reranker: the D5 rule was fixed before the results.",
    "Ship the reranker, as decided in advance by D5.",
]


@pytest.mark.parametrize("text", PREREGISTERED)
def test_pre_registered_holds_for_a_rule_frozen_before_the_results(tmp_path, text):
    from tests.claims.test_preregistration import preregistered

    verdict = claim("verdict", text, "- decision: {trigger: D5, state: fires}", kind="recommendation",
                    section="verdict")
    result = check_project(load_project(preregistered(tmp_path / "p", extra_claims=verdict))).result("verdict")
    assert "word-licensed" not in codes(result), result.reasons


@pytest.mark.parametrize("text", PREREGISTERED)
def test_pre_registered_is_refused_for_a_rule_set_after_the_results(make_project, tmp_path, text):
    from tests.conftest import BUDGET_REQUIREMENTS, d5_record

    verdict = claim("verdict", text.replace("Ship the reranker", "Whether to ship the reranker cannot be decided"),
                    "- decision: {trigger: D5, state: cannot be decided}", kind="recommendation", section="verdict")
    root = make_project(tmp_path / "p", extra_claims=verdict)
    (root / "design" / "requirements.md").write_text(BUDGET_REQUIREMENTS, encoding="utf-8")
    add_design(root, d5_record())
    result = check_project(load_project(root)).result("verdict")
    assert any("post hoc, never pre-registered" in reason for reason in result.reasons), result.reasons


def test_pre_registered_without_a_decision_is_refused(make_project, tmp_path):
    result = check(make_project, tmp_path, "Hybrid's nDCG@5 is {h:.3f}, as pre-registered.", {"h": HYBRID},
                   kind="factual")
    assert any("only the design freeze says when a rule was fixed" in reason for reason in result.reasons), \
        result.reasons


# --- the ledger's other languages ----------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "Hybrid übertrifft dense bei nDCG@5: {h:.3f} gegen {d:.3f}.",
    "Hybrid ist signifikant besser als dense bei nDCG@5: {h:.3f} gegen {d:.3f}.",
    "Der Unterschied von hybrid zu dense bei nDCG@5 ({h:.3f} gegen {d:.3f}) ist nicht signifikant.",
])
def test_a_language_the_ledger_declares_is_read_with_its_own_lexicon(make_project, tmp_path, text):
    result = check(make_project, tmp_path, text, HYBRID_DENSE, "h > d", languages="de")
    assert "word-licensed" in codes(result), result.reasons
