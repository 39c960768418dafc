import pytrec_eval

from generator.core.fusion import reciprocal_rank_fusion
from generator.core.runfiles import format_run, order_preserving_scores, read_run


def test_order_preserving_scores_break_exact_ties_downwards():
    written = order_preserving_scores([0.5, 0.25, 0.25, 0.25, 0.1])
    assert written[0] == 0.5 and written[1] == 0.25
    assert written[1] > written[2] > written[3] > written[4]


def test_trec_eval_reads_rrf_ties_in_the_tools_order(tmp_path):
    # Two exact ties whose document ids sort against the fused order: trec_eval would swap them.
    fused = reciprocal_rank_fusion([["z1", "a2"], ["z1", "b2"]])
    assert [d for d, _ in fused] == ["z1", "a2", "b2"]
    path = tmp_path / "run.trec"
    path.write_text(format_run({"q": fused}, "hybrid"))
    run = read_run(path)
    # Only the document at rank 2 is relevant: P@2 is 0.5 only if a2 stays at rank 2.
    evaluator = pytrec_eval.RelevanceEvaluator({"q": {"a2": 1}}, {"P_2", "recip_rank"})
    measured = evaluator.evaluate(run)["q"]
    assert measured["recip_rank"] == 0.5


def test_float32_rounding_and_stepping_match_numpy():
    import random

    import numpy as np

    from generator.core.runfiles import float32_below, to_float32

    rng = random.Random(3)
    for value in [0.0, -0.0, 1e-45, 0.016, 0.5, -0.5, 3.4e38] + [rng.uniform(-50, 50) for _ in range(2000)]:
        assert repr(to_float32(value)) == repr(float(np.float32(value)))
        below = float(np.nextafter(np.float32(value), np.float32(-np.inf)))
        assert repr(float32_below(to_float32(value))) == repr(below)
