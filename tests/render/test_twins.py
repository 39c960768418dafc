"""An int8 reranker beside its fp32 twin (issue 38): the change with the pair's interval, the
non-inferiority and equivalence tests against the design's margin, and the speed ratio, on the
committed SciFact release sample (the trained cross-encoder in fp32 and int8, same candidates)."""

import re
from pathlib import Path

import pytest

from generator.render.doors import HtmlDoor
from generator.render.labels import Labels, load_labels
from generator.render.twins import twin_rows
from generator.core.results import read_results

REPOSITORY = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def sample():
    return read_results(REPOSITORY / "outputs" / "results.json")


def _labels():
    return Labels(load_labels(REPOSITORY / "templates" / "labels.yaml"), HtmlDoor(), "labels.yaml")


def _text(rows):
    import html

    from generator.render.orphans import strip_marks

    def plain(value):
        return html.unescape(re.sub(r"<[^>]+>", "", strip_marks(str(value))))
    return {plain(label): plain(value) for label, value in rows}


def test_the_int8_row_finds_its_fp32_twin_and_no_other(sample):
    assert sample.model.quantized_twins() == [("hybrid+rerank-int8", "hybrid+rerank")]
    assert twin_rows(sample, "hybrid+rerank", ["nDCG@5"], 0.01, HtmlDoor(), _labels()) == []


def test_the_twin_rows_are_the_tests_an_independent_library_computes(sample):
    scipy_stats = pytest.importorskip("scipy.stats")
    statsmodels = pytest.importorskip("statsmodels.stats.weightstats")
    margin = 0.01
    shown = _text(twin_rows(sample, "hybrid+rerank-int8", ["nDCG@5"], margin, HtmlDoor(), _labels()))
    int8 = sample.model.per_query("hybrid+rerank-int8")
    fp32 = sample.model.per_query("hybrid+rerank")
    queries = sample.model.query_ids
    d = [int8[q]["nDCG@5"] - fp32[q]["nDCG@5"] for q in queries]
    pair = sample.model.all_pairs["metrics"]["nDCG@5"]["pairs"]
    entry = pair.get("hybrid+rerank-int8_vs_hybrid+rerank") or pair["hybrid+rerank_vs_hybrid+rerank-int8"]
    assert shown["fp32 twin"] == "hybrid+rerank"
    change = shown["Change against the twin, nDCG@5"]
    assert change.startswith(f"{sum(d) / len(d):+.3f}")
    one_sided = scipy_stats.ttest_1samp([x + margin for x in d], 0.0, alternative="greater").pvalue
    assert shown["Test of a loss beyond the margin"].startswith(f"p {one_sided:.3g},")
    tost_p = statsmodels.ttost_paired(__import__("numpy").array(d), __import__("numpy").zeros(len(d)),
                                      -margin, margin)[0]
    assert shown["Equivalence test (TOST)"].startswith(f"p {tost_p:.3g},")
    assert "not inside the margin" in shown["Equivalence test (TOST)"]
    ratio = sample.model.cost("hybrid+rerank")["p95_milliseconds"] / sample.model.cost("hybrid+rerank-int8")["p95_milliseconds"]
    assert shown["p95 speed"] == f"{ratio:.2f} times the fp32 twin's speed"
    assert entry["ci95_low"] is not None


def test_without_a_margin_in_the_design_no_test_is_run(sample):
    shown = _text(twin_rows(sample, "hybrid+rerank-int8", ["nDCG@5"], None, HtmlDoor(), _labels()))
    assert shown["Margin from the design"] == "no margin in the design"
    assert "Test of a loss beyond the margin" not in shown and "Equivalence test (TOST)" not in shown


def test_a_wide_margin_accepts_the_twin(sample):
    shown = _text(twin_rows(sample, "hybrid+rerank-int8", ["nDCG@5"], 0.5, HtmlDoor(), _labels()))
    assert shown["Test of a loss beyond the margin"].endswith("loss beyond the margin excluded")
    assert shown["Equivalence test (TOST)"].endswith(": inside the margin")
