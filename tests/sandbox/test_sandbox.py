"""The L03 sandbox: every published number of spec section 5, at its stated precision."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from generator.commands.cli import main
from generator.sandbox.config import DEFAULT_PARAMETERS
from generator.sandbox.inputs import load_inputs
from generator.sandbox.pipeline import rerank_fixed_set, run_pipeline

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "l03"


@pytest.fixture(scope="module")
def result():
    return run_pipeline(load_inputs(EXAMPLE / "data"), DEFAULT_PARAMETERS)


@pytest.fixture()
def project(tmp_path):
    target = tmp_path / "l03"
    shutil.copytree(EXAMPLE, target)
    return target


def top(result, run, topic, n=3):
    return [doc_id for doc_id, _ in result.runs[run][topic][:n]]


# --- corpus and BM25 -------------------------------------------------------------------------


def test_token_lengths_and_mean(result):
    assert result.results["token_lengths"] == {
        "D-001": 21, "D-002": 20, "D-003": 20, "D-004": 19, "D-005": 21,
        "D-006": 18, "D-007": 21, "D-008": 20, "D-009": 24, "D-010": 21}
    assert result.results["mean_token_length"] == 20.5


def test_corpus_records_have_the_required_fields_and_cc0():
    for line in (EXAMPLE / "data" / "corpus.jsonl").read_text().splitlines():
        record = json.loads(line)
        assert set(record) == {"doc_id", "title", "text", "source_type", "license"}
        assert record["license"].startswith("CC0")


def test_t03_query_tokens_document_frequencies_and_idf(result):
    query = result.results["query_details"]["T-03"]
    assert query["tokens"] == ["query", "sampling", "strata", "negative", "controls", "held", "out"]
    assert [query["document_frequency"][t] for t in query["tokens"]] == [6, 1, 2, 1, 1, 1, 1]
    assert [round(query["idf"][t], 6) for t in query["tokens"]] == [
        0.526093, 1.992430, 1.481605, 1.992430, 1.992430, 1.992430, 1.992430]


def test_bm25_t03_top_five_scores_to_nine_decimals_with_term_counts(result):
    top5 = result.results["bm25_top5"]["T-03"]
    assert [(row["doc_id"], round(row["score"], 9)) for row in top5] == [
        ("D-005", 8.654282550), ("D-006", 7.047062981), ("D-008", 0.531395266),
        ("D-001", 0.520895689), ("D-010", 0.520895689)]
    assert top5[0]["term_counts"] == {"query": 1, "sampling": 2, "strata": 1, "held": 1, "out": 1}
    assert top5[1]["term_counts"] == {"query": 1, "strata": 1, "negative": 1, "controls": 2}
    for row in top5[2:]:
        assert row["term_counts"] == {"query": 1}


@pytest.mark.parametrize("topic, expected_top, recall, ndcg", [
    ("T-01", ["D-001", "D-004", "D-002"], 1.000000, 0.955831),
    ("T-02", ["D-009", "D-003", "D-004"], 1.000000, 0.665315),
    ("T-03", ["D-005", "D-006", "D-008"], 0.666667, 0.946768),
])
def test_bm25_per_topic_top3_recall_ndcg(result, topic, expected_top, recall, ndcg):
    values, diagnosis = result.results["per_query"]["bm25"][topic], result.results["diagnosis"]["bm25"][topic]
    assert diagnosis["top_3"] == expected_top
    assert round(values["recall@3"], 6) == recall
    assert round(values["nDCG@3"], 6) == ndcg


def test_graded_qrels_are_the_seven_published_positives():
    inputs = load_inputs(EXAMPLE / "data")
    assert inputs.qrels == {"T-01": {"D-001": 3, "D-002": 2}, "T-02": {"D-003": 3, "D-004": 2},
                            "T-03": {"D-005": 3, "D-006": 2, "D-010": 1}}


# --- the four macro rows ---------------------------------------------------------------------


def test_macro_rows_to_six_decimals(result):
    table = {row["search"]: (round(row["recall@3"], 6), round(row["nDCG@3"], 6))
             for row in result.results["table"]}
    assert [row["search"] for row in result.results["table"]] == ["bm25", "opaque", "hybrid", "reranked"]
    assert table == {"bm25": (0.888889, 0.855971), "opaque": (1.000000, 0.880035),
                     "hybrid": (1.000000, 0.888438), "reranked": (1.000000, 0.888438)}


def test_opaque_run_has_no_model_identity_and_published_order(result):
    assert result.results["opaque_run"]["model_identity"] == "none"
    assert top(result, "opaque", "T-03") == ["D-005", "D-010", "D-006"]
    assert top(result, "opaque", "T-01", 2) == ["D-002", "D-001"]   # grade 2 first, grade 3 second
    assert top(result, "opaque", "T-02", 2) == ["D-004", "D-003"]


def test_hybrid_published_orders(result):
    assert top(result, "hybrid", "T-03") == ["D-005", "D-006", "D-010"]
    assert top(result, "hybrid", "T-02")[0] == "D-009"


def test_reranker_keeps_the_hybrid_set_and_top_three(result):
    for topic in ("T-01", "T-02", "T-03"):
        hybrid = [d for d, _ in result.runs["hybrid"][topic]]
        reranked = [d for d, _ in result.runs["reranked"][topic]]
        assert len(hybrid) == 5
        assert sorted(reranked) == sorted(hybrid)
        assert reranked[:3] == hybrid[:3]
    assert result.results["reranker"]["same_set_as_hybrid"] is True
    assert result.results["reranker"]["top_3_unchanged"] is True


def test_reranker_can_reorder_but_never_adds_or_drops():
    candidates = [("a", 0.9), ("b", 0.8), ("c", 0.1)]
    reranked = rerank_fixed_set(candidates, {"a": 0.0, "b": 0.0, "c": 1.0}, 0.9)
    assert [d for d, _ in reranked] == ["c", "a", "b"]
    assert rerank_fixed_set(candidates, {"a": 0.0, "b": 0.0, "c": 1.0}, 0.0) == candidates


def test_error_analysis_marks_the_bm25_t03_miss_as_ordering(result):
    row = next(r for r in result.error_rows if r["run"] == "bm25" and r["topic_id"] == "T-03")
    assert row["misses"] == ["D-010"]
    assert row["diagnosis"] == "ordering problem"   # D-010 is BM25's fifth candidate


# --- acquisition funnel ----------------------------------------------------------------------


def test_funnel_ratios_keep_their_own_denominators(result):
    funnel = result.results["funnel"]
    assert funnel["counts"] == {"declared": 12, "discovered": 11, "authorised": 11, "usable": 10,
                                "parsed": 10, "admitted": 10}
    labels = {stage["stage"]: stage["label"] for stage in funnel["stages"]}
    assert labels == {"discovered": "11/12", "authorised": "11/11", "usable": "10/11", "parsed": "10/10",
                      "admitted": "10/10"}
    assert funnel["snapshots"] == ["IDX-L03-001"]
    lost = {row["locator_id"]: row["failed_stage"] for row in funnel["lost"]}
    assert lost == {"S-011": "usable", "S-012": "discovered"}


def test_visibility_request_is_refused_with_exit_2_and_nothing_written(project, capsys):
    before = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    assert main(["sandbox", str(project), "--report-visibility"]) == 2
    err = capsys.readouterr().err
    assert "refused" in err and "10/12" in err and "own denominator" in err and "usable 10/11" in err
    assert {p: p.read_bytes() for p in project.rglob("*") if p.is_file()} == before


# --- the command, outputs and stop conditions ------------------------------------------------


def test_committed_outputs_are_what_the_code_writes(project, capsys):
    assert main(["sandbox", str(project)]) == 0
    committed = sorted(p.relative_to(EXAMPLE / "outputs") for p in (EXAMPLE / "outputs").rglob("*")
                       if p.is_file() and p.suffix in (".json", ".tsv", ".csv"))
    assert Path("results.json") in committed and Path("runs/frozen_dense.tsv") in committed
    for relative in committed:
        assert (project / "outputs" / relative).read_bytes() == (EXAMPLE / "outputs" / relative).read_bytes(), relative


def test_results_json_is_citable(project, capsys):
    assert main(["sandbox", str(project)]) == 0
    results = json.loads((project / "outputs" / "results.json").read_text())
    assert results["status"] == "valid"
    assert {row["search"] for row in results["table"]} == {"bm25", "opaque", "hybrid", "reranked"}
    assert all(isinstance(row["recall@3"], float) and isinstance(row["nDCG@3"], float) for row in results["table"])
    manifest = json.loads((project / "outputs" / "run_manifest.json").read_text())
    assert set(manifest["inputs"]) == {"data/corpus.jsonl", "data/topics.jsonl", "data/qrels.tsv",
                                       "data/opaque_run.json", "data/acquisition_ledger.csv"}
    assert manifest["parameters"]["alpha"] == 0.55 and manifest["tokenizer"]["pattern"]
    for name in ("stage_boundary.json", "topic_error_analysis.csv", "runs/bm25.tsv", "runs/hybrid.tsv",
                 "runs/reranked.tsv", "runs/frozen_dense.tsv"):
        assert (project / "outputs" / name).is_file()


def test_changed_input_without_branch_marks_the_run_invalid_and_exits_1(project, capsys):
    qrels = project / "data" / "qrels.tsv"
    qrels.write_text(qrels.read_text().replace("T-03\t0\tD-010\t1", "T-03\t0\tD-010\t2"))
    assert main(["sandbox", str(project)]) == 1
    err = capsys.readouterr().err
    assert "run invalid" in err and "data/qrels.tsv" in err
    manifest = json.loads((project / "outputs" / "run_manifest.json").read_text())
    results = json.loads((project / "outputs" / "results.json").read_text())
    assert manifest["status"] == "invalid" and "data/qrels.tsv" in manifest["invalid_reasons"][0]
    assert results["status"] == "invalid" and "table" not in results
    # Still invalid on a second try: an invalid run never becomes the reference.
    assert main(["sandbox", str(project)]) == 1


def test_documented_branch_accepts_the_change(project, capsys):
    from generator.storage.fileio import sha256_file

    qrels = project / "data" / "qrels.tsv"
    qrels.write_text(qrels.read_text() + "# reviewed again\n")
    config = project / "readout.yaml"
    config.write_text(config.read_text().replace(
        "  branches: []",
        f"  branches:\n    - id: BR-001\n      reason: a comment line\n"
        f"      inputs: {{data/qrels.tsv: {sha256_file(qrels)}}}"))
    assert main(["sandbox", str(project)]) == 0
    assert "documented by branch BR-001" in capsys.readouterr().out


def test_changed_parameter_without_branch_exits_1_naming_it(project, capsys):
    config = project / "readout.yaml"
    config.write_text(config.read_text().replace("alpha: 0.55", "alpha: 0.6"))
    assert main(["sandbox", str(project)]) == 1
    assert "parameter alpha changed" in capsys.readouterr().err


def test_bad_qrels_grade_is_a_one_line_input_error(project, capsys):
    qrels = project / "data" / "qrels.tsv"
    qrels.write_text(qrels.read_text().replace("D-002\t2", "D-002\ttwo"))
    assert main(["sandbox", str(project)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("qrels.tsv:2: grade: must be a non-negative integer, got 'two'")
    assert len(err.splitlines()) == 1


def test_committed_run_files_keep_their_order_under_trec_evals_re_sort():
    """trec_eval re-sorts by score and breaks ties by document id descending; the written float32
    scores are strictly decreasing, so the BM25 tie at T-03 ranks 4-5 (D-001, D-010) stays put."""
    for relative in ("runs/bm25.tsv", "runs/frozen_dense.tsv", "runs/hybrid.tsv", "runs/reranked.tsv"):
        lines = [line.split("\t") for line in (EXAMPLE / "outputs" / relative).read_text().splitlines()]
        by_topic: dict[str, list[tuple[str, float]]] = {}
        for topic, _q0, doc_id, _rank, score, _tag in lines:
            by_topic.setdefault(topic, []).append((doc_id, float(score)))
        for topic, written in by_topic.items():
            trec_order = sorted(written, key=lambda item: (-item[1], [-ord(c) for c in item[0]]))
            assert trec_order == written, (relative, topic)
    bm25_t03 = [line.split("\t")[2] for line in (EXAMPLE / "outputs" / "runs/bm25.tsv").read_text().splitlines()
                if line.startswith("T-03")]
    assert bm25_t03[3:5] == ["D-001", "D-010"]
