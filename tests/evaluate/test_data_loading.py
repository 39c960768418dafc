"""Every bad-input case gets one line naming file, line and field, exit code 2, and no output."""

import json


import pytest

from generator.commands.cli import main
from generator.evaluate.data import load_dataset


def _project(tmp_path, data_dir):
    project = tmp_path / "project"
    project.mkdir()
    (project / "readout.yaml").write_text(
        "title: t\nkind: beir\ndata: %s\nevaluate:\n  dense_model: minilm-offline\n  skip_rerank: true\n" % data_dir)
    return project


def _evaluate_error(tmp_path, capsys, data_dir):
    project = _project(tmp_path, data_dir)
    code = main(["evaluate", str(project), "--cache-dir", str(tmp_path / "cache")])
    err = capsys.readouterr().err.strip()
    assert not (project / "outputs").exists() or not any((project / "outputs").rglob("*")), \
        "an output file was left behind"
    return code, err


def _rewrite_line(path, line_number, new_text):
    lines = path.read_text().splitlines()
    lines[line_number - 1] = new_text
    path.write_text("\n".join(lines) + "\n")


def test_small_dataset_loads_and_keeps_qrels_order(tmp_path, make_small_dataset):
    dataset = load_dataset(make_small_dataset(tmp_path / "d"))
    assert len(dataset.documents) == 80
    assert dataset.test_query_ids() == [f"q{j}" for j in range(6)]
    assert set(dataset.input_hashes) == {"corpus.jsonl", "queries.jsonl", "qrels/test.tsv"}


def test_missing_dataset_directory_says_how_to_get_scifact(tmp_path, capsys):
    code, err = _evaluate_error(tmp_path, capsys, tmp_path / "data" / "scifact")
    assert code == 2
    assert "dataset directory not found" in err and "BEIR SciFact" in err and "--data" in err
    assert len(err.splitlines()) == 1


def test_a_missing_dataset_of_another_project_names_its_own_folder_not_scifact(tmp_path, capsys):
    code, err = _evaluate_error(tmp_path, capsys, tmp_path / "data-cranfield")
    assert code == 2
    assert "data-cranfield: dataset directory not found" in err and "SciFact" not in err
    assert "this project's BEIR folder" in err and "readout.yaml" in err and "--data" in err
    assert len(err.splitlines()) == 1


def test_duplicate_document_id_names_file_line_and_field(tmp_path, capsys, make_small_dataset):
    data = make_small_dataset(tmp_path / "d")
    corpus = data / "corpus.jsonl"
    first = json.loads(corpus.read_text().splitlines()[0])
    _rewrite_line(corpus, 5, json.dumps(first))
    code, err = _evaluate_error(tmp_path, capsys, data)
    assert code == 2
    assert err == f"Error: {corpus}:5: _id: duplicate id 'doc000' (first on line 1)"


def test_missing_field_in_queries(tmp_path, capsys, make_small_dataset):
    data = make_small_dataset(tmp_path / "d")
    _rewrite_line(data / "queries.jsonl", 2, json.dumps({"_id": "q1"}))
    code, err = _evaluate_error(tmp_path, capsys, data)
    assert code == 2
    assert err == f"Error: {data / 'queries.jsonl'}:2: text: missing field"


def test_an_id_a_run_file_cannot_hold_is_refused_before_anything_runs(tmp_path, capsys, make_small_dataset):
    data = make_small_dataset(tmp_path / "d")
    _rewrite_line(data / "queries.jsonl", 2, json.dumps({"_id": "<svg onload=x>", "text": "a query"}))
    code, err = _evaluate_error(tmp_path, capsys, data)
    assert code == 2
    assert err == (f"Error: {data / 'queries.jsonl'}:2: _id: id '<svg onload=x>' holds whitespace (U+0020 SPACE); "
                   "ids are printable text without spaces, as TREC run files need")


def test_a_qrels_document_id_with_a_space_is_refused_naming_the_column(tmp_path, capsys, make_small_dataset):
    data = make_small_dataset(tmp_path / "d")
    qrels = data / "qrels" / "test.tsv"
    _rewrite_line(qrels, 3, 'q0\tx" onmouseover="y\t1')
    code, err = _evaluate_error(tmp_path, capsys, data)
    assert code == 2
    assert err.startswith(f"Error: {qrels}:3: corpus-id: id 'x\" onmouseover=\"y' holds whitespace (U+0020 SPACE)")


def test_non_integer_qrels_score(tmp_path, capsys, make_small_dataset):
    data = make_small_dataset(tmp_path / "d")
    qrels = data / "qrels" / "test.tsv"
    first = qrels.read_text().splitlines()[1].split("\t")
    _rewrite_line(qrels, 2, "\t".join(first[:2] + ["1.5"]))
    code, err = _evaluate_error(tmp_path, capsys, data)
    assert code == 2
    assert err == f"Error: {qrels}:2: score: not an integer: '1.5'"


def test_qrels_naming_an_unknown_document(tmp_path, capsys, make_small_dataset):
    data = make_small_dataset(tmp_path / "d")
    qrels = data / "qrels" / "test.tsv"
    _rewrite_line(qrels, 3, "q0\tdoc999\t1")
    code, err = _evaluate_error(tmp_path, capsys, data)
    assert code == 2
    assert err == f"Error: {qrels}:3: corpus-id: unknown document 'doc999' (not in corpus.jsonl)"


def test_qrels_naming_an_unknown_query(tmp_path, capsys, make_small_dataset):
    data = make_small_dataset(tmp_path / "d")
    qrels = data / "qrels" / "test.tsv"
    _rewrite_line(qrels, 3, "q77\tdoc001\t1")
    code, err = _evaluate_error(tmp_path, capsys, data)
    assert code == 2
    assert err == f"Error: {qrels}:3: query-id: unknown query 'q77' (not in queries.jsonl)"


def test_empty_corpus_file(tmp_path, capsys, make_small_dataset):
    data = make_small_dataset(tmp_path / "d")
    (data / "corpus.jsonl").write_text("")
    code, err = _evaluate_error(tmp_path, capsys, data)
    assert code == 2
    assert err == f"Error: {data / 'corpus.jsonl'}: file is empty: no records"


def test_invalid_json_line(tmp_path, capsys, make_small_dataset):
    data = make_small_dataset(tmp_path / "d")
    _rewrite_line(data / "corpus.jsonl", 7, '{"_id": "doc006", "text": ')
    code, err = _evaluate_error(tmp_path, capsys, data)
    assert code == 2
    assert err.startswith(f"Error: {data / 'corpus.jsonl'}:7: not valid JSON")


@pytest.mark.model   # resolving a hub name needs huggingface_hub, installed with sentence-transformers
def test_model_that_cannot_load_offline_names_it_and_how_to_cache(tmp_path, capsys, monkeypatch, make_small_dataset):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    data = make_small_dataset(tmp_path / "d")
    project = _project(tmp_path, data)
    code = main(["evaluate", str(project), "--dense-model", "BAAI/bge-small-en-v1.5",
                 "--cache-dir", str(tmp_path / "cache")])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 2
    assert "'BAAI/bge-small-en-v1.5' is not in the Hugging Face cache" in err
    assert "hf download BAAI/bge-small-en-v1.5" in err


@pytest.mark.model
def test_rerank_model_missing_suggests_skip_rerank(tmp_path, capsys, monkeypatch, make_small_dataset):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    data = make_small_dataset(tmp_path / "d")
    project = tmp_path / "p2"
    project.mkdir()
    (project / "readout.yaml").write_text(f"title: t\nkind: beir\ndata: {data}\n")
    code = main(["evaluate", str(project), "--dense-model", "minilm-offline",
                 "--cache-dir", str(tmp_path / "cache")])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 2
    assert "'BAAI/bge-reranker-v2-m3'" in err and "--skip-rerank" in err
    assert not (project / "outputs").exists()
