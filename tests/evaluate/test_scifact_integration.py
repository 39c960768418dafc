"""The real BEIR SciFact copy with the packaged MiniLM as the dense model (rerank skipped):
every measured row equals what trec_eval (pytrec_eval) computes from the written run files.

The first run encodes 5,183 documents (minutes on two cores); the embeddings are cached in
~/.cache/readout (or $READOUT_CACHE), so later runs take seconds.
"""

import json

import numpy as np
import pytest
import pytrec_eval

from generator.evaluate.data import SCIFACT_SHA256, load_dataset
from generator.core.options import EvaluationOptions
from generator.evaluate.pipeline import evaluate, write_outputs
from generator.core.runfiles import read_run

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("one_torch_thread")]

TREC_MEASURES = {"recall@5": "recall_5", "recall@50": "recall_50", "nDCG@5": "ndcg_cut_5"}


@pytest.fixture(scope="module")
def scifact(scifact_dir):
    return load_dataset(scifact_dir)


@pytest.fixture(scope="module")
def evaluated(scifact, scifact_dir, tmp_path_factory):
    outputs = tmp_path_factory.mktemp("outputs")
    produced = {}
    for query_set in ("sample", "all"):
        options = EvaluationOptions(data=scifact_dir, outputs_dir=outputs, query_set=query_set,
                                    dense_model="minilm-offline", skip_rerank=True, progress=False)
        path = write_outputs(evaluate(options, log=print, dataset=scifact), options, log=print)
        produced[query_set] = (options, json.loads(path.read_text()))
    return produced


def test_scifact_inputs_are_the_published_files(scifact):
    assert len(scifact.documents) == 5183
    assert len(scifact.test_query_ids()) == 300
    assert {name: entry["sha256"] for name, entry in scifact.input_hashes.items()} == SCIFACT_SHA256
    assert scifact.is_reproduction_of_scifact() == (True, [])


@pytest.mark.parametrize("query_set,expected_queries", [("sample", 20), ("all", 300)])
def test_measured_rows_equal_trec_eval_on_the_written_runs(evaluated, scifact, query_set, expected_queries):
    options, results = evaluated[query_set]
    assert results["queries"] == expected_queries and results["documents"] == 5183
    query_ids = results["manifest"]["query_ids"]
    assert query_ids == scifact.test_query_ids()[:expected_queries]
    qrels = {q: dict(scifact.qrels.scores[q]) for q in query_ids}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(TREC_MEASURES.values()))
    for row in results["table"][:3]:
        run = read_run(options.results_path.parent / results["runs"][row["search"]])
        assert set(run) == set(query_ids)
        assert all(len(docs) <= 50 for docs in run.values())
        per_query = evaluator.evaluate(run)
        for metric, measure in TREC_MEASURES.items():
            expected = float(np.mean([per_query[q][measure] for q in query_ids]))
            assert row[metric] == pytest.approx(expected, abs=1e-9), (row["search"], metric)
            for q in query_ids:
                assert results["per_query"][row["search"]][q][metric] == pytest.approx(per_query[q][measure], abs=1e-9)
    assert results["table"][3]["measured"] is False


def test_300_query_hybrid_interval_matches_an_independent_bootstrap(evaluated):
    options, results = evaluated["all"]
    hybrid = results["comparisons"]["hybrid_vs_dense"]["metrics"]["nDCG@5"]
    query_ids = results["manifest"]["query_ids"]
    differences = np.array([results["per_query"]["hybrid"][q]["nDCG@5"] - results["per_query"]["dense"][q]["nDCG@5"]
                            for q in query_ids])
    rng = np.random.default_rng(options.seed)
    means = np.array([differences[rng.integers(0, len(differences), len(differences))].mean()
                      for _ in range(options.bootstrap_resamples)])
    low, high = np.percentile(means, [2.5, 97.5])
    assert hybrid["delta"] == pytest.approx(differences.mean(), abs=1e-12)
    # An independent resampling loop: same recipe, its own code; intervals agree closely.
    assert hybrid["ci95_low"] == pytest.approx(low, abs=0.01)
    assert hybrid["ci95_high"] == pytest.approx(high, abs=0.01)
    assert hybrid["ci95_low"] <= hybrid["delta"] <= hybrid["ci95_high"]
    wins = int((differences > 1e-12).sum())
    losses = int((differences < -1e-12).sum())
    assert (hybrid["wins"], hybrid["losses"], hybrid["ties"]) == (wins, losses, len(differences) - wins - losses)


def test_300_query_file_carries_the_comparison_block(evaluated):
    _, results = evaluated["all"]
    comparison = results["comparison_with_sample"]
    assert comparison["verdict"] == "not-measured"
    by_row = results["comparison_with_sample_by_row"]
    assert set(by_row) == {"sparse", "hybrid", "hybrid+rerank"}
    hybrid = by_row["hybrid"]["per_metric"]["nDCG@5"]
    assert hybrid["full"]["delta"] == pytest.approx(results["comparisons"]["hybrid_vs_dense"]["metrics"]["nDCG@5"]["delta"])
    assert hybrid["full"]["queries"] == 300 and hybrid["sample"]["queries"] == 20


def test_the_committed_hybrid_run_as_a_run_row_gives_exactly_the_hybrid_rows_metrics(scifact, scifact_dir, tmp_path):
    from pathlib import Path

    from generator.core.rows import RowSpec

    repository = Path(__file__).resolve().parents[2]
    committed = json.loads((repository / "outputs" / "results.json").read_text())
    options = EvaluationOptions(data=scifact_dir, outputs_dir=tmp_path / "outputs", dense_model="minilm-offline",
                                skip_rerank=True, progress=False, bootstrap_resamples=200,
                                rows=(RowSpec("dense", "dense"), RowSpec(
                                    "committed-hybrid", "run", file=repository / "outputs" / "runs" / "hybrid.trec",
                                    outside_project=True)))
    results = evaluate(options, log=print, dataset=scifact).results
    supplied = next(row for row in results["table"] if row["search"] == "committed-hybrid")
    hybrid = next(row for row in committed["table"] if row["search"] == "hybrid")
    for metric in TREC_MEASURES:
        assert supplied[metric] == hybrid[metric], metric
    assert results["per_query"]["committed-hybrid"] == committed["per_query"]["hybrid"]
