"""With several rerank rows, a figure must say which reranker it belongs to: a further row's cost
(`rerank_costs.ROW`) needs that row's name, and once a sentence names a second reranker the
generic word "reranker" no longer names the first one."""

import pytest

from generator.claims.tracing.rules.attribution import baseline_named, row_named
from tests.conftest import rule_view

ROWS = {"dense", "sparse", "hybrid", "hybrid+rerank", "hybrid+rerank-int8", "hybrid+bge-v2-m3"}


def _reasons(text: str, **paths: str) -> list[str]:
    view = rule_view(text, rows=ROWS, **paths)
    return row_named(view) + baseline_named(view)


@pytest.mark.parametrize("text, traced", [
    ("The hybrid+rerank-int8 row takes {p95} ms per query at p95.", True),
    ("Quantized to int8, the reranker takes {p95} ms per query at p95.", False),
    ("The hybrid+rerank row quantized to int8 takes {p95} ms per query at p95.", False),
    ("The hybrid+rerank-int8s take {p95} ms per query at p95.", False),
])
def test_a_further_rerank_rows_cost_names_that_row(text, traced):
    reasons = _reasons(text, p95="rerank_costs.hybrid+rerank-int8.p95_milliseconds")
    assert (reasons == []) is traced, reasons


@pytest.mark.parametrize("text, traced", [
    ("The reranker takes {p95} ms per query at p95.", True),
    ("The hybrid+rerank row takes {p95} ms per query at p95, more than hybrid+rerank-int8.", True),
    ("The reranker beside hybrid+bge-v2-m3 takes {p95} ms per query at p95.", False),
    ("The hybrid+rerank-int8 reranker takes {p95} ms per query at p95.", False),
    ("The cross-encoder of hybrid+bge-v2-m3 takes {p95} ms per query at p95.", False),
])
def test_the_first_rerankers_value_needs_its_own_name_once_another_reranker_is_named(text, traced):
    reasons = _reasons(text, p95="rerank_cost.p95_milliseconds")
    assert (reasons == []) is traced, reasons


def test_rows_every_shown_value_belongs_to_do_not_make_the_alias_ambiguous():
    # Both rows' values are shown, each row is named: the sentence compares them, nothing is hidden.
    text = "The reranker takes {p95} ms at p95 and hybrid+rerank-int8 takes {int8} ms."
    assert _reasons(text, p95="rerank_cost.p95_milliseconds",
                    int8="rerank_costs.hybrid+rerank-int8.p95_milliseconds") == []


def test_a_baseline_named_in_passing_keeps_the_alias():
    text = "The reranker lifts nDCG@5 over hybrid by {lift}."
    assert _reasons(text, lift="comparisons.hybrid+rerank_vs_hybrid.metrics.nDCG@5.mean") == []
