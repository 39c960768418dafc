"""The pure-Python paired statistics the checker re-derives with give the numpy path's numbers."""

from __future__ import annotations

import random

import pytest

from generator.core.signflip import exact_count, exact_p_value, wins_ties_losses
from generator.core.uncertainty import paired_permutation_test


def test_exact_p_value_of_four_queries_by_hand():
    # d = [1, 2, 3, -1] (quarters): 6 of the 16 sign vectors reach |sum| >= 5
    assert exact_p_value([0.25, 0.5, 0.75, -0.25]) == 0.375


def test_identical_runs_have_p_value_one_and_only_ties():
    assert exact_p_value([0.0, 0.0, 0.0]) == 1.0
    assert wins_ties_losses([0.0, 0.1, -0.2, 1e-13]) == (1, 2, 1)


@pytest.mark.parametrize("seed", range(25))
def test_pure_python_p_value_equals_the_evaluation_stage(seed):
    rng = random.Random(seed)
    n = rng.randint(1, 20)
    row = [rng.choice([0.0, 0.25, 0.5, 1.0, rng.random()]) for _ in range(n)]
    base = [rng.choice([0.0, 0.25, 0.5, 1.0, rng.random()]) for _ in range(n)]
    differences = [r - b for r, b in zip(row, base)]
    assert exact_p_value(differences) == paired_permutation_test(row, base)["p_value"]


def test_exact_count_counts_both_tails():
    assert exact_count([1.0], 1.0) == 2          # +1 and -1 both reach 1
    assert exact_count([1.0, 1.0], 2.0) == 2     # only (+,+) and (-,-)
