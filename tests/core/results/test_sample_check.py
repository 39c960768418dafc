"""Tests for generator/core/results/sample_check.py: did the sample's change hold on the full set?"""

from __future__ import annotations

import json

import numpy as np
import pytest

from generator.core.results.sample_check import compare_sample_to_full
from generator.core.comparisons import compare


def _random_pair(seed: int, n: int, shift: float = 0.05) -> tuple[list[float], list[float]]:
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.0, 1.0, n)
    row = np.clip(base + rng.normal(shift, 0.2, n), 0.0, 1.0)
    return row.tolist(), base.tolist()


def _stats(delta, low, high, p_value=0.5):
    return {"delta": delta, "ci95_low": low, "ci95_high": high, "p_value": p_value,
            "wins": 1, "ties": 0, "losses": 0}


def _results(queries, rerank_paired, *, reason="cross-encoder weights not available offline"):
    """A minimal results.json: dense plus hybrid+rerank, measured (with its comparison with dense)
    when rerank_paired is given."""
    dense = {"search": "dense", "measured": True}
    if rerank_paired is None:
        rerank = {"search": "hybrid+rerank", "measured": False, "not_measured_reason": reason,
                  "recall@5": None, "nDCG@5": None}
        comparison = {"row": "hybrid+rerank", "baseline": "dense", "measured": False, "not_measured_reason": reason}
    else:
        rerank = {"search": "hybrid+rerank", "measured": True}
        comparison = {"row": "hybrid+rerank", "baseline": "dense", "measured": True, "metrics": rerank_paired}
    return {"queries": queries, "table": [dense, rerank], "comparisons": {"hybrid+rerank_vs_dense": comparison}}


SAMPLE = _results(20, {"recall@5": _stats(0.1, -0.02, 0.25), "nDCG@5": _stats(0.08, 0.01, 0.15)})


def test_compare_sample_to_full_when_both_changes_stay_positive():
    full = _results(300, {"recall@5": _stats(0.05, 0.02, 0.08),
                          "nDCG@5": _stats(0.01, -0.01, 0.03)})
    result = compare_sample_to_full(SAMPLE, full)
    assert result["measured"] is True
    assert result["not_measured_reason"] is None
    assert result["both_changes_stay_positive"] is True
    assert result["verdict"] == "stays-positive"
    assert (result["sample_queries"], result["full_queries"]) == (20, 300)

    recall = result["per_metric"]["recall@5"]
    assert recall["verdict"] == "confirmed"
    assert recall["sample"]["excludes_zero"] is False      # [-0.02, 0.25] holds 0
    assert recall["full"]["excludes_zero"] is True         # [0.02, 0.08] is above 0
    assert recall["full_interval_inside_sample_interval"] is True
    assert recall["intervals_overlap"] is True
    assert recall["overlap"] == [0.02, 0.08]
    assert recall["full_delta_inside_sample_interval"] is True

    ndcg = result["per_metric"]["nDCG@5"]
    assert ndcg["verdict"] == "positive-but-uncertain"
    assert ndcg["sample"]["excludes_zero"] is True         # [0.01, 0.15]
    assert ndcg["full"]["excludes_zero"] is False          # [-0.01, 0.03]
    assert ndcg["full_interval_inside_sample_interval"] is False   # -0.01 < 0.01
    assert ndcg["overlap"] == [0.01, 0.03]
    assert ndcg["full_delta_inside_sample_interval"] is True       # 0.01 in [0.01, 0.15]
    json.dumps(result, allow_nan=False)


def test_compare_sample_to_full_when_a_change_turns_negative():
    full = _results(300, {"recall@5": _stats(0.04, 0.01, 0.07),
                          "nDCG@5": _stats(-0.02, -0.05, -0.001)})
    result = compare_sample_to_full(SAMPLE, full)
    assert result["both_changes_stay_positive"] is False
    assert result["verdict"] == "does-not-stay-positive"
    ndcg = result["per_metric"]["nDCG@5"]
    assert ndcg["verdict"] == "not-confirmed"
    assert ndcg["sign_kept"] is False
    assert ndcg["full"]["direction"] == "negative"
    assert ndcg["full"]["excludes_zero"] is True
    assert ndcg["intervals_overlap"] is False              # [0.01, 0.15] vs [-0.05, -0.001]
    assert ndcg["overlap"] is None
    assert ndcg["full_delta_inside_sample_interval"] is False


def test_compare_sample_to_full_when_the_sample_change_was_not_positive():
    sample = _results(20, {"recall@5": _stats(0.0, -0.1, 0.1), "nDCG@5": _stats(0.08, 0.01, 0.15)})
    full = _results(300, {"recall@5": _stats(0.03, 0.01, 0.05),
                          "nDCG@5": _stats(0.05, 0.02, 0.08)})
    result = compare_sample_to_full(sample, full)
    assert result["per_metric"]["recall@5"]["verdict"] == "sample-not-positive"
    assert result["per_metric"]["nDCG@5"]["verdict"] == "confirmed"
    assert result["both_changes_stay_positive"] is False


@pytest.mark.parametrize("sample_measured, full_measured, label", [
    (False, True, "sample"), (True, False, "full"), (False, False, "sample")])
def test_compare_sample_to_full_when_the_row_is_not_measured(sample_measured, full_measured,
                                                             label):
    measured = {"recall@5": _stats(0.05, 0.02, 0.08), "nDCG@5": _stats(0.05, 0.02, 0.08)}
    sample = _results(20, measured if sample_measured else None)
    full = _results(300, measured if full_measured else None)
    result = compare_sample_to_full(sample, full)
    assert result["measured"] is False
    assert result["both_changes_stay_positive"] is None
    assert result["verdict"] == "not-measured"
    assert (f"{label} results: table[search=hybrid+rerank] is not measured: "
            "cross-encoder weights not available offline") in result["not_measured_reason"]
    for metric in ("recall@5", "nDCG@5"):
        assert result["per_metric"][metric]["verdict"] == "not-measured"
        assert "is not measured" in result["per_metric"][metric]["reason"]
    json.dumps(result, allow_nan=False)


def test_compare_sample_to_full_with_a_null_value_is_not_measured():
    full = _results(300, {"recall@5": _stats(0.05, None, 0.08),
                          "nDCG@5": _stats(0.05, 0.02, 0.08)})
    result = compare_sample_to_full(SAMPLE, full)
    assert result["measured"] is False
    assert result["per_metric"]["recall@5"]["reason"] == (
        "full results: comparisons.hybrid+rerank_vs_dense.metrics.recall@5.ci95_low "
        "is null or missing")
    assert result["per_metric"]["nDCG@5"]["verdict"] == "confirmed"


def test_compare_sample_to_full_reads_the_comparisons_output():
    row, base = _random_pair(8, 20, shift=0.3)
    full_row, full_base = _random_pair(9, 60, shift=0.3)
    metrics = ("recall@5",)
    sample = _results(20, {"recall@5": compare(row, base, seed=1)})
    full = _results(60, {"recall@5": compare(full_row, full_base, seed=2, permutation_resamples=1000)})
    result = compare_sample_to_full(sample, full, metrics=metrics)
    assert result["per_metric"]["recall@5"]["verdict"] == "confirmed"
    assert result["both_changes_stay_positive"] is True
    assert result["per_metric"]["recall@5"]["sample"]["queries"] == 20
    assert result["per_metric"]["recall@5"]["full"]["queries"] == 60


def test_compare_sample_to_full_rejects_malformed_results():
    full = _results(300, {"recall@5": _stats(0.05, 0.02, 0.08)})
    with pytest.raises(ValueError, match=r"full results: comparisons\.hybrid\+rerank_vs_dense\.metrics"
                                         r"\.nDCG@5: missing"):
        compare_sample_to_full(SAMPLE, full)
    with pytest.raises(ValueError, match=r"no row 'hybrid\+colbert'; the rows are dense, hybrid\+rerank"):
        compare_sample_to_full(SAMPLE, SAMPLE, row="hybrid+colbert")
    with pytest.raises(ValueError, match="no table of rows"):
        compare_sample_to_full(SAMPLE, {"queries": 300})
    with pytest.raises(ValueError, match="metrics must be a non-empty sequence"):
        compare_sample_to_full(SAMPLE, SAMPLE, metrics="nDCG@5")
