"""Several rerank rows in one evaluation: each over its own row, at its own depth and precision,
compared with its over row and priced on its own; `check` holds each to its depth. The tiny
random cross-encoder's scores mean nothing: these tests are about the mechanics."""

import json
import shutil
from pathlib import Path

import pytest

from generator.claims.tracing.rederive import verify_results
from generator.core.frontier import FrontierSpec
from generator.core.options import EvaluationOptions
from generator.core.rows import RowSpec
from generator.evaluate.pipeline import evaluate, write_outputs
from generator.core.results import read_results, seal

pytestmark = [pytest.mark.model, pytest.mark.usefixtures("one_torch_thread")]


def _rows(model):
    return (RowSpec("dense", "dense"), RowSpec("sparse", "sparse"),
            RowSpec("hybrid", "fusion", of=("dense", "sparse"), method="rrf"),
            RowSpec("hybrid+rerank", "rerank", over="hybrid", model=model, max_length=64),
            RowSpec("top3-int8", "rerank", over="dense", model=model, max_length=64, depth=3, precision="int8"),
            RowSpec("top3-fp32", "rerank", over="dense", model=model, max_length=64, depth=3),
            RowSpec("skipped", "rerank", over="sparse", model=model, max_length=32, skip="not run here"))


@pytest.fixture(scope="module")
def written(tmp_path_factory, make_small_dataset_module, tiny_cross_encoder):
    root = tmp_path_factory.mktemp("several")
    options = EvaluationOptions(data=make_small_dataset_module(root / "data"), outputs_dir=root / "outputs",
                                dense_model="minilm-offline", cache_dir=root / "cache", progress=False,
                                bootstrap_resamples=200, rows=_rows(str(tiny_cross_encoder)), rerank_cost="shape",
                                frontier=FrontierSpec(models=(str(tiny_cross_encoder),), depths=(2, 5),
                                                      max_lengths=(32,), precisions=("fp32", "int8"), repeats=1))
    evaluation = evaluate(options, log=lambda _: None)
    path = write_outputs(evaluation, options, log=lambda _: None)
    return path, evaluation


@pytest.fixture(scope="module")
def make_small_dataset_module():
    from tests.conftest import make_small_dataset

    return make_small_dataset


def test_each_rerank_row_is_compared_with_its_own_over_row(written):
    path, _ = written
    results = json.loads(path.read_text())
    for pair in ("hybrid+rerank_vs_hybrid", "top3-int8_vs_dense", "top3-fp32_vs_dense"):
        assert results["comparisons"][pair]["measured"] is True, pair
    assert results["comparisons"]["skipped_vs_sparse"]["measured"] is False
    assert sorted(results["rerank_costs"]) == ["hybrid+rerank", "skipped", "top3-fp32", "top3-int8"]
    assert results["rerank_costs"]["hybrid+rerank"]["cost"] == "measured"
    assert results["rerank_costs"]["top3-int8"]["per_query_pairs"] == {q: 3 for q in results["manifest"]["query_ids"]}
    skipped = results["rerank_costs"]["skipped"]
    assert skipped["cost"].startswith("measured by shape") and skipped["quality"] == "not measured"
    rows = {row["search"]: row for row in results["table"]}
    assert rows["top3-int8"]["model"].endswith("(top 3, int8)") and rows["skipped"]["measured"] is False
    assert set(results["manifest"]["models"]) >= {"rerank", "rerank:top3-int8", "rerank:top3-fp32", "rerank:skipped"}


def test_a_depth_reorders_only_the_top_and_leaves_the_tail_in_order(written):
    _, evaluation = written
    dense, cut = evaluation.rankings["dense"], evaluation.rankings["top3-fp32"]
    for query, ranking in dense.items():
        head, tail = [d for d, _ in ranking[:3]], [d for d, _ in ranking[3:]]
        assert sorted(d for d, _ in cut[query][:3]) == sorted(head)
        assert [d for d, _ in cut[query][3:]] == tail
        scores = [score for _, score in cut[query]]
        assert scores == sorted(scores, reverse=True)


def test_int8_changes_the_scores_and_nothing_else(written):
    _, evaluation = written
    fp32, int8 = evaluation.rankings["top3-fp32"], evaluation.rankings["top3-int8"]
    assert {q: sorted(d for d, _ in r) for q, r in fp32.items()} == {q: sorted(d for d, _ in r) for q, r in int8.items()}
    assert any([s for _, s in fp32[q][:3]] != [s for _, s in int8[q][:3]] for q in fp32)


def test_the_written_results_re_derive_and_a_moved_tail_does_not(written, tmp_path):
    path, _ = written
    assert verify_results(read_results(path), path.parent) is None
    # Tamper with a copy: the module's other tests read the originals.
    path = Path(shutil.copytree(path.parent, tmp_path / "outputs")) / path.name
    data = json.loads(path.read_text())
    run = path.parent / data["manifest"]["run_files"]["top3-fp32"]["path"]
    lines = run.read_text().splitlines()
    query = lines[0].split()[0]
    own = [line for line in lines if line.split()[0] == query]
    # Swap the documents at ranks 4 and 5 (below the depth), keeping every score and rank column.
    four, five = own[3].split(), own[4].split()
    four[2], five[2] = five[2], four[2]
    moved = {own[3]: " ".join(four), own[4]: " ".join(five)}
    run.write_text("\n".join(moved.get(line, line) for line in lines) + "\n")
    data["manifest"]["run_files"]["top3-fp32"]["sha256"] = __import__("hashlib").sha256(run.read_bytes()).hexdigest()
    data.pop("seal", None)
    path.write_text(json.dumps(seal(data, writer="readout evaluate 0.1.0")))
    problem = verify_results(read_results(path), path.parent)
    assert problem is not None and "top3-fp32" in problem


def test_the_frontier_prices_every_configuration_and_re_derives(written):
    path, _ = written
    frontier = json.loads(path.read_text())["frontier"]
    assert frontier["over"] == "hybrid" and frontier["metric"] == "nDCG@5"
    assert sorted((c["depth"], c["precision"]) for c in frontier["configurations"]) == [
        (2, "fp32"), (2, "int8"), (5, "fp32"), (5, "int8")]
    p95s = [c["p95_milliseconds"] for c in frontier["configurations"]]
    assert p95s == sorted(p95s)
    by_depth = {c["depth"]: c["ceiling"] for c in frontier["configurations"]}
    assert by_depth[2] <= by_depth[5] and min(by_depth.values()) >= frontier["over_mean"] - 1e-12
    for entry in frontier["configurations"]:
        assert entry["cost"].startswith("measured by shape, extrapolated from 2 of 2 layers")
        assert entry["quality"] == "not measured"
    assert verify_results(read_results(path), path.parent) is None
