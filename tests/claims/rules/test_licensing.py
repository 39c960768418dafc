"""Assertive words licensed by assertions that hold (rules/licensing.py): the families of
dishonest sentences a tired team writes, each in several spellings, beside the honest sentences
that must still trace.

The fixture (conftest.fixture_evaluation): nDCG@5 dense 0.351, sparse 0.320, hybrid 0.406 on 20
queries, no pair distinguishable; with the reranker timed, hybrid+rerank is far above every row
and distinguishable from each, after Holm too."""

import pytest

from generator.project import load_project
from generator.claims.tracing.checker import check_project
from tests.conftest import FIXTURE_QUERIES, add_design, claim, measured

HYBRID, DENSE, SPARSE = "table[search=hybrid].nDCG@5", "table[search=dense].nDCG@5", "table[search=sparse].nDCG@5"
RERANK = "table[search=hybrid+rerank].nDCG@5"
TIMED = {"rerank_milliseconds": {query: 300 for query in FIXTURE_QUERIES}}


def check(make_project, tmp_path, text, values, predicate=None, asserts=None, *, results=None, kind="evaluative",
          margin=None):
    root = make_project(tmp_path / "p", extra_claims=claim("c", text, measured(values, predicate), kind=kind,
                                                            asserts=asserts), results=results)
    if margin is not None:
        add_design(root, f"\n## Equivalence\n\nTwo rows are the same quality within a margin.\n\n```budget\n"
                         f"ndcg_margin: {margin}\n```\n", name="requirements.md")
    return check_project(load_project(root)).result("c")


def codes(result) -> set[str]:
    return {finding.code for finding in result.findings}


SPARSE_DENSE = {"s": SPARSE, "d": DENSE}


# --- direction ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "Sparse beats dense on nDCG@5, {s:.3f} against {d:.3f}.",
    "Sparse outperforms dense on nDCG@5, {s:.3f} against {d:.3f}.",
    "Sparse ranks higher than dense on nDCG@5, {s:.3f} against {d:.3f}.",
    "Dense trails sparse on nDCG@5, {d:.3f} against {s:.3f}.",
    "Dense is beaten by sparse on nDCG@5, {d:.3f} against {s:.3f}.",
])
def test_a_reversed_direction_is_refused_though_its_predicate_holds(make_project, tmp_path, text):
    result = check(make_project, tmp_path, text, SPARSE_DENSE, "d > s")
    assert not result.traceable and "word-licensed" in codes(result), result.reasons


def test_a_reversed_direction_is_refused_with_the_true_assertion_in_the_other_order(make_project, tmp_path):
    result = check(make_project, tmp_path, "Sparse beats dense on nDCG@5, {s:.3f} against {d:.3f}.", SPARSE_DENSE,
                   "d > s", [{"higher": "dense", "than": "sparse", "metric": "nDCG@5"}])
    assert not result.traceable
    assert any("puts dense first, the sentence names sparse first" in reason for reason in result.reasons), \
        result.reasons


def test_a_false_assertion_is_refused(make_project, tmp_path):
    result = check(make_project, tmp_path, "Sparse beats dense on nDCG@5, {s:.3f} against {d:.3f}.", SPARSE_DENSE,
                   "d > s", [{"higher": "sparse", "than": "dense", "metric": "nDCG@5"}])
    assert "assertion-holds" in codes(result) and "word-licensed" in codes(result), result.reasons


@pytest.mark.parametrize("text, asserts", [
    ("Dense beats sparse on nDCG@5, {d:.3f} against {s:.3f}.", {"higher": "dense", "than": "sparse"}),
    ("Dense ranks higher than sparse on nDCG@5, {d:.3f} against {s:.3f}.", {"higher": "dense", "than": "sparse"}),
    ("Sparse trails dense on nDCG@5, {s:.3f} against {d:.3f}.", {"lower": "sparse", "than": "dense"}),
    ("Sparse is beaten by dense on nDCG@5, {s:.3f} against {d:.3f}.", {"lower": "sparse", "than": "dense"}),
])
def test_a_direction_its_assertion_computes_traces(make_project, tmp_path, text, asserts):
    result = check(make_project, tmp_path, text, SPARSE_DENSE, "d > s", [{**asserts, "metric": "nDCG@5"}])
    assert result.traceable, result.reasons


# --- significance and magnitude ----------------------------------------------------------------

HYBRID_DENSE = {"h": HYBRID, "d": DENSE}
HIGHER = {"higher": "hybrid", "than": "dense", "metric": "nDCG@5"}


@pytest.mark.parametrize("text", [
    "Hybrid is significantly better than dense on nDCG@5, {h:.3f} against {d:.3f}.",
    "Hybrid clearly beats dense on nDCG@5, {h:.3f} against {d:.3f}.",
    "Hybrid scores substantially higher than dense on nDCG@5, {h:.3f} against {d:.3f}.",
    "Hybrid beats dense on nDCG@5 by a wide margin, {h:.3f} against {d:.3f}.",
    "Hybrid's nDCG@5 is a statistically reliable gain over dense, {h:.3f} against {d:.3f}.",
    "Hybrid's nDCG@5 lift over dense ({h:.3f} against {d:.3f}) is a real difference.",
])
def test_an_inflated_difference_is_refused(make_project, tmp_path, text):
    result = check(make_project, tmp_path, text, HYBRID_DENSE, "h > d", [HIGHER])
    assert not result.traceable and "word-licensed" in codes(result), result.reasons


def test_an_inflated_difference_is_refused_with_its_false_assertion(make_project, tmp_path):
    result = check(make_project, tmp_path, "Hybrid is significantly better than dense on nDCG@5, {h:.3f} against "
                   "{d:.3f}.", HYBRID_DENSE, "h > d",
                   [HIGHER, {"distinguishable": "hybrid", "from": "dense", "metric": "nDCG@5"}])
    assert "assertion-holds" in codes(result), result.reasons
    assert any("distinguishable false" in reason for reason in result.reasons), result.reasons


@pytest.mark.parametrize("text", [
    "Hybrid's nDCG@5 change over dense, {delta:+.3f}, is not distinguishable from noise.",
    "Hybrid's nDCG@5 change over dense, {delta:+.3f}, is not statistically significant.",
    "Hybrid's nDCG@5 change over dense, {delta:+.3f}, is within the noise.",
])
def test_a_difference_said_to_be_noise_traces_when_it_is(make_project, tmp_path, text):
    result = check(make_project, tmp_path, text, {"delta": "table[search=hybrid].delta_nDCG@5_vs_dense"},
                   "delta > 0", [{"indistinguishable": "hybrid", "from": "dense", "metric": "nDCG@5"}])
    assert result.traceable, result.reasons


@pytest.mark.parametrize("text", [
    "The reranker is significantly better than hybrid on nDCG@5, {r:.3f} against {h:.3f}.",
    "The reranker clearly beats hybrid on nDCG@5, {r:.3f} against {h:.3f}.",
    "Hybrid+rerank scores substantially higher than hybrid on nDCG@5, {r:.3f} against {h:.3f}.",
])
def test_a_difference_told_from_noise_may_be_called_so(make_project, tmp_path, text):
    result = check(make_project, tmp_path, text, {"r": RERANK, "h": HYBRID}, "r > h",
                   [{"higher": "hybrid+rerank", "than": "hybrid", "metric": "nDCG@5"},
                    {"distinguishable": "hybrid+rerank", "from": "hybrid", "metric": "nDCG@5"}], results=TIMED)
    assert result.traceable, result.reasons


# --- equivalence ----------------------------------------------------------------------------------

INDISTINGUISHABLE = {"indistinguishable": "sparse", "from": "dense", "metric": "nDCG@5"}


@pytest.mark.parametrize("text", [
    "Sparse ranks as well as dense on nDCG@5, {s:.3f} against {d:.3f}.",
    "Sparse is on par with dense on nDCG@5, {s:.3f} against {d:.3f}.",
    "Sparse is just as good as dense on nDCG@5, {s:.3f} against {d:.3f}.",
    "Sparse is no worse than dense on nDCG@5, {s:.3f} against {d:.3f}.",
    "Sparse is comparable to dense on nDCG@5, {s:.3f} against {d:.3f}.",
])
def test_not_distinguishable_never_licenses_as_good_as(make_project, tmp_path, text):
    result = check(make_project, tmp_path, text, SPARSE_DENSE, "d > s", [INDISTINGUISHABLE])
    assert not result.traceable and "word-licensed" in codes(result), result.reasons


def test_an_equivalence_within_its_design_margin_traces(make_project, tmp_path):
    # sparse against dense: paired interval [-0.213, +0.114], inside a margin of 0.25.
    result = check(make_project, tmp_path, "Sparse is on par with dense on nDCG@5, {s:.3f} against {d:.3f}.",
                   SPARSE_DENSE, "d > s",
                   [{"equivalent": "sparse", "to": "dense", "metric": "nDCG@5", "margin": "ndcg_margin"}],
                   margin=0.25)
    assert result.traceable, result.reasons


@pytest.mark.parametrize("margin", [0.1, None])
def test_an_equivalence_outside_its_margin_or_without_one_is_refused(make_project, tmp_path, margin):
    result = check(make_project, tmp_path, "Sparse is on par with dense on nDCG@5, {s:.3f} against {d:.3f}.",
                   SPARSE_DENSE, "d > s",
                   [{"equivalent": "sparse", "to": "dense", "metric": "nDCG@5", "margin": "ndcg_margin"}],
                   margin=margin)
    assert "assertion-holds" in codes(result), result.reasons


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
    result = check(make_project, tmp_path, "After Holm's correction, hybrid's nDCG@5 change over dense has "
                   "p = {p:.2f}.", {"p": P_HOLM}, kind="factual")
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
    result = check(make_project, tmp_path, "Hybrid reached nDCG@5 {h:.3f}, as pre-registered.", {"h": HYBRID},
                   kind="factual")
    assert any("only the design freeze says when a rule was fixed" in reason for reason in result.reasons), \
        result.reasons


# --- the ledger's other languages ----------------------------------------------------------------

@pytest.mark.parametrize("text, asserts, traces", [
    ("Hybrid übertrifft dense bei nDCG@5: {h:.3f} gegen {d:.3f}.", None, False),
    ("Hybrid ist signifikant besser als dense bei nDCG@5: {h:.3f} gegen {d:.3f}.", [HIGHER], False),
    ("Hybrid übertrifft dense bei nDCG@5: {h:.3f} gegen {d:.3f}.", [HIGHER], True),
    ("Der Unterschied von hybrid zu dense bei nDCG@5 ({h:.3f} gegen {d:.3f}) ist nicht signifikant.",
     [{"indistinguishable": "hybrid", "from": "dense", "metric": "nDCG@5"}], True),
    ("Der Unterschied von hybrid zu dense bei nDCG@5 ({h:.3f} gegen {d:.3f}) ist signifikant.",
     [{"indistinguishable": "hybrid", "from": "dense", "metric": "nDCG@5"}], False),
])
def test_a_language_the_ledger_declares_is_licensed_by_its_own_lexicon(make_project, tmp_path, text, asserts, traces):
    root = make_project(tmp_path / "p", extra_claims=claim("c", text, measured(HYBRID_DENSE, "h > d"),
                                                           kind="evaluative", asserts=asserts))
    ledger = root / "claims" / "ledger.yaml"
    ledger.write_text(ledger.read_text(encoding="utf-8").replace("version: 1\n", "version: 1\nlanguages: [de]\n", 1),
                      encoding="utf-8")
    result = check_project(load_project(root)).result("c")
    assert ("word-licensed" not in codes(result)) is traces, result.reasons
