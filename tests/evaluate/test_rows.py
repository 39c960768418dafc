"""Configured rows (generator/core/rows.py): `evaluate.rows` in readout.yaml declares the rows,
the first is the baseline, the rerank row reorders another row's candidates; the SciFact four are
the default and give the same figures when written out; and a results file whose recorded rows do
not match its runs is refused by the checker."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from generator.claims.tracing.rederive import verify_results
from generator.storage.errors import InputError
from generator.core.fusion import min_max_fused_ranking
from generator.core.options import EvaluationOptions, validate_evaluate_block
from generator.evaluate.pipeline import evaluate, write_outputs
from generator.core.rows import DEFAULT_RERANK_ROW, RowSpec, default_rows, parse_rows
from generator.core.results.rows import row_roles
from generator.project.reference import load_config_schema
from generator.core.results import ResultsModel, parse_path, read_results, seal

DENSE = {"name": "dense", "kind": "dense"}
SPARSE = {"name": "sparse", "kind": "sparse"}


# --- validation: one line naming the entry and key ---------------------------------------------


@pytest.mark.parametrize("rows, field, message", [
    ([], "evaluate.rows", "a list of rows"),
    ([{"name": "x"}], "evaluate.rows[0]", "kind"),
    ([{"name": "x", "kind": "colbert"}], "evaluate.rows[0].kind", "choose one of dense, sparse"),
    ([{"name": "a.b", "kind": "dense"}], "evaluate.rows[0].name", "short identifier"),
    ([DENSE, {"name": "dense", "kind": "sparse"}], "evaluate.rows[1].name", "already exists"),
    ([{**DENSE, "k1": 1.2}], "evaluate.rows[0].k1", "a dense row takes model"),
    ([{**SPARSE, "model": "bm25"}], "evaluate.rows[0].model", "a sparse row takes k1, b"),
    ([{**SPARSE, "b": 1.5}], "evaluate.rows[0].b", "from 0 to 1"),
    ([{**SPARSE, "k1": True}], "evaluate.rows[0].k1", "a number"),
    ([DENSE, {"name": "h", "kind": "fusion", "of": ["dense", "sparse"]}, SPARSE], "evaluate.rows[1].of[1]",
     "listed above this one"),
    ([DENSE, SPARSE, {"name": "h", "kind": "fusion", "of": ["dense"]}], "evaluate.rows[2].of", "two or more"),
    ([DENSE, SPARSE, {"name": "h", "kind": "fusion", "of": ["dense", "dense"]}], "evaluate.rows[2].of", "once"),
    ([DENSE, SPARSE, {"name": "h", "kind": "fusion", "of": ["dense", "sparse"], "method": "borda"}],
     "evaluate.rows[2].method", "rrf, minmax"),
    ([DENSE, SPARSE, {"name": "h", "kind": "fusion", "of": ["dense", "sparse"], "alpha": 0.3}],
     "evaluate.rows[2].alpha", "RRF takes k"),
    ([DENSE, SPARSE, {"name": "h", "kind": "fusion", "of": ["dense", "sparse"], "method": "minmax", "k": 60}],
     "evaluate.rows[2].k", "takes alpha"),
    ([DENSE, SPARSE, {"name": "s2", "kind": "sparse"},
      {"name": "h", "kind": "fusion", "of": ["dense", "sparse", "s2"], "method": "minmax"}],
     "evaluate.rows[3].of", "exactly two"),
    ([DENSE, {"name": "r", "kind": "rerank"}], "evaluate.rows[1].over", "listed above"),
    ([DENSE, {"name": "r", "kind": "rerank", "over": "r"}], "evaluate.rows[1].over", "listed above"),
    ([DENSE, {"name": "r", "kind": "rerank", "over": "dense", "precision": "fp16"}], "evaluate.rows[1].precision",
     "fp32, int8"),
    ([DENSE, {"name": "r", "kind": "rerank", "over": "dense", "precision": "INT8"}], "evaluate.rows[1].precision",
     "fp32, int8"),
    ([DENSE, {"name": "r", "kind": "rerank", "over": "dense", "depth": 0}], "evaluate.rows[1].depth", "from 1"),
    ([DENSE, {"name": "r", "kind": "rerank", "over": "dense", "depth": 2.5}], "evaluate.rows[1].depth", "integer"),
    ([DENSE, {"name": "r", "kind": "rerank", "over": "dense", "batch_size": True}], "evaluate.rows[1].batch_size",
     "integer"),
    ([DENSE, {"name": "r", "kind": "rerank", "over": "dense", "skip": "a\nb"}], "evaluate.rows[1].skip", "one line"),
    ([DENSE, {"name": "r", "kind": "rerank", "over": "dense"}, {"name": "r", "kind": "rerank", "over": "dense"}],
     "evaluate.rows[2].name", "already exists"),
    ([DENSE, {"name": "r", "kind": "rerank", "over": "dense", "max_length": 0}], "evaluate.rows[1].max_length",
     "from 1"),
    ([DENSE, {"name": "team", "kind": "run"}], "evaluate.rows[1].file", "non-empty string"),
    # A name that says another kind: "hybrid+rerank" would pass for the reranker in every sentence.
    ([DENSE, SPARSE, {"name": "hybrid+rerank", "kind": "fusion", "of": ["dense", "sparse"]}],
     "evaluate.rows[2].name", "must be a rerank row"),
    ([DENSE, {"name": "Reranker", "kind": "run", "file": "r.trec"}], "evaluate.rows[1].name", "must be a rerank row"),
    ([{"name": "bm25", "kind": "dense"}], "evaluate.rows[0].name", "must be a sparse row"),
    ([DENSE, {"name": "hybrid", "kind": "rerank", "over": "dense"}], "evaluate.rows[1].name", "must be a fusion row"),
])
def test_a_bad_row_is_refused_in_one_line_naming_its_entry(rows, field, message):
    with pytest.raises(InputError) as raised:
        validate_evaluate_block({"rows": rows}, "readout.yaml")
    error = raised.value
    assert error.field == field
    assert message in str(error)
    assert "\n" not in str(error)


def test_the_schema_refuses_what_the_code_refuses_and_accepts_what_it_accepts():
    schema = load_config_schema()
    validator = jsonschema.Draft202012Validator(schema)

    def schema_accepts(rows):
        return not list(validator.iter_errors({"title": "t", "kind": "beir", "data": "d", "evaluate": {"rows": rows}}))

    accepted = [
        [DENSE],
        [DENSE, SPARSE, {"name": "hybrid", "kind": "fusion", "of": ["dense", "sparse"], "k": 10},
         {"name": "hybrid+rerank", "kind": "rerank", "over": "hybrid", "model": "m", "max_length": 256},
         {"name": "team", "kind": "run", "file": "runs/team.trec"}],
        [SPARSE, {**DENSE, "model": "minilm-offline"},
         {"name": "mm", "kind": "fusion", "of": ["sparse", "dense"], "method": "minmax", "alpha": 0.3}],
    ]
    refused = [
        [],
        [{"name": "x", "kind": "colbert"}],
        [{**DENSE, "k1": 1.2}],
        [{**SPARSE, "over": "dense"}],
        [{"name": "a.b", "kind": "dense"}],
        [DENSE, {"name": "team", "kind": "run"}],
        [DENSE, {"name": "r", "kind": "rerank"}],
    ]
    for rows in accepted:
        assert schema_accepts(rows), rows
        parse_rows(rows, "readout.yaml")
    for rows in refused:
        assert not schema_accepts(rows), rows
        with pytest.raises(InputError):
            parse_rows(rows, "readout.yaml")


def test_each_kind_takes_the_keys_the_schema_lists_for_it():
    from generator.core import rows as rows_module

    item = load_config_schema()["properties"]["evaluate"]["properties"]["rows"]["items"]
    for rule in item["allOf"]:
        kind = rule["if"]["properties"]["kind"]["const"]
        assert set(rule["then"]["propertyNames"]["enum"]) == {"name", "kind", *rows_module._KEYS[kind]}, kind
    assert tuple(item["properties"]["kind"]["enum"]) == rows_module.KINDS


def test_unset_parameters_come_from_the_evaluate_block():
    options = EvaluationOptions(data=Path("d"), outputs_dir=Path("o"), dense_model="minilm-offline", rrf_k=7,
                                rerank_model="my/reranker", rerank_max_length=128)
    specs = {spec.name: spec for spec in options.row_specs()}
    assert specs["dense"].model == "minilm-offline"
    assert (specs["sparse"].k1, specs["sparse"].b) == (1.5, 0.75)
    assert (specs["hybrid"].method, specs["hybrid"].k, specs["hybrid"].of) == ("rrf", 7, ("dense", "sparse"))
    assert (specs[DEFAULT_RERANK_ROW].over, specs[DEFAULT_RERANK_ROW].model,
            specs[DEFAULT_RERANK_ROW].max_length) == ("hybrid", "my/reranker", 128)
    # Left out, `rows` is not a parameter: results written before rows were configurable stay current.
    assert "rows" not in options.parameters()
    configured = EvaluationOptions(data=Path("d"), outputs_dir=Path("o"), rows=default_rows())
    assert configured.parameters()["rows"][2] == {"name": "hybrid", "kind": "fusion", "method": "rrf",
                                                  "of": ["dense", "sparse"], "k": 60}


def test_min_max_fusion_ranks_by_weighted_scores_and_breaks_ties_by_first_appearance():
    first = [("a", 3.0), ("b", 2.0), ("c", 1.0)]
    second = [("c", 9.0), ("d", 5.0), ("a", 1.0)]
    # minmax(first): a 1, b .5, c 0; minmax(second): c 1, d .5, a 0.
    assert min_max_fused_ranking(first, second, 0.5) == [("a", 0.5), ("c", 0.5), ("b", 0.25), ("d", 0.25)]
    assert [doc for doc, _ in min_max_fused_ranking(first, second, 0.9, depth=2)] == ["a", "b"]


def test_roles_fall_back_to_the_scifact_review_for_results_without_recorded_rows():
    old = {"table": [{"search": name} for name in ("dense", "sparse", "hybrid", "hybrid+rerank")], "manifest": {}}
    roles = row_roles(old)
    assert (roles.baseline, roles.rerank, roles.rerank_over) == ("dense", "hybrid+rerank", "hybrid")
    recorded = {"manifest": {"rows": [{"name": "bm25", "kind": "sparse"}, {"name": "ce", "kind": "rerank",
                                                                           "over": "bm25"}]}}
    roles = row_roles(recorded)
    assert (roles.baseline, roles.rerank, roles.rerank_over, roles.names) == ("bm25", "ce", "bm25", ("bm25", "ce"))


# --- evaluation on the small fixture (the packaged MiniLM) ---------------------------------------


def _options(data, tmp_path, **overrides):
    base = dict(data=data, outputs_dir=tmp_path / "outputs", dense_model="minilm-offline",
                cache_dir=tmp_path / "cache", progress=False, bootstrap_resamples=300)
    base.update(overrides)
    return EvaluationOptions(**base)


def _without_run_details(results):
    results = json.loads(json.dumps(results))
    manifest = results.pop("manifest")
    return results, {key: manifest[key] for key in ("rows", "models", "query_ids")}


@pytest.mark.model
@pytest.mark.usefixtures("one_torch_thread")
def test_the_scifact_four_written_out_give_exactly_the_default_figures(small_dataset, tmp_path):
    default = evaluate(_options(small_dataset, tmp_path / "a", skip_rerank=True), log=lambda _: None).results
    written = [DENSE, SPARSE, {"name": "hybrid", "kind": "fusion", "of": ["dense", "sparse"], "method": "rrf"},
               {"name": "hybrid+rerank", "kind": "rerank", "over": "hybrid"}]
    configured_rows = validate_evaluate_block({"rows": written}, "readout.yaml")["rows"]
    configured = evaluate(_options(small_dataset, tmp_path / "b", skip_rerank=True, rows=configured_rows),
                          log=lambda _: None).results
    assert _without_run_details(default) == _without_run_details(configured)
    assert [entry["name"] for entry in default["manifest"]["rows"]] == ["dense", "sparse", "hybrid", "hybrid+rerank"]


@pytest.fixture(scope="module")
def custom_outputs(tmp_path_factory, tiny_cross_encoder):
    """sparse as the baseline, dense, a min-max fusion, an RRF over all three, and the tiny random
    cross-encoder reordering the min-max row's candidates: written and sealed like any evaluation."""
    from tests.conftest import make_small_dataset

    root = tmp_path_factory.mktemp("custom")
    data = make_small_dataset(root / "data")
    rows = validate_evaluate_block({"rows": [
        {"name": "bm25", "kind": "sparse", "k1": 1.2, "b": 0.5},
        {"name": "minilm", "kind": "dense"},
        {"name": "mm", "kind": "fusion", "of": ["bm25", "minilm"], "method": "minmax", "alpha": 0.3},
        {"name": "rrf3", "kind": "fusion", "of": ["minilm", "bm25", "mm"], "k": 20},
        {"name": "ce", "kind": "rerank", "over": "mm", "model": str(tiny_cross_encoder), "max_length": 64},
    ]}, "readout.yaml")["rows"]
    options = _options(data, root, rows=rows)
    evaluation = evaluate(options, log=lambda _: None)
    write_outputs(evaluation, options, log=lambda _: None)
    return options, evaluation


@pytest.mark.model
@pytest.mark.usefixtures("one_torch_thread")
def test_configured_rows_run_in_order_with_the_first_as_baseline(custom_outputs):
    options, evaluation = custom_outputs
    results = evaluation.results
    assert [row["search"] for row in results["table"]] == ["bm25", "minilm", "mm", "rrf3", "ce"]
    by_name = {row["search"]: row for row in results["table"]}
    assert "delta_nDCG@5_vs_bm25" in by_name["minilm"] and "delta_nDCG@5_vs_dense" not in by_name["minilm"]
    assert by_name["bm25"]["delta_nDCG@5_vs_bm25"] == 0.0
    # Every row against the baseline, and the reranker against the row it reorders.
    assert sorted(results["comparisons"]) == ["ce_vs_bm25", "ce_vs_mm", "minilm_vs_bm25", "mm_vs_bm25", "rrf3_vs_bm25"]
    assert by_name["mm"]["model"] == "min-max fusion alpha=0.3 over bm25 and minilm top 50"
    assert by_name["rrf3"]["model"] == "RRF k=20 over minilm, bm25 and mm top 50"
    assert by_name["bm25"]["model"] == "bm25s (BM25, Lucene variant) k1=1.2 b=0.5"
    # The reranker reorders exactly mm's candidates, and its cost counts mm's pairs.
    rankings = evaluation.rankings
    for query in results["manifest"]["query_ids"]:
        assert sorted(doc for doc, _ in rankings["ce"][query]) == sorted(doc for doc, _ in rankings["mm"][query])
        assert results["rerank_costs"]["ce"]["per_query_pairs"][query] == len(rankings["mm"][query])
    assert results["same_50_rows_after_rerank"] is True
    assert results["manifest"]["parameters"]["rows"][0] == {"name": "bm25", "kind": "sparse", "k1": 1.2, "b": 0.5}
    assert verify_results(read_results(options.results_path), options.results_path.parent) is None


@pytest.mark.model
@pytest.mark.usefixtures("one_torch_thread")
def test_an_rrf_row_is_the_fusion_of_its_inputs_by_the_sparse_and_dense_figures(custom_outputs):
    options, evaluation = custom_outputs
    from generator.core.fusion import reciprocal_rank_fusion

    rankings = evaluation.rankings
    for query, ranked in rankings["rrf3"].items():
        expected = reciprocal_rank_fusion([[d for d, _ in rankings[name][query]] for name in ("minilm", "bm25", "mm")],
                                          k=20, depth=50)
        assert [doc for doc, _ in ranked] == [doc for doc, _ in expected]


# --- the checker: recorded rows must be what the runs show ----------------------------------------


def _tampered(options, tmp_path, change) -> str | None:
    outputs_dir = tmp_path / "outputs"
    shutil.copytree(options.results_path.parent, outputs_dir)
    path = outputs_dir / options.results_path.name
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(seal(data, "readout evaluate 0.1.0")), encoding="utf-8")
    return verify_results(read_results(path), outputs_dir)


def _entry(data, name):
    return next(entry for entry in data["manifest"]["rows"] if entry["name"] == name)


@pytest.mark.model
@pytest.mark.usefixtures("one_torch_thread")
def test_a_reranker_recorded_over_another_row_is_refused(custom_outputs, tmp_path):
    options, _ = custom_outputs
    problem = _tampered(options, tmp_path, lambda data: _entry(data, "ce").update(over="minilm"))
    assert problem and "does not reorder exactly minilm's candidates" in problem


@pytest.mark.model
@pytest.mark.usefixtures("one_torch_thread")
def test_an_rrf_row_recorded_with_another_constant_or_other_inputs_is_refused(custom_outputs, tmp_path):
    options, _ = custom_outputs
    problem = _tampered(options, tmp_path / "k", lambda data: _entry(data, "rrf3").update(k=60))
    assert problem and "not the RRF (k=60)" in problem
    problem = _tampered(options, tmp_path / "of", lambda data: _entry(data, "rrf3").update(of=["minilm", "bm25"]))
    assert problem and "not the RRF" in problem


@pytest.mark.model
@pytest.mark.usefixtures("one_torch_thread")
def test_a_row_renamed_to_another_kinds_word_in_the_recorded_rows_is_refused(custom_outputs, tmp_path):
    options, _ = custom_outputs

    def renamed(value):
        # The min-max fusion row renamed "reranker" in every key and value, so its figures would
        # read as the reranker's in any sentence that says "reranker".
        if isinstance(value, dict):
            return {renamed(key): renamed(item) for key, item in value.items()}
        if isinstance(value, list):
            return [renamed(item) for item in value]
        if isinstance(value, str) and (value == "mm" or value.startswith("mm_vs_") or value.endswith("_vs_mm")):
            return value.replace("mm", "reranker")
        return value

    def rename(data):
        forged = renamed({key: item for key, item in data.items()})
        data.clear()
        data.update(forged)
    problem = _tampered(options, tmp_path, rename)
    assert problem and "must be a rerank row" in problem


@pytest.mark.model
@pytest.mark.usefixtures("one_torch_thread")
def test_a_baseline_swapped_in_the_recorded_rows_is_refused(custom_outputs, tmp_path):
    options, _ = custom_outputs

    def swap(data):
        rows = data["manifest"]["rows"]
        rows[0], rows[1] = rows[1], rows[0]
    problem = _tampered(options, tmp_path, swap)
    # Caught first by the changes, which are over bm25 while the recorded baseline is now minilm.
    assert problem and "the baseline is minilm" in problem

    problem = _tampered(options, tmp_path / "names", lambda data: data["manifest"]["rows"].pop(3))
    assert problem and "manifest.rows does not name the table's rows" in problem


@pytest.mark.model
@pytest.mark.usefixtures("one_torch_thread")
def test_dropping_the_recorded_rows_does_not_switch_the_rules_off(custom_outputs, tmp_path):
    options, _ = custom_outputs
    # Without manifest.rows the SciFact roles apply: changes must be over dense, and these are over bm25.
    problem = _tampered(options, tmp_path, lambda data: data["manifest"].pop("rows"))
    assert problem and "is a change over bm25, but the baseline is dense" in problem


@pytest.mark.model
@pytest.mark.usefixtures("one_torch_thread")
def test_a_change_over_a_row_that_is_not_the_baseline_is_refused(custom_outputs, tmp_path):
    options, _ = custom_outputs

    def relabel(data):
        # A forger renames a change so it reads as a lift over dense, a row that is not the baseline.
        minilm = next(row for row in data["table"] if row["search"] == "minilm")
        minilm["delta_nDCG@5_vs_dense"] = 0.5
    problem = _tampered(options, tmp_path, relabel)
    assert problem and "is a change over dense, but the baseline is bm25" in problem


@pytest.mark.model
@pytest.mark.usefixtures("one_torch_thread")
def test_a_rerank_row_dropped_from_the_recorded_rows_leaves_its_cost_unexplained(custom_outputs, tmp_path):
    options, _ = custom_outputs

    def drop(data):
        _entry(data, "ce")["kind"] = "fusion"   # no rerank row any more, but a measured cost remains
    problem = _tampered(options, tmp_path, drop)
    assert problem and ("rerank_costs" in problem or "same_50_rows_after_rerank" in problem)


@pytest.mark.model
@pytest.mark.usefixtures("one_torch_thread")
def test_readout_cost_times_the_candidates_of_the_row_the_reranker_reorders(custom_outputs):
    from generator.evaluate.candidates import rerank_candidate_pairs

    options, evaluation = custom_outputs
    pairs = rerank_candidate_pairs(options.results_path, options.data)
    assert pairs.run_path.name == "mm.trec"
    assert {query: len(items) for query, items in pairs.pairs_by_query.items()} == {
        query: len(evaluation.rankings["mm"][query]) for query in evaluation.results["manifest"]["query_ids"]}


@pytest.mark.model
@pytest.mark.usefixtures("one_torch_thread")
def test_without_a_rerank_row_nothing_is_said_about_a_reranker(small_dataset, tmp_path):
    rows = validate_evaluate_block({"rows": [DENSE, SPARSE]}, "readout.yaml")["rows"]
    options = _options(small_dataset, tmp_path, rows=rows, rerank_cost="shape")
    evaluation = evaluate(options, log=lambda _: None)
    results = evaluation.results
    assert results["rerank_costs"] == {}
    said = ResultsModel(results).resolve(parse_path("rerank_cost.p95_milliseconds"))
    assert said.unmeasured and "no rerank row is configured" in said.reason
    assert results["p95_rerank_milliseconds"] is None and "rerank" not in results["manifest"]["models"]
    assert sorted(results["comparisons"]) == ["sparse_vs_dense"]
    write_outputs(evaluation, options, log=lambda _: None)
    assert verify_results(read_results(options.results_path), options.results_path.parent) is None
    from generator.evaluate.candidates import rerank_candidate_pairs
    with pytest.raises(InputError, match="no rerank row is configured"):
        rerank_candidate_pairs(options.results_path, options.data)


@pytest.mark.model
@pytest.mark.usefixtures("one_torch_thread")
def test_a_comparison_naming_no_configured_row_is_refused_before_any_work(small_dataset, tmp_path):
    rows = validate_evaluate_block({"rows": [DENSE, SPARSE]}, "readout.yaml")["rows"]
    options = _options(small_dataset, tmp_path, rows=rows, comparisons=(("hybrid", "dense"),))
    with pytest.raises(InputError, match="no row is named 'hybrid'") as raised:
        evaluate(options, log=lambda _: None)
    assert raised.value.field == "evaluate.comparisons[0]"


def test_a_run_row_reads_its_file_relative_to_the_project(tmp_path):
    from generator.core.options import build_options

    configured = validate_evaluate_block({"rows": [DENSE, {"name": "team", "kind": "run", "file": "runs/t.trec"}]},
                                         "readout.yaml")
    options = build_options(tmp_path / "data", tmp_path / "project" / "outputs", configured)
    assert options.row_specs()[1] == RowSpec("team", "run", file=tmp_path / "project" / "runs" / "t.trec")
