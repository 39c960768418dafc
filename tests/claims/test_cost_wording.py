"""A time says how it was measured, both ways: a by-shape figure says "by shape", and a time of
the model's own run (its weights, every layer) must not be dressed as a shape's or an
extrapolation's."""

import pytest

from generator.claims.tracing.checker import check_project
from generator.project import load_project
from tests.conftest import FIXTURE_QUERIES, claim, measured

OWN_RUN = {q: 300.0 + index for index, q in enumerate(FIXTURE_QUERIES)}


@pytest.mark.parametrize("text, traced", [
    ("The reranker takes {p95:.0f} ms per query at p95.", True),
    ("Measured by shape, the reranker takes {p95:.0f} ms per query at p95.", False),
    ("With random weights the reranker takes {p95:.0f} ms per query at p95.", False),
    ("Extrapolated from two layers, the reranker takes {p95:.0f} ms per query at p95.", False),
    ("The reranker, timed by its shape, takes {p95:.0f} ms per query at p95.", False),
    ("Timed with random-weight copies, the reranker takes {p95:.0f} ms per query at p95.", False),
    ("Priced BY SHAPE, the reranker takes {p95:.0f} ms per query at p95.", False),
])
def test_a_time_of_the_models_own_run_is_not_called_a_shapes(make_project, tmp_path, text, traced):
    extra = claim("own-run", text, measured({"p95": "rerank_cost.p95_milliseconds"}),
                  kind="performance", section="cost")
    project = make_project(tmp_path / "p", extra_claims=extra, results={"rerank_milliseconds": OWN_RUN})
    report = check_project(load_project(project), record_history=False)
    (result,) = [r for r in report.results if r.claim.id == "own-run"]
    assert result.traceable is traced, result.reasons


def test_the_results_of_all_queries_are_held_to_the_same_wording(make_project, tmp_path):
    # Another file, same rule: the own-run time of a second results file may not be called a shape's.
    from tests.conftest import write_fixture_results

    extra = claim("own-run-all", "By shape, on all {queries} queries the reranker takes {p95:.0f} ms at p95.",
                  measured({"p95": "rerank_cost.p95_milliseconds", "queries": "queries"}, file="results-all.json"),
                  kind="performance", section="cost")
    project = make_project(tmp_path / "p", extra_claims=extra, results={"rerank_milliseconds": OWN_RUN})
    other = tmp_path / "other"
    write_fixture_results(other, rerank_milliseconds=OWN_RUN)
    (project / "outputs" / "results-all.json").write_bytes((other / "results.json").read_bytes())
    report = check_project(load_project(project), record_history=False)
    (result,) = [r for r in report.results if r.claim.id == "own-run-all"]
    assert not result.traceable
    assert any("own run" in reason for reason in result.reasons), result.reasons
