"""The evaluation stage on a small fixture corpus: caching, the rerank mechanics with a tiny random
cross-encoder (its scores mean nothing), and resuming an interrupted rerank run."""

import json
import shutil

import pytest

from generator.storage.errors import InputError
from generator.core.options import EvaluationOptions
from generator.core.rows import RowSpec, default_rows
from generator.evaluate.pipeline import evaluate, write_outputs
from generator.evaluate.models import load_cross_encoder
from tests.conftest import make_small_dataset as write_small_dataset

pytestmark = [pytest.mark.model, pytest.mark.usefixtures("one_torch_thread")]


def _options(data, tmp_path, **overrides):
    base = dict(data=data, outputs_dir=tmp_path / "outputs", dense_model="minilm-offline",
                cache_dir=tmp_path / "cache", progress=False, bootstrap_resamples=500)
    base.update(overrides)
    return EvaluationOptions(**base)


@pytest.fixture(scope="module")
def _small_corpus_embeddings(tmp_path_factory):
    """The dense cache entry of the small dataset's corpus (conftest's make_small_dataset with its
    defaults), encoded once for the module by an evaluation of its own."""
    root = tmp_path_factory.mktemp("small-corpus-embeddings")
    options = _options(write_small_dataset(root / "data"), root, skip_rerank=True)
    evaluate(options, log=lambda _: None)
    return options.cache_dir / "embeddings"


@pytest.fixture
def encoded(_small_corpus_embeddings):
    """`encoded(cache_dir)`: put a copy of the small corpus's verified embeddings entry into a
    cache directory, as an earlier evaluation of the same corpus and model leaves it, for the tests
    that are about what comes after the encoding (it is looked up by the corpus's content and the
    model, never by a path). Encoding itself, and re-using what it cached, is
    test_second_evaluate_reuses_cached_embeddings_and_says_so's subject; it starts empty."""
    def seed(cache_dir):
        shutil.copytree(_small_corpus_embeddings, cache_dir / "embeddings")
        return cache_dir
    return seed


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


def test_skipped_rerank_row_is_not_measured_and_has_no_numbers(small_dataset, tmp_path, encoded):
    options = _options(small_dataset, tmp_path, skip_rerank=True, skip_rerank_reason="no cross-encoder here")
    encoded(options.cache_dir)
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


def test_rerank_with_a_tiny_random_cross_encoder(small_dataset, tmp_path, tiny_cross_encoder, encoded):
    options = _options(small_dataset, tmp_path, rerank_model=str(tiny_cross_encoder))
    encoded(options.cache_dir)
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
        stripped["rerank_costs"]["hybrid+rerank"].pop(key)
    stripped.pop("manifest")
    return stripped


def test_interrupted_rerank_resumes_without_recomputing_finished_queries(small_dataset, tmp_path, tiny_cross_encoder,
                                                                        encoded):
    options = _options(small_dataset, tmp_path, rerank_model=str(tiny_cross_encoder))
    encoded(options.cache_dir)
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
    encoded(fresh_options.cache_dir)   # no rerank entry: every query is scored
    uninterrupted = evaluate(fresh_options, log=lambda _: None).results
    assert _without_timings(resumed) == _without_timings(uninterrupted)
    assert set(resumed["rerank_milliseconds"]) == set(uninterrupted["rerank_milliseconds"])
    assert all(value > 0 for value in resumed["rerank_milliseconds"].values())


def test_evaluate_command_writes_sample_then_all_queries_with_comparison(small_dataset, tmp_path,
                                                                          tiny_cross_encoder, capsys, encoded):
    from generator.commands.cli import main

    project = tmp_path / "project"
    project.mkdir()
    (project / "readout.yaml").write_text(
        f"title: t\nkind: beir\ndata: {small_dataset}\nevaluate:\n  dense_model: minilm-offline\n"
        "  bootstrap_resamples: 200\n  progress: false\n")
    common = ["evaluate", str(project), "--rerank-model", str(tiny_cross_encoder), "--cache-dir",
              str(encoded(tmp_path / "c"))]
    assert main(common) == 0
    assert main(common + ["--queries", "all"]) == 0
    err = capsys.readouterr().err
    # Named after the query set, never after SciFact's 300 queries.
    assert "results-all.json" in err
    outputs = project / "outputs"
    assert not (outputs / "results-300.json").exists()
    assert sorted(p.name for p in (outputs / "runs-all").iterdir()) == [
        "dense.trec", "hybrid-rerank.trec", "hybrid.trec", "qrels.tsv", "sparse.trec"]
    full = json.loads((outputs / "results-all.json").read_text())
    # A dataset of one's own is a custom dataset, not "not a reproduction" of SciFact.
    assert full["manifest"]["reproduction"] == {"of": "custom dataset", "is_reproduction": False,
                                                "differing_inputs": []}
    assert full["query_set"] == "all" and full["table"][3]["measured"] is True
    assert full["comparison_with_sample"]["row"] == "hybrid+rerank"
    assert full["comparison_with_sample"]["verdict"] in ("stays-positive", "does-not-stay-positive")
    assert set(full["comparison_with_sample_by_row"]) == {"sparse", "hybrid", "hybrid+rerank"}
    # The second run re-used the first run's rerank scores for the same queries and candidates.
    assert full["manifest"]["caches"]["rerank_computed_queries"] == []


# --- the reranker's cost: its own times, by shape, or not measured -----------------------------


def _tiny_shape(tmp_path):
    from tests.evaluate.test_cost import TINY, _write_config

    return _write_config(tmp_path / "tiny-shape", model_type="bert", max_position_embeddings=512, **TINY)


def _verified(options, evaluation):
    from generator.claims.tracing.measured import ResultsFiles

    path = write_outputs(evaluation, options, log=lambda _: None)
    files = ResultsFiles(path.parent)
    return json.loads(path.read_text()), files._problem(files._other(path.name))


@pytest.mark.parametrize("how, label", [("shape", "measured by shape, extrapolated from 2 of 2 layers"),
                                        ("shape-full", "measured by shape")])
def test_a_skipped_rerank_row_gets_its_cost_measured_by_shape_and_no_quality(small_dataset, tmp_path, how, label,
                                                                           encoded):
    shape = _tiny_shape(tmp_path)
    options = _options(small_dataset, tmp_path, skip_rerank=True, rerank_model=str(shape), rerank_cost=how,
                       rerank_max_length=64, rerank_batch_size=4, device="cpu")
    encoded(options.cache_dir)
    results, problem = _verified(options, evaluate(options, log=lambda _: None))
    assert problem is None, problem
    cost = results["rerank_costs"]["hybrid+rerank"]
    assert (cost["measured"], cost["cost"], cost["quality"]) == (True, label, "not measured")
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
def test_a_cost_that_was_not_measured_says_why(small_dataset, tmp_path, monkeypatch, overrides, reason, encoded):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    options = _options(small_dataset, tmp_path, skip_rerank=True, **overrides)
    encoded(options.cache_dir)
    cost = evaluate(options, log=lambda _: None).results["rerank_costs"]["hybrid+rerank"]
    assert (cost["measured"], cost["cost"], cost["quality"]) == (False, "not measured", "not measured")
    assert reason in cost["not_measured_reason"]
    assert "p95_milliseconds" not in cost


def test_a_measured_rerank_row_records_its_own_times_as_its_cost(small_dataset, tmp_path, tiny_cross_encoder,
                                                                  encoded):
    options = _options(small_dataset, tmp_path, rerank_model=str(tiny_cross_encoder), rerank_batch_size=8)
    encoded(options.cache_dir)
    results, problem = _verified(options, evaluate(options, log=lambda _: None))
    assert problem is None, problem
    cost = results["rerank_costs"]["hybrid+rerank"]
    assert (cost["cost"], cost["quality"], cost["batch_size"]) == ("measured", "measured", 8)
    assert cost["per_query_milliseconds"] == results["rerank_milliseconds"]
    assert cost["p95_milliseconds"] == results["p95_rerank_milliseconds"]


@pytest.mark.parametrize("argv, field", [
    (["--batch-size", "0"], "--batch-size"),
    (["--encode-batch-size", "-3"], "--encode-batch-size"),
])
def test_evaluate_refuses_a_batch_size_below_one(tmp_path, small_dataset, capsys, argv, field):
    from generator.commands.cli import main

    project = tmp_path / "project"
    project.mkdir()
    (project / "readout.yaml").write_text(f"title: t\nkind: beir\ndata: {small_dataset}\n", encoding="utf-8")
    assert main(["evaluate", str(project), *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{field}: expected a positive integer up to 65,536" in err


def test_metrics_chosen_by_name_are_computed_compared_and_re_derived(small_dataset, tmp_path, encoded):
    options = _options(small_dataset, tmp_path, skip_rerank=True, metrics=("P@5", "MRR@10", "nDCG@10:binary"))
    encoded(options.cache_dir)
    results, problem = _verified(options, evaluate(options, log=lambda _: None))
    assert problem is None, problem
    hybrid = next(row for row in results["table"] if row["search"] == "hybrid")
    assert {"P@5", "MRR@10", "nDCG@10:binary", "delta_MRR@10_vs_dense"} <= set(hybrid)
    assert "recall@5" not in hybrid
    assert set(results["comparisons"]["hybrid_vs_dense"]["metrics"]) == {"P@5", "MRR@10", "nDCG@10:binary"}
    assert results["manifest"]["metrics"]["nDCG@10:binary"] == {"measure": "ndcg", "cutoff": 10, "gain": "binary"}
    assert results["manifest"]["parameters"]["metrics"] == ["P@5", "MRR@10", "nDCG@10:binary"]


def test_an_unknown_metric_name_in_readout_yaml_is_one_line(tmp_path, small_dataset, capsys):
    from generator.commands.cli import main

    project = tmp_path / "project"
    project.mkdir()
    (project / "readout.yaml").write_text(f"title: t\nkind: beir\ndata: {small_dataset}\nevaluate:\n"
                                          "  metrics: [recall@5, nDCG@5:graded]\n", encoding="utf-8")
    assert main(["evaluate", str(project)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "readout.yaml:5: evaluate.metrics:" in err and "nDCG@5:graded" in err


def test_identical_embeddings_get_identical_scores_and_keep_corpus_order():
    import numpy as np

    from generator.evaluate.retrieval import equalise_duplicate_scores, top_k

    corpus = np.array([[0.6, 0.8], [1.0, 0.0], [0.6, 0.8], [0.0, 1.0], [0.6, 0.8]], dtype=np.float32)
    scores = np.array([[0.9, 0.1, 0.9 + 1e-7, 0.2, 0.9 - 1e-7]], dtype=np.float32)  # a product's ulp noise
    assert equalise_duplicate_scores(scores, corpus) == 2
    assert scores[0, 0] == scores[0, 2] == scores[0, 4]
    ranked = [doc for doc, _ in top_k(scores[0], ["d0", "d1", "d2", "d3", "d4"], 3)]
    assert ranked == ["d0", "d2", "d4"]
    untouched = np.array([[0.5, 0.25]], dtype=np.float32)
    assert equalise_duplicate_scores(untouched, np.eye(2, dtype=np.float32)) == 0
    assert untouched.tolist() == [[0.5, 0.25]]


def test_duplicated_documents_rank_together_in_corpus_order(tmp_path, make_small_dataset):
    data = make_small_dataset(tmp_path / "data")
    lines = (data / "corpus.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    copies = [json.dumps({**first, "_id": f"copy{n}"}) for n in range(3)]
    (data / "corpus.jsonl").write_text("\n".join(lines + copies) + "\n")
    options = _options(data, tmp_path, skip_rerank=True)
    evaluation = evaluate(options, log=lambda _: None)
    checked = 0
    for ranking in evaluation.rankings["dense"].values():
        ids = [doc for doc, _ in ranking]
        scores = dict(ranking)
        present = [doc for doc in [first["_id"], "copy0", "copy1", "copy2"] if doc in ids]
        if len(present) == 4:
            checked += 1
            assert len({scores[doc] for doc in present}) == 1
            positions = [ids.index(doc) for doc in present]
            assert positions == sorted(positions) and positions[-1] - positions[0] == 3
    assert checked > 0, "the copies reached some query's candidates"


def test_a_query_with_no_sparse_candidate_is_recorded(tmp_path, make_small_dataset, encoded):
    data = make_small_dataset(tmp_path / "data")
    queries = (data / "queries.jsonl").read_text().splitlines()
    target = json.loads(queries[0])
    queries[0] = json.dumps({**target, "text": "zzqxv wvvkrp"})  # no word the corpus uses
    (data / "queries.jsonl").write_text("\n".join(queries) + "\n")
    options = _options(data, tmp_path, skip_rerank=True)
    encoded(options.cache_dir)   # the corpus is the small dataset's own; a query changed
    results = evaluate(options, log=lambda _: None).results
    assert results["queries_without_candidates"]["sparse"] == [target["_id"]]
    assert results["queries_without_candidates"]["dense"] == []
    assert results["per_query"]["sparse"][target["_id"]]["recall@5"] == 0.0


def test_a_seeded_sample_is_drawn_with_its_seed_and_kept_in_qrels_order(small_dataset, tmp_path, encoded):
    from generator.evaluate.data import load_dataset
    from generator.core.options import validate_evaluate_block

    dataset = load_dataset(small_dataset)
    ordered = dataset.test_query_ids()
    first = dataset.select_queries("sample", size=3, order="seeded", seed=1)
    assert len(first) == 3 and first == [q for q in ordered if q in first]
    assert dataset.select_queries("sample", size=3, order="seeded", seed=1) == first
    assert any(dataset.select_queries("sample", size=3, order="seeded", seed=seed) != first for seed in range(2, 12))
    assert dataset.select_queries("sample", size=3) == ordered[:3]
    block = validate_evaluate_block({"sample": {"size": 3, "order": "seeded", "seed": 1}}, "readout.yaml")
    assert block == {"sample_size": 3, "sample_order": "seeded", "sample_seed": 1}
    options = _options(small_dataset, tmp_path, skip_rerank=True, **block)
    encoded(options.cache_dir)
    results = evaluate(options, log=lambda _: None).results
    assert results["manifest"]["query_ids"] == first and results["queries"] == 3
    assert results["manifest"]["parameters"]["sample"] == {"size": 3, "order": "seeded", "seed": 1}
    with pytest.raises(InputError, match="order: seeded"):
        validate_evaluate_block({"sample": {"size": 3, "seed": 4}}, "readout.yaml")


# --- runs a team already has ------------------------------------------------------------------


def test_a_run_file_row_scores_exactly_like_the_row_that_wrote_it(small_dataset, tmp_path, encoded):
    first = _options(small_dataset, tmp_path / "a", skip_rerank=True)
    encoded(first.cache_dir)
    write_outputs(evaluate(first, log=lambda _: None), first, log=lambda _: None)
    team = tmp_path / "team.trec"
    shutil.copy(first.runs_dir / "hybrid.trec", team)
    options = _options(small_dataset, tmp_path / "b", skip_rerank=True, rows=(*default_rows(), RowSpec("team", "run", file=team, outside_project=True)))
    encoded(options.cache_dir)
    results, problem = _verified(options, evaluate(options, log=lambda _: None))
    assert problem is None, problem
    rows = {row["search"]: row for row in results["table"]}
    assert [row["search"] for row in results["table"]][-1] == "team"
    for metric in ("recall@5", "recall@50", "nDCG@5"):
        assert rows["team"][metric] == rows["hybrid"][metric]
    assert results["per_query"]["team"] == results["per_query"]["hybrid"]
    assert results["comparisons"]["team_vs_dense"]["metrics"]["nDCG@5"]["delta"] == \
        results["comparisons"]["hybrid_vs_dense"]["metrics"]["nDCG@5"]["delta"]
    assert results["manifest"]["supplied_runs"]["team"]["sha256"] == sha256_of(team)


def sha256_of(path):
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("line, expected", [
    ("q0 Q0 doc000 1 0.5", "expected six fields"),
    ("q0 Q0 doc000 1 nan run", "is not a finite number"),
    ("nobody Q0 doc000 1 0.5 run", "query 'nobody' is not in the dataset"),
    ("q0 Q0 ghost 1 0.5 run", "document 'ghost' is not in the dataset"),
])
def test_a_bad_run_file_is_refused_with_its_line(small_dataset, tmp_path, line, expected, encoded):
    team = tmp_path / "team.trec"
    team.write_text("q0 Q0 doc001 1 0.9 run\n" + line + "\n")
    options = _options(small_dataset, tmp_path, skip_rerank=True, rows=(*default_rows(), RowSpec("team", "run", file=team, outside_project=True)))
    encoded(options.cache_dir)
    with pytest.raises(InputError, match=expected) as raised:
        evaluate(options, log=lambda _: None)
    assert raised.value.line == 2


def test_ties_in_a_supplied_run_are_broken_as_trec_eval_breaks_them(small_dataset, tmp_path):
    from generator.core.runfiles import read_supplied_run

    run = tmp_path / "tied.trec"
    run.write_text("q0 Q0 doc001 1 0.5 r\nq0 Q0 doc009 2 0.5 r\nq0 Q0 doc004 3 0.7 r\n")
    ranked = read_supplied_run(run, "tied.trec", queries={"q0": "x"}, documents={"doc001", "doc004", "doc009"},
                               depth=50, query_ids=["q0", "q1"])
    assert [doc for doc, _ in ranked["q0"]] == ["doc004", "doc009", "doc001"]   # equal scores: id descending
    assert ranked["q1"] == []
