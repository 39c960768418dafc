"""Tests for generator/core/headroom.py: the oracle ceiling on a row's own candidates.

Expected values are worked out by hand (the arithmetic is in the comments), by brute force over
every reordering, or taken from the sandbox's ceiling calculator (spec section 6), which must agree.
"""

from __future__ import annotations

import itertools
import math
import random

import pytest

from generator.core.headroom import NOTE, oracle_order
from generator.core.results.builders import ceiling_block
from generator.core.metrics import ROW_METRICS, Metric
from generator.sandbox.ceiling import PRESET, compute_ceiling, parse_case

L3 = math.log2(3)  # the discount denominator of rank 2
EXP_NDCG3 = Metric("nDCG@3", "ndcg", 3, "exponential")
EXP_NDCG5 = Metric("graded-nDCG@5", "ndcg", 5, "exponential")
RECALL3 = Metric("recall@3", "recall", 3)


# --- oracle_order ---------------------------------------------------------------------------------


def test_oracle_order_sorts_by_grade_highest_first():
    assert oracle_order(["a", "b", "c", "d"], {"a": 1, "b": 3, "c": 0, "d": 2}) == ["b", "d", "a", "c"]


def test_oracle_order_keeps_the_row_order_between_equal_grades():
    # x, y, z share grade 2 and p, q share grade 0: each group keeps the order the row gave it.
    ranking = ["p", "z", "x", "q", "y", "top"]
    grades = {"p": 0, "z": 2, "x": 2, "q": 0, "y": 2, "top": 3}
    assert oracle_order(ranking, grades) == ["top", "z", "x", "y", "p", "q"]


def test_oracle_order_counts_a_negative_grade_as_zero():
    # Were -1 taken at face value, "neg" would sink below "zero"; as 0 it keeps its place before it.
    assert oracle_order(["neg", "zero", "rel"], {"neg": -1, "zero": 0, "rel": 1}) == ["rel", "neg", "zero"]
    assert oracle_order(["zero", "neg"], {"neg": -5, "zero": 0}) == ["zero", "neg"]


def test_oracle_order_counts_an_unjudged_document_as_zero():
    # "u" has no judgement: it ties with the judged 0 and both stay in row order, below the relevant one.
    assert oracle_order(["u", "judged0", "rel"], {"judged0": 0, "rel": 2}) == ["rel", "u", "judged0"]
    assert oracle_order(["judged0", "u"], {"judged0": 0}) == ["judged0", "u"]


def test_oracle_order_keeps_the_set_and_leaves_its_input_alone():
    ranking = ["c", "a", "b"]
    assert sorted(oracle_order(ranking, {"a": 1})) == ["a", "b", "c"]
    assert ranking == ["c", "a", "b"]
    assert oracle_order([], {"a": 1}) == []


# --- ceiling_block on a hand-made example ---------------------------------------------------------

JUDGEMENTS = {
    "q1": {"a": 1, "b": 0, "c": 1, "d": 1},  # relevant a, c, d; d is never retrieved
    "q2": {"x": 2, "y": 1},                  # graded: x above y
    # q3 has no judgement at all: every metric is 0 for it, ceiling included
}
RANKINGS = {
    "r": {"q1": ["b", "a", "e", "c"],  # e is unjudged
          "q2": ["z", "y", "x"],
          "q3": ["m", "n"]},
    "s": {"q1": ["a", "c"]},           # no list for q2 or q3
}
QUERIES = ["q1", "q2", "q3"]
HAND_METRICS = [Metric("recall@2", "recall", 2), Metric("recall@50", "recall", 50), Metric("nDCG@2", "ndcg", 2, "binary"),
                EXP_NDCG3]


@pytest.fixture(scope="module")
def block():
    return ceiling_block(RANKINGS, JUDGEMENTS, QUERIES, HAND_METRICS)


def test_hand_example_row_r_recall_at_2(block):
    # Oracle orders of r: q1 [a, c, b, e] (e unjudged = 0), q2 [x, y, z], q3 [m, n].
    # row:     q1 top2 {b, a} -> 1/3, q2 {z, y} -> 1/2, q3 -> 0; mean (1/3 + 1/2 + 0)/3 = 5/18
    # ceiling: q1 {a, c} -> 2/3,      q2 {x, y} -> 1,   q3 -> 0; mean (2/3 + 1 + 0)/3   = 5/9
    entry = block["rows"]["r"]["recall@2"]
    assert entry["row"] == pytest.approx(5 / 18)
    assert entry["ceiling"] == pytest.approx(5 / 9)
    assert entry["headroom"] == pytest.approx(5 / 9 - 5 / 18)
    assert block["per_query"]["r"]["q1"]["recall@2"] == pytest.approx(2 / 3)
    assert block["per_query"]["r"]["q2"]["recall@2"] == pytest.approx(1.0)
    assert block["per_query"]["r"]["q3"]["recall@2"] == 0.0


def test_hand_example_row_r_binary_ndcg_at_2(block):
    # Binary nDCG@2; ideal DCG of q1 and of q2 = 1 + 1/log2(3) (at least 2 relevant each).
    # row:     q1 [b, a] -> (1/L3)/(1 + 1/L3) = 1/(L3 + 1); q2 [z, y] -> the same; q3 -> 0
    # ceiling: q1 [a, c] -> 1;                                q2 [x, y] -> 1;        q3 -> 0
    row = (2 / (L3 + 1)) / 3
    entry = block["rows"]["r"]["nDCG@2"]
    assert entry["row"] == pytest.approx(row)
    assert entry["ceiling"] == pytest.approx(2 / 3)
    assert entry["headroom"] == pytest.approx(2 / 3 - row)


def test_hand_example_row_r_exponential_ndcg_at_3(block):
    # Gain 2^rel - 1. q1: gains a = c = d = 1, ideal = 1 + 1/L3 + 1/2.
    #   row [b, a, e]: a at rank 2 -> 1/L3;    ceiling [a, c, b]: 1 + 1/L3
    # q2: gains x = 3, y = 1, ideal = 3 + 1/L3.
    #   row [z, y, x]: 1/L3 + 3/2;             ceiling [x, y, z]: 3 + 1/L3 -> 1
    # q3: 0 both.
    ideal_q1, ideal_q2 = 1 + 1 / L3 + 0.5, 3 + 1 / L3
    row = ((1 / L3) / ideal_q1 + (1 / L3 + 1.5) / ideal_q2 + 0) / 3
    ceiling = ((1 + 1 / L3) / ideal_q1 + 1.0 + 0) / 3
    entry = block["rows"]["r"]["nDCG@3"]
    assert entry["row"] == pytest.approx(row)
    assert entry["ceiling"] == pytest.approx(ceiling)
    assert entry["headroom"] == pytest.approx(ceiling - row)
    assert block["per_query"]["r"]["q2"]["nDCG@3"] == pytest.approx(1.0)
    assert block["per_query"]["r"]["q1"]["nDCG@3"] == pytest.approx((1 + 1 / L3) / ideal_q1)


def test_hand_example_row_s_without_lists_scores_zero_for_those_queries(block):
    # s retrieves a, c for q1 only, already in the best order; q2, q3 have no list (0).
    # recall@2: q1 2/3 -> mean 2/9, ceiling = row, headroom 0.
    # nDCG@2:   q1 [a, c] = 1 -> mean 1/3 both.
    assert block["rows"]["s"]["recall@2"] == pytest.approx({"ceiling": 2 / 9, "row": 2 / 9, "headroom": 0.0})
    assert block["rows"]["s"]["nDCG@2"] == pytest.approx({"ceiling": 1 / 3, "row": 1 / 3, "headroom": 0.0})
    assert block["per_query"]["s"]["q2"] == {m.name: 0.0 for m in HAND_METRICS}
    assert block["per_query"]["s"]["q3"] == {m.name: 0.0 for m in HAND_METRICS}


def test_every_row_has_a_ceiling_for_every_query_and_metric(block):
    names = {m.name for m in HAND_METRICS}
    assert set(block["per_query"]) == set(block["rows"]) == {"r", "s"}
    for row in ("r", "s"):
        assert list(block["per_query"][row]) == QUERIES
        for query in QUERIES:
            assert set(block["per_query"][row][query]) == names
        assert set(block["rows"][row]) == names


def test_row_ceiling_is_the_mean_of_its_per_query_ceilings(block):
    for row in ("r", "s"):
        for metric in HAND_METRICS:
            per_query = [block["per_query"][row][q][metric.name] for q in QUERIES]
            assert block["rows"][row][metric.name]["ceiling"] == pytest.approx(sum(per_query) / len(QUERIES))


def test_headroom_is_ceiling_minus_row(block):
    for row, metrics in block["rows"].items():
        for name, entry in metrics.items():
            assert entry["headroom"] == entry["ceiling"] - entry["row"], (row, name)


def test_recall_at_the_candidate_depth_has_no_headroom(block):
    # Every list is shorter than 50, so recall@50 counts the same set before and after reordering:
    # r: q1 {a, c} of {a, c, d} = 2/3, q2 {x, y} = 1, q3 0 -> mean 5/9, for row and ceiling alike.
    entry = block["rows"]["r"]["recall@50"]
    assert entry["row"] == pytest.approx(5 / 9)
    assert entry["ceiling"] == entry["row"]
    assert entry["headroom"] == 0.0
    assert block["rows"]["s"]["recall@50"]["headroom"] == 0.0


def test_block_says_it_is_an_upper_bound_not_a_result(block):
    assert block["note"] == NOTE
    assert "upper bound" in NOTE and "never a model's result" in NOTE


def test_ceiling_does_not_reorder_the_callers_lists():
    rankings = {"r": {"q": ["b", "a"]}}
    ceiling_block(rankings, {"q": {"a": 1}}, ["q"], ROW_METRICS)
    assert rankings == {"r": {"q": ["b", "a"]}}


# --- properties over random rankings --------------------------------------------------------------

PROPERTY_METRICS = (*ROW_METRICS, EXP_NDCG5, EXP_NDCG3, RECALL3)


def _random_case(seed: int):
    rng = random.Random(seed)
    documents = [f"d{i}" for i in range(12)]
    queries = [f"q{i}" for i in range(rng.randint(1, 4))]
    judgements = {}
    for query in queries:
        if rng.random() < 0.9:
            judged = rng.sample(documents, rng.randint(0, 8))
            judgements[query] = {doc: rng.choice((-1, 0, 0, 1, 1, 2, 3)) for doc in judged}
    rankings = {}
    for row in ("dense", "hybrid"):
        rankings[row] = {q: rng.sample(documents, rng.randint(0, 10)) for q in queries if rng.random() < 0.95}
    return rankings, judgements, queries


@pytest.mark.parametrize("seed", range(200))
def test_ceiling_is_never_below_the_row_and_never_above_one(seed):
    rankings, judgements, queries = _random_case(seed)
    block = ceiling_block(rankings, judgements, queries, PROPERTY_METRICS)
    for row, by_query in rankings.items():
        for metric in PROPERTY_METRICS:
            entry = block["rows"][row][metric.name]
            assert entry["row"] <= entry["ceiling"] + 1e-12, (row, metric.name)
            assert 0.0 <= entry["ceiling"] <= 1.0 + 1e-12, (row, metric.name)
            assert entry["headroom"] >= -1e-12
            for query in queries:
                own = metric.per_query(list(by_query.get(query, [])), judgements.get(query, {}))
                best = block["per_query"][row][query][metric.name]
                assert own <= best + 1e-12, (row, query, metric.name)
                assert best <= 1.0 + 1e-12


@pytest.mark.parametrize("seed", range(0, 200, 5))
def test_ceiling_is_the_best_of_every_reordering(seed):
    # Brute force: for lists of at most 5 documents, try every permutation; the oracle must reach the max.
    rng = random.Random(10_000 + seed)
    documents = [f"d{i}" for i in range(8)]
    ranking = rng.sample(documents, rng.randint(1, 5))
    grades = {doc: rng.choice((-1, 0, 1, 2, 3)) for doc in rng.sample(documents, rng.randint(1, 8))}
    block = ceiling_block({"r": {"q": ranking}}, {"q": grades}, ["q"], PROPERTY_METRICS)
    for metric in PROPERTY_METRICS:
        best = max(metric.per_query(list(order), grades) for order in itertools.permutations(ranking))
        assert block["per_query"]["r"]["q"][metric.name] == pytest.approx(best, abs=1e-12), metric.name


def test_a_pool_smaller_than_the_relevant_set_keeps_the_ceiling_below_one():
    # Three relevant documents (a, b, c); the row retrieved only two of them, plus junk.
    # recall@3 ceiling = 2/3. Binary nDCG@5: best [a, b, junk] = (1 + 1/L3) / (1 + 1/L3 + 1/2) < 1.
    # Graded nDCG@3 (a=3, b=2, c=3): best [a, b, junk] = (7 + 3/L3) / (7 + 7/L3 + 3/2) < 1.
    block = ceiling_block({"r": {"q": ["junk", "b", "a"]}}, {"q": {"a": 3, "b": 2, "c": 3}}, ["q"],
                          [RECALL3, Metric("nDCG@5", "ndcg", 5, "binary"), EXP_NDCG3])
    rows = block["rows"]["r"]
    assert rows["recall@3"]["ceiling"] == pytest.approx(2 / 3)
    assert rows["nDCG@5"]["ceiling"] == pytest.approx((1 + 1 / L3) / (1 + 1 / L3 + 0.5))
    assert rows["nDCG@3"]["ceiling"] == pytest.approx((7 + 3 / L3) / (7 + 7 / L3 + 1.5))
    assert all(entry["ceiling"] < 1.0 for entry in rows.values())


# --- agreement with the sandbox's ceiling calculator (spec section 6) ----------------------------


def _calculator(pool: int) -> dict:
    case = dict(PRESET, pool=pool, oracle=True)
    return compute_ceiling(parse_case(case))


def _preset_grades() -> dict[str, int]:
    return {doc["id"]: doc["relevance"] for doc in PRESET["documents"]}


def test_preset_is_the_spec_example():
    # Guard: the calculator's preset is the one spec section 6 gives, so the equalities below test it.
    assert PRESET["query"] == "KV cache memory" and PRESET["query_vector"] == [1.0, 0.1]
    assert [(d["id"], d["vector"], d["relevance"]) for d in PRESET["documents"]] == [
        ("D1", [1.0, 0.1], 3), ("D2", [0.1, 1.0], 0), ("D3", [0.95, 0.2], 2), ("D4", [0.8, 0.3], 3),
        ("D5", [0.4, 0.8], 0)]
    assert (PRESET["w"], PRESET["k"], PRESET["pool"], PRESET["cutoff"], PRESET["oracle"]) == (0.5, 60, 5, 3, True)


def test_ceiling_on_the_calculators_pool_equals_the_calculator_preset():
    report = _calculator(5)
    assert report["recall@3"] == 1.0 and report["nDCG@3"] == 1.0  # spec: Recall@3 = 1, nDCG@3 = 1
    block = ceiling_block({"hybrid": {"kv": report["pool"]}}, {"kv": _preset_grades()}, ["kv"], [RECALL3, EXP_NDCG3])
    rows = block["rows"]["hybrid"]
    assert rows["recall@3"]["ceiling"] == report["recall@3"] == 1.0
    assert rows["nDCG@3"]["ceiling"] == report["nDCG@3"] == 1.0
    assert oracle_order(report["pool"], _preset_grades()) == report["ranking"]


def test_ceiling_on_a_pool_of_two_equals_the_calculator_and_stays_below_one():
    # Pool of 2 = D1, D4 (both rel 3); D3 (rel 2) is left out.
    # Recall@3 = 2/3; nDCG@3 = (7 + 7/L3) / (7 + 7/L3 + 3/2).
    report = _calculator(2)
    assert report["pool"] == ["D1", "D4"]
    block = ceiling_block({"hybrid": {"kv": report["pool"]}}, {"kv": _preset_grades()}, ["kv"], [RECALL3, EXP_NDCG3])
    rows = block["rows"]["hybrid"]
    assert rows["recall@3"]["ceiling"] == report["recall@3"] == pytest.approx(2 / 3)
    assert rows["nDCG@3"]["ceiling"] == report["nDCG@3"] == pytest.approx((7 + 7 / L3) / (7 + 7 / L3 + 1.5))
    assert rows["nDCG@3"]["ceiling"] < 1.0 and rows["recall@3"]["ceiling"] < 1.0
