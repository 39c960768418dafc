import pytest

from generator.core.fusion import min_max_fusion, min_max_normalise, reciprocal_rank_fusion


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


def test_min_max_fusion_alpha_weights_the_first_list():
    bm25 = [("x", 10.0), ("y", 0.0)]
    opaque = [("y", 1.0), ("x", 0.0)]
    assert min_max_fusion(bm25, opaque, 1.0) == {"x": 1.0, "y": 0.0}
    assert min_max_fusion(bm25, opaque, 0.0) == {"x": 0.0, "y": 1.0}
    assert min_max_fusion(bm25, opaque, 0.55) == pytest.approx({"x": 0.55, "y": 0.45})


def test_min_max_fusion_gives_a_document_missing_from_one_list_zero_there():
    assert min_max_fusion([("a", 3.0), ("b", 1.0)], [("c", 2.0), ("a", 0.0)], 0.5) == {"a": 0.5, "b": 0.0, "c": 0.5}


def test_min_max_of_equal_scores_is_one():
    assert min_max_normalise([("a", 2.0), ("b", 2.0)]) == {"a": 1.0, "b": 1.0}
    assert min_max_normalise([]) == {}


def test_min_max_fusion_refuses_alpha_outside_zero_one():
    with pytest.raises(ValueError, match="alpha must be in"):
        min_max_fusion([("a", 1.0)], [], 1.5)
