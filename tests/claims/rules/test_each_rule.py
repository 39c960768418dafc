"""One rule-level test for each rule code no other test of tests/claims names: for every code, a
claim that breaks that rule (the finding carries the code, and the claim finds nothing else but
the findings listed beside it) and the same claim corrected (the code is gone and the claim
traces), each through the real checker on the shared fixture project (tests/conftest.py).

The fixture: nDCG@5 dense 0.351, sparse 0.320, hybrid 0.406 over 20 queries q01..q20; the
rerank row not measured unless the reranker is timed (`rerank_milliseconds`), its cost measured by
shape with `shape_milliseconds`, and an extrapolated frontier with `frontier_p95`."""

from __future__ import annotations

import copy
import dataclasses

import pytest

from generator.claims.tracing import measured as measured_module
from generator.claims.tracing.checker import check_project
from generator.claims.tracing.rules import registry
from generator.project import load_project
from tests.conftest import (BUDGET_REQUIREMENTS, FIXTURE_QUERIES, add_design, claim, d5_record, design, edit_results,
                            fixture_evaluation, measured)

HYBRID = {"h": "table[search=hybrid].nDCG@5"}
HYBRID_DENSE = {"h": "table[search=hybrid].nDCG@5", "d": "table[search=dense].nDCG@5"}
DELTA = {"d": "table[search=hybrid].delta_nDCG@5_vs_dense"}
ONE_QUERY = {"v": "per_query.hybrid.q01.nDCG@5"}
INTERVAL_HIGH = {"hi": "comparisons.hybrid_vs_dense.metrics.nDCG@5.ci95_high"}
CEILING = {"c": "ceiling.rows.hybrid.nDCG@5.ceiling"}
DEPTH = {"k": "manifest.parameters.candidate_depth"}
THRESHOLD = {"x": "manifest.parameters.rerank_threshold"}
NOT_MEASURED = measured({"measured": "table[search=hybrid+rerank].measured",
                         "why": "table[search=hybrid+rerank].not_measured_reason"}, "not measured")
RERANK_P95 = measured({"p95": "rerank_cost.p95_milliseconds"})
FRONTIER_P95 = measured({"p95": "frontier.configurations[0].p95_milliseconds"})
FUSION = design("Hybrid uses RRF with constant 60 over both top-50 lists.")

BY_SHAPE = {"shape_milliseconds": 900}
OWN_RUN = {"rerank_milliseconds": {query: 300.0 + index for index, query in enumerate(FIXTURE_QUERIES)}}
FRONTIER = {"frontier_p95": {("small", 10): 120}}
ALL = "results-300.json"


# --- what a row does to the project before the check ----------------------------------------------

def _hybrid_forged_unsealed(root, monkeypatch):
    """Hybrid's nDCG@5 raised in results.json, the seal left as it was."""
    def change(data):
        next(row for row in data["table"] if row["search"] == "hybrid")["nDCG@5"] += 0.05
    edit_results(root, change, reseal=False)


def _threshold_read_as(value):
    """A results file read with `manifest.parameters.rerank_threshold` = `value`, its seal and its
    derivation intact. A file on disk cannot hold NaN (strict JSON refuses it on reading and the
    seal refuses to cover it), so the value is put into the file as read: value-finite is the
    checker's last guard should any reader ever let one through."""
    def setup(root, monkeypatch):
        read_results = measured_module.read_results

        def reading_with_threshold(path, name=None, **options):
            results = read_results(path, name, **options)
            data = copy.deepcopy(results.data)
            data["manifest"]["parameters"]["rerank_threshold"] = value
            return dataclasses.replace(results, data=data, raw=results.written)
        monkeypatch.setattr(measured_module, "read_results", reading_with_threshold)
    return setup


def _all_queries_file(root, monkeypatch):
    """A second sealed results file, measured on other queries (conftest's hybrid_variant=1)."""
    from generator.evaluate.pipeline import write_sealed_results

    outputs = root / "outputs"
    write_sealed_results(outputs / ALL, outputs / "runs-300", fixture_evaluation(hybrid_variant=1),
                         sample_path=outputs / "results.json")


def _d5_trigger(root, monkeypatch):
    """The latency budget and decision D5 with its trigger (by shape at 900 ms it does not fire)."""
    (root / "design" / "requirements.md").write_text(BUDGET_REQUIREMENTS, encoding="utf-8")
    add_design(root, d5_record())


def _decision(trigger: str, state: str) -> str:
    return f'- decision: {{trigger: {trigger}, state: "{state}"}}\n'


# --- the table: each code, the claim that breaks its rule, and the claim corrected ----------------

def row(code, breaks, text, sources, *, kind="performance", results=None, setup=None, also=()):
    """A row: `breaks` the rule `code` (the findings are exactly `code` and `also`), or the claim
    corrected (no finding of `code`, and the claim traces)."""
    return pytest.param(code, breaks, text, sources, kind, results, setup, frozenset(also),
                        id=f"{code}-{'breaks' if breaks else 'control'}")


ROWS = [
    # Each claim is the author's words: beside a row or a metric they keep to the closed vocabulary
    # (function words, the fixture design's words, the schema's meaning of a placed value), so
    # each rule below is met alone; where the words that break a rule also compare, count or
    # qualify, the closed rule finds them too (`prose-words`).
    # frames
    row("frame-computable", True, None, "{comparison: hybrid+rerank, against: hybrid, metric: nDCG@5}",
        kind="evaluative"),
    row("frame-computable", False, None, "{comparison: hybrid, against: dense, metric: nDCG@5}", kind="evaluative"),
    row("frame-phrasing", True, None, "{comparison: hybrid, against: dense, metric: nDCG@5, phrasing: lyrical}",
        kind="evaluative"),
    row("frame-phrasing", False, None, "{comparison: hybrid, against: dense, metric: nDCG@5, phrasing: brief}",
        kind="evaluative"),
    # sources
    row("results-citable", True, "Hybrid's nDCG@5 is {h:.3f}.", measured(HYBRID), setup=_hybrid_forged_unsealed),
    row("results-citable", False, "Hybrid's nDCG@5 is {h:.3f}.", measured(HYBRID)),
    row("value-finite", True, "The rerank parameter is {x:.3f}.", measured(THRESHOLD),
        setup=_threshold_read_as(float("nan")), also={"placeholder-format"}),
    row("value-finite", False, "The rerank parameter is {x:.3f}.", measured(THRESHOLD), setup=_threshold_read_as(0.5)),
    row("value-used", True, "Hybrid's nDCG@5 is {h:.3f}.", measured(HYBRID_DENSE)),
    row("value-used", False, "Hybrid's nDCG@5 is {h:.3f}.", measured(HYBRID)),
    # predicates
    row("predicate-can-fail", True, "Hybrid's nDCG@5 is {h:.3f}.", measured(HYBRID, "h == h")),
    row("predicate-can-fail", False, "Hybrid's nDCG@5 is {h:.3f}.", measured(HYBRID, "h > 0")),
    row("predicate-compares", True, "Hybrid's nDCG@5 is {h:.3f} and dense's is {d:.3f}.",
        measured(HYBRID_DENSE, "h > -1 and d > -1"), kind="evaluative"),
    row("predicate-compares", False, "Hybrid's nDCG@5 is {h:.3f} and dense's is {d:.3f}.",
        measured(HYBRID_DENSE, "h > d"), kind="evaluative"),
    # placeholders
    row("placeholder-format", True, "Hybrid's nDCG@5 is {h:d}.", measured(HYBRID)),
    row("placeholder-format", False, "Hybrid's nDCG@5 is {h:.3f}.", measured(HYBRID)),
    row("placed-text", True, "The rerank row was not measured: {why}.", NOT_MEASURED,
        results={"skip_reason": "the download failed 3 times"}),
    row("placed-text", False, "The rerank row was not measured: {why}.", NOT_MEASURED,
        results={"skip_reason": "the download failed"}),
    row("no-remote-reference", True, "Hybrid's nDCG@5 is {h:.3f} ([details](https://example.org/hybrid)).",
        measured(HYBRID), also={"prose-words"}),
    row("no-remote-reference", False, "Hybrid's nDCG@5 is {h:.3f} ([hybrid](#hybrid)).", measured(HYBRID)),
    # presentation
    row("figure-sign", True, "Hybrid minus dense in nDCG@5 is -{d:.3f}.", measured(DELTA)),
    row("figure-sign", False, "Hybrid minus dense in nDCG@5 is {d:+.3f}.", measured(DELTA)),
    row("figure-zero", True, "Hybrid minus dense in nDCG@5 is {d:+.0f}.", measured(DELTA)),
    row("figure-zero", False, "Hybrid minus dense in nDCG@5 is {d:+.3f}.", measured(DELTA)),
    row("figure-percent", True, "Hybrid minus dense in nDCG@5 is {d:+.1%}.", measured(DELTA)),
    row("figure-percent", False, "Hybrid minus dense in nDCG@5 is {d:+.3f}.", measured(DELTA)),
    row("figure-unit", True, "Measured by shape, the reranker takes {p95:,.0f} microseconds per query at p95.",
        RERANK_P95, results=BY_SHAPE, also={"prose-words"}),
    row("figure-unit", False, "Measured by shape, the reranker takes {p95:,.0f} ms per query at p95.", RERANK_P95,
        results=BY_SHAPE),
    # attribution
    row("row-named", True, "The nDCG@5 is {h:.3f}.", measured(HYBRID)),
    row("row-named", False, "Hybrid's nDCG@5 is {h:.3f}.", measured(HYBRID)),
    row("baseline-named", True, "Hybrid's nDCG@5 minus the other is {d:+.3f}.", measured(DELTA), also={"prose-words"}),
    row("baseline-named", False, "Hybrid's nDCG@5 minus dense's is {d:+.3f}.", measured(DELTA)),
    row("query-named", True, "Hybrid's nDCG@5 is {v:.3f} on q02.", measured(ONE_QUERY)),
    row("query-named", False, "Hybrid's nDCG@5 is {v:.3f} on q01.", measured(ONE_QUERY)),
    row("query-not-mean", True, "Hybrid's mean nDCG@5 is {v:.3f} on q01.", measured(ONE_QUERY), also={"prose-words"}),
    row("query-not-mean", False, "Hybrid's nDCG@5 is {v:.3f} on q01.", measured(ONE_QUERY)),
    row("query-count-shown", True, "Hybrid's nDCG@5 is {h:.3f}.", measured(HYBRID, file=ALL),
        setup=_all_queries_file),
    row("query-count-shown", False, "On {n} queries hybrid's nDCG@5 is {h:.3f}.",
        measured({**HYBRID, "n": "queries"}, file=ALL), setup=_all_queries_file),
    row("query-count-own-set", True, "On {n} queries hybrid's nDCG@5 is {h:.3f}.",
        measured(HYBRID) + measured({"n": "queries"}, file=ALL), setup=_all_queries_file),
    row("query-count-own-set", False, "On {n} queries hybrid's nDCG@5 is {h:.3f}.",
        measured({**HYBRID, "n": "queries"}, file=ALL), setup=_all_queries_file),
    # statistic
    row("change-direction", True, "Dense's nDCG@5 minus hybrid's over hybrid is {d:+.3f}.", measured(DELTA),
        also={"prose-words"}),
    row("change-direction", False, "Hybrid's nDCG@5 minus dense's is {d:+.3f}.", measured(DELTA)),
    row("interval-named", True, "The end of hybrid's nDCG@5 change over dense is {hi:+.3f}.", measured(INTERVAL_HIGH),
        also={"prose-words"}),
    row("interval-named", False, "The interval of hybrid's nDCG@5 change and dense ends at {hi:+.3f}.",
        measured(INTERVAL_HIGH)),
    row("ceiling-named", True, "Hybrid's candidates in nDCG@5 are {c:.3f}.", measured(CEILING)),
    row("ceiling-named", False, "Hybrid's candidates have an nDCG@5 ceiling of {c:.3f}.", measured(CEILING)),
    row("metric-named", True, "Hybrid is {h:.3f}.", measured(HYBRID)),
    row("metric-named", False, "Hybrid's nDCG@5 is {h:.3f}.", measured(HYBRID)),
    row("mean-not-share", True, "Hybrid's nDCG@5 is {h:.0%} of queries.", measured(HYBRID),
        also={"figure-percent"}),
    row("mean-not-share", False, "Hybrid's nDCG@5 is {h:.3f}.", measured(HYBRID)),
    row("unit-named", True, "The rows keep {k} results.", measured(DEPTH)),
    row("unit-named", False, "The rows keep {k} candidates.", measured(DEPTH)),
    # subjects
    row("subject-supported", True, "The decision records say: the reranker uses RRF.", FUSION, kind="factual"),
    row("subject-supported", False, "The decision records say: hybrid uses RRF.", FUSION, kind="factual"),
    row("run-measured", True, "We measured that hybrid uses RRF.", FUSION, kind="factual", also={"prose-words"}),
    row("run-measured", False, "Hybrid uses RRF.", FUSION, kind="factual"),
    # costs
    row("shape-said", True, "The reranker takes {p95:.0f} ms per query at p95.", RERANK_P95, results=BY_SHAPE),
    row("shape-said", False, "Measured by shape, the reranker takes {p95:.0f} ms per query at p95.", RERANK_P95,
        results=BY_SHAPE),
    row("extrapolation-said", True, "Measured by shape, the cheapest configuration takes {p95:.0f} ms per query "
        "at p95.", FRONTIER_P95, results=FRONTIER),
    row("extrapolation-said", False, "Measured by shape and extrapolated, the cheapest configuration takes "
        "{p95:.0f} ms per query at p95.", FRONTIER_P95, results=FRONTIER),
    row("quality-not-measured", True, "Measured by shape, the reranker takes {p95:.0f} ms per query at p95 and it "
        "helps.", RERANK_P95, results=BY_SHAPE, also={"prose-words"}),
    row("quality-not-measured", False, "Measured by shape, the reranker takes {p95:.0f} ms per query at p95 and "
        "its quality was not measured.", RERANK_P95, results=BY_SHAPE),
    row("own-run-not-shape", True, "Measured by shape, the reranker takes {p95:.0f} ms per query at p95.",
        RERANK_P95, results=OWN_RUN),
    row("own-run-not-shape", False, "The reranker takes {p95:.0f} ms per query at p95.", RERANK_P95,
        results=OWN_RUN),
    # decisions (a verdict no cited decision computes is also unlicensed: verdict-licensed)
    row("decision-known", True, "Do not ship the reranker.", _decision("D7", "does not fire"), kind="recommendation",
        results=BY_SHAPE, setup=_d5_trigger, also={"verdict-licensed"}),
    row("decision-known", False, "Do not ship the reranker.", _decision("D5", "does not fire"),
        kind="recommendation", results=BY_SHAPE, setup=_d5_trigger),
    row("decision-state", True, "Do not ship the reranker.", _decision("D5", "fires"), kind="recommendation",
        results=BY_SHAPE, setup=_d5_trigger, also={"verdict-licensed"}),
    row("decision-state", False, "Do not ship the reranker.", _decision("D5", "does not fire"),
        kind="recommendation", results=BY_SHAPE, setup=_d5_trigger),
    row("decision-outcome", True, "Ship the reranker.", _decision("D5", "does not fire"), kind="recommendation",
        results=BY_SHAPE, setup=_d5_trigger, also={"verdict-licensed"}),
    row("decision-outcome", False, "Do not ship the reranker, says D5.", _decision("D5", "does not fire"),
        kind="recommendation", results=BY_SHAPE, setup=_d5_trigger),
]


@pytest.mark.parametrize("code, breaks, text, sources, kind, results, setup, also", ROWS)
def test_each_rule_finds_the_claim_that_breaks_it_and_not_the_claim_corrected(
        make_project, tmp_path, monkeypatch, code, breaks, text, sources, kind, results, setup, also):
    written = (claim("c", text, sources, kind=kind) if text is not None else
               f"- {{id: c, output: readout, section: results, kind: {kind}, frame: {sources}}}\n")
    root = make_project(tmp_path / "p", extra_claims=written, results=results)
    if setup is not None:
        setup(root, monkeypatch)
    result = check_project(load_project(root), record_history=False).result("c")
    found = {finding.code for finding in result.findings}
    if breaks:
        assert code in found, result.reasons
        assert found == {code} | also, result.reasons   # refused by this rule, not by another on the way
        assert not result.traceable
    else:
        assert code not in found, result.reasons
        assert result.traceable, result.reasons


def test_the_table_holds_a_breaking_row_and_a_control_row_for_each_code_of_the_registry():
    pairs = {}
    for param in ROWS:
        code, breaks = param.values[0], param.values[1]
        pairs.setdefault(code, []).append(breaks)
    assert all(sorted(kinds) == [False, True] for kinds in pairs.values()), pairs
    assert set(pairs) <= {rule.code for rule in registry()}, set(pairs) - {rule.code for rule in registry()}
