"""The results format: the generated reference is current, every committed results file validates
against the JSON Schema, every value in it is located by a declared block, a format-1 file reads,
upgrades and rebuilds byte for byte, and a path in format 1's spelling reads the same value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.claims.tracing.rederive import read_ranked_run
from generator.core.metrics import Metric
from generator.core.runfiles import read_qrels
from generator.storage.errors import InputError
from generator.core.results import Results, canonical_bytes, parse_path, read_results
from generator.core.results.builders import (RowRun, ceiling_block, diagnosis_block, diagnosis_summary_block,
                                             per_query_block, queries_without_candidates_block, table_block,
                                             topic_diagnosis_entry)
from generator.core.results.reference import (REGENERATE, json_schema, load_json_schema, render_json_schema,
                                              render_reference)
from generator.core.results.location import locate
from generator.core.results.schema import BLOCKS, FORMAT_VERSION
from generator.core.results.upgrade import format_of, upgrade
from tests.conftest import run_git

jsonschema = pytest.importorskip("jsonschema")

REPOSITORY = Path(__file__).resolve().parents[3]
SCIFACT = REPOSITORY / "outputs"
L03 = REPOSITORY / "examples" / "l03" / "outputs"
COMMITTED = [SCIFACT / "results.json", SCIFACT / "results-300.json", L03 / "results.json"]


def test_the_reference_page_and_the_json_schema_are_fresh_renders_of_the_schema():
    assert (REPOSITORY / "docs" / "results.md").read_text(encoding="utf-8") == render_reference(), \
        f"docs/results.md is stale: run `{REGENERATE}`"
    assert load_json_schema() == json_schema() and render_json_schema().endswith("\n"), \
        f"results.schema.json is stale: run `{REGENERATE}`"


def test_the_json_schema_is_valid_and_declares_exactly_the_blocks():
    schema = load_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert list(schema["properties"]) == [block.name for block in BLOCKS]
    assert schema["properties"]["format_version"]["const"] == FORMAT_VERSION


@pytest.mark.parametrize("path", COMMITTED, ids=lambda path: path.relative_to(REPOSITORY).as_posix())
def test_every_committed_results_file_is_valid_in_the_current_format(path):
    results = read_results(path)
    assert results.data["format_version"] == FORMAT_VERSION
    errors = sorted(error.message for error in jsonschema.Draft202012Validator(load_json_schema()).iter_errors(
        results.data))
    assert errors == []


def test_the_json_schema_refuses_a_block_it_does_not_declare():
    data = read_results(L03 / "results.json").data
    validator = jsonschema.Draft202012Validator(load_json_schema())
    assert not validator.is_valid({**data, "per_topic": {}})
    assert not validator.is_valid({**data, "format_version": 1})


def _leaves(value, steps=()):
    """Every leaf path of a document, in the path grammar (lists of rows by their selector)."""
    if isinstance(value, dict) and value:
        for key, item in value.items():
            yield from _leaves(item, (*steps, key))
    elif isinstance(value, list) and value:
        for index, item in enumerate(value):
            selector = f"[search={item['search']}]" if isinstance(item, dict) and "search" in item else f"[{index}]"
            yield from _leaves(item, (*steps[:-1], steps[-1] + selector) if steps else (selector,))
    else:
        yield steps


@pytest.mark.parametrize("path", COMMITTED, ids=lambda path: path.relative_to(REPOSITORY).as_posix())
def test_every_value_of_a_committed_file_is_located_by_its_blocks_layout(path):
    model = read_results(path).model
    unlocated = []
    for steps in _leaves(model.data):
        text = ".".join(f'["{key}"]' if "." in key and "[" not in key else key for key in steps)
        try:
            parsed = parse_path(text)
        except ValueError:
            continue   # a key the grammar must quote (a file name in manifest.inputs)
        if model.locate(parsed) is None:
            unlocated.append(text)
    assert unlocated == []


@pytest.mark.parametrize("path, expected", [
    ("table[search=hybrid].nDCG@5", {"row": "hybrid", "metric": "nDCG@5", "kind": "mean"}),
    ("table[search=hybrid].delta_nDCG@5_vs_dense", {"row": "hybrid", "baseline": "dense", "metric": "nDCG@5",
                                                    "kind": "change"}),
    ("comparisons.hybrid+rerank_vs_hybrid.metrics.nDCG@5.ci95_low",
     {"row": "hybrid+rerank", "baseline": "hybrid", "metric": "nDCG@5", "kind": "interval end"}),
    ("all_pairs.metrics.recall@5.pairs.sparse_vs_dense.p_holm",
     {"row": "sparse", "baseline": "dense", "metric": "recall@5", "kind": "p-value"}),
    ("per_query.dense.13.recall@50", {"row": "dense", "query": "13", "metric": "recall@50", "kind": "value"}),
    ("ceiling.rows.hybrid.nDCG@5.ceiling", {"row": "hybrid", "metric": "nDCG@5", "kind": "bound"}),
    ("ceiling.per_query.hybrid.13.nDCG@5", {"row": "hybrid", "query": "13", "metric": "nDCG@5", "kind": "bound"}),
    ("diagnosis_summary.sparse.candidate miss", {"row": "sparse", "kind": "count", "unit": "queries"}),
    ("rerank_milliseconds.13", {"row": "hybrid+rerank", "query": "13", "kind": "time"}),
    ("rerank_costs.hybrid+rerank-int8.per_query_milliseconds.13",
     {"row": "hybrid+rerank-int8", "query": "13", "kind": "time"}),
    ("rerank_costs.hybrid+rerank.max_length", {"row": "hybrid+rerank", "kind": "parameter", "unit": "tokens"}),
    ("frontier.configurations[3].ceiling", {"kind": "bound"}),
    ("queries", {"kind": "query count", "unit": "queries"}),
    ("candidate_depth", {"kind": "parameter", "unit": "candidates"}),
    # format 1's spellings, located where format 2 keeps them
    ("table[search=sparse].paired_vs_dense.nDCG@5.ci95_high",
     {"row": "sparse", "baseline": "dense", "metric": "nDCG@5", "kind": "interval end"}),
    ("rerank_cost.p95_milliseconds", {"row": "hybrid+rerank", "kind": "time"}),
])
def test_a_path_is_located_with_its_row_baseline_query_metric_kind_and_unit(path, expected):
    location = read_results(SCIFACT / "results.json").model.locate(parse_path(path))
    assert location is not None
    found = {"row": location.row, "baseline": location.baseline, "query": location.query, "metric": location.metric,
             "kind": location.kind, "unit": location.unit}
    assert {key: found[key] for key in expected} == expected
    for key in ("row", "baseline", "query", "metric"):
        if key not in expected:
            assert found[key] is None, key


def test_a_row_whose_name_holds_vs_is_split_by_the_rows_the_file_has():
    steps = parse_path("comparisons.a_vs_b_vs_c.metrics.nDCG@5.delta")
    assert (locate(steps, rows={"a_vs_b", "c"}).row, locate(steps, rows={"a_vs_b", "c"}).baseline) == ("a_vs_b", "c")
    assert (locate(steps, rows={"a", "b_vs_c"}).row, locate(steps, rows={"a", "b_vs_c"}).baseline) == ("a", "b_vs_c")


# --- format 1 ----------------------------------------------------------------------------------


def _rebuilt(results: Results, outputs: Path) -> dict:
    """Every block the run files and the judgements determine, rebuilt by its builder."""
    model = results.model
    query_ids = model.query_ids
    metrics = [Metric.from_manifest(name, entry) for name, entry in sorted(model.manifest_block("metrics").items())]
    judgements = read_qrels(outputs / model.manifest_block("qrels_copy")["path"])
    rankings = {}
    for row, entry in model.manifest_block("run_files").items():
        run = read_ranked_run(outputs / entry["path"])
        rankings[row] = {q: run.get(q, []) for q in query_ids}
    per_query = per_query_block(rankings, judgements, query_ids, metrics)
    sandbox = model.manifest["seal"]["writer"].startswith("readout sandbox")
    describe = "label" if sandbox else "model"
    rows = [RowRun(row["search"], row.get(describe), rankings.get(row["search"]), row.get("not_measured_reason"))
            for row in model.rows]
    blocks = {"per_query": per_query,
              "table": table_block(rows, per_query, query_ids, metrics, None if sandbox else model.roles.baseline,
                                   describe=describe)}
    if sandbox:
        cutoff = results.data["parameters"]["cutoff"]
        blocks["diagnosis"] = {row: {q: topic_diagnosis_entry(
            list(zip(ranked[q], [entry["score"] for entry in model.diagnosis(row)[q]["scores"]])),
            judgements.get(q, {}), cutoff) for q in query_ids} for row, ranked in rankings.items()}
        return blocks
    blocks["diagnosis"] = diagnosis_block(rankings, judgements, query_ids)
    blocks["diagnosis_summary"] = diagnosis_summary_block(blocks["diagnosis"])
    blocks["ceiling"] = ceiling_block(rankings, judgements, query_ids, metrics)
    blocks["queries_without_candidates"] = queries_without_candidates_block(rankings, query_ids)
    return blocks


@pytest.mark.parametrize("path", COMMITTED, ids=lambda path: path.relative_to(REPOSITORY).as_posix())
def test_a_committed_file_upgrades_and_rebuilds_byte_for_byte(path):
    results = read_results(path)
    for name, block in _rebuilt(results, path.parent).items():
        assert canonical_bytes(results.data[name]) == canonical_bytes(block), name


# The last commit whose SciFact results files were written in format 1 (issue 48 rewrote them in
# the current format, resealed; every value is the same).
FORMAT_1_COMMIT = "072464c"


def _at_commit(commit: str, relative: str) -> dict:
    """A committed file as it was at `commit` (this test reads the clone's history)."""
    return json.loads(run_git(REPOSITORY, "show", f"{commit}:{relative}"))


@pytest.mark.parametrize("name", ["results.json", "results-300.json"])
def test_the_committed_scifact_files_are_their_format_1_predecessors_upgraded(name):
    """The same document, format 1 upgraded and format 2 as committed, apart from the seal (over
    other bytes) and, for the every-query file, the sample's sha256 it was compared with."""
    former = _at_commit(FORMAT_1_COMMIT, f"outputs/{name}")
    committed = read_results(SCIFACT / name)
    assert format_of(former) == 1 and format_of(committed.written) == FORMAT_VERSION
    assert committed.raw is None, "read as written: nothing to upgrade"
    upgraded = upgrade(former)
    assert upgraded is not former and "rerank_cost" not in upgraded and "paired_vs_dense" not in upgraded["table"][1]

    def without_seal(document: dict) -> bytes:
        manifest = {key: value for key, value in document["manifest"].items() if key not in ("seal", "compared_with")}
        return canonical_bytes({**document, "manifest": manifest})

    assert without_seal(upgraded) == without_seal(committed.data)


def test_the_sandbox_file_of_format_1_is_exactly_the_committed_file_of_format_2(tmp_path):
    # The L03 file was rewritten by the format-2 sandbox; its format-1 predecessor (reconstructed by
    # moving the values back) upgrades to exactly the same document.
    current = json.loads((L03 / "results.json").read_text(encoding="utf-8"))
    metrics = set(current["manifest"]["metrics"])
    old = {key: value for key, value in current.items() if key not in ("format_version", "per_query", "diagnosis",
                                                                          "query_details", "queries")}
    old["per_topic"] = {row: {q: {**current["diagnosis"][row][q], **values} for q, values in by_query.items()}
                        for row, by_query in current["per_query"].items()}
    old["queries"], old["topics"] = current["query_details"], current["queries"]
    old["manifest"] = {**current["manifest"], "per_query_key": "per_topic"}
    assert format_of(old) == 1 and set(old["per_topic"]["bm25"]["T-01"]) >= metrics
    assert canonical_bytes(upgrade(old)) == canonical_bytes(current)


@pytest.mark.parametrize("outputs, old, new", [
    (SCIFACT, "table[search=hybrid].paired_vs_dense.nDCG@5.ci95_low", "comparisons.hybrid_vs_dense.metrics.nDCG@5.ci95_low"),
    (SCIFACT, "table[search=hybrid+rerank].paired_vs_dense.recall@5", "comparisons.hybrid+rerank_vs_dense.metrics.recall@5"),
    (SCIFACT, "rerank_cost.p95_milliseconds", "rerank_costs.hybrid+rerank.p95_milliseconds"),
    (SCIFACT, "rerank_cost.per_query_milliseconds.1", "rerank_costs.hybrid+rerank.per_query_milliseconds.1"),
    (L03, "per_topic.bm25.T-03.nDCG@3", "per_query.bm25.T-03.nDCG@3"),
    (L03, "per_topic.bm25.T-03.misses[0]", "diagnosis.bm25.T-03.misses[0]"),
    (L03, "topics", "queries"),
    (L03, "queries.T-03.idf.sampling", "query_details.T-03.idf.sampling"),
])
def test_a_path_in_format_1_spelling_reads_the_same_value_as_format_2(outputs, old, new):
    model = read_results(outputs / "results.json").model
    assert model.resolve(parse_path(old)).value == model.resolve(parse_path(new)).value is not None


def test_the_decided_rerankers_cost_of_a_file_without_a_rerank_row_is_not_measured():
    data = json.loads((L03 / "results.json").read_text(encoding="utf-8"))
    data["manifest"]["rows"] = [{"name": "bm25", "kind": "sparse"}]
    resolution = read_results_from(data).model.resolve(parse_path("rerank_cost.p95_milliseconds"))
    assert not resolution.ok and resolution.unmeasured and "no rerank row is configured" in resolution.reason


def read_results_from(data: dict) -> Results:
    return Results("results.json", Path("results.json"), "0" * 64, upgrade(data))


def test_a_file_of_a_newer_format_is_refused_with_the_fix(tmp_path):
    path = tmp_path / "results.json"
    data = json.loads((L03 / "results.json").read_text(encoding="utf-8"))
    path.write_text(json.dumps({**data, "format_version": FORMAT_VERSION + 1}), encoding="utf-8")
    with pytest.raises(InputError, match=r"results format 3, newer than this readout reads \(up to 2\): upgrade "
                                         r"traced-readout"):
        read_results(path)
    path.write_text(json.dumps({**data, "format_version": "two"}), encoding="utf-8")
    with pytest.raises(InputError, match="format_version is 'two', not a format number"):
        read_results(path)
