"""A dataset whose query ids do not sort the way its qrels list them: results.json is written with
sorted keys, the manifest keeps the qrels order, and every per-query block (the by-shape cost,
the frontier) must still re-derive. SciFact's ids happen to be listed sorted, which hid this."""

import json
import shutil

import pytest

from generator.claims.tracing.rederive import verify_results
from generator.core.frontier import FrontierSpec
from generator.core.options import EvaluationOptions
from generator.core.rows import RowSpec
from generator.evaluate.pipeline import evaluate, write_outputs
from generator.core.results import read_results, seal
from tests.conftest import make_small_dataset

pytestmark = [pytest.mark.model, pytest.mark.usefixtures("one_torch_thread")]

# qrels order q0..q5 becomes this order, which no sort reproduces.
RENAMED = {"q0": "PLAIN-12", "q1": "PLAIN-102", "q2": "PLAIN-112", "q3": "PLAIN-2", "q4": "b", "q5": "A"}


def _unsorted_dataset(root):
    data = make_small_dataset(root)
    queries = [json.loads(line) for line in (data / "queries.jsonl").read_text().splitlines()]
    (data / "queries.jsonl").write_text("".join(json.dumps({**q, "_id": RENAMED[q["_id"]]}) + "\n" for q in queries))
    qrels = (data / "qrels" / "test.tsv").read_text().splitlines()
    renamed = [qrels[0]] + ["\t".join([RENAMED[line.split("\t")[0]], *line.split("\t")[1:]]) for line in qrels[1:]]
    (data / "qrels" / "test.tsv").write_text("\n".join(renamed) + "\n")
    return data


@pytest.fixture(scope="module")
def written(tmp_path_factory, tiny_cross_encoder):
    root = tmp_path_factory.mktemp("order")
    model = str(tiny_cross_encoder)
    rows = (RowSpec("dense", "dense"), RowSpec("sparse", "sparse"),
            RowSpec("hybrid", "fusion", of=("dense", "sparse"), method="rrf"),
            RowSpec("hybrid+rerank", "rerank", over="hybrid", model=model, max_length=32, skip="priced by shape"))
    options = EvaluationOptions(data=_unsorted_dataset(root / "data"), outputs_dir=root / "outputs",
                                dense_model="minilm-offline", cache_dir=root / "cache", progress=False,
                                bootstrap_resamples=200, rows=rows, rerank_cost="shape",
                                frontier=FrontierSpec(models=(model,), depths=(2,), max_lengths=(32,),
                                                      precisions=("fp32",), repeats=1))
    evaluation = evaluate(options, log=lambda _: None)
    return write_outputs(evaluation, options, log=lambda _: None)


def test_the_manifest_keeps_an_order_that_sorting_does_not(written):
    results = json.loads(written.read_text())
    order = results["manifest"]["query_ids"]
    assert order == list(RENAMED.values()) and order != sorted(order)
    assert list(results["rerank_costs"]["hybrid+rerank"]["per_query_milliseconds"]) == sorted(order)


def test_a_by_shape_cost_and_the_frontier_re_derive_whatever_the_id_order(written):
    assert verify_results(read_results(written), written.parent) is None


def test_a_cost_missing_a_query_is_named_with_the_fix(written, tmp_path):
    data = json.loads(written.read_text())
    del data["rerank_costs"]["hybrid+rerank"]["per_query_milliseconds"]["PLAIN-102"]
    data.pop("seal", None)
    target = tmp_path / "outputs"
    shutil.copytree(written.parent, target)
    (target / written.name).write_text(json.dumps(seal(data, writer="readout evaluate 0.1.0")))
    problem = verify_results(read_results(target / written.name), target)
    assert problem is not None
    assert "rerank_costs.hybrid+rerank.per_query_milliseconds" in problem and "'PLAIN-102'" in problem
    assert "re-run readout evaluate" in problem


def test_the_scaffold_decision_reads_the_p95_a_by_shape_cost_fills(written, tmp_path):
    from generator.claims.record.design_rules import read_design_rules
    from generator.claims.record.triggers import evaluate_trigger
    from generator.commands.scaffold import init_project

    init_project(tmp_path / "review")
    rules = read_design_rules(tmp_path / "review" / "design")
    results = read_results(written)
    for trigger in rules.triggers:
        row = evaluate_trigger(trigger, rules.budgets, results, None, "design/decisions.md")
        if "p95" in row.read:
            assert row.read["p95"]["measured"] is True, row.read["p95"]
            assert row.read["p95"]["value"] == results.data["rerank_costs"]["hybrid+rerank"]["p95_milliseconds"]
            break
    else:
        raise AssertionError("the scaffold has no decision reading a p95")
