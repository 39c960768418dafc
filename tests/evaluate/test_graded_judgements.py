"""Graded judgements end to end: bare nDCG@5 is trec_eval's ndcg_cut_5 (gain = grade, as ranx and
ir_measures), the binary gain stays an explicit variant, and every table header of an nDCG
column says which gain it shows when the judgements hold more than one positive grade."""

import json
import random
import shutil

import pytest
import pytrec_eval

from generator.claims.tracing.rederive import verify_results
from generator.core.options import EvaluationOptions
from generator.core.runfiles import read_qrels, read_run
from generator.evaluate.pipeline import evaluate, write_outputs
from generator.render.export import CsvDoor
from generator.render.labels import Labels, load_labels
from generator.render.tables import _column_label, _graded_gains
from generator.core.results import ResultsModel, read_results, seal
from tests.conftest import REPOSITORY_ROOT, make_small_dataset

pytestmark = pytest.mark.model


def _graded(root):
    data = make_small_dataset(root, queries=8, seed=11)
    rng = random.Random(3)
    lines = (data / "qrels" / "test.tsv").read_text().splitlines()
    graded = [lines[0]] + [f"{q}\t{d}\t{rng.choice([1, 2, 3])}" for q, d, _ in (line.split("\t") for line in lines[1:])]
    (data / "qrels" / "test.tsv").write_text("\n".join(graded) + "\n")
    return data


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    root = tmp_path_factory.mktemp("graded")
    options = EvaluationOptions(data=_graded(root / "data"), outputs_dir=root / "outputs",
                                dense_model="minilm-offline", cache_dir=root / "cache", progress=False,
                                bootstrap_resamples=200, skip_rerank=True,
                                metrics=("nDCG@5", "nDCG@5:binary", "recall@5"))
    return write_outputs(evaluate(options, log=lambda _: None), options, log=lambda _: None)


def test_bare_ndcg_is_trec_eval_ndcg_cut_on_graded_judgements(written):
    results = json.loads(written.read_text())
    judgements = read_qrels(written.parent / results["manifest"]["qrels_copy"]["path"])
    assert len({g for grades in judgements.values() for g in grades.values()}) > 1
    evaluator = pytrec_eval.RelevanceEvaluator(judgements, {"ndcg_cut_5"})
    differs = False
    for row in [row for row in results["table"] if row.get("measured") is not False]:
        run = read_run(written.parent / results["manifest"]["run_files"][row["search"]]["path"])
        trec = evaluator.evaluate(run)   # a written run's scores are distinct and in rank order
        for query, value in trec.items():
            assert results["per_query"][row["search"]][query]["nDCG@5"] == pytest.approx(value["ndcg_cut_5"], abs=1e-9)
        expected = sum(trec[q]["ndcg_cut_5"] for q in results["manifest"]["query_ids"]) / results["queries"]
        assert row["nDCG@5"] == pytest.approx(expected, abs=1e-9)
        differs |= abs(row["nDCG@5"] - row["nDCG@5:binary"]) > 1e-6
    assert differs, "the fixture's grades should make the binary gain differ somewhere"
    assert results["manifest"]["metrics"]["nDCG@5"]["gain"] == "linear"
    assert results["manifest"]["metrics"]["nDCG@5:binary"]["gain"] == "binary"


def test_every_ndcg_header_says_its_gain_where_grades_exist(written):
    results = ResultsModel(json.loads(written.read_text()))
    assert results.positive_grades == [1, 2, 3]
    texts = load_labels(REPOSITORY_ROOT / "templates" / "labels.yaml")
    labels = Labels(texts, CsvDoor(), "labels.yaml")

    class Column:
        def __init__(self, key=None, path=None, label="x"):
            self.key, self.path, self.label = key, path, label

    assert _column_label(Column("nDCG@5", label="nDCG@5"), _graded_gains(results), labels) == "nDCG@5 (linear in grade)"
    assert _column_label(Column("nDCG@5:binary", label="b"), _graded_gains(results), labels) == "b (binary relevance)"
    assert _column_label(Column("delta_nDCG@5_vs_dense", label="change"), _graded_gains(results), labels) == "change (linear in grade)"
    assert _column_label(Column("recall@5", label="Recall@5"), _graded_gains(results), labels) == "Recall@5"
    # Binary judgements (SciFact: every grade 1): the gains agree, the header stays as written.
    data = results.data
    binary = ResultsModel({**data, "manifest": {**data["manifest"],
                                                "qrels_copy": {**data["manifest"]["qrels_copy"], "positive_grades": [1]}}})
    assert _column_label(Column("nDCG@5", label="nDCG@5"), _graded_gains(binary), labels) == "nDCG@5"


def test_the_recorded_grades_re_derive_and_a_hidden_grade_scale_does_not(written, tmp_path):
    assert verify_results(read_results(written), written.parent) is None
    target = tmp_path / "outputs"
    shutil.copytree(written.parent, target)
    data = json.loads(written.read_text())
    data["manifest"]["qrels_copy"]["positive_grades"] = [1]     # says binary, so no header says its gain
    data.pop("seal", None)
    (target / written.name).write_text(json.dumps(seal(data, writer="readout evaluate 0.1.0")))
    problem = verify_results(read_results(target / written.name), target)
    assert problem is not None and "positive_grades" in problem
    del data["manifest"]["qrels_copy"]["positive_grades"]     # no list, so no header says its gain
    (target / written.name).write_text(json.dumps(seal(data, writer="readout evaluate 0.1.0")))
    problem = verify_results(read_results(target / written.name), target)
    assert problem is not None and "positive_grades" in problem


def test_scifact_judgements_are_binary_so_its_published_ndcg_is_unchanged():
    results = json.loads((REPOSITORY_ROOT / "outputs" / "results.json").read_text())
    judgements = read_qrels(REPOSITORY_ROOT / "outputs" / results["manifest"]["qrels_copy"]["path"])
    assert {g for grades in judgements.values() for g in grades.values()} == {1}
    from generator.core.metrics import metric_from_name

    binary, linear = metric_from_name("nDCG@5:binary"), metric_from_name("nDCG@5")
    for row in results["table"]:
        if row.get("measured") is False:
            continue
        run = read_run(REPOSITORY_ROOT / "outputs" / results["manifest"]["run_files"][row["search"]]["path"])
        for query in results["manifest"]["query_ids"]:
            ranked = sorted(run.get(query, {}), key=lambda doc: -run[query][doc])
            assert linear.per_query(ranked, judgements.get(query, {})) == binary.per_query(ranked, judgements.get(query, {}))
            assert results["per_query"][row["search"]][query]["nDCG@5"] == pytest.approx(
                linear.per_query(ranked, judgements.get(query, {})), abs=1e-12)
