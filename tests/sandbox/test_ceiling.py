"""The oracle reranking ceiling (spec section 6)."""

from __future__ import annotations

import json

import pytest

from generator.sandbox.ceiling import (PRESET, ZERO_VECTOR_COSINE, compute_ceiling, cosine, lexical_score,
                               parse_case)
from generator.commands.cli import main


def run_json(capsys, *argv):
    assert main(["ceiling", *argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def write_case(tmp_path, **changes):
    case = json.loads(json.dumps(PRESET))
    case.update(changes)
    path = tmp_path / "case.json"
    path.write_text(json.dumps(case))
    return path


def test_preset_oracle_ceiling_is_one_and_one(capsys):
    report = run_json(capsys)
    assert report["recall@3"] == 1.0
    assert report["nDCG@3"] == 1.0
    assert report["pool"] == ["D1", "D4", "D3", "D2", "D5"]
    assert report["upper_bound"] is True


def test_text_output_says_it_is_an_upper_bound_not_a_model(capsys):
    assert main(["ceiling"]) == 0
    out = capsys.readouterr().out
    assert "Recall@3 = 1.0000" in out and "nDCG@3 = 1.0000" in out
    assert "Upper bound, not a model" in out and "label leak" in out


def test_pool_smaller_than_the_relevant_set_keeps_the_ceiling_below_one(capsys):
    report = run_json(capsys, "--pool", "2")
    assert report["relevant"] == 3 and report["relevant_in_pool"] == 2
    assert report["recall@3"] == pytest.approx(2 / 3)
    assert report["nDCG@3"] < 1.0


def test_oracle_sorts_only_the_pool_by_relevance(tmp_path, capsys):
    # D2 (rel 0) is fused above D3 (rel 2) here; the oracle swaps them but keeps D5 out of a pool of 4.
    path = write_case(tmp_path, query="cache", pool=4)
    fused = run_json(capsys, str(path), "--no-oracle")
    oracle = run_json(capsys, str(path))
    assert set(oracle["ranking"]) == set(fused["ranking"]) == set(fused["pool"])
    grades = {doc["id"]: doc["relevance"] for doc in oracle["documents"]}
    assert [grades[d] for d in oracle["ranking"]] == sorted(grades[d] for d in fused["pool"])[::-1]
    assert fused["upper_bound"] is False


def test_fused_score_is_weighted_reciprocal_rank():
    report = compute_ceiling(parse_case(PRESET))
    d1 = next(doc for doc in report["documents"] if doc["id"] == "D1")
    assert (d1["lexical"], d1["lexical_rank"], d1["dense_rank"]) == (2, 2, 1)
    assert d1["fused"] == pytest.approx(0.5 / 62 + 0.5 / 61)


def test_lexical_score_counts_query_terms_not_occurrences():
    assert lexical_score("KV cache memory", "KV cache memory footprint depends on sequence length") == 3
    assert lexical_score("cache", "cache cache cache") == 1


def test_zero_vector_gets_the_sentinel_and_ranks_last():
    assert cosine([0, 0], [1, 0.1]) == ZERO_VECTOR_COSINE
    case = json.loads(json.dumps(PRESET))
    case["documents"][0]["vector"] = [0, 0]
    report = compute_ceiling(parse_case(case))
    d1 = report["documents"][0]
    assert d1["dense"] == ZERO_VECTOR_COSINE and d1["dense_rank"] == 5


def test_empty_query_keeps_document_order_on_ties():
    case = dict(PRESET, query="", query_vector=[0, 0], oracle=False)
    report = compute_ceiling(parse_case(case))
    assert [doc["lexical_rank"] for doc in report["documents"]] == [1, 2, 3, 4, 5]
    assert report["ranking"] == ["D1", "D2", "D3", "D4", "D5"]


BAD_CASES = [
    ({"query_vector": [1, 2, 3]}, "query_vector: must be a list of 2 finite numbers, got [1, 2, 3]"),
    ("doc-vector", "documents[1].vector: must be a list of 2 finite numbers, got [\"a\", 1]"),
    ("doc-relevance-negative", "documents[0].relevance: must be a non-negative integer, got -1"),
    ("doc-relevance-float", "documents[0].relevance: must be a non-negative integer, got 1.5"),
    ({"pool": 0}, "pool: must be a positive integer, got 0"),
    ({"cutoff": "3"}, "cutoff: must be a positive integer, got \"3\""),
    ({"w": 1.5}, "w: must be a number in [0, 1], got 1.5"),
    ({"k": -1}, "k: must be a number >= 0, got -1"),
    ({"documents": []}, "documents: must be a non-empty list"),
]


@pytest.mark.parametrize("change, expected", BAD_CASES)
def test_bad_input_is_one_line_naming_the_field_exit_2(tmp_path, capsys, change, expected):
    if change == "doc-vector":
        case = json.loads(json.dumps(PRESET))
        case["documents"][1]["vector"] = ["a", 1]
        path = write_case(tmp_path, documents=case["documents"])
    elif isinstance(change, str):
        case = json.loads(json.dumps(PRESET))
        case["documents"][0]["relevance"] = -1 if change.endswith("negative") else 1.5
        path = write_case(tmp_path, documents=case["documents"])
    else:
        path = write_case(tmp_path, **change)
    assert main(["ceiling", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == f"Error: {path}: {expected}\n"


@pytest.mark.parametrize("argv, expected", [
    (["--pool", "0"], "Error: --pool: must be a positive integer, got 0\n"),
    (["--cutoff", "-2"], "Error: --cutoff: must be a positive integer, got -2\n"),
])
def test_bad_options_exit_2(capsys, argv, expected):
    assert main(["ceiling", *argv]) == 2
    assert capsys.readouterr().err == expected


def test_invalid_json_and_missing_file_exit_2(tmp_path, capsys):
    broken = tmp_path / "broken.json"
    broken.write_text('{"query": "x",\n "documents": [}\n')
    assert main(["ceiling", str(broken)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"Error: {broken}:2: not valid JSON") and "Traceback" not in err
    assert main(["ceiling", str(tmp_path / "absent.json")]) == 2
    assert "input file not found" in capsys.readouterr().err
