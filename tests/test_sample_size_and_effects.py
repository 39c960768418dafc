"""The smallest sample any decision is drawn from (generator.core.sample_size), the regression
verdict that never passes a loss the interval tells from noise, and the effects a rule may state
(issue 47, parts 4 and 7): an effect with power at or below alpha, or a budget of 0 as the smallest
change that matters, is refused when the design is frozen or checked, with its line, never an
internal error later; a trigger with a stated effect is never decided on a handful of queries."""

from __future__ import annotations

import pytest

from generator.core.power import INCONCLUSIVE, NON_INFERIOR, REGRESSION, regression_verdict
from generator.core.sample_size import minimum_queries, smallest_p_value, too_few_queries
from generator.core.signflip import exact_p_value
from generator.core.results import read_results
from tests.conftest import DECISIONS, edit_results, one_line_error, run_cli

# --- the minimum sample --------------------------------------------------------------------------


@pytest.mark.parametrize("alpha, queries", [(0.05, 6), (0.01, 8), (0.1, 5), (0.0625, 6), (0.5, 3), (0.9, 2)])
def test_the_minimum_is_the_fewest_queries_on_which_the_sign_flip_test_can_reject(alpha, queries):
    assert minimum_queries(alpha) == queries
    # Held to the test itself: every difference of one sign is the most extreme a sample can be.
    assert exact_p_value([0.1] * queries) < alpha <= exact_p_value([0.1] * (queries - 1)) or queries == 1
    assert smallest_p_value(queries) == exact_p_value([0.1] * queries)


def test_below_the_minimum_a_decision_says_it_cannot_be_decided():
    assert too_few_queries(1) == ("cannot be decided with 1 query: a paired test at alpha 0.05 needs at least 6 (on 1 "
                                  "query the sign-flip test's smallest p-value is 1)")
    assert too_few_queries(5).startswith("cannot be decided with 5 queries: ")
    assert too_few_queries(6) is None and too_few_queries(300) is None
    assert too_few_queries(7, 0.01) is not None and too_few_queries(8, 0.01) is None


@pytest.mark.parametrize("alpha", [0, 1, 1.5, -0.1, True, "0.05"])
def test_a_bad_alpha_is_refused(alpha):
    with pytest.raises(ValueError, match="alpha"):
        minimum_queries(alpha)


# --- the regression verdict ----------------------------------------------------------------------


def test_a_loss_the_interval_tells_from_noise_beyond_the_margin_is_a_regression():
    # Issue 46's release 3: -0.054 with [-0.143, -0.006] against a margin of 0.01.
    assert regression_verdict(-0.143, -0.006, 0.01) == INCONCLUSIVE            # the interval alone
    assert regression_verdict(-0.143, -0.006, 0.01, estimate=-0.054) == REGRESSION
    # A loss that may be noise (the interval reaches zero) stays inconclusive, whatever the estimate.
    assert regression_verdict(-0.143, 0.002, 0.01, estimate=-0.054) == INCONCLUSIVE
    # A real loss smaller than the margin is non-inferior; one at the margin is not decided by it.
    assert regression_verdict(-0.008, -0.001, 0.01, estimate=-0.004) == NON_INFERIOR
    assert regression_verdict(-0.03, -0.001, 0.01, estimate=-0.01) == INCONCLUSIVE
    with pytest.raises(ValueError, match="estimate"):
        regression_verdict(-0.1, 0.1, 0.01, estimate=float("nan"))


# --- the effects a rule states -----------------------------------------------------------------

BUDGETS = """# Requirements

```budget
smallest_lift: 0
```
"""


def _project_with_effect(root, make_project, effect: str):
    """The fixture project, its decisions holding D7 with `effect`, a budget of 0 beside it: a design
    edited after the results and not frozen again."""
    from tests.claims.test_power_rule import HYBRID_RULE

    make_project(root)
    (root / "design" / "decisions.md").write_text(DECISIONS + HYBRID_RULE.format(effect=f"effect: {effect}"),
                                                  encoding="utf-8")
    (root / "design" / "requirements.md").write_text(BUDGETS, encoding="utf-8")
    return root


@pytest.mark.parametrize("effect, field, said", [
    ("{comparison: hybrid_vs_dense, metric: nDCG@5, minimum: 0.02, power: 0.05}", "effect.power",
     "the power wanted (0.05) must be above alpha (0.05): a test at level alpha rejects with probability alpha when "
     "nothing changed"),
    ("{comparison: hybrid_vs_dense, metric: nDCG@5, minimum: 0.02, power: 0.2, alpha: 0.3}", "effect.power",
     "the power wanted (0.2) must be above alpha (0.3)"),
    ("{comparison: hybrid_vs_dense, metric: nDCG@5, minimum: budget.smallest_lift}", "effect.minimum",
     "the smallest change that matters must be above 0, and budget smallest_lift is 0 (requirements.md:4): no sample "
     "can detect a change of 0"),
])
def test_an_effect_no_test_can_meet_is_refused_by_freeze_and_check(tmp_path, make_project, monkeypatch, capsys,
                                                                    effect, field, said):
    root = _project_with_effect(tmp_path / "p", make_project, effect)
    for command in (("freeze", "--reason", "an effect"), ("check", "--no-record")):
        outcome = run_cli(root, monkeypatch, capsys, *command)
        assert outcome.code == 2, outcome.out + outcome.err
        line = one_line_error(outcome)
        assert line.startswith("Error: design/decisions.md:") and f": {field}: {said}" in line, line
        assert "internal error" not in line


@pytest.mark.parametrize("queries", [1, 2, 5])
def test_a_trigger_with_an_effect_is_not_decided_on_a_handful_of_queries(tmp_path, make_project, queries):
    from generator.claims.record.design_rules import read_design_rules
    from generator.claims.record.triggers import evaluate_trigger
    from tests.conftest import FIXTURE_QUERIES

    root = _project_with_effect(tmp_path / "p", make_project,
                                "{comparison: hybrid_vs_dense, metric: nDCG@5, minimum: 0.5}")
    kept = FIXTURE_QUERIES[:queries]

    def only(data):
        data["manifest"]["query_ids"] = kept
        for row in data["per_query"].values():
            for query in [query for query in row if query not in kept]:
                del row[query]
    # Only the trigger is asked here: the file is not re-derived (check would refuse the edit).
    edit_results(root, only, reseal=True)
    rules = read_design_rules(root / "design")
    trigger = next(rule for rule in rules.triggers if rule.decision == "D7")
    results = read_results(root / "outputs" / "results.json")
    assert len(results.model.paired_differences("hybrid", "dense", "nDCG@5")) == queries
    row = evaluate_trigger(trigger, rules.budgets, results, None, "design")
    assert row.state == "cannot be decided"
    assert row.reason == too_few_queries(queries)
    assert row.power["queries"] == queries and row.power["reason"] == row.reason
