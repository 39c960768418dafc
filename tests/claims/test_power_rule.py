"""Enough evidence to decide (issue 38): a rule states the smallest effect that matters and the
power it wants; `check` says what the sample can detect, and a "does not fire" on a change the
test could not tell from zero, from a sample too small for that effect, cannot be decided.

The fixture's hybrid against dense: +0.055 nDCG@5 over 20 queries, p 0.55, interval -0.112 to
+0.233; its minimum detectable effect at alpha 0.05 and power 0.8 is about 0.26."""

import json

import pytest

from generator.commands.cli import main
from generator.core.power import minimum_detectable_effect, queries_needed
from generator.storage.errors import InputError
from generator.project import load_project
from generator.core.results import read_results
from tests.conftest import DECISIONS, claim, edit_results, ledger_text, refreeze, write_project_files

HYBRID_RULE = """
## D7. Hybrid replaces dense only when it pays for itself

```trigger
decision: D7
when: low > 0
fires: use hybrid
otherwise: keep dense
values:
  low: comparisons.hybrid_vs_dense.metrics.nDCG@5.ci95_low
{effect}
```
"""


def _project(tmp_path, effect: str):
    import yaml

    from generator.claims.record.freeze import freeze_project
    from tests.conftest import FIXTURE_FREEZE_TIME, ROOT_CONFIG

    root = tmp_path / "p"
    config = {"title": ROOT_CONFIG["title"], "kind": "beir", "outputs": ROOT_CONFIG["outputs"]}
    write_project_files(root, config_text=yaml.safe_dump(config, sort_keys=False),
                        decisions=DECISIONS + HYBRID_RULE.format(effect=effect), ledger=ledger_text(),
                        freeze=lambda where: freeze_project(load_project(where), now=FIXTURE_FREEZE_TIME))
    return root


def _decision(root):
    from generator.claims.tracing.checker import check_project

    report = check_project(load_project(root))
    return next(row for row in report.decisions if row.trigger.decision == "D7"), report


def _differences(root):
    return read_results(root / "outputs" / "results.json").model.paired_differences("hybrid", "dense", "nDCG@5")


def test_a_sample_too_small_for_the_stated_effect_cannot_decide_and_says_how_many_queries(tmp_path, capsys):
    root = _project(tmp_path, "effect: {comparison: hybrid_vs_dense, metric: nDCG@5, minimum: 0.02}")
    row, _ = _decision(root)
    detectable = minimum_detectable_effect(_differences(root))
    needed = queries_needed(detectable["sd_difference"], 0.02)
    assert detectable["minimum_detectable_effect"] > 0.02 and needed > 20
    assert row.state == "cannot be decided"
    assert row.reason == (f"cannot be decided with 20 queries: at power 0.8 they detect a change of "
                          f"{detectable['minimum_detectable_effect']:.3g} or more, and D7 needs 0.02; "
                          f"about {needed} queries needed")
    assert row.power["minimum_detectable_effect"] == detectable["minimum_detectable_effect"]
    assert row.power["queries_needed"] == needed
    assert main(["check", "--no-record", str(root)]) == 0
    out = capsys.readouterr().out
    assert f"Decision D7: trigger cannot be decided (when low > 0;" in out and f"about {needed:,} queries" in out
    assert main(["render", str(root)]) == 0
    html = (root / "outputs" / "readout.html").read_text(encoding="utf-8")
    assert f"{detectable['minimum_detectable_effect']:.3f} (20 queries, alpha 0.05, power 0.8)" in html
    assert f"{needed:,} (minimum effect 0.02)" in html


@pytest.mark.parametrize("effect, state", [
    # The stated effect is larger than the sample's minimum detectable effect: its "no" stands.
    ("{comparison: hybrid_vs_dense, metric: nDCG@5, minimum: 0.5}", "does not fire"),
    # Asking for less power makes the sample enough for a large effect, and not for a small one.
    ("{comparison: hybrid_vs_dense, metric: nDCG@5, minimum: 0.3, power: 0.5}", "does not fire"),
    ("{comparison: hybrid_vs_dense, metric: nDCG@5, minimum: 0.1, power: 0.5}", "cannot be decided"),
])
def test_a_sample_large_enough_for_the_effect_keeps_its_verdict(tmp_path, effect, state):
    row, _ = _decision(_project(tmp_path, f"effect: {effect}"))
    assert row.state == state


def test_a_change_told_apart_from_zero_is_decided_whatever_the_power(tmp_path):
    """A loss the test sees is a decision, however small the effect the rule asks about."""
    root = _project(tmp_path, "effect: {comparison: hybrid_vs_dense, metric: nDCG@5, minimum: 0.005}")

    def clear_loss(data):
        stats = data["comparisons"]["hybrid_vs_dense"]["metrics"]["nDCG@5"]
        stats["p_value"] = 0.001
    # Only the p-value matters here: the unsealed edit is read by the trigger as it is.
    from generator.claims.record.design_rules import read_design_rules
    from generator.claims.record.triggers import evaluate_trigger

    edit_results(root, clear_loss, reseal=True)
    rules = read_design_rules(root / "design")
    trigger = next(t for t in rules.triggers if t.decision == "D7")
    row = evaluate_trigger(trigger, rules.budgets, read_results(root / "outputs" / "results.json"), None, "design")
    assert row.state == "does not fire" and row.power["queries_needed"] > 20


def test_moving_the_effect_after_the_results_is_post_hoc(tmp_path):
    root = _project(tmp_path, "effect: {comparison: hybrid_vs_dense, metric: nDCG@5, minimum: 0.02}")
    path = root / "design" / "decisions.md"
    path.write_text(path.read_text(encoding="utf-8").replace("minimum: 0.02", "minimum: 0.5"), encoding="utf-8")
    entry = refreeze(root, "the effect grew once the results were seen").entry
    assert entry.amended["D7"] == ["trigger"] and "D7" in entry.post_hoc
    row, _ = _decision(root)
    assert row.post_hoc and row.state == "does not fire"


@pytest.mark.parametrize("effect, field, message", [
    ("effect: 0.02", "effect", "a mapping"),
    ("effect: {comparison: hybrid_vs_dense, metric: nDCG@5}", "effect.minimum", "missing"),
    ("effect: {comparison: hybrid_vs_dense, metric: nDCG@5, minimum: -1}", "effect.minimum", "a number > 0"),
    ("effect: {comparison: hybrid_vs_dense, metric: nDCG@5, minimum: budget.nope}", "effect.minimum", "known budget"),
    ("effect: {comparison: hybrid_vs_dense, metric: nDCG@5, minimum: 0.1, power: 1.5}", "effect.power", "probability"),
    ("effect: {comparison: hybrid_vs_dense, metric: nDCG@5, minimum: 0.1, sides: 1}", "effect.sides", "unknown key"),
])
def test_a_malformed_effect_is_one_line_naming_the_file_line_and_field(tmp_path, effect, field, message):
    from generator.claims.record.design_rules import read_design_rules

    root = tmp_path / "p"
    (root / "design").mkdir(parents=True)
    (root / "design" / "decisions.md").write_text(HYBRID_RULE.format(effect=effect), encoding="utf-8")
    with pytest.raises(InputError) as raised:
        read_design_rules(root / "design")
    assert raised.value.field == field and message in raised.value.reason and raised.value.line is not None


def test_an_effect_on_a_comparison_the_file_lacks_is_an_input_error(tmp_path):
    root = _project(tmp_path, "effect: {comparison: hybrid_vs_sparse, metric: nDCG@5, minimum: 0.02}")
    with pytest.raises(InputError, match="holds no comparison 'hybrid_vs_sparse'"):
        _decision(root)


def test_the_power_block_is_rederived_and_a_forged_figure_is_refused(tmp_path, capsys):
    root = _project(tmp_path, "effect: {comparison: hybrid_vs_dense, metric: nDCG@5, minimum: 0.5}")
    (root / "claims" / "ledger.yaml").write_text(ledger_text(
        "- {id: power, output: readout, section: results, kind: performance, "
        "frame: {power: hybrid, against: dense, metric: nDCG@5}}\n"), encoding="utf-8")
    assert main(["check", "--no-record", str(root)]) == 0, capsys.readouterr().out

    def forge(data):
        data["power"]["comparisons"]["hybrid_vs_dense"]["metrics"]["nDCG@5"]["minimum_detectable_effect"] = 0.05
    edit_results(root, forge, reseal=True)
    assert main(["check", "--no-record", str(root)]) == 1
    out = capsys.readouterr().out
    assert "power.comparisons.hybrid_vs_dense.metrics.nDCG@5.minimum_detectable_effect" in out or "power" in out
    assert json.loads((root / "outputs" / "results.json").read_text())["power"]["alpha"] == 0.05
