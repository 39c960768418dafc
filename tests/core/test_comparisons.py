"""Tests for generator/core/comparisons.py: paired comparisons against any baseline.

Per-query values are quarters (0.25, 0.5, ...), so differences and their means are exact floats
and the hand-computed values below are asserted with ==.
"""

from __future__ import annotations

import hashlib
import json
import math
import warnings

import numpy as np
import pytest
import scipy.stats

from generator.core.comparisons import (agreement, compare, comparisons_block, default_pairs,
                                            method_description, seed_for)
from generator.core.uncertainty import paired_permutation_test

QUERIES = ["q1", "q2", "q3", "q4", "q5"]
NDCG = {  # nDCG@5 per query
    "dense":         [0.25, 0.5, 0.0, 0.75, 0.5],
    "hybrid":        [0.5, 0.5, 0.25, 0.75, 0.25],
    "hybrid+rerank": [0.75, 1.0, 0.25, 0.5, 0.75],
}
RECALL_50 = {  # recall@50: the reranker reorders hybrid's 50, so it keeps hybrid's recall
    "dense":         [0.5, 1.0, 0.5, 1.0, 0.5],
    "hybrid":        [1.0, 1.0, 0.5, 1.0, 1.0],
    "hybrid+rerank": [1.0, 1.0, 0.5, 1.0, 1.0],
}
# Worked by hand, in units of 0.25 (d = row - baseline):
#   hybrid - dense          nDCG@5: [1, 0, 1, 0, -1]  sum 1 -> delta 0.25/5 = 0.05, W/T/L 2/2/1.
#       Non-zero {1, 1, -1}: every one of the 8 sign flips has |sum| >= 1, so p = 1.0.
#   hybrid+rerank - dense   nDCG@5: [2, 2, 1, -1, 1]  sum 5 -> delta 1.25/5 = 0.25, W/T/L 4/0/1.
#       Magnitudes {2, 2, 1, 1, 1} total 7; flipping a subset of sum t gives |7 - 2t| >= 5 iff
#       t <= 1 (1 + 3 subsets) or t >= 6 (3 + 1 subsets): p = 8/32 = 0.25.
#   hybrid+rerank - hybrid  nDCG@5: [1, 2, 0, -1, 2]  sum 4 -> delta 1.0/5 = 0.2, W/T/L 3/1/1.
#       Magnitudes {1, 2, 1, 2} total 6; |6 - 2t| >= 4 iff t <= 1 (1 + 2) or t >= 5 (2 + 1):
#       p = 6/16 = 0.375.
#   recall@50: hybrid+rerank - hybrid is all zeros -> (0, 0), "all differences equal", p 1.0.
#       hybrid - dense = [2, 0, 0, 0, 2] -> delta 1.0/5 = 0.2, W/T/L 2/3/0, p = 2/4 = 0.5.
HAND = {
    ("hybrid_vs_dense", "nDCG@5"): (0.05, (2, 2, 1), 1.0),
    ("hybrid+rerank_vs_dense", "nDCG@5"): (0.25, (4, 0, 1), 0.25),
    ("hybrid+rerank_vs_hybrid", "nDCG@5"): (0.2, (3, 1, 1), 0.375),
    ("hybrid_vs_dense", "recall@50"): (0.2, (2, 3, 0), 0.5),
    ("hybrid+rerank_vs_hybrid", "recall@50"): (0.0, (0, 5, 0), 1.0),
}
ROWS = ["dense", "sparse", "hybrid", "hybrid+rerank"]
NOT_MEASURED = {"sparse": "bm25s is not installed"}
SEED = 20261130


def _per_query():
    return {row: {q: {"nDCG@5": NDCG[row][i], "recall@50": RECALL_50[row][i]} for i, q in enumerate(QUERIES)}
            for row in NDCG}


def _block(resamples=2000, seed=SEED, pairs=None):
    return comparisons_block(_per_query(), QUERIES, pairs or default_pairs(ROWS), ["nDCG@5", "recall@50"],
                             seed=seed, resamples=resamples, not_measured=NOT_MEASURED)


def _scipy_interval(d, method, seed, resamples, confidence=0.95):
    result = scipy.stats.bootstrap((np.asarray(d, dtype=float),), np.mean, method=method, n_resamples=resamples,
                                   confidence_level=confidence, rng=np.random.default_rng(seed))
    return result


# --------------------------------------------------------------------------- the block


def test_default_pairs_compare_every_row_with_dense_and_the_reranker_with_hybrid():
    assert default_pairs(ROWS) == [("sparse", "dense"), ("hybrid", "dense"), ("hybrid+rerank", "dense"),
                                   ("hybrid+rerank", "hybrid")]
    # an extra pair whose rows are absent is dropped; one already present is not repeated
    assert default_pairs(["dense", "hybrid"]) == [("hybrid", "dense")]
    assert default_pairs(["dense", "hybrid"], extra=[("hybrid", "dense")]) == [("hybrid", "dense")]
    assert default_pairs(["bm25", "dense"], baseline="bm25", extra=()) == [("dense", "bm25")]
    with pytest.raises(ValueError, match="baseline"):
        default_pairs(["hybrid"], baseline="dense")


def test_block_matches_the_hand_computed_deltas_counts_and_p_values():
    block = _block()
    assert list(block) == ["hybrid+rerank_vs_dense", "hybrid+rerank_vs_hybrid", "hybrid_vs_dense",
                           "sparse_vs_dense"]
    for (key, metric), (delta, counts, p_value) in HAND.items():
        stats = block[key]["metrics"][metric]
        assert stats["delta"] == delta, (key, metric)
        assert (stats["wins"], stats["ties"], stats["losses"]) == counts, (key, metric)
        assert stats["p_value"] == p_value, (key, metric)
        assert stats["p_value_method"] == "exact"
        assert stats["queries"] == 5
        assert stats["ci95_low"] <= stats["delta"] <= stats["ci95_high"], (key, metric)
    entry = block["hybrid+rerank_vs_hybrid"]
    assert (entry["row"], entry["baseline"], entry["measured"]) == ("hybrid+rerank", "hybrid", True)
    unchanged = entry["metrics"]["recall@50"]
    assert (unchanged["ci95_low"], unchanged["ci95_high"]) == (0.0, 0.0)
    assert unchanged["interval_method"] == "all differences equal"


def test_a_row_that_was_not_measured_gives_its_reason_and_no_metrics():
    block = _block()
    assert block["sparse_vs_dense"] == {
        "row": "sparse", "baseline": "dense", "measured": False,
        "not_measured_reason": "row sparse was not measured: bm25s is not installed"}
    missing_baseline = comparisons_block(_per_query(), QUERIES, [("dense", "bm25")], ["nDCG@5"], seed=1,
                                         resamples=100, not_measured={})
    assert missing_baseline["dense_vs_bm25"]["not_measured_reason"] == "baseline bm25 has no per-query values"


def test_block_refuses_a_measured_row_missing_a_query_and_bad_pairs():
    per_query = _per_query()
    del per_query["hybrid"]["q3"]
    with pytest.raises(ValueError, match="q3"):
        comparisons_block(per_query, QUERIES, [("hybrid", "dense")], ["nDCG@5"], seed=1, resamples=100,
                          not_measured={})
    with pytest.raises(ValueError, match="itself"):
        _block(pairs=[("dense", "dense")])
    with pytest.raises(ValueError, match="twice"):
        _block(pairs=[("hybrid", "dense"), ("hybrid", "dense")])


def test_block_is_json_ready_and_identical_when_run_again():
    first = _block()
    text = json.dumps(first, sort_keys=True, allow_nan=False)
    assert json.dumps(_block(), sort_keys=True, allow_nan=False) == text
    assert json.loads(text) == first
    floats = [v for entry in first.values() for stats in entry.get("metrics", {}).values()
              for v in stats.values() if isinstance(v, float)]
    assert floats and all(math.copysign(1.0, v) == 1.0 for v in floats if v == 0.0)  # no -0.0


# --------------------------------------------------------------------------- seeds


def test_every_comparison_and_metric_has_its_own_seed():
    expected = int(hashlib.sha256(b"20261130:hybrid+rerank_vs_hybrid:nDCG@5").hexdigest(), 16) % 2 ** 32
    assert seed_for(SEED, "hybrid+rerank_vs_hybrid", "nDCG@5") == expected
    assert seed_for(SEED, "hybrid+rerank_vs_hybrid", "nDCG@5") == expected  # the same again
    seeds = {seed_for(SEED, key, metric) for key, metric in HAND}
    seeds |= {seed_for(SEED, "hybrid+rerank_vs_dense", "recall@50"), seed_for(SEED + 1, "hybrid_vs_dense", "nDCG@5")}
    assert len(seeds) == len(HAND) + 2
    assert all(0 <= s < 2 ** 32 for s in seeds)
    block = _block()
    for key, metric in HAND:
        assert block[key]["metrics"][metric]["seed"] == seed_for(SEED, key, metric)


def test_the_block_interval_is_compare_with_the_comparisons_own_seed():
    block = _block(resamples=3000)
    key, metric = "hybrid+rerank_vs_hybrid", "nDCG@5"
    own = compare(NDCG["hybrid+rerank"], NDCG["hybrid"], seed=seed_for(SEED, key, metric), resamples=3000)
    assert block[key]["metrics"][metric] == own
    shared = compare(NDCG["hybrid+rerank"], NDCG["hybrid"], seed=SEED, resamples=3000)
    assert (shared["ci95_low"], shared["ci95_high"]) != (own["ci95_low"], own["ci95_high"])


# --------------------------------------------------------------------------- agreement with scipy


@pytest.mark.parametrize("n", [5, 12, 30])
def test_bca_interval_and_p_value_equal_scipy_and_the_sign_flip_test(n):
    rng = np.random.default_rng(n)
    base = rng.uniform(0.0, 1.0, n)
    row = np.clip(base + rng.normal(0.08, 0.2, n), 0.0, 1.0)
    out = compare(row.tolist(), base.tolist(), seed=777, resamples=4000, permutation_resamples=20_000)
    assert out["interval_method"] == "BCa bootstrap"
    direct = _scipy_interval(row - base, "BCa", 777, 4000).confidence_interval
    assert (out["ci95_low"], out["ci95_high"]) == (float(direct.low), float(direct.high))
    test = paired_permutation_test(row.tolist(), base.tolist(), resamples=20_000, seed=777)
    assert (out["p_value"], out["p_value_method"]) == (test["p_value"], test["method"])
    assert out["p_value_method"] == ("exact" if n <= 20 else "monte-carlo")
    assert out["delta"] == float(np.mean(row - base))


def test_confidence_level_is_passed_to_scipy():
    d = [0.25, 0.5, 0.0, -0.25, 0.75, 0.5, 0.25]
    out = compare(d, [0.0] * len(d), seed=3, resamples=2000, confidence=0.8)
    direct = _scipy_interval(d, "BCa", 3, 2000, confidence=0.8).confidence_interval
    assert (out["ci95_low"], out["ci95_high"]) == (float(direct.low), float(direct.high))


# --------------------------------------------------------------------------- degenerate cases


@pytest.mark.parametrize("c", [0.0, 0.25, -0.5])
def test_all_equal_differences_give_a_point_interval(c):
    base = [0.25, 0.5, 0.25, 0.0]
    out = compare([b + c for b in base], base, seed=1)
    assert (out["delta"], out["ci95_low"], out["ci95_high"]) == (c, c, c)
    assert out["interval_method"] == "all differences equal"
    assert out["p_value"] == (1.0 if c == 0.0 else 2 / 16)


def test_rounding_that_makes_every_leave_one_out_mean_equal_falls_back_to_percentile():
    # 0.7 - 0.4 and 0.5 - 0.2 differ in the last bit only; the three leave-one-out means
    # round to the same float, so the acceleration is 0/0 and scipy's BCa has no endpoints.
    row, base = [0.7, 0.7, 0.5], [0.4, 0.4, 0.2]
    d = np.array(row) - np.array(base)
    assert len(set(d.tolist())) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.isnan(_scipy_interval(d, "BCa", 11, 1000).confidence_interval.low)
    out = compare(row, base, seed=11, resamples=1000)
    assert out["interval_method"] == ("percentile bootstrap (BCa undefined: every leave-one-out mean is equal, "
                                      "so the acceleration is 0/0)")
    direct = _scipy_interval(d, "percentile", 11, 1000).confidence_interval
    assert (out["ci95_low"], out["ci95_high"]) == (float(direct.low), float(direct.high))


def test_resamples_all_above_the_mean_make_the_bias_correction_infinite_and_fall_back():
    d = [0.0, 0.1, 0.2, 0.4, 0.9]
    replicates = _scipy_interval(d, "percentile", 1, 3).bootstrap_distribution
    assert np.all(replicates > np.mean(d))  # seed 1 happens to draw three means above 0.32
    out = compare(d, [0.0] * 5, seed=1, resamples=3)
    assert out["interval_method"] == ("percentile bootstrap (BCa undefined: every bootstrap mean lies above the "
                                      "observed mean, so the bias correction is infinite)")
    direct = _scipy_interval(d, "percentile", 1, 3).confidence_interval
    assert (out["ci95_low"], out["ci95_high"]) == (float(direct.low), float(direct.high))


# --------------------------------------------------------------------------- interval versus p-value


def test_interval_excluding_zero_with_an_exact_p_of_0_0625_is_not_distinguishable():
    # d = [0.25, 0.5, 0.5, 0.25, 0.25]: every query wins, so every bootstrap mean is >= 0.25 and
    # the interval excludes zero, but only 2 of the 32 sign flips reach |sum|: p = 0.0625.
    out = compare([0.5, 0.75, 1.0, 0.75, 0.5], [0.25, 0.25, 0.5, 0.5, 0.25], seed=5, resamples=2000)
    assert out["interval_method"] == "BCa bootstrap"
    assert out["ci95_low"] >= 0.25
    assert out["p_value"] == 0.0625
    assert (out["excludes_zero"], out["p_below_0_05"], out["distinguishable"]) == (True, False, False)
    assert out["agreement"] == "the interval excludes zero but the sign-flip p-value is 0.0625"


def test_agreement_phrases():
    assert agreement(0.01, 0.3, 0.01) == "agree"
    assert agreement(-0.01, 0.3, 0.5) == "agree"
    assert agreement(-0.3, -0.01, 0.25) == "the interval excludes zero but the sign-flip p-value is 0.25"
    assert agreement(-0.01, 0.2, 0.03) == "the sign-flip p-value is 0.03 but the interval includes zero"


def test_six_wins_out_of_six_are_distinguishable_and_agree():
    out = compare([0.5, 0.75, 1.0, 0.75, 0.5, 0.5], [0.25] * 6, seed=5, resamples=2000)
    assert out["p_value"] == 2 / 64
    assert (out["distinguishable"], out["agreement"]) == (True, "agree")


# --------------------------------------------------------------------------- validation and description


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="one value per query"):
        compare([0.1, 0.2], [0.1], seed=1)
    with pytest.raises(ValueError, match="empty"):
        compare([], [], seed=1)
    with pytest.raises(ValueError, match="finite"):
        compare([0.1, float("nan")], [0.1, 0.2], seed=1)
    with pytest.raises(ValueError, match="seed"):
        compare([0.1, 0.2], [0.2, 0.1], seed=-1)
    with pytest.raises(ValueError, match="resamples"):
        compare([0.1, 0.2], [0.2, 0.1], seed=1, resamples=0)
    with pytest.raises(ValueError, match="confidence"):
        compare([0.1, 0.2], [0.2, 0.1], seed=1, confidence=1.0)


def test_method_description_names_the_interval_the_seeds_and_the_rule():
    described = method_description(4000, 9, 0.9)
    assert described["interval"]["resamples"] == 4000
    assert described["interval"]["seed"] == 9
    assert described["interval"]["confidence"] == 0.9
    assert "BCa" in described["interval"]["kind"]
    assert described["interval"]["seed_per_comparison"] == "sha256('<seed>:<comparison>:<metric>') mod 2**32"
    assert described["distinguishable"] == "the interval excludes zero AND p < 0.05"
    json.dumps(described, allow_nan=False)
