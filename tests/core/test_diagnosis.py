"""Candidate miss versus ordering problem: the facts, and the two verdict rules."""

from __future__ import annotations

import pytest

from generator.core.diagnosis import count_verdicts, diagnose, ndcg_verdict, recall_verdict

GRADES = {"a": 2, "b": 1, "n": 0}


def test_diagnose_gathers_the_facts_at_the_cutoff():
    found = diagnose(["x", "a", "y", "b", "z"], GRADES, 3)
    assert found.relevant == ["a", "b"]
    assert found.top == ["x", "a", "y"]
    assert found.misses == ["b"]
    assert found.not_in_candidates == []
    assert found.ranked_below == ["b"]
    assert found.recall == 0.5
    assert 0.0 < found.ndcg < 1.0


@pytest.mark.parametrize("ranking, recall_rule, ndcg_rule", [
    (["x", "y", "z", "a", "q"], "candidate miss and ordering problem", "candidate miss"),   # b absent, a below 3
    (["x", "y", "z", "q"], "candidate miss", "candidate miss"),                            # neither is a candidate
    (["x", "y", "z", "a", "b"], "ordering problem", "ordering problem"),                   # both below 3
    (["b", "a", "z"], "none", "ordering problem"),                                         # all in, grades misordered
    (["a", "b", "z"], "none", "none"),
])
def test_the_two_verdict_rules(ranking, recall_rule, ndcg_rule):
    found = diagnose(ranking, GRADES, 3)
    assert recall_verdict(found) == recall_rule
    assert ndcg_verdict(found) == ndcg_rule


def test_a_judged_but_irrelevant_document_is_never_a_miss():
    assert diagnose(["x"], {"n": 0}, 3).relevant == []
    assert recall_verdict(diagnose(["x"], {"n": 0}, 3)) == "none"


def test_negative_grades_count_as_not_relevant():
    found = diagnose(["j", "a"], {"a": 1, "j": -1}, 1)
    assert found.relevant == ["a"] and found.ranked_below == ["a"]


def test_count_verdicts_is_sorted_by_verdict():
    assert count_verdicts({"q2": "none", "q1": "candidate miss", "q3": "none"}) == {"candidate miss": 1, "none": 2}
