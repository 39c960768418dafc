import math

import pytest

from generator.core.metrics import graded_ndcg_at_k, macro_mean, ndcg_at_k, p95, recall_at_k, same_candidate_sets


def test_recall_at_5_of_the_spec_fixture():
    assert round(recall_at_k(["d3", "d1", "d7", "d2", "d9"], {"d1", "d2", "d4"}, 5), 4) == 0.6667


def test_ndcg_at_5_of_the_spec_fixture_uses_min_k_relevant_ideal():
    assert round(ndcg_at_k(["d3", "d1", "d7", "d2", "d9"], {"d1", "d2", "d4"}, 5), 4) == 0.4982


def test_empty_relevant_set_scores_zero():
    assert recall_at_k(["a", "b"], set(), 5) == 0.0
    assert ndcg_at_k(["a", "b"], set(), 5) == 0.0


def test_ndcg_ideal_is_capped_by_k():
    # 10 relevant documents, k = 2, both top slots relevant: a perfect 1.0.
    assert ndcg_at_k(["a", "b", "x"], {f"{c}" for c in "abcdefghij"}, 2) == pytest.approx(1.0)


def test_graded_ndcg_uses_exponential_gain():
    grades = {"a": 3, "b": 1}
    expected = (1 / math.log2(2) + 7 / math.log2(3)) / (7 / math.log2(2) + 1 / math.log2(3))
    assert graded_ndcg_at_k(["b", "a"], grades, 3) == pytest.approx(expected)


def test_bad_cutoff_raises_value_error():
    with pytest.raises(ValueError, match="positive integer"):
        recall_at_k(["a"], {"a"}, 0)


def test_macro_mean_and_p95():
    assert macro_mean([]) == 0.0
    assert macro_mean([1.0, 0.0, 0.5]) == 0.5
    assert p95([1.0, 2.0, 3.0, 4.0, 5.0]) == pytest.approx(4.8)
    with pytest.raises(ValueError):
        p95([])


def test_same_candidate_sets_detects_a_swapped_document():
    before = {"q": ["a", "b", "c"]}
    assert same_candidate_sets(before, {"q": ["c", "a", "b"]})
    assert not same_candidate_sets(before, {"q": ["c", "a", "d"]})


def test_graded_ndcg_uses_exponential_gain_and_log2_discount():
    grades = {"a": 3, "b": 2}
    assert graded_ndcg_at_k(["b", "a", "z"], grades, 3) == pytest.approx(
        (3 + 7 / 1.5849625007211563) / (7 + 3 / 1.5849625007211563))
    assert graded_ndcg_at_k(["z"], {}, 3) == 0.0



def test_pure_python_percentile_equals_numpy_bit_for_bit():
    import random

    import numpy as np

    from generator.core.metrics import percentile

    rng = random.Random(11)
    for _ in range(2000):
        values = [rng.choice([rng.uniform(0, 5000), rng.random(), float(rng.randint(0, 5))])
                  for _ in range(rng.randint(1, 40))]
        q = rng.choice([95, 50, 2.5, 97.5, 0, 100, rng.uniform(0, 100)])
        assert percentile(values, q) == float(np.percentile(np.asarray(values), q))
