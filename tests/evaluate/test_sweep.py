"""The cost sweep (issue 21): one configuration per model x depth x max_length x precision, batch
timings reused from a deeper depth only where predict forms exactly the same batches, each shape
built once per setting, an interrupted sweep resumed, bad inputs named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.storage.errors import InputError
from generator.evaluate import cost, cost_sessions
from generator.evaluate.sweep import rerank_sweep

pytestmark = [pytest.mark.model, pytest.mark.usefixtures("one_torch_thread")]

TINY = {"model_type": "bert", "max_position_embeddings": 512, "hidden_size": 32, "num_hidden_layers": 2,
        "num_attention_heads": 2, "intermediate_size": 64, "vocab_size": 30522}
# Documents getting shorter with rank: predict sorts by length, so the first k pairs are its first
# k as well, and a depth that is a multiple of the batch size is the deeper depth's first batches.
SHORTER = {"q1": [("insulin receptor", "insulin binds its receptor " * (12 - i)) for i in range(8)],
           "q2": [("tumor therapy", "checkpoint therapy shrinks tumors " * (9 - i)) for i in range(6)],
           "q3": [("gene risk", "mutations raise the risk " * (4 - i)) for i in range(3)]}
# The longest document last: the first four pairs are not predict's first two batches of eight.
LONGER = {"q1": [("insulin receptor", "insulin binds its receptor " * (i + 1)) for i in range(8)]}


@pytest.fixture
def tiny_bert(tmp_path) -> Path:
    directory = tmp_path / "tiny-bert"
    directory.mkdir()
    (directory / "config.json").write_text(json.dumps(TINY), encoding="utf-8")
    return directory


def _sweep(pairs, models, depths, tmp_path, max_lengths=(64,), precisions=("fp32",), **settings):
    settings = {"batch_size": 2, "method": "full", "device": "cpu", "progress": False, "log": lambda _: None,
                "cache_dir": tmp_path / "cache", **settings}
    return rerank_sweep(pairs, models, depths, max_lengths, precisions, **settings)


def _by_depth(rows):
    return {row["depth"]: row for row in rows}


def test_a_depth_that_is_a_multiple_of_the_batch_size_reuses_the_deeper_batches_exactly(tiny_bert, tmp_path):
    rows = _by_depth(_sweep(SHORTER, [str(tiny_bert)], [8, 4, 5], tmp_path))
    deep, four, five = rows[8], rows[4], rows[5]
    assert deep["timings_from_depth"] is None and deep["computed_queries"] == 3
    # depth 4: q1 and q2 take their first two batches of depth 8; q3 has 3 pairs, the same list at any depth.
    assert (four["timings_from_depth"], four["reused_queries"], four["computed_queries"]) == (8, 3, 0)
    for query_id in ("q1", "q2"):
        assert four["per_query_milliseconds"][query_id] == sum(deep["per_query_batch_milliseconds"][query_id][:2])
        assert four["per_query_batch_milliseconds"][query_id] == deep["per_query_batch_milliseconds"][query_id][:2]
    assert four["per_query_milliseconds"]["q3"] == deep["per_query_milliseconds"]["q3"]
    assert four["pairs"] == 4 + 4 + 3
    # depth 5 is not a multiple of 2: its last batch of one pair is not a batch of depth 8, so it is timed.
    assert five["per_query_timings_from_depth"] == {"q1": None, "q2": None, "q3": 8}
    assert five["computed_queries"] == 2 and five["pairs"] == 5 + 5 + 3
    assert five["per_query_milliseconds"]["q1"] != sum(deep["per_query_batch_milliseconds"]["q1"][:3])


def test_a_prefix_predict_would_batch_differently_is_timed_on_its_own(tiny_bert, tmp_path):
    rows = _by_depth(_sweep(LONGER, [str(tiny_bert)], [4, 8], tmp_path))
    assert (rows[4]["timings_from_depth"], rows[4]["computed_queries"]) == (None, 1)


def test_configurations_cover_every_setting_in_order_and_build_each_shape_once(tiny_bert, tmp_path, monkeypatch):
    builds = []
    real = cost_sessions.build_scorer

    def counting(shape, tokenizer, **settings):
        builds.append((shape.config.num_hidden_layers, settings["max_length"], settings["precision"]))
        return real(shape, tokenizer, **settings)

    monkeypatch.setattr(cost_sessions, "build_scorer", counting)
    rows = _sweep(SHORTER, [str(tiny_bert)], [4, 8], tmp_path, max_lengths=(64, 32), precisions=("int8", "fp32"),
                  method="extrapolated", layers=(0, 1), repeats=2)
    assert [(row["depth"], row["max_length"], row["precision"]) for row in rows] == [
        (4, 32, "fp32"), (4, 32, "int8"), (4, 64, "fp32"), (4, 64, "int8"),
        (8, 32, "fp32"), (8, 32, "int8"), (8, 64, "fp32"), (8, 64, "int8")]
    assert sorted(builds) == sorted((layers, length, precision) for layers in (0, 1) for length in (32, 64)
                                    for precision in ("fp32", "int8"))
    row = rows[-1]
    assert row["cost"] == "measured by shape, extrapolated from 1 of 2 layers"
    assert (row["method"], row["layers_timed"], row["repeats"], row["queries"]) == ("extrapolated", [0, 1], 2, 3)
    assert row["p95_milliseconds"] >= row["p50_milliseconds"] > 0
    assert rows[0]["timings_from_depth"] == 8


def test_an_interrupted_sweep_resumes_where_it_stopped(tiny_bert, tmp_path, monkeypatch):
    real = cost.Pricing._time_query
    calls = []

    def interrupted(self, query_id, pairs, warm_pairs):
        if len(calls) == 2:
            raise KeyboardInterrupt
        calls.append(query_id)
        return real(self, query_id, pairs, warm_pairs)

    monkeypatch.setattr(cost.Pricing, "_time_query", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _sweep(SHORTER, [str(tiny_bert)], [8], tmp_path)
    monkeypatch.setattr(cost.Pricing, "_time_query", real)
    row = _sweep(SHORTER, [str(tiny_bert)], [8], tmp_path)[0]
    assert (row["resumed_queries"], row["computed_queries"]) == (2, 1)
    again = _sweep(SHORTER, [str(tiny_bert)], [8], tmp_path)[0]
    assert (again["resumed_queries"], again["per_query_milliseconds"]) == (3, row["per_query_milliseconds"])


@pytest.mark.parametrize("change, field", [
    (dict(depths=[0]), "depth"), (dict(depths=[]), "depth"), (dict(models=[]), "models"),
    (dict(max_lengths=[]), "max_length"), (dict(max_lengths=[0]), "max_length"),
    (dict(precisions=[]), "precision"), (dict(precisions=["fp16"]), "precision"),
    (dict(pairs={}), "pairs"), (dict(pairs={"q1": []}), "pairs"), (dict(method="guess"), "method")])
def test_bad_sweep_inputs_are_input_errors_naming_the_field(tiny_bert, tmp_path, change, field):
    arguments = {"pairs": SHORTER, "models": [str(tiny_bert)], "depths": [4], "max_lengths": [64],
                 "precisions": ["fp32"], **change}
    settings = {"method": arguments.pop("method")} if "method" in arguments else {}
    with pytest.raises(InputError) as raised:
        _sweep(arguments["pairs"], arguments["models"], arguments["depths"], tmp_path,
               max_lengths=arguments["max_lengths"], precisions=arguments["precisions"], **settings)
    assert raised.value.field == field


def test_a_sweep_lets_each_groups_models_go(tiny_bert, tmp_path):
    """The shapes' modules sit in reference cycles; a sweep that left them to the collector's
    schedule kept every group's models alive (80 configurations of the five built-in shapes
    passed 24 GB and were killed). After a sweep no module it built is alive, uncollected."""
    import gc

    import torch

    gc.collect()
    before = sum(isinstance(item, torch.nn.Module) for item in gc.get_objects())
    gc.disable()   # only the sweep's own collection may free them
    try:
        _sweep(SHORTER, [str(tiny_bert)], [4, 8], tmp_path, max_lengths=(32, 64), precisions=("fp32", "int8"))
        after = sum(isinstance(item, torch.nn.Module) for item in gc.get_objects())
    finally:
        gc.enable()
    assert after <= before
