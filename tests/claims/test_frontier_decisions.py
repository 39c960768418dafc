"""The reranker frontier as evidence: `check` re-derives every ceiling and timing summary of the
`frontier` block, a trigger reads the cheapest configuration within a budget (it fires, does not
fire, or cannot be decided), and a sentence showing a frontier figure says it was measured by
shape and extrapolated."""

import json

import pytest

from generator.claims.tracing.checker import check_project
from generator.core.results.model import cheapest_within
from generator.project import load_project
from generator.core.results import seal

from tests.conftest import BUDGET_REQUIREMENTS, refreeze

D6 = """
## D6. A reranker worth pricing fits the budget at some depth

Some configuration must fit the budget with room to gain.

```trigger
decision: D6
when: fitting > 0 and headroom > {threshold}
fires: price the cheapest fitting reranker
otherwise: price no reranker
values:
  fitting: frontier.fitting.rerank_p95_milliseconds
  headroom: frontier.cheapest_within.rerank_p95_milliseconds.headroom
```
"""


def _project(make_project, tmp_path, frontier_p95, threshold=0.0, extra_claims=""):
    project = make_project(tmp_path / "p", extra_claims=extra_claims, results={"frontier_p95": frontier_p95})
    design = project / "design"
    (design / "requirements.md").write_text(BUDGET_REQUIREMENTS, encoding="utf-8")
    with (design / "decisions.md").open("a", encoding="utf-8") as handle:
        handle.write(D6.format(threshold=threshold))
    refreeze(project)
    return project


def _d6(project):
    report = check_project(load_project(project), record_history=False)
    (row,) = [row for row in report.decisions if row.trigger.decision == "D6"]
    return report, row


def test_a_configuration_within_budget_with_headroom_fires(make_project, tmp_path):
    project = _project(make_project, tmp_path, {("small", 10): 120, ("big", 50): 9000})
    _, row = _d6(project)
    assert row.state == "fires", row.reason
    assert row.read["fitting"]["value"] == 1
    frontier = json.loads((project / "outputs" / "results.json").read_text())["frontier"]
    assert row.read["headroom"]["value"] == cheapest_within(frontier, 500)["headroom"] > 0
    assert row.read["headroom"]["how"].startswith("measured by shape, extrapolated")


def test_nothing_within_budget_does_not_fire(make_project, tmp_path):
    project = _project(make_project, tmp_path, {("small", 10): 700, ("big", 50): 9000})
    _, row = _d6(project)
    assert row.state == "does not fire"
    assert row.read["fitting"]["value"] == 0 and row.read["headroom"]["measured"] is False


def test_headroom_of_the_cheapest_fitting_configuration_is_what_decides(make_project, tmp_path):
    # The deeper configuration has more headroom, but only the shallow one fits the budget.
    project = _project(make_project, tmp_path, {("small", 5): 100, ("small", 50): 800}, threshold=0.9)
    _, row = _d6(project)
    assert row.state == "does not fire" and row.read["fitting"]["value"] == 1


@pytest.mark.parametrize("tamper", [
    lambda f: f["configurations"][0].update(ceiling=f["configurations"][0]["ceiling"] + 0.01),
    lambda f: f["configurations"][0].update(headroom=0.5),
    lambda f: f["configurations"][0].update(p95_milliseconds=1.0),
    lambda f: f["configurations"][0]["per_query_pairs"].update({next(iter(f["configurations"][0]["per_query_pairs"])): 3}),
    lambda f: f["configurations"][0].update(cost="measured", quality="measured"),
    lambda f: f["configurations"].reverse(),
    lambda f: f.update(over="dense"),
    lambda f: f.update(over_mean=0.99),
    # The extrapolation itself: a fitted line moved, or a query's time no longer read off its line.
    lambda f: next(iter(f["configurations"][0]["per_query_fit"].values())).update(per_layer_milliseconds=0.01),
    lambda f: next(iter(f["configurations"][0]["per_query_fit"].values()))["layer_milliseconds"].update({"2": 1.0}),
    lambda f: f["configurations"][0]["per_query_milliseconds"].update(
        {next(iter(f["configurations"][0]["per_query_milliseconds"])): 5.0}),
    lambda f: f["configurations"][0].update(full_layers=2),
], ids=["ceiling", "headroom", "p95", "pairs", "quality", "order", "over", "over-mean",
        "fit-slope", "fit-timing", "extrapolated-time", "full-layers"])
def test_a_frontier_changed_after_evaluation_cannot_be_cited(make_project, tmp_path, tamper):
    project = _project(make_project, tmp_path, {("small", 10): 120, ("big", 50): 9000})
    path = project / "outputs" / "results.json"
    data = json.loads(path.read_text())
    data.pop("seal", None)
    tamper(data["frontier"])
    # Re-sealed as if by the tool: only re-derivation can tell.
    path.write_text(json.dumps(seal(data, writer="readout evaluate 0.1.0")), encoding="utf-8")
    _, row = _d6(project)
    assert row.state == "cannot be decided"
    assert "frontier" in row.reason


CITE_FRONTIER = """
  - id: cheapest-fit
    output: readout
    section: cost
    kind: performance
    text: "{text}"
    sources:
      - measured:
          values: {{p95: "frontier.configurations[0].p95_milliseconds"}}
"""


@pytest.mark.parametrize("text, traced", [
    ("Measured by shape and extrapolated from a few layers, the cheapest configuration takes {p95:.0f} ms per query "
     "at p95; its quality was not measured.", True),
    ("Measured by shape, the cheapest configuration takes {p95:.0f} ms per query at p95.", False),
    ("Extrapolated, the cheapest configuration takes {p95:.0f} ms per query at p95.", False),
])
def test_a_frontier_time_says_it_was_measured_by_shape_and_extrapolated(make_project, tmp_path, text, traced):
    project = _project(make_project, tmp_path, {("small", 10): 120},
                       extra_claims=CITE_FRONTIER.format(text=text))
    report, _ = _d6(project)
    (result,) = [r for r in report.results if r.claim.id == "cheapest-fit"]
    assert result.traceable is traced, result.reasons
