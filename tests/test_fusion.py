import pytest

from generator.fusion import reciprocal_rank_fusion


def test_rrf_of_the_spec_fixture():
    assert [d for d, _ in reciprocal_rank_fusion([["x", "y", "z"], ["y", "z", "x"]])] == ["y", "x", "z"]


def test_rrf_scores_are_reciprocal_ranks_with_constant_60():
    fused = dict(reciprocal_rank_fusion([["a", "b"], ["b"]]))
    assert fused["a"] == pytest.approx(1 / 61)
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)


def test_exact_ties_keep_first_appearance():
    # "a" only in list one at rank 2, "c" only in list two at rank 2: an exact tie.
    fused = reciprocal_rank_fusion([["b", "a"], ["b", "c"]])
    assert [d for d, _ in fused] == ["b", "a", "c"]
    assert fused[1][1] == fused[2][1]
    fused = reciprocal_rank_fusion([["b", "c"], ["b", "a"]])
    assert [d for d, _ in fused] == ["b", "c", "a"]


def test_depth_cuts_the_fused_list():
    assert len(reciprocal_rank_fusion([["a", "b", "c"], ["d", "e"]], depth=2)) == 2


def test_duplicate_in_one_ranking_is_refused():
    with pytest.raises(ValueError, match="twice"):
        reciprocal_rank_fusion([["a", "a"]])
