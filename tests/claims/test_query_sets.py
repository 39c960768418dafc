"""A value is read with its own query set's count: the attribution rule reads which query set a
value belongs to, and which values are query counts, from the results schema, so a count from one
file cannot stand over a value from another ("On all {n} test queries, hybrid reaches {h}" with
`n` from the every-query file and `h` from the release sample's)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import claim, fixture_evaluation, measured, run_cli

ALL = "results-300.json"
REASON = "is read with {n}, the query count of results-300.json"


def _write_all_queries_file(root: Path) -> None:
    """A second sealed results file, measured on other queries, compared with the release sample."""
    from generator.evaluate.pipeline import write_sealed_results

    outputs = root / "outputs"
    write_sealed_results(outputs / ALL, outputs / "runs-300", fixture_evaluation(hybrid_variant=1),
                         sample_path=outputs / "results.json")


def _check(tmp_path, make_project, monkeypatch, capsys, text, sources):
    root = make_project(tmp_path / "p", extra_claims=claim("c", text, sources, kind="performance"))
    _write_all_queries_file(root)
    return run_cli(root, monkeypatch, capsys, "check")


SAMPLE_VALUE = {"h": "table[search=hybrid].nDCG@5"}

REFUSED = [
    pytest.param("On {n} test queries, hybrid reaches nDCG@5 {h:.3f}.",
                 measured(SAMPLE_VALUE) + measured({"n": "queries"}, file=ALL), REASON,
                 id="the-issues-sentence"),
    pytest.param("Hybrid reaches nDCG@5 {h:.3f} over {n} queries.",
                 measured(SAMPLE_VALUE) + measured({"n": "queries"}, file=ALL), REASON,
                 id="the-count-after-the-value"),
    pytest.param("Across {n} queries hybrid gains {d:+.3f} nDCG@5 over dense.",
                 measured({"d": "table[search=hybrid].delta_nDCG@5_vs_dense"})
                 + measured({"n": "comparisons.hybrid_vs_dense.metrics.nDCG@5.queries"}, file=ALL),
                 REASON, id="a-comparisons-own-query-count"),
    pytest.param("On all {n} test queries hybrid wins {w} of them against dense on nDCG@5.",
                 measured({"w": "comparisons.hybrid_vs_dense.metrics.nDCG@5.wins"})
                 + measured({"n": "queries"}, file=ALL), REASON, id="a-count-of-queries-under-another-count"),
    pytest.param(
        "On the {s} sample queries hybrid reaches nDCG@5 {h:.3f}.",
        measured({"h": "table[search=hybrid].nDCG@5"}, file=ALL)
        + measured({"s": "comparison_with_sample_by_row.hybrid.sample_queries"}, file=ALL),
        "is read with {s}, the query count of results.json", id="the-sample-sides-count-over-an-every-query-value"),
]


@pytest.mark.parametrize("text, sources, reason", REFUSED)
def test_a_value_read_with_another_query_sets_count_is_refused(tmp_path, make_project, monkeypatch, capsys, text,
                                                               sources, reason):
    outcome = _check(tmp_path, make_project, monkeypatch, capsys, text, sources)
    assert outcome.code == 1, outcome.out
    assert outcome.claim_says("c", reason), outcome.out


CONTROLS = [
    pytest.param("On {n} test queries, hybrid reaches nDCG@5 {h:.3f}.",
                 measured({"h": "table[search=hybrid].nDCG@5", "n": "queries"}, file=ALL), id="one-file"),
    pytest.param("On the {n} sample queries hybrid reaches nDCG@5 {h:.3f}; on {m} queries it reaches {a:.3f}.",
                 measured({"h": "table[search=hybrid].nDCG@5", "n": "queries"}, "h > 0")
                 + measured({"a": "table[search=hybrid].nDCG@5", "m": "queries"}, "a > 0", file=ALL),
                 id="each-value-after-its-own-count"),
    pytest.param("On the {s} sample queries hybrid reaches nDCG@5 {h:.3f}.",
                 measured({"h": "table[search=hybrid].nDCG@5"})
                 + measured({"s": "comparison_with_sample_by_row.hybrid.sample_queries"}, file=ALL),
                 id="the-sample-sides-count-over-a-sample-value"),
]


@pytest.mark.parametrize("text, sources", CONTROLS)
def test_a_value_read_with_its_own_query_sets_count_traces(tmp_path, make_project, monkeypatch, capsys, text,
                                                           sources):
    outcome = _check(tmp_path, make_project, monkeypatch, capsys, text, sources)
    assert outcome.code == 0, outcome.out
