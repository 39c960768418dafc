"""Metrics by name (generator.core.metrics): the spellings trec_eval, ir_measures and ranx
users write, their canonical names, the manifest round trip the checker relies on, the errors,
and every family's value on tiny rankings computed by hand (the arithmetic is in the comments).
"""

import math

import pytest

from generator.core.metrics import (ACCEPTED_FORMS, DELTA_METRICS, GAINS, MEASURES, ROW_METRICS, Metric,
                                        average_precision_at_k, linear_ndcg_at_k, metric_from_name, metric_name,
                                        metrics_from_names, per_query_metrics, precision_at_k,
                                        reciprocal_rank_at_k)
from tests.conftest import run_python

L2, L3, L4, L5, L6 = (math.log2(n) for n in (2, 3, 4, 5, 6))


@pytest.mark.parametrize("spelling,canonical,measure,cutoff,gain", [
    ("recall@5", "recall@5", "recall", 5, "binary"),
    ("Recall@5", "recall@5", "recall", 5, "binary"),
    ("R@50", "recall@50", "recall", 50, "binary"),
    ("recall_100", "recall@100", "recall", 100, "binary"),
    ("recall.10", "recall@10", "recall", 10, "binary"),
    ("P@10", "P@10", "precision", 10, "binary"),
    ("p@1", "P@1", "precision", 1, "binary"),
    ("precision@5", "P@5", "precision", 5, "binary"),
    ("P_5", "P@5", "precision", 5, "binary"),
    # Bare nDCG@k is trec_eval's ndcg_cut_k (gain = grade), as in ir_measures and ranx.
    ("nDCG@5", "nDCG@5", "ndcg", 5, "linear"),
    ("NDCG@5", "nDCG@5", "ndcg", 5, "linear"),
    ("ndcg@5:binary", "nDCG@5:binary", "ndcg", 5, "binary"),
    ("nDCG@5:BINARY", "nDCG@5:binary", "ndcg", 5, "binary"),
    ("nDCG@10:linear", "nDCG@10", "ndcg", 10, "linear"),
    ("nDCG@10:LINEAR", "nDCG@10", "ndcg", 10, "linear"),
    ("ndcg_cut_10", "nDCG@10", "ndcg", 10, "linear"),     # trec_eval's measure: gain = grade
    ("ndcg_cut.20", "nDCG@20", "ndcg", 20, "linear"),
    ("nDCG@3:exponential", "nDCG@3:exponential", "ndcg", 3, "exponential"),
    ("MRR@10", "MRR@10", "mrr", 10, "binary"),
    ("mrr@10", "MRR@10", "mrr", 10, "binary"),
    ("RR@10", "MRR@10", "mrr", 10, "binary"),
    ("MAP@100", "MAP@100", "map", 100, "binary"),
    ("AP@100", "MAP@100", "map", 100, "binary"),
    ("map_cut_100", "MAP@100", "map", 100, "binary"),
    ("map@1000", "MAP@1000", "map", 1000, "binary"),
])
def test_a_name_means_one_definition_under_its_canonical_name(spelling, canonical, measure, cutoff, gain):
    metric = metric_from_name(spelling)
    assert metric == Metric(canonical, measure, cutoff, gain)
    assert metric.canonical_name == canonical == metric_name(measure, cutoff, gain)
    assert metric_from_name(canonical) == metric


def test_the_row_metrics_keep_their_names_and_manifest_entries():
    # results.json and the published manifests key these; metric_from_name gives the very same.
    assert [metric_from_name(m.name) for m in ROW_METRICS] == list(ROW_METRICS)
    assert [m.as_manifest() for m in ROW_METRICS] == [
        {"measure": "recall", "cutoff": 5, "gain": "binary"}, {"measure": "recall", "cutoff": 50, "gain": "binary"},
        {"measure": "ndcg", "cutoff": 5, "gain": "linear"}]
    # Results written before bare nDCG@k meant the linear gain record `binary` and keep it.
    old = Metric.from_manifest("nDCG@5", {"measure": "ndcg", "cutoff": 5, "gain": "binary"})
    assert old.gain == "binary" and old.name == "nDCG@5" and old.canonical_name == "nDCG@5:binary"
    assert Metric("nDCG@5", "ndcg", 5).gain == "linear" and Metric("P@5", "precision", 5).gain == "binary"
    assert DELTA_METRICS == ("recall@5", "recall@50", "nDCG@5")
    # The sandbox names its exponential nDCG `nDCG@3`; a free name keeps working.
    sandbox = Metric("nDCG@3", "ndcg", 3, "exponential")
    assert sandbox.canonical_name == "nDCG@3:exponential"
    assert Metric.from_manifest("nDCG@3", {"cutoff": 3, "gain": "exponential", "measure": "ndcg"}) == sandbox


@pytest.mark.parametrize("measure", sorted(MEASURES))
@pytest.mark.parametrize("cutoff", [1, 5, 10, 50, 1000])
def test_every_definition_round_trips_through_the_manifest(measure, cutoff):
    for gain in (GAINS if measure == "ndcg" else ("binary",)):
        metric = Metric(metric_name(measure, cutoff, gain), measure, cutoff, gain)
        entry = metric.as_manifest()
        assert set(entry) == {"measure", "cutoff", "gain"}
        assert Metric.from_manifest(metric.name, entry) == metric
        assert Metric.from_manifest(metric.name, dict(entry)).per_query(["a", "b"], {"a": 2, "c": 1}) == \
            metric.per_query(["a", "b"], {"a": 2, "c": 1})
        assert metric_from_name(metric.name) == metric


def test_a_manifest_without_gain_means_binary():
    assert Metric.from_manifest("P@5", {"measure": "precision", "cutoff": 5}) == Metric("P@5", "precision", 5)


@pytest.mark.parametrize("entry,message", [
    ({"measure": "mrr", "cutoff": 5, "gain": "binary", "extra": 1}, "expected {measure, cutoff, gain}"),
    ("MRR@5", "expected {measure, cutoff, gain}"),
    ({"measure": "dcg", "cutoff": 5}, "unknown measure 'dcg'; choose one of recall, ndcg, precision, mrr, map"),
    ({"measure": "ndcg", "cutoff": 5, "gain": "graded"}, "unknown gain 'graded'; choose one of binary, exponential"),
    ({"measure": "map", "cutoff": 5, "gain": "linear"}, "gain 'linear' applies to ndcg only"),
    ({"measure": "recall", "cutoff": 5, "gain": "exponential"}, "gain 'exponential' applies to ndcg only"),
    ({"measure": "precision", "cutoff": 0}, "positive integer"),
    ({"measure": "precision", "cutoff": True}, "positive integer"),
    ({"measure": "precision", "cutoff": "5"}, "positive integer"),
])
def test_a_bad_manifest_entry_names_what_is_wrong(entry, message):
    with pytest.raises(ValueError) as raised:
        Metric.from_manifest("m", entry)
    assert message in str(raised.value)


@pytest.mark.parametrize("name,message", [
    ("F1@5", "no measure is called 'F1'"),
    ("nDCG@0", "the cutoff must be a positive integer"),
    ("nDCG@05", "without leading zeros"),
    ("nDCG@", "unknown metric name 'nDCG@'"),
    ("nDCG", "unknown metric name 'nDCG'"),
    ("nDCG@5:graded", "':graded' is ambiguous; write ':linear'"),
    ("nDCG@5:log", "unknown gain 'log'"),
    ("P@5:linear", "a gain applies to nDCG only"),
    ("MAP@5:exponential", "a gain applies to nDCG only"),
    ("recip_rank", "recip_rank has no cutoff: write MRR@k"),
    ("ndcg_cut", "unknown metric name 'ndcg_cut'"),
    ("ndcg_cut_5:linear", "unknown metric name 'ndcg_cut_5:linear'"),
    ("ndcg_5", "unknown metric name 'ndcg_5'"),
    (" nDCG@5", "unknown metric name ' nDCG@5'"),
    ("nDCG@-5", "unknown metric name 'nDCG@-5'"),
    ("", "unknown metric name ''"),
    (5, "a metric name must be a string, got 5"),
    (None, "a metric name must be a string, got None"),
])
def test_an_unknown_name_is_refused_with_the_name_and_the_accepted_forms(name, message):
    with pytest.raises(ValueError) as raised:
        metric_from_name(name)
    assert message in str(raised.value)
    if "ambiguous" not in message and "unknown gain" not in message:
        assert ACCEPTED_FORMS in str(raised.value)


def test_metric_name_refuses_a_gain_its_measure_does_not_take():
    with pytest.raises(ValueError, match="does not apply to recall"):
        metric_name("recall", 5, "linear")
    with pytest.raises(ValueError, match="does not apply to ndcg"):
        metric_name("ndcg", 5, "cubic")
    with pytest.raises(ValueError, match="unknown measure 'dcg'"):
        metric_name("dcg", 5)


def test_a_list_of_names_keeps_its_order_and_refuses_two_names_of_one_metric():
    assert [m.name for m in metrics_from_names(["nDCG@10:binary", "R@100", "ndcg_cut_10", "MRR@10"])] == \
        ["nDCG@10:binary", "recall@100", "nDCG@10", "MRR@10"]
    with pytest.raises(ValueError, match="'R@5' and 'recall@5' both mean recall@5"):
        metrics_from_names(["R@5", "recall@5"])
    with pytest.raises(ValueError, match="'nDCG@5:linear' and 'ndcg_cut_5' both mean nDCG@5"):
        metrics_from_names(["nDCG@5:linear", "ndcg_cut_5"])
    with pytest.raises(ValueError, match="'nDCG@5' and 'nDCG@5:linear' both mean nDCG@5"):
        metrics_from_names(["nDCG@5", "nDCG@5:linear"])
    with pytest.raises(ValueError, match="at least one metric name"):
        metrics_from_names([])
    with pytest.raises(ValueError, match="single string"):
        metrics_from_names("nDCG@5")


# One query by hand. Judgements (Cranfield-style grades): a=3, b=2, c=1, d=0, e=-1, f=2 (never
# retrieved). Relevant R = {a, b, c, f} (grade > 0), |R| = 4.
# Ranking: e d a x b c (x unjudged, grade 0); relevant at ranks 3, 5 and 6.
GRADES = {"a": 3, "b": 2, "c": 1, "d": 0, "e": -1, "f": 2}
RANKING = ["e", "d", "a", "x", "b", "c"]


@pytest.mark.parametrize("name,expected", [
    # Recall@k = |R in top k| / |R|
    ("recall@1", 0 / 4), ("recall@3", 1 / 4), ("recall@5", 2 / 4), ("recall@10", 3 / 4),
    # P@k = |R in top k| / k, k even past the 6 ranked documents
    ("P@1", 0 / 1), ("P@3", 1 / 3), ("P@5", 2 / 5), ("P@10", 3 / 10),
    # MRR@k: the first relevant document is at rank 3
    ("MRR@2", 0.0), ("MRR@3", 1 / 3), ("MRR@10", 1 / 3),
    # MAP@k = (sum of P@r at relevant ranks r <= k) / |R|: P@3 = 1/3, P@5 = 2/5, P@6 = 3/6
    ("MAP@2", 0.0), ("MAP@3", (1 / 3) / 4), ("MAP@5", (1 / 3 + 2 / 5) / 4), ("MAP@10", (1 / 3 + 2 / 5 + 3 / 6) / 4),
    # binary nDCG@5: DCG = 1/log2(4) + 1/log2(6); ideal = 4 hits on top, capped at 5 ranks
    ("nDCG@5:binary", (1 / L4 + 1 / L6) / (1 / L2 + 1 / L3 + 1 / L4 + 1 / L5)),
    # linear nDCG@5 (bare nDCG@5): DCG = 3/log2(4) + 2/log2(6); ideal grades 3, 2, 2, 1 on ranks 1-4
    ("nDCG@5", (3 / L4 + 2 / L6) / (3 / L2 + 2 / L3 + 2 / L4 + 1 / L5)),
    ("nDCG@5:linear", (3 / L4 + 2 / L6) / (3 / L2 + 2 / L3 + 2 / L4 + 1 / L5)),
    # linear nDCG@2: nothing relevant in the top 2; ideal 3/log2(2) + 2/log2(3)
    ("nDCG@2:linear", 0.0),
    # linear nDCG@10: DCG = 3/log2(4) + 2/log2(6) + 1/log2(7)
    ("nDCG@10:linear", (3 / L4 + 2 / L6 + 1 / math.log2(7)) / (3 / L2 + 2 / L3 + 2 / L4 + 1 / L5)),
    # exponential nDCG@5: gains 2^3-1 = 7, 2^2-1 = 3, 2^1-1 = 1; DCG = 7/log2(4) + 3/log2(6);
    # ideal gains 7, 3, 3, 1 on ranks 1-4
    ("nDCG@5:exponential", (7 / L4 + 3 / L6) / (7 / L2 + 3 / L3 + 3 / L4 + 1 / L5)),
])
def test_hand_computed_values_on_a_graded_query(name, expected):
    assert metric_from_name(name).per_query(RANKING, GRADES) == pytest.approx(expected, abs=1e-15)


def test_hand_computed_values_on_the_seed_fixture():
    # The seed fixture: ranking d3 d1 d7 d2 d9, relevant {d1, d2, d4}: hits at ranks 2 and 4.
    ranking, grades = ["d3", "d1", "d7", "d2", "d9"], {"d1": 1, "d2": 1, "d4": 1}
    values = per_query_metrics(ranking, grades, metrics_from_names(
        ["recall@5", "P@5", "MRR@5", "MAP@5", "nDCG@5", "nDCG@5:binary", "nDCG@5:exponential"]))
    ndcg = (1 / L3 + 1 / L5) / (1 / L2 + 1 / L3 + 1 / L4)    # 0.4982
    assert values == pytest.approx({
        "recall@5": 2 / 3, "P@5": 2 / 5, "MRR@5": 1 / 2,
        "MAP@5": (1 / 2 + 2 / 4) / 3,                         # P@2 = 1/2, P@4 = 2/4, over |R| = 3
        "nDCG@5": ndcg, "nDCG@5:binary": ndcg, "nDCG@5:exponential": ndcg}, abs=1e-15)
    assert round(values["nDCG@5"], 4) == 0.4982


def test_no_relevant_document_and_an_empty_ranking_score_zero():
    for name in ("recall@5", "P@5", "MRR@5", "MAP@5", "nDCG@5", "nDCG@5:binary", "nDCG@5:exponential"):
        metric = metric_from_name(name)
        assert metric.per_query(["a", "b"], {"a": 0, "b": -1}) == 0.0, name
        assert metric.per_query([], {"a": 0, "b": -1}) == 0.0, name
        assert metric.per_query([], {"a": 2}) == 0.0, name
        assert metric.per_query(["a"], {}) == 0.0, name


def test_precision_divides_by_k_even_when_fewer_documents_were_ranked():
    # One relevant document ranked first, nothing else ranked: P@1 = 1, P@10 = 1/10.
    assert precision_at_k(["a"], {"a"}, 1) == 1.0
    assert precision_at_k(["a"], {"a"}, 10) == 0.1


def test_map_divides_by_every_relevant_document_not_by_the_cutoff():
    # Both top ranks relevant, 10 relevant in all: AP@2 = (1/1 + 2/2) / 10 = 0.2, not 1.0.
    assert average_precision_at_k(["a", "b"], set("abcdefghij"), 2) == pytest.approx(0.2, abs=1e-15)
    assert average_precision_at_k(["x", "a"], {"a"}, 2) == 0.5     # P@2 = 1/2 over |R| = 1


def test_reciprocal_rank_stops_at_the_cutoff():
    assert reciprocal_rank_at_k(["x", "y", "a"], {"a"}, 2) == 0.0
    assert reciprocal_rank_at_k(["x", "y", "a"], {"a"}, 3) == pytest.approx(1 / 3, abs=1e-15)


def test_linear_ndcg_ignores_zero_and_negative_grades_and_rates_equal_grades_as_binary():
    # Negative and zero grades gain nothing (as trec_eval): ranking e(-1) a(2): DCG = 2/log2(3),
    # ideal = 2/log2(2) (only a is positive).
    assert linear_ndcg_at_k(["e", "a"], {"e": -1, "a": 2, "z": 0}, 5) == pytest.approx(1 / L3, abs=1e-15)
    # Every relevant document of one grade: linear nDCG equals the binary one.
    grades = {"a": 2, "b": 2, "c": 2}
    for k in (1, 2, 5):
        assert metric_from_name(f"nDCG@{k}:linear").per_query(["x", "b", "a"], grades) == pytest.approx(
            metric_from_name(f"nDCG@{k}:binary").per_query(["x", "b", "a"], grades), abs=1e-15)


def test_binary_and_linear_ndcg_differ_on_graded_judgements():
    # Ranking c(1) a(3), judgements a=3 and c=1. Binary: both relevant, perfect order -> 1.0.
    # Linear: DCG = 1 + 3/log2(3), ideal = 3 + 1/log2(3).
    assert metric_from_name("nDCG@2:binary").per_query(["c", "a"], {"a": 3, "c": 1}) == 1.0
    for name in ("nDCG@2", "nDCG@2:linear"):
        assert metric_from_name(name).per_query(["c", "a"], {"a": 3, "c": 1}) == pytest.approx(
            (1 + 3 / L3) / (3 + 1 / L3), abs=1e-15)


def test_the_checker_module_stays_free_of_numpy():
    code = "import sys, generator.core.metrics; print(sorted(m for m in ('numpy', 'scipy') if m in sys.modules))"
    completed = run_python("-c", code)
    assert (completed.returncode, completed.stdout.strip()) == (0, "[]"), completed.stderr
