"""The evaluation stage on a small fixture corpus: caching, the rerank mechanics with a tiny random
cross-encoder (its scores mean nothing), and resuming an interrupted rerank run."""

import json

import pytest

from generator.evaluate.options import EvaluationOptions
from generator.evaluate.pipeline import evaluate, write_outputs
from generator.evaluate.models import load_cross_encoder

pytestmark = pytest.mark.model


def _options(data, tmp_path, **overrides):
    base = dict(data=data, outputs_dir=tmp_path / "outputs", dense_model="minilm-offline",
                cache_dir=tmp_path / "cache", progress=False, bootstrap_resamples=500)
    base.update(overrides)
    return EvaluationOptions(**base)


def test_second_evaluate_reuses_cached_embeddings_and_says_so(small_dataset, tmp_path):
    options = _options(small_dataset, tmp_path, skip_rerank=True)
    first_log, second_log = [], []
    first = evaluate(options, log=first_log.append).results
    second = evaluate(options, log=second_log.append).results
    assert any("encoding 80 documents" in line for line in first_log)
    assert first["manifest"]["caches"]["dense_embeddings"] == "computed"
    assert any("re-using cached corpus embeddings" in line and "no encoding" in line for line in second_log)
    assert not any("encoding 80 documents" in line for line in second_log)
    assert second["manifest"]["caches"]["dense_embeddings"] == "re-used"
    assert second["table"] == first["table"]


def test_skipped_rerank_row_is_not_measured_and_has_no_numbers(small_dataset, tmp_path):
    options = _options(small_dataset, tmp_path, skip_rerank=True, skip_rerank_reason="no cross-encoder here")
    path = write_outputs(evaluate(options, log=lambda _: None), options, log=lambda _: None)
    results = json.loads(path.read_text())
    rows = {row["search"]: row for row in results["table"]}
    assert [row["search"] for row in results["table"]] == ["dense", "sparse", "hybrid", "hybrid+rerank"]
    rerank = rows["hybrid+rerank"]
    assert rerank["measured"] is False and rerank["not_measured_reason"] == "no cross-encoder here"
    assert all(rerank[key] is None for key in ("recall@5", "recall@50", "nDCG@5", "delta_nDCG@5_vs_dense"))
    assert results["p95_rerank_milliseconds"] is None and results["same_50_rows_after_rerank"] is None
    assert results["reranked_top_5"] == {}
    assert not (options.runs_dir / "hybrid-rerank.trec").exists()
    assert rows["dense"]["delta_nDCG@5_vs_dense"] == 0.0
    assert rows["hybrid"]["delta_nDCG@5_vs_dense"] == pytest.approx(rows["hybrid"]["nDCG@5"] - rows["dense"]["nDCG@5"])
    for row in ("dense", "sparse", "hybrid"):
        assert set(results["per_query"][row]) == set(results["manifest"]["query_ids"])


def test_rerank_with_a_tiny_random_cross_encoder(small_dataset, tmp_path, tiny_cross_encoder):
    options = _options(small_dataset, tmp_path, rerank_model=str(tiny_cross_encoder))
    path = write_outputs(evaluate(options, log=lambda _: None), options, log=lambda _: None)
    text = path.read_text()
    results = json.loads(text)
    assert results["same_50_rows_after_rerank"] is True
    assert isinstance(results["p95_rerank_milliseconds"], float) and results["p95_rerank_milliseconds"] > 0
    assert len(results["rerank_milliseconds"]) == 6
    for entries in results["reranked_top_5"].values():
        assert len(entries) == 5
        assert all(isinstance(entry["score"], float) for entry in entries)
    rerank = results["table"][3]
    assert rerank["measured"] is True
    # Labelled as what it is: the tiny random model's own path, not a real reranker's name.
    assert rerank["model"] == str(tiny_cross_encoder) and "tiny-random" in rerank["model"]
    assert results["manifest"]["models"]["rerank"]["source"] == "local path"
    assert len(results["manifest"]["models"]["rerank"]["weights_sha256"]) == 64
    # The rerank run holds exactly the hybrid candidates: same line count, same (query, document) pairs.
    def pairs(name):
        lines = (options.runs_dir / name).read_text().splitlines()
        return sorted((line.split()[0], line.split()[2]) for line in lines)
    assert pairs("hybrid-rerank.trec") == pairs("hybrid.trec") != []


def _counting_loader(calls, fail_after=None):
    def load(identity, max_length, device="cpu"):
        model = load_cross_encoder(identity, max_length, device)
        original = model.predict

        def predict(pairs, **kwargs):
            calls.append(pairs[0][0])
            if fail_after is not None and len(calls) > fail_after:
                raise KeyboardInterrupt
            return original(pairs, **kwargs)

        model.predict = predict
        return model
    return load


def _without_timings(results):
    stripped = json.loads(json.dumps(results))
    for key in ("rerank_milliseconds", "p95_rerank_milliseconds"):
        stripped.pop(key)
    for key in ("per_query_milliseconds", "p50_milliseconds", "p95_milliseconds", "pairs_per_second"):
        stripped["rerank_cost"].pop(key)
    stripped.pop("manifest")
    return stripped


def test_interrupted_rerank_resumes_without_recomputing_finished_queries(small_dataset, tmp_path, tiny_cross_encoder):
    options = _options(small_dataset, tmp_path, rerank_model=str(tiny_cross_encoder))
    calls: list[str] = []
    # One warm-up call, then three queries finish; the fifth call is interrupted.
    with pytest.raises(KeyboardInterrupt):
        evaluate(options, log=lambda _: None, load_cross_encoder=_counting_loader(calls, fail_after=4))
    finished = ["q0", "q1", "q2"]
    calls.clear()
    resumed = evaluate(options, log=lambda _: None, load_cross_encoder=_counting_loader(calls)).results
    assert resumed["manifest"]["caches"]["rerank_resumed_queries"] == finished
    assert resumed["manifest"]["caches"]["rerank_computed_queries"] == ["q3", "q4", "q5"]
    # Warm-up on q3, then q3, q4, q5: finished queries never reach the model again.
    assert len(calls) == 4

    fresh_options = _options(small_dataset, tmp_path, rerank_model=str(tiny_cross_encoder),
                             cache_dir=tmp_path / "fresh-cache")
    uninterrupted = evaluate(fresh_options, log=lambda _: None).results
    assert _without_timings(resumed) == _without_timings(uninterrupted)
    assert set(resumed["rerank_milliseconds"]) == set(uninterrupted["rerank_milliseconds"])
    assert all(value > 0 for value in resumed["rerank_milliseconds"].values())


def test_evaluate_command_writes_sample_then_300_style_results_with_comparison(small_dataset, tmp_path,
                                                                                tiny_cross_encoder, capsys):
    from generator.cli import main

    project = tmp_path / "project"
    project.mkdir()
    (project / "readout.yaml").write_text(
        f"title: t\nkind: beir\ndata: {small_dataset}\nevaluate:\n  dense_model: minilm-offline\n"
        "  bootstrap_resamples: 200\n  progress: false\n")
    common = ["evaluate", str(project), "--rerank-model", str(tiny_cross_encoder), "--cache-dir", str(tmp_path / "c")]
    assert main(common) == 0
    assert main(common + ["--queries", "all"]) == 0
    err = capsys.readouterr().err
    assert "wrote " in err and "results-300.json" in err
    outputs = project / "outputs"
    assert sorted(p.name for p in (outputs / "runs-300").iterdir()) == [
        "dense.trec", "hybrid-rerank.trec", "hybrid.trec", "qrels.tsv", "sparse.trec"]
    full = json.loads((outputs / "results-300.json").read_text())
    assert full["query_set"] == "all" and full["table"][3]["measured"] is True
    assert full["comparison_300"]["row"] == "hybrid+rerank"
    assert full["comparison_300"]["verdict"] in ("stays-positive", "does-not-stay-positive")
    assert set(full["comparison_300_by_row"]) == {"sparse", "hybrid", "hybrid+rerank"}
    # The second run re-used the first run's rerank scores for the same queries and candidates.
    assert full["manifest"]["caches"]["rerank_computed_queries"] == []


# --- the reranker's cost: its own times, by shape, or not measured -----------------------------


def _tiny_shape(tmp_path):
    from tests.evaluate.test_cost import TINY, _write_config

    return _write_config(tmp_path / "tiny-shape", model_type="bert", max_position_embeddings=512, **TINY)


def _verified(options, evaluation):
    from generator.claims.measured import ResultsFiles

    path = write_outputs(evaluation, options, log=lambda _: None)
    files = ResultsFiles(path.parent)
    return json.loads(path.read_text()), files._problem(files._other(path.name))


def test_a_skipped_rerank_row_gets_its_cost_measured_by_shape_and_no_quality(small_dataset, tmp_path):
    shape = _tiny_shape(tmp_path)
    options = _options(small_dataset, tmp_path, skip_rerank=True, rerank_model=str(shape), rerank_cost="shape",
                       rerank_max_length=64, rerank_batch_size=4, device="cpu")
    results, problem = _verified(options, evaluate(options, log=lambda _: None))
    assert problem is None, problem
    cost = results["rerank_cost"]
    assert (cost["measured"], cost["cost"], cost["quality"]) == (True, "measured by shape", "not measured")
    query_ids = results["manifest"]["query_ids"]
    run = (options.runs_dir / "hybrid.trec").read_text().splitlines()
    # Exactly the hybrid candidates of every query, in query order.
    assert list(cost["per_query_pairs"].items()) == [(q, sum(line.split()[0] == q for line in run)) for q in query_ids]
    assert sum(cost["per_query_pairs"].values()) == cost["pairs"] == len(run)
    assert (cost["batch_size"], cost["max_length"], cost["device"]) == (4, 64, "cpu")
    assert "config_path" not in cost and "path" not in cost["tokenizer"], "no local paths in results"
    # Quality stays not measured everywhere: the row, its comparisons, its rerank time.
    rerank = next(row for row in results["table"] if row["search"] == "hybrid+rerank")
    assert rerank["measured"] is False and results["p95_rerank_milliseconds"] is None
    assert results["comparisons"]["hybrid+rerank_vs_hybrid"]["measured"] is False
    assert results["manifest"]["runtime"] == {"device_requested": "cpu", "device": "cpu", "encode_batch_size": 32,
                                              "rerank_batch_size": 4}


@pytest.mark.parametrize("overrides, reason", [
    ({"rerank_cost": "none"}, "rerank_cost: none"),
    ({"rerank_cost": "shape", "query_set": "all"}, "release sample only"),
    ({"rerank_cost": "shape", "rerank_model": "no-such-org/no-such-reranker"}, "could not be built"),
])
def test_a_cost_that_was_not_measured_says_why(small_dataset, tmp_path, monkeypatch, overrides, reason):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    options = _options(small_dataset, tmp_path, skip_rerank=True, **overrides)
    cost = evaluate(options, log=lambda _: None).results["rerank_cost"]
    assert (cost["measured"], cost["cost"], cost["quality"]) == (False, "not measured", "not measured")
    assert reason in cost["not_measured_reason"]
    assert "p95_milliseconds" not in cost


def test_a_measured_rerank_row_records_its_own_times_as_its_cost(small_dataset, tmp_path, tiny_cross_encoder):
    options = _options(small_dataset, tmp_path, rerank_model=str(tiny_cross_encoder), rerank_batch_size=8)
    results, problem = _verified(options, evaluate(options, log=lambda _: None))
    assert problem is None, problem
    cost = results["rerank_cost"]
    assert (cost["cost"], cost["quality"], cost["batch_size"]) == ("measured", "measured", 8)
    assert cost["per_query_milliseconds"] == results["rerank_milliseconds"]
    assert cost["p95_milliseconds"] == results["p95_rerank_milliseconds"]


@pytest.mark.parametrize("argv, field", [
    (["--batch-size", "0"], "--batch-size"),
    (["--encode-batch-size", "-3"], "--encode-batch-size"),
])
def test_evaluate_refuses_a_batch_size_below_one(tmp_path, small_dataset, capsys, argv, field):
    from generator.cli import main

    project = tmp_path / "project"
    project.mkdir()
    (project / "readout.yaml").write_text(f"title: t\nkind: beir\ndata: {small_dataset}\n", encoding="utf-8")
    assert main(["evaluate", str(project), *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{field}: expected a positive integer up to 65,536" in err
