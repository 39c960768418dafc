"""The right row, the right statistic (generator.claims.tracing.rules.statistic): each rule with a passing case,
a failing case and other spellings of the failing case, through the real checker."""

from __future__ import annotations

import pytest

from generator.claims.tracing.checker import check_project
from generator.project import load_project
from tests.conftest import claim, measured

LIFT = "comparisons.hybrid_vs_dense.metrics.nDCG@5"
CASES = [
    # (why, text, values, predicate, traces)
    ("a change named with its baseline", "Hybrid's nDCG@5 minus dense's is {d:+.3f}.",
     {"d": "table[search=hybrid].delta_nDCG@5_vs_dense"}, "d > 0", True),
    ("the baseline swapped", "Dense lifts nDCG@5 over hybrid by {d:+.3f}.",
     {"d": "table[search=hybrid].delta_nDCG@5_vs_dense"}, None, False),
    ("the baseline swapped, another spelling", "Compared with hybrid, dense changes nDCG@5 by {d:+.3f}.",
     {"d": "table[search=hybrid].delta_nDCG@5_vs_dense"}, None, False),
    ("the baseline swapped, a third spelling", "Dense's nDCG@5 is {d:+.3f} relative to the hybrid.",
     {"d": "table[search=hybrid].delta_nDCG@5_vs_dense"}, None, False),
    ("an interval end said as an interval", "The interval of hybrid's nDCG@5 change from dense is {lo:+.3f} to {hi:+.3f}.",
     {"lo": f"{LIFT}.ci95_low", "hi": f"{LIFT}.ci95_high"}, None, True),
    ("an interval's upper end given as the effect", "Hybrid lifts nDCG@5 over dense by {hi:+.3f}.",
     {"hi": f"{LIFT}.ci95_high"}, None, False),
    ("an interval's end given as the effect, another spelling", "Over dense, hybrid gains up to {hi:+.3f} nDCG@5.",
     {"hi": f"{LIFT}.ci95_high"}, None, False),
    ("a ceiling said as a ceiling", "The ceiling of hybrid's candidates in nDCG@5 is {c:.3f}.",
     {"c": "ceiling.rows.hybrid.nDCG@5.ceiling"}, "c > 0", True),
    ("the ceiling given as achieved quality", "Hybrid reaches nDCG@5 {c:.3f}.",
     {"c": "ceiling.rows.hybrid.nDCG@5.ceiling"}, None, False),
    ("the ceiling given as achieved quality, another spelling", "Hybrid scored an nDCG@5 of {c:.3f}.",
     {"c": "ceiling.rows.hybrid.nDCG@5.ceiling"}, None, False),
    ("another metric's interval", "Hybrid's nDCG@5 change over dense has the interval {lo:+.3f} to {hi:+.3f}.",
     {"lo": "comparisons.hybrid_vs_dense.metrics.recall@50.ci95_low",
      "hi": "comparisons.hybrid_vs_dense.metrics.recall@50.ci95_high"}, None, False),
    ("no metric at all", "Hybrid reaches {h:.3f}.", {"h": "table[search=hybrid].nDCG@5"}, None, False),
    ("a mean given as a share of queries", "Hybrid's nDCG@5 is right on {h:.0%} of queries.",
     {"h": "table[search=hybrid].nDCG@5"}, None, False),
    ("a mean given as a share of topics", "Hybrid's nDCG@5 covers {h:.0%} of the topics.",
     {"h": "table[search=hybrid].nDCG@5"}, None, False),
    ("a predicate that compares its values", "Hybrid reaches nDCG@5 {h:.3f} and dense {d:.3f}.",
     {"h": "table[search=hybrid].nDCG@5", "d": "table[search=dense].nDCG@5"}, "h > d", True),
    ("a predicate that names both values and compares neither", "Hybrid reaches nDCG@5 {h:.3f} and dense {d:.3f}.",
     {"h": "table[search=hybrid].nDCG@5", "d": "table[search=dense].nDCG@5"}, "h > -1 and d > -1", False),
    ("the same, another spelling", "Hybrid reaches nDCG@5 {h:.3f} and dense {d:.3f}.",
     {"h": "table[search=hybrid].nDCG@5", "d": "table[search=dense].nDCG@5"}, "h >= 0.01 or d >= 0.01", False),
]


RULE_WORDS = ("never its row's", "an interval's end must not pass", "a bound must not pass", "must not pass for another's",
              "a mean is not a share", "compares none of them")


@pytest.mark.parametrize("why, text, values, predicate, traces", CASES, ids=[case[0] for case in CASES])
def test_a_value_is_named_as_the_statistic_it_is(make_project, tmp_path, why, text, values, predicate, traces):
    extra = claim("c", text, measured(values, predicate), kind="evaluative" if predicate else "performance")
    result = check_project(load_project(make_project(tmp_path / "p", extra_claims=extra))).result("c")
    assert result.traceable is traces, (why, result.reasons)
    if not traces:   # refused by a rule of the statistic, not by another rule on the way
        assert any(word in "; ".join(result.reasons) for word in RULE_WORDS), result.reasons


def test_a_parameter_is_named_with_its_unit():
    from generator.claims.tracing.rules.statistic import unit_named
    from tests.conftest import rule_view

    path = "manifest.parameters.rerank_max_length"
    assert unit_named(rule_view("The reranker reads {m} tokens of each pair.", m=path)) == []
    assert "counted in tokens" in unit_named(rule_view("The reranker scores {m} pairs per query.", m=path))[0]
