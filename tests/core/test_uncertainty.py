"""Tests for generator/core/uncertainty.py: bootstrap intervals and sign-flip tests.

Expected values are worked out by hand in the comments; inputs are dyadic fractions
(0.25, 0.5, ...) where exact float equality is asserted.
"""

from __future__ import annotations

import itertools

import numpy as np

from generator.core.uncertainty import (
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




















# --------------------------------------------------------------------------- wins, ties, losses


def test_wins_ties_losses_counts_each_query_once():
    # d = [0.25, 0.5, 0.75, -0.25, 0, 1e-13]: three wins, one loss, two ties (1e-13 <= 1e-12).
    row = FOUR_ROW + [0.5, 0.5 + 1e-13]
    base = FOUR_BASE + [0.5, 0.5]
    assert wins_ties_losses(row, base) == (3, 2, 1)
    assert wins_ties_losses(row, base, tolerance=0.0) == (4, 1, 1)
    assert wins_ties_losses(row, base, tolerance=0.5) == (1, 5, 0)


# --------------------------------------------------------------------------- paired comparison










# --------------------------------------------------------------------------- bad input




