"""The path and predicate languages the checker uses (generator/paths.py, generator/predicates.py)."""

from __future__ import annotations

import pytest

from generator.core.results import PathSyntaxError, parse_path, resolve
from generator.claims.language.predicates import PredicateEvaluationError, PredicateSyntaxError, compile_predicate

DATA = {
    "table": [{"search": "dense", "measured": True, "nDCG@5": 0.5, "paired_vs_dense": {"nDCG@5": {"ci95_low": -0.1}}},
              {"search": "hybrid+rerank", "measured": False, "not_measured_reason": "offline", "nDCG@5": None}],
    "manifest": {"inputs": {"corpus.jsonl": {"sha256": "ab"}}, "query_ids": ["1", "3"]},
    "per_query": {"dense": {"13": {"recall@5": 1.0}}},
    "rerank": None,
}


@pytest.mark.parametrize("path, value", [
    ("table[search=dense].nDCG@5", 0.5),
    ("table[search=dense].paired_vs_dense.nDCG@5.ci95_low", -0.1),
    ("table[0].search", "dense"),
    ('manifest.inputs["corpus.jsonl"].sha256', "ab"),
    ("manifest.query_ids[1]", "3"),
    ("per_query.dense.13.recall@5", 1.0),
    ("table[search=hybrid+rerank].not_measured_reason", "offline"),
    ("table[search=hybrid+rerank].measured", False),
    ('table[search="hybrid+rerank"].search', "hybrid+rerank"),
])
def test_paths_resolve(path, value):
    resolution = resolve(DATA, parse_path(path))
    assert resolution.ok and resolution.value == value


@pytest.mark.parametrize("path, reason", [
    ("tabel", "no key 'tabel' at the top level (did you mean 'table'?); available: manifest, per_query, rerank, table"),
    ("table[search=sparse]", "no element of table has search=sparse; available search values: dense, hybrid+rerank"),
    ("table[7]", "table has 2 elements; no element [7]"),
    ("manifest.inputs.corpus", 'no key \'corpus\' at manifest.inputs (did you mean ["corpus.jsonl"]?); '
                               "available: corpus.jsonl"),
    ("table.search", "table is a list, not an object; cannot take key 'search'"),
    ("table[search=hybrid+rerank].nDCG@5", "row hybrid+rerank was not measured: offline"),
    ("table[search=hybrid+rerank]", "row hybrid+rerank was not measured: offline"),
    ("rerank", "rerank is null (not measured)"),
])
def test_paths_fail_with_reason(path, reason):
    resolution = resolve(DATA, parse_path(path))
    assert not resolution.ok
    assert resolution.reason == reason


@pytest.mark.parametrize("path", ["", "a..b", "a.", ".a", "[0]", "a.[0]", "a[x", " a"])
def test_bad_path_syntax(path):
    with pytest.raises(PathSyntaxError):
        parse_path(path)


@pytest.mark.parametrize("source, values, result", [
    ("a > b", {"a": 2, "b": 1}, True),
    ("abs(a - b) < 0.5 and not c", {"a": 1.2, "b": 1.0, "c": False}, True),
    ("0 < a <= 1", {"a": 1}, True),
    ("min(a, b) * 2 / 4 == 0.5", {"a": 1, "b": 3}, True),
    ("max(a, b) - -1 == 4", {"a": 1, "b": 3}, True),
    ("s == 'sample' or a", {"s": "all", "a": 0}, 0),
    ("x == null", {"x": None}, True),
    ("low <= 0 and 0 <= high", {"low": -0.02, "high": 0.05}, True),
])
def test_predicates_evaluate(source, values, result):
    assert compile_predicate(source).evaluate(values) == result


def test_predicate_names_exclude_functions_and_constants():
    assert compile_predicate("abs(a) > min(b, 1) and c != true").names == {"a", "b", "c"}


@pytest.mark.parametrize("source", ["open('x')", "a.__class__", "a[0]", "a ** 2", "a // 2", "a % 2", "a if b else c",
                                    "[x for x in a]", "f'{a}'", "abs(x=1)", "(lambda: 1)()", "a; b", "import os"])
def test_predicates_refuse_everything_else(source):
    with pytest.raises(PredicateSyntaxError):
        compile_predicate(source)


def test_predicate_type_error_is_an_evaluation_error():
    with pytest.raises(PredicateEvaluationError):
        compile_predicate("a > 1").evaluate({"a": None})
    with pytest.raises(PredicateEvaluationError):
        compile_predicate("a / b > 1").evaluate({"a": 1, "b": 0})
