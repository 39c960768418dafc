"""Claim frames (generator/claims/frames/): the sentence that carries a result is written by the
package from the computed result, on the committed SciFact review's own results (20-query sample
and all 300 test queries). Each test names what decides a word and shows both sides: the word when
the result says so, and its absence (or the opposite word) when it does not.

Figures the tests lean on (outputs/results.json, results-300.json): hybrid+rerank against hybrid
on nDCG@5 is -0.371 (interval -0.537 to -0.216, p 0.0003, 1 won, 4 tied, 15 lost); hybrid against
dense +0.048 (interval -0.062 to +0.144, p 0.39, 7/11/2); on 300 queries hybrid against dense is
+0.032 (interval +0.004 to +0.058, p 0.017, Holm's p 0.070). D5's effect is 0.02 nDCG@5, set after
the results; the latency budget is 500 ms.
"""

from __future__ import annotations

import pytest

from generator.claims.frames import thresholds
from generator.claims.frames.spec import parse_frame
from generator.claims.tracing.checker import check_project
from generator.project import load_project
from tests.claims.review import check, codes, framed, one, review, texted  # noqa: F401 (review: a fixture)

RERANK_HYBRID = "{comparison: hybrid+rerank, against: hybrid, metric: nDCG@5}"
HYBRID_DENSE = "{comparison: hybrid, against: dense, metric: nDCG@5}"


# --- the direction and "significantly" come from the data ----------------------------------------

def test_significantly_lower_when_the_test_tells_a_loss_apart(review):
    result = one(review, framed("c", RERANK_HYBRID))
    assert result.traceable and result.origin == "frame", result.reasons
    assert "significantly lower than hybrid's" in result.rendered_text
    assert "-0.371" in result.rendered_text and "-0.537 to -0.216" in result.rendered_text


def test_the_same_pair_read_the_other_way_is_significantly_higher(review):
    result = one(review, framed("c", "{comparison: hybrid, against: hybrid+rerank, metric: nDCG@5}"))
    assert "hybrid's mean nDCG@5 is significantly higher than hybrid+rerank's" in result.rendered_text
    assert "+0.371" in result.rendered_text and "+0.216 to +0.537" in result.rendered_text


def test_no_significantly_when_the_test_does_not_tell_the_pair_apart(review):
    result = one(review, framed("c", HYBRID_DENSE))
    assert result.traceable
    assert "significantly" not in result.rendered_text
    assert "higher than dense's" in result.rendered_text
    assert "the test does not tell this change from no change" in result.rendered_text


def test_holms_correction_takes_significantly_away_where_it_should(review):
    plain = one(review, framed("c", "{comparison: hybrid, against: dense, metric: nDCG@5, file: results-300.json}"))
    holm = one(review, framed("c", "{comparison: hybrid, against: dense, metric: nDCG@5, file: results-300.json, "
                                   "correction: holm}"))
    assert "significantly higher" in plain.rendered_text and "p = 0.017" in plain.rendered_text
    assert "significantly" not in holm.rendered_text
    assert "p = 0.070 after Holm's correction over 10 pairs" in holm.rendered_text


def test_a_size_is_said_only_when_the_interval_clears_the_smallest_effect_that_matters(review):
    cleared = one(review, framed("c", "{comparison: hybrid+rerank, against: hybrid, metric: nDCG@5, effect: D5}"))
    short = one(review, framed("c", "{comparison: hybrid, against: dense, metric: nDCG@5, file: results-300.json, "
                                    "effect: D5}"))
    assert "its interval clears the smallest change that matters, 0.02" in cleared.rendered_text
    assert "does not clear the smallest change that matters, 0.02" in short.rendered_text
    for result in (cleared, short):
        assert "set after the results: post hoc" in result.rendered_text


def test_the_relative_change_is_computed_by_the_tool(review):
    result = one(review, framed("c", "{comparison: hybrid, against: dense, metric: nDCG@5, relative: \"true\"}"))
    assert result.traceable
    # +0.048 over dense's 0.580 is +8.3%
    assert "+8.3% relative to dense's mean" in result.rendered_text


# --- the query set and the statistic are named -------------------------------------------------

def test_a_frame_names_the_query_set_of_the_file_it_reads(review):
    sample = one(review, framed("c", HYBRID_DENSE))
    every = one(review, framed("c", "{comparison: hybrid, against: dense, metric: nDCG@5, file: results-300.json}"))
    assert sample.rendered_text.startswith("On the release sample (20 queries)")
    assert every.rendered_text.startswith("On all 300 test queries")


def test_one_query_is_never_the_mean(review):
    result = one(review, framed("c", "{comparison: hybrid, against: dense, metric: nDCG@5, statistic: query, "
                                     "query: \"1\"}"))
    assert result.traceable
    assert result.rendered_text.startswith("On query 1 of the release sample")
    assert "one query says nothing about the mean" in result.rendered_text
    assert "mean nDCG@5" not in result.rendered_text


@pytest.mark.parametrize("frame, words", [
    ("{comparison: hybrid, against: hybrid+rerank, metric: nDCG@5, statistic: share}", "most queries (15 of 20)"),
    ("{comparison: hybrid+rerank, against: hybrid, metric: nDCG@5, statistic: share}", "on 1 of 20 queries"),
    ("{comparison: hybrid, against: dense, metric: nDCG@5, statistic: share}", "on 7 of 20 queries"),
])
def test_most_queries_only_when_more_than_half_are_won(review, frame, words):
    result = one(review, framed("c", frame))
    assert result.traceable and words in result.rendered_text, result.rendered_text
    assert ("most" in result.rendered_text) == ("most" in words)


class _Files:
    """What a reading asks of a check's results files, for one results document in memory."""

    def __init__(self, data):
        from generator.core.results.model import ResultsModel
        self.model = ResultsModel(data)
        self.memo = type("NoMemo", (), {"remembered": staticmethod(lambda kind, inputs, compute: compute())})()

    def for_decision(self, name):
        return self, None


def _reading(frame_entry: dict, data: dict):
    from generator.claims.frames.readings import read_frame
    context = type("Context", (), {"results": _Files(data)})()
    frame, problem = parse_frame(frame_entry)
    assert problem is None
    return read_frame(frame, context, "c")


def _one_comparison(queries: int, wins: int, ties: int, losses: int) -> dict:
    stats = {"delta": -0.4, "ci95_low": -0.4, "ci95_high": -0.4, "p_value": 0.5, "distinguishable": False,
             "queries": queries, "wins": wins, "ties": ties, "losses": losses}
    return {"queries": queries, "query_set": "sample",
            "table": [{"search": "a", "measured": True, "nDCG@5": 0.2}, {"search": "b", "measured": True, "nDCG@5": 0.6}],
            "comparisons": {"a_vs_b": {"row": "a", "baseline": "b", "measured": True, "metrics": {"nDCG@5": stats}}}}


@pytest.mark.parametrize("statistic", ["mean", "share"])
@pytest.mark.parametrize("queries", [1, 5])
def test_below_the_minimum_sample_nothing_is_decided(statistic, queries):
    from generator.claims.frames.phrasing import sentence
    from generator.core.sample_size import minimum_queries
    assert queries < minimum_queries() == 6
    reading = _reading({"comparison": "a", "against": "b", "metric": "nDCG@5", "statistic": statistic},
                       _one_comparison(queries, 0, 0, queries))
    assert reading.problem is None and reading.case == "undecidable"
    template, shown = sentence(reading)
    said = template.format(**shown)
    assert f"cannot be decided with {queries} quer" in said and "at least 6 queries" in said


def test_the_minimum_sample_is_read():
    reading = _reading({"comparison": "a", "against": "b", "metric": "nDCG@5", "statistic": "share"},
                       _one_comparison(6, 0, 0, 6))
    assert reading.case == "share" and reading.facts["quantifier"] == "none"


# --- typed thresholds ---------------------------------------------------------------------------

@pytest.mark.parametrize("frame, why", [
    ("{equivalence: hybrid+rerank-int8, to: hybrid+rerank, metric: nDCG@5, margin: budget.rerank_p95_milliseconds}",
     "budget.rerank_p95_milliseconds is a budget in ms, not a threshold of nDCG@5"),
    ("{noninferiority: hybrid+rerank-int8, to: hybrid+rerank, metric: nDCG@5, margin: rerank_p95_milliseconds}",
     "a budget in ms, not a threshold of nDCG@5"),
    ("{comparison: hybrid, against: dense, metric: recall@5, effect: D5}", "D5 is an effect of nDCG@5, not of recall@5"),
    ("{budget: hybrid+rerank, limit: regression}", "regression is a margin of nDCG@5, not a budget in ms"),
    ("{budget: hybrid+rerank, limit: D5}", "D5 is an effect of nDCG@5, not a budget in ms"),
])
def test_a_threshold_of_another_metric_or_unit_is_refused(review, frame, why):
    result = one(review, framed("c", frame))
    assert not result.traceable and "frame-computable" in codes(result)
    assert any(why in reason for reason in result.reasons), result.reasons


def test_an_honest_non_inferiority_claim_against_the_regression_margin_traces(review):
    result = one(review, framed("c", "{noninferiority: hybrid+rerank-int8, to: hybrid+rerank, metric: nDCG@5, "
                                     "margin: regression, file: results-300.json}"))
    assert result.traceable, result.reasons
    assert "not shown to be non-inferior to hybrid+rerank's within a margin of 0.01 (regression" in result.rendered_text
    assert "post hoc" in result.rendered_text


def test_a_threshold_remembers_when_the_freeze_fixed_it():
    class Entry:
        def __init__(self, number, rules, results_existed):
            self.number, self.rules, self.results_existed = number, rules, results_existed

    class Log:
        entries = [Entry(1, {"budgets": {"b_milliseconds": 500.0}}, False),
                   Entry(2, {"budgets": {"b_milliseconds": 500.0}}, True),
                   Entry(3, {"budgets": {"b_milliseconds": 800.0}}, True)]

    class Rules:
        budgets = {"b_milliseconds": type("Budget", (), {"value": 800.0, "document": "d.md", "line": 3})()}
        triggers = []

    moved, _ = thresholds.resolve("budget.b_milliseconds", Rules, None, Log)
    assert moved.fixed == thresholds.AFTER and moved.freeze == 3 and moved.post_hoc
    Log.entries = Log.entries[:2]
    Rules.budgets["b_milliseconds"].value = 500.0
    kept, _ = thresholds.resolve("budget.b_milliseconds", Rules, None, Log)
    assert kept.fixed == thresholds.BEFORE and kept.freeze == 1 and not kept.post_hoc
    Log.entries = []
    unfrozen, _ = thresholds.resolve("budget.b_milliseconds", Rules, None, Log)
    assert unfrozen.fixed == thresholds.UNFROZEN and unfrozen.post_hoc
    assert thresholds.unit_of("rerank_p95_milliseconds") == "ms" and thresholds.unit_of("lift_floor") is None


# --- the false refusals: each is a frame that traces ----------------------------------------

@pytest.mark.parametrize("frame, words", [
    ("{comparison: hybrid+rerank, against: hybrid, metric: recall@50}", "the test does not tell this change from no change"),
    ("{equivalence: hybrid+rerank-int8, to: hybrid+rerank, metric: nDCG@5, margin: regression}",
     "not shown to be equivalent"),
    ("{comparison: hybrid+rerank, against: hybrid, metric: nDCG@5, phrasing: brief}", "hybrid+rerank against hybrid"),
    ("{cost: hybrid+bge-v2-m3}", "BAAI/bge-reranker-v2-m3"),
    ("{quote: requirements.md, text: \"Hybrid fusion should help over dense alone, because exact term matches from "
     "sparse search recover documents the bi-encoder ranks low.\", phrasing: expected}", "The design expected"),
])
def test_what_was_refused_before_is_a_frame_that_traces(review, frame, words):
    result = one(review, framed("c", frame))
    assert result.traceable, result.reasons
    assert words in result.rendered_text


def test_a_model_that_could_not_load_is_priced_by_shape_and_its_quality_not_measured(review):
    result = one(review, framed("c", "{budget: hybrid+bge-v2-m3, limit: budget.rerank_p95_milliseconds}"))
    assert result.traceable
    assert result.rendered_text.startswith("Priced by shape")
    assert "over the 500 ms budget" in result.rendered_text and "its quality was not measured" in result.rendered_text


def test_a_decision_frame_says_the_computed_state_and_that_it_is_post_hoc(review):
    result = one(review, framed("c", "{decision: D5}", kind="recommendation"))
    assert result.traceable
    assert result.rendered_text == ("Decision D5 (its rule set in freeze 4, after the results: a post hoc verdict) "
                                    "does not fire: do not ship the reranker.")
    assert result.post_hoc


def test_a_frame_about_a_row_that_was_not_measured_does_not_trace(review):
    result = one(review, framed("c", "{comparison: hybrid+bge-v2-m3, against: hybrid, metric: nDCG@5}"))
    assert not result.traceable
    assert any("was not measured" in reason for reason in result.reasons)


def test_a_phrasing_the_package_does_not_offer_is_refused(review):
    result = one(review, framed("c", "{comparison: hybrid, against: dense, metric: nDCG@5, phrasing: glowing}"))
    assert not result.traceable and "frame-phrasing" in codes(result)
    assert any("choose one of standard, brief" in reason for reason in result.reasons)


def test_a_frame_in_a_declared_language_is_written_in_it(review):
    result = one(review, framed("c", HYBRID_DENSE, extra="language: de"), languages="de")
    assert result.traceable, result.reasons
    assert "0,048" in result.rendered_text and "+0.048" not in result.rendered_text


# --- the ledger form ----------------------------------------------------------------------------

@pytest.mark.parametrize("entry, problem", [
    ({"comparison": "a"}, "needs `against:`"),
    ({"comparison": "a", "against": "a", "metric": "m"}, "not compared with itself"),
    ({"comparison": "a", "against": "b", "metric": "m", "statistic": "median"}, "statistic is one of"),
    ({"comparison": "a", "against": "b", "metric": "m", "statistic": "query"}, "needs `query:`"),
    ({"comparison": "a", "against": "b", "metric": "m", "statistic": "share", "effect": "D5"},
     "about the mean"),
    ({"value": "a", "comparison": "b"}, "exactly one kind"),
    ({"frontier": "dearest", "limit": "budget.x"}, "the cheapest"),
    ({"value": ["a", "a"], "metric": "m"}, "listed twice"),
])
def test_a_malformed_frame_is_refused_with_what_to_write(entry, problem):
    frame, found = parse_frame(entry)
    assert frame is None and problem in found


def test_a_claim_with_both_a_text_and_a_frame_is_refused_naming_its_line(review, capsys):
    from tests.conftest import run_cli
    claim = ("  - id: both\n    output: readout\n    section: verdict\n    kind: factual\n    text: \"Words.\"\n"
             f"    frame: {HYBRID_DENSE}\n")
    (review / "claims" / "ledger.yaml").write_text("version: 1\nclaims:\n" + claim, encoding="utf-8")
    with pytest.raises(Exception) as raised:
        check_project(load_project(review), record_history=False)
    assert "either its own `text` or a `frame`" in str(raised.value)
    assert "ledger.yaml:3" in str(raised.value) or "ledger.yaml:8" in str(raised.value)


def test_an_old_ledger_with_asserts_is_refused_with_the_fix(review):
    claim = texted("old", "Hybrid beats dense.", extra="asserts:\n  - {higher: hybrid, than: dense, metric: nDCG@5}")
    with pytest.raises(Exception) as raised:
        check(review, claim)
    assert "readout upgrade-ledger" in str(raised.value) and "asserts" in str(raised.value)
