"""Tests for generator/evaluate/uncertainty.py: bootstrap intervals and sign-flip tests.

Expected values are worked out by hand in the comments; inputs are dyadic fractions
(0.25, 0.5, ...) where exact float equality is asserted.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from generator.evaluate.uncertainty import (
    method_description,
    paired_bootstrap_ci,
    paired_comparison,
    paired_permutation_test,
    wins_ties_losses,
)

# Four queries with differences d = row - base = [0.25, 0.5, 0.75, -0.25].
FOUR_ROW = [0.75, 1.0, 1.0, 0.25]
FOUR_BASE = [0.5, 0.5, 0.25, 0.5]


def _random_pair(seed: int, n: int, shift: float = 0.05) -> tuple[list[float], list[float]]:
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.0, 1.0, n)
    row = np.clip(base + rng.normal(shift, 0.2, n), 0.0, 1.0)
    return row.tolist(), base.tolist()


# --------------------------------------------------------------------------- permutation test


def test_exact_p_value_of_four_queries_matches_hand_enumeration():
    # d = [0.25, 0.5, 0.75, -0.25]; in units of 0.25: [1, 2, 3, -1], observed sum 5.
    # Each of the 2^4 = 16 sign assignments flips some subset N of the magnitudes {1, 2, 3, 1'};
    # its sum is 7 - 2 * sum(N). |7 - 2x| >= 5 iff x <= 1 or x >= 6:
    #   x <= 1: N = {}, {1}, {1'}                 -> sums 7, 5, 5
    #   x >= 6: N = {1,2,3}, {1',2,3}, {1,1',2,3} -> sums -5, -5, -7
    # The other 10 subsets give |sum| in {1, 3}. So p = 6 / 16 = 0.375.
    result = paired_permutation_test(FOUR_ROW, FOUR_BASE)
    assert result["p_value"] == 0.375
    assert result["method"] == "exact"
    assert result["nonzero_differences"] == 4
    assert result["resamples"] is None
    assert paired_permutation_test(FOUR_ROW, FOUR_BASE)["p_value"] == 0.375


def test_exact_p_value_of_one_one_minus_one_is_one():
    # d = [1, 1, -1], observed sum 1. The eight sign assignments give sums
    # 1, 3, -1, 1, -1, 1, -3, -1: every |sum| >= 1, so p = 8/8 = 1.
    assert paired_permutation_test([1, 1, 0], [0, 0, 1])["p_value"] == 1.0


def test_exact_p_value_of_three_equal_wins_is_one_quarter():
    # d = [1, 1, 1], observed sum 3; only +++ (3) and --- (-3) reach |sum| >= 3: p = 2/8.
    assert paired_permutation_test([1, 1, 1], [0, 0, 0])["p_value"] == 0.25


def test_a_sum_that_is_zero_up_to_rounding_gives_p_value_one():
    # d = [0.1, 0.2, -0.3] sums to 0 exactly but to 5.6e-17 in floating point. With a true
    # observed statistic of 0 every assignment is at least as extreme: p = 8/8, not 6/8.
    assert paired_permutation_test([0.1, 0.2, 0.0], [0.0, 0.0, 0.3])["p_value"] == 1.0


def test_zero_differences_are_left_out_of_the_sign_flips():
    # A tied query adds nothing to any sum. With 21 queries of which 20 differ, m = 20 stays
    # within the exact limit; every difference is +1, so only the all-plus and all-minus
    # assignments reach |sum| = 20: p = 2 / 2^20.
    row = [1.0] * 20 + [0.5]
    base = [0.0] * 20 + [0.5]
    result = paired_permutation_test(row, base)
    assert result["method"] == "exact"
    assert result["nonzero_differences"] == 20
    assert result["queries"] == 21
    assert result["p_value"] == 2 / 2**20


def test_exact_enumeration_matches_brute_force_over_all_sign_vectors():
    for seed in range(5):
        row, base = _random_pair(seed, 11)
        d = np.asarray(row) - np.asarray(base)
        observed = abs(d.sum())
        eps = 1e-12 * max(1.0, np.abs(d).sum())
        hits = sum(abs(np.dot(signs, d)) >= observed - eps
                   for signs in itertools.product((1.0, -1.0), repeat=d.size))
        assert paired_permutation_test(row, base)["p_value"] == hits / 2**d.size


def test_identical_runs_give_p_value_one_even_above_the_exact_limit():
    scores = [0.1 * i for i in range(30)]
    result = paired_permutation_test(scores, list(scores), exact_max_queries=5)
    assert result == {"p_value": 1.0, "method": "exact", "nonzero_differences": 0,
                      "queries": 30, "resamples": None}


def test_monte_carlo_is_used_above_the_exact_limit_and_agrees_with_exact():
    row, base = _random_pair(7, 14)
    exact = paired_permutation_test(row, base, exact_max_queries=20)
    sampled = paired_permutation_test(row, base, exact_max_queries=10)
    assert exact["method"] == "exact"
    assert sampled["method"] == "monte-carlo"
    assert sampled["resamples"] == 100_000
    # Standard error of a Monte Carlo p with 100000 draws is at most 0.0016.
    assert 0.05 < exact["p_value"] < 0.95
    assert abs(sampled["p_value"] - exact["p_value"]) < 0.01


def test_monte_carlo_uses_count_plus_one_over_resamples_plus_one():
    # 25 equal wins: only 2 of 2^25 assignments reach the observed sum, so 10 random draws
    # find none and p = (0 + 1) / (10 + 1).
    low = paired_permutation_test([1.0] * 25, [0.0] * 25, exact_max_queries=20, resamples=10)
    assert low["method"] == "monte-carlo"
    assert low["p_value"] == 1 / 11
    # 11 wins and 10 losses of size 1: a signed sum of 21 terms of size 1 is odd, so every
    # draw has |sum| >= 1 = the observed |sum| (about a third of draws tie it exactly) and
    # p = (1000 + 1) / (1000 + 1). The exact test agrees: 2^21 / 2^21.
    row, base = [1.0] * 11 + [0.0] * 10, [0.0] * 11 + [1.0] * 10
    high = paired_permutation_test(row, base, exact_max_queries=20, resamples=1000)
    assert high["method"] == "monte-carlo"
    assert high["p_value"] == 1.0
    assert paired_permutation_test(row, base, exact_max_queries=21)["p_value"] == 1.0


def test_monte_carlo_is_deterministic_for_a_seed():
    row, base = _random_pair(3, 40)
    first = paired_permutation_test(row, base, resamples=2000, seed=5)["p_value"]
    assert paired_permutation_test(row, base, resamples=2000, seed=5)["p_value"] == first


def test_twenty_nonzero_differences_enumerate_exactly():
    row, base = _random_pair(11, 20)
    result = paired_permutation_test(row, base)
    assert result["method"] == "exact"
    # An exact p-value is a whole number of assignments out of 2^20.
    assert (result["p_value"] * 2**20).is_integer()


# --------------------------------------------------------------------------- bootstrap


def test_bootstrap_of_constant_difference_is_that_point():
    # Every difference is 0.25, so every resampled mean is 0.25.
    assert paired_bootstrap_ci([0.75, 0.5, 0.25], [0.5, 0.25, 0.0]) == (0.25, 0.25)


def test_bootstrap_of_constant_non_dyadic_difference_is_exactly_that_point():
    # Averaging three copies of 0.1 in floating point gives 0.10000000000000002; a
    # degenerate bootstrap distribution must still report the difference itself.
    assert paired_bootstrap_ci([0.1, 0.1, 0.1], [0.0, 0.0, 0.0]) == (0.1, 0.1)


def test_bootstrap_of_three_queries_zero_zero_one():
    # d = [0, 0, 1]. A resample's mean is k/3 where k ~ Binomial(3, 1/3):
    # P(0) = 8/27 = 29.6 %, P(1/3) = 12/27, P(2/3) = 6/27, P(1) = 1/27 = 3.7 %.
    # The 2.5th percentile lies among the zeros; the 97.5th lies in the top 3.7 %, i.e. 1.
    # (A 5/95 interval would end at 2/3 instead.)
    assert paired_bootstrap_ci([0.0, 0.0, 1.0], [0.0, 0.0, 0.0]) == (0.0, 1.0)


def test_bootstrap_follows_the_documented_recipe():
    # Anyone holding the seed can reproduce the interval from method_description():
    # default_rng(seed).integers(0, n, size=(B, n)), means, linear 2.5 / 97.5 percentiles.
    row, base = _random_pair(12, 20)
    d = np.asarray(row) - np.asarray(base)
    indices = np.random.default_rng(77).integers(0, d.size, size=(2000, d.size))
    expected = np.percentile(d[indices].mean(axis=1), [2.5, 97.5])
    low, high = paired_bootstrap_ci(row, base, resamples=2000, seed=77)
    assert low == pytest.approx(expected[0], abs=1e-15)
    assert high == pytest.approx(expected[1], abs=1e-15)


def test_bootstrap_of_identical_runs_is_zero_zero():
    low, high = paired_bootstrap_ci([0.3, 0.7, 0.1], [0.3, 0.7, 0.1])
    assert (low, high) == (0.0, 0.0)
    assert str(low) == "0.0" and str(high) == "0.0"


def test_bootstrap_of_two_queries_zero_and_one():
    # d = [0, 1]. A resample of two indices has mean 0 (both 0) with probability 1/4, 0.5 with
    # 1/2 and 1 with 1/4. Among 10000 replicates about 2500 are 0 and 2500 are 1, so the
    # 2.5th percentile (position 249.975) is 0 and the 97.5th (position 9749.025) is 1.
    assert paired_bootstrap_ci([0.0, 1.0], [0.0, 0.0]) == (0.0, 1.0)


def test_bootstrap_interval_is_inside_the_range_of_differences_and_brackets_the_mean():
    row, base = _random_pair(2, 20)
    d = np.asarray(row) - np.asarray(base)
    low, high = paired_bootstrap_ci(row, base)
    assert d.min() <= low < d.mean() < high <= d.max()


def test_bootstrap_same_seed_same_interval_other_seed_other_interval():
    row, base = _random_pair(4, 20)
    first = paired_bootstrap_ci(row, base, seed=1)
    assert paired_bootstrap_ci(row, base, seed=1) == first
    assert paired_bootstrap_ci(row, base, seed=2) != first


def test_bootstrap_narrower_confidence_gives_narrower_interval():
    row, base = _random_pair(5, 20)
    low95, high95 = paired_bootstrap_ci(row, base, confidence=0.95)
    low80, high80 = paired_bootstrap_ci(row, base, confidence=0.80)
    assert low95 < low80 < high80 < high95


# --------------------------------------------------------------------------- wins, ties, losses


def test_wins_ties_losses_counts_each_query_once():
    # d = [0.25, 0.5, 0.75, -0.25, 0, 1e-13]: three wins, one loss, two ties (1e-13 <= 1e-12).
    row = FOUR_ROW + [0.5, 0.5 + 1e-13]
    base = FOUR_BASE + [0.5, 0.5]
    assert wins_ties_losses(row, base) == (3, 2, 1)
    assert wins_ties_losses(row, base, tolerance=0.0) == (4, 1, 1)
    assert wins_ties_losses(row, base, tolerance=0.5) == (1, 5, 0)


# --------------------------------------------------------------------------- paired comparison


def test_paired_comparison_of_four_queries():
    result = paired_comparison(FOUR_ROW, FOUR_BASE)
    # delta = (0.25 + 0.5 + 0.75 - 0.25) / 4 = 0.3125
    assert result["delta"] == 0.3125
    assert result["p_value"] == 0.375
    assert result["p_value_method"] == "exact"
    assert (result["wins"], result["ties"], result["losses"]) == (3, 0, 1)
    assert result["queries"] == 4
    assert -0.25 <= result["ci95_low"] < 0.3125 < result["ci95_high"] <= 0.75
    assert (result["ci95_low"], result["ci95_high"]) == paired_bootstrap_ci(FOUR_ROW, FOUR_BASE)
    assert set(result) == {"delta", "ci95_low", "ci95_high", "p_value", "p_value_method",
                           "wins", "ties", "losses", "queries"}


def test_paired_comparison_of_identical_runs():
    scores = [0.2, 0.4, 0.0, 1.0, 0.6]
    result = paired_comparison(scores, list(scores))
    assert result == {"delta": 0.0, "ci95_low": 0.0, "ci95_high": 0.0, "p_value": 1.0,
                      "p_value_method": "exact", "wins": 0, "ties": 5, "losses": 0,
                      "queries": 5}
    assert json.dumps(result, sort_keys=True) == (
        '{"ci95_high": 0.0, "ci95_low": 0.0, "delta": 0.0, "losses": 0, "p_value": 1.0, '
        '"p_value_method": "exact", "queries": 5, "ties": 5, "wins": 0}')


def test_paired_comparison_returns_plain_python_types():
    row, base = _random_pair(6, 25)
    result = paired_comparison(np.asarray(row), np.asarray(base), permutation_resamples=1000)
    assert result["p_value_method"] == "monte-carlo"
    for key in ("delta", "ci95_low", "ci95_high", "p_value"):
        assert type(result[key]) is float
    for key in ("wins", "ties", "losses", "queries"):
        assert type(result[key]) is int
    json.dumps(result, allow_nan=False)


def test_method_description_records_the_parameters():
    description = method_description(bootstrap_resamples=500, permutation_resamples=700,
                                     seed=9, exact_max_queries=12)
    assert description["bootstrap"]["kind"] == "percentile"
    assert description["bootstrap"]["resamples"] == 500
    assert description["bootstrap"]["seed"] == 9
    assert description["bootstrap"]["confidence"] == 0.95
    assert description["permutation"]["exact_when_nonzero_differences_at_most"] == 12
    assert description["permutation"]["monte_carlo_resamples"] == 700
    assert description["permutation"]["sides"] == "two-sided"
    json.dumps(description, allow_nan=False)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("row, base, message", [
    ([0.1, 0.2], [0.1], "got 2 and 1"),
    ([], [], "empty"),
    ([0.1, float("nan")], [0.1, 0.2], r"row_scores\[1\] is not a finite number"),
    ([0.1, 0.2], [0.1, float("inf")], r"base_scores\[1\] is not a finite number"),
    (["0.1"], [0.2], "only numbers"),
    ({"q1": 0.1}, {"q1": 0.2}, "aligned by query"),
    ("0.1", "0.2", "aligned by query"),
    ([[0.1, 0.2]], [[0.1, 0.2]], "one-dimensional"),
    (None, [0.1], "aligned by query"),
])
def test_bad_scores_raise_value_error(row, base, message):
    for function in (paired_bootstrap_ci, paired_permutation_test, wins_ties_losses,
                     paired_comparison):
        with pytest.raises(ValueError, match=message):
            function(row, base)


@pytest.mark.parametrize("function, keyword, value, message", [
    (paired_bootstrap_ci, "resamples", 0, "resamples must be at least 1"),
    (paired_bootstrap_ci, "resamples", 10.0, "resamples must be an integer"),
    (paired_bootstrap_ci, "resamples", True, "resamples must be an integer"),
    (paired_bootstrap_ci, "seed", -1, "seed must be at least 0"),
    (paired_bootstrap_ci, "confidence", 1.0, "strictly between 0 and 1"),
    (paired_bootstrap_ci, "confidence", 95, "strictly between 0 and 1"),
    (paired_permutation_test, "exact_max_queries", 41, "at most 40"),
    (paired_permutation_test, "resamples", -5, "resamples must be at least 1"),
    (paired_permutation_test, "tolerance", -1e-9, "non-negative"),
    (wins_ties_losses, "tolerance", float("nan"), "non-negative"),
])
def test_bad_parameters_raise_value_error(function, keyword, value, message):
    with pytest.raises(ValueError, match=message):
        function(FOUR_ROW, FOUR_BASE, **{keyword: value})
