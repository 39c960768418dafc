"""Cost by shape: the built-in shape table, shape resolution, and measuring a tiny random
cross-encoder's per-query time through the real CrossEncoder (its scores mean nothing), the
per-query cache, the depth curve and `readout cost`."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from generator.commands.cli import main
from generator.storage.errors import InputError, ModelUnavailableError
from generator.evaluate import shapes
from generator.evaluate.cost import cost_curve, measure_rerank_cost, resolve_device
from generator.evaluate.shape_scorer import build_scorer
from generator.evaluate.models import _packaged_minilm_path
from generator.evaluate.shapes import BUILT_IN_SHAPES, choose_tokenizer, resolve_shape
from tests.conftest import cost_project

pytestmark = [pytest.mark.model, pytest.mark.usefixtures("one_torch_thread")]

PUBLISHED = {  # model: (architecture, layers, hidden, heads, intermediate, vocab, max positions), SPEC section 8
    "BAAI/bge-reranker-v2-m3": ("xlm-roberta", 24, 1024, 16, 4096, 250002, 8194),
    "BAAI/bge-reranker-large": ("xlm-roberta", 24, 1024, 16, 4096, 250002, 514),
    "BAAI/bge-reranker-base": ("xlm-roberta", 12, 768, 12, 3072, 250002, 514),
    "cross-encoder/ms-marco-MiniLM-L-12-v2": ("bert", 12, 384, 12, 1536, 30522, 512),
    "cross-encoder/ms-marco-MiniLM-L-6-v2": ("bert", 6, 384, 12, 1536, 30522, 512),
}
TINY = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64,
        "vocab_size": 30522}
PAIRS = {
    "q1": [("insulin receptor signal", "insulin binds its receptor " * 6), ("insulin receptor signal", "sleep"),
           ("insulin receptor signal", "a kinase pathway in the liver")],
    "q2": [("tumor immune therapy", "immune checkpoint therapy shrinks tumors " * 10),
           ("tumor immune therapy", "mouse trial")],
    "q3": [("gene mutation risk", "mutations raise the risk " * 3)],
}


def _write_config(directory: Path, **config) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return directory


@pytest.fixture
def tiny_bert(tmp_path) -> Path:
    return _write_config(tmp_path / "tiny-bert", model_type="bert", max_position_embeddings=512, **TINY)


@pytest.fixture
def tiny_xlmr(tmp_path) -> Path:
    return _write_config(tmp_path / "tiny-xlmr", model_type="xlm-roberta", max_position_embeddings=514,
                         type_vocab_size=1, pad_token_id=1, **{**TINY, "vocab_size": 250002})


def _measure(model, tmp_path, pairs=PAIRS, **settings):
    settings = {"max_length": 64, "batch_size": 2, "device": "cpu", "progress": False, "log": lambda _: None,
                **settings}
    return measure_rerank_cost(pairs, model, cache_dir=tmp_path / "cache", **settings)


def test_the_built_in_table_holds_the_published_numbers():
    assert {name: (s.architecture, s.layers, s.hidden, s.heads, s.intermediate, s.vocab, s.max_positions)
            for name, s in BUILT_IN_SHAPES.items()} == PUBLISHED
    for name, (architecture, layers, hidden, heads, intermediate, vocab, positions) in PUBLISHED.items():
        config = shapes.built_in_config(name)
        assert (config.model_type, config.num_hidden_layers, config.hidden_size, config.num_attention_heads,
                config.intermediate_size, config.vocab_size, config.max_position_embeddings, config.num_labels) == (
            architecture, layers, hidden, heads, intermediate, vocab, positions, 1)
        expected = (1, 1) if architecture == "xlm-roberta" else (2, 0)
        assert (config.type_vocab_size, config.pad_token_id) == expected
        assert shapes.position_limit(config) == (positions - 2 if architecture == "xlm-roberta" else positions)


def test_a_built_in_name_resolves_to_its_sequence_classifier_and_parameter_count(monkeypatch):
    monkeypatch.setattr(shapes, "_cached_tokenizer_dir", lambda name: None)
    minilm = resolve_shape("cross-encoder/ms-marco-MiniLM-L-6-v2")
    assert (minilm.source, minilm.architecture, minilm.parameters) == (
        "built-in table", "BertForSequenceClassification", 22_713_601)
    assert choose_tokenizer(minilm).tokens == "exact"       # the MiniLM cross-encoders share its vocabulary
    large = resolve_shape("BAAI/bge-reranker-v2-m3")
    assert large.architecture == "XLMRobertaForSequenceClassification"
    assert round(large.parameters / 1e6) == 568
    assert choose_tokenizer(large).tokens == "approximate"  # no SentencePiece tokenizer at hand
    assert large.config_sha256 != resolve_shape("BAAI/bge-reranker-large").config_sha256


def test_a_local_config_resolves_from_its_directory_or_the_file(tiny_bert):
    by_directory = resolve_shape(str(tiny_bert))
    by_file = resolve_shape(str(tiny_bert / "config.json"))
    assert by_directory.source == by_file.source == "local config.json"
    assert by_directory.config_sha256 == by_file.config_sha256
    assert (by_directory.config.hidden_size, by_directory.config.num_labels) == (32, 1)
    assert by_directory.tokenizer_dir is None


def test_tokenizer_files_beside_the_config_are_the_models_own_and_exact(tiny_bert):
    minilm = _packaged_minilm_path()
    for name in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        (tiny_bert / name).write_bytes((minilm / name).read_bytes())
    tokenizer = choose_tokenizer(resolve_shape(str(tiny_bert)))
    assert (tokenizer.directory, tokenizer.tokens) == (tiny_bert, "exact")
    assert "its own tokenizer" in tokenizer.name


def test_a_hub_name_reads_its_config_from_the_hugging_face_cache_first(monkeypatch, tiny_bert, tmp_path):
    import huggingface_hub

    calls = []

    def cached_only(repo_id, filename, local_files_only=False):
        calls.append((repo_id, filename, local_files_only))
        return str(tiny_bert / filename)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", cached_only)
    monkeypatch.chdir(tmp_path)
    shape = resolve_shape("someone/tiny-reranker")
    assert (shape.source, shape.config.hidden_size) == ("hugging face cache", 32)
    assert calls == [("someone/tiny-reranker", "config.json", True)]


def test_an_unknown_name_offline_is_one_line_listing_the_built_in_names(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ModelUnavailableError) as raised:
        resolve_shape("nobody/no-such-reranker")
    message = str(raised.value)
    assert "\n" not in message and "HF_HUB_OFFLINE" in message
    assert all(name in message for name in BUILT_IN_SHAPES)


def test_the_shape_scores_pairs_exactly_as_a_cross_encoder_loaded_from_disk(tiny_bert, tmp_path):
    from sentence_transformers import CrossEncoder

    shape = resolve_shape(str(tiny_bert))
    tokenizer = choose_tokenizer(shape)
    built = build_scorer(shape, tokenizer, max_length=64, device="cpu")
    saved = tmp_path / "saved"
    built[0].model.save_pretrained(str(saved))
    built.tokenizer.save_pretrained(str(saved))
    loaded = CrossEncoder(str(saved), max_length=64, device="cpu")   # the rerank row's own call
    pairs = PAIRS["q1"] + PAIRS["q2"]
    np.testing.assert_array_equal(built.predict(pairs, batch_size=2, show_progress_bar=False),
                                  loaded.predict(pairs, batch_size=2, show_progress_bar=False))
    assert built.max_seq_length == loaded.max_seq_length == 64


def test_a_measurement_records_every_query_and_numpys_p95(tiny_bert, tmp_path):
    measurement = _measure(str(tiny_bert), tmp_path)
    figures = measurement.as_dict()
    assert (figures["cost"], figures["quality"]) == ("measured by shape", "not measured")
    assert set(figures["per_query_milliseconds"]) == set(PAIRS)
    milliseconds = list(figures["per_query_milliseconds"].values())
    assert all(value > 0 for value in milliseconds)
    assert figures["p95_milliseconds"] == float(np.percentile(milliseconds, 95))
    assert figures["p50_milliseconds"] == float(np.percentile(milliseconds, 50))
    assert figures["pairs"] == 6
    assert figures["pairs_per_second"] == pytest.approx(6 / (sum(milliseconds) / 1000))
    assert (figures["dtype"], figures["device"], figures["max_length"], figures["batch_size"]) == (
        "float32", "cpu", 64, 2)
    assert figures["tokenizer"]["tokens"] == "approximate"   # a local BERT shape borrowing MiniLM's tokenizer
    assert set(figures["per_query_load_average"]) == set(PAIRS)
    assert (figures["computed_queries"], figures["resumed_queries"]) == (3, 0)


def test_tokens_per_pair_are_counted_after_truncation_with_the_tokenizer_used(tiny_bert, tmp_path):
    from transformers import AutoTokenizer

    figures = _measure(str(tiny_bert), tmp_path, max_length=16).as_dict()
    tokenizer = AutoTokenizer.from_pretrained(str(_packaged_minilm_path()))
    counts = [len(tokenizer(q, d, truncation="longest_first", max_length=16)["input_ids"])
              for pairs in PAIRS.values() for q, d in pairs]
    assert figures["tokens_per_pair"] == {"mean": sum(counts) / len(counts), "max": 16}
    assert min(counts) < 16


def test_token_counts_are_exact_for_a_minilm_vocabulary_shape_and_approximate_for_xlm_r(tiny_bert, tiny_xlmr,
                                                                                          tmp_path):
    minilm_like = dataclasses.replace(resolve_shape(str(tiny_bert)), minilm_vocabulary=True)
    assert _measure(minilm_like, tmp_path).as_dict()["tokenizer"]["tokens"] == "exact"
    figures = _measure(str(tiny_xlmr), tmp_path).as_dict()   # no token types reach a type_vocab_size 1 model
    assert figures["tokenizer"]["tokens"] == "approximate"
    assert figures["architecture"] == "XLMRobertaForSequenceClassification"


def test_a_rerun_resumes_every_query_and_a_changed_setting_or_candidate_list_measures_again(tiny_bert, tmp_path):
    first = _measure(str(tiny_bert), tmp_path).as_dict()
    again = _measure(str(tiny_bert), tmp_path).as_dict()
    assert (again["resumed_queries"], again["computed_queries"]) == (3, 0)
    assert again["per_query_milliseconds"] == first["per_query_milliseconds"]
    longer = _measure(str(tiny_bert), tmp_path, max_length=32).as_dict()
    assert (longer["resumed_queries"], longer["computed_queries"]) == (0, 3)
    changed = {**PAIRS, "q2": PAIRS["q2"][:1]}
    partly = _measure(str(tiny_bert), tmp_path, pairs=changed).as_dict()
    assert (partly["resumed_queries"], partly["computed_queries"]) == (2, 1)


def test_a_damaged_cache_entry_is_measured_again(tiny_bert, tmp_path):
    measurement = _measure(str(tiny_bert), tmp_path)
    entry = measurement.session.entry_path("q3", PAIRS["q3"])
    entry.write_text("{not json", encoding="utf-8")
    assert _measure(str(tiny_bert), tmp_path).as_dict()["computed_queries"] == 1


def test_the_cost_curve_has_one_row_per_depth_with_its_pairs(tiny_bert, tmp_path):
    curve = cost_curve(PAIRS, str(tiny_bert), [3, 1, 2], max_length=32, batch_size=2, cache_dir=tmp_path,
                       device="cpu", progress=False, log=lambda _: None).as_dict()
    assert [row["depth"] for row in curve["curve"]] == [1, 2, 3]
    assert [row["pairs"] for row in curve["curve"]] == [3, 5, 6]
    assert set(curve["measurements"]) == {"1", "2", "3"}
    assert curve["measurements"]["2"]["per_query_pairs"] == {"q1": 2, "q2": 2, "q3": 1}
    with pytest.raises(InputError, match="deeper"):
        cost_curve(PAIRS, str(tiny_bert), [4], cache_dir=tmp_path, device="cpu", progress=False)


def test_devices_resolve_to_what_is_there(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert resolve_device("auto") == resolve_device("cpu") == "cpu"
    with pytest.raises(InputError, match="CUDA is not available"):
        resolve_device("cuda")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device("auto") == "cuda"


def test_readout_cost_prints_the_figures_and_the_curve(tiny_bert, small_dataset, tmp_path, capsys):
    project = cost_project(tmp_path / "project", small_dataset)
    cache = tmp_path / "cache"
    assert main(["cost", str(tiny_bert), str(project), "--cache-dir", str(cache), "--max-length", "32"]) == 0
    out = capsys.readouterr().out
    assert "queries: 6 (6 measured now, 0 resumed from the cache)" in out
    assert "pairs: 30" in out and "p95 per query:" in out and "tokens per pair:" in out
    assert main(["cost", str(tiny_bert), str(project), "--cache-dir", str(cache), "--max-length", "32",
                 "--depth", "2,5", "--format", "json"]) == 0
    curve = json.loads(capsys.readouterr().out)
    assert [(row["depth"], row["pairs"], row["resumed_queries"]) for row in curve["curve"]] == [(2, 12, 0), (5, 30, 6)]
    assert main(["cost", str(tiny_bert), str(project), "--cache-dir", str(cache), "--max-length", "32",
                 "--depth", "5,2"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[-3].split()[:3] == ["depth", "queries", "pairs"]
    assert [line.split()[:3] for line in table[-2:]] == [["2", "6", "12"], ["5", "6", "30"]]


def test_readout_cost_of_an_unknown_model_is_one_line_and_exit_2(small_dataset, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    project = cost_project(tmp_path / "project", small_dataset)
    assert main(["cost", "nobody/no-such-reranker", str(project), "--cache-dir", str(tmp_path / "c")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and captured.err.startswith("Error: model 'nobody/no-such-reranker'")


def test_readout_cost_refuses_a_bad_depth(tiny_bert, small_dataset, tmp_path, capsys):
    project = cost_project(tmp_path / "project", small_dataset)
    assert main(["cost", str(tiny_bert), str(project), "--depth", "10,x"]) == 2
    assert capsys.readouterr().err.startswith("Error: --depth: ")


# --- extrapolation by layers and precision (issue 21) ---------------------------------------------

# Big enough that a layer takes milliseconds, so timer and scheduler noise stay small against it.
TIMED = {"hidden_size": 128, "num_hidden_layers": 6, "num_attention_heads": 4, "intermediate_size": 512,
         "vocab_size": 30522}
WORDS = "insulin receptor kinase signal pathway tumor immune therapy mouse trial gene mutation risk".split()
LONG_PAIRS = {f"q{q}": [(" ".join(WORDS[q:q + 3]), " ".join(WORDS[(q + i + k) % len(WORDS)] for k in range(170)))
                        for i in range(8)] for q in range(2)}


def test_the_extrapolated_cost_is_the_fitted_line_at_the_full_depth(tmp_path):
    """How close the extrapolation comes to timing the whole model is a measurement, made side by
    side by bench/bench_cost.py (a); a test holds what does not depend on the machine's load."""
    model = str(_write_config(tmp_path / "timed-bert", model_type="bert", max_position_embeddings=512, **TIMED))
    figures = {method: _measure(model, tmp_path, pairs=LONG_PAIRS, max_length=256, batch_size=4, method=method,
                                repeats=3).as_dict() for method in ("full", "extrapolated")}
    extrapolated = figures["extrapolated"]
    assert extrapolated["cost"] == "measured by shape, extrapolated from 2 of 6 layers"
    assert (extrapolated["method"], extrapolated["layers_timed"], extrapolated["repeats"]) == (
        "extrapolated", [0, 2], 3)
    for query_id, fit in extrapolated["per_query_fit"].items():   # the figure is the fitted line at 6 layers
        assert fit["intercept_milliseconds"] + 6 * fit["per_layer_milliseconds"] == pytest.approx(
            extrapolated["per_query_milliseconds"][query_id])
        assert set(fit["layer_milliseconds"]) == {"0", "2"}
    assert extrapolated["tokens_per_pair"] == figures["full"]["tokens_per_pair"]
    assert figures["full"]["cost"] == "measured by shape" and "per_query_fit" not in figures["full"]


def test_int8_scores_differ_but_pairs_and_token_counts_do_not(tiny_bert, tmp_path):
    import torch

    shape = resolve_shape(str(tiny_bert))
    tokenizer = choose_tokenizer(shape)
    pairs = PAIRS["q1"] + PAIRS["q2"]
    fp32 = build_scorer(shape, tokenizer, max_length=64, device="cpu")
    int8 = build_scorer(shape, tokenizer, max_length=64, device="cpu", precision="int8")
    assert any(isinstance(module, torch.ao.nn.quantized.dynamic.Linear) for module in int8.model.modules())
    scores = [scorer.predict(pairs, batch_size=2, show_progress_bar=False) for scorer in (fp32, int8)]
    assert not np.array_equal(*scores)
    figures = {precision: _measure(str(tiny_bert), tmp_path, precision=precision).as_dict()
               for precision in ("fp32", "int8")}
    assert figures["int8"]["per_query_pairs"] == figures["fp32"]["per_query_pairs"]
    assert figures["int8"]["tokens_per_pair"] == figures["fp32"]["tokens_per_pair"]
    assert (figures["int8"]["precision"], figures["fp32"]["precision"]) == ("int8", "fp32")
    assert figures["int8"]["dtype"].startswith("int8") and figures["fp32"]["dtype"] == "float32"


def test_the_cache_key_holds_the_method_the_precision_and_the_layer_counts(tiny_bert, tmp_path):
    tiny = str(_write_config(tmp_path / "four-layers", model_type="bert", max_position_embeddings=512,
                             **{**TINY, "num_hidden_layers": 4}))
    settings = [dict(method="full"), dict(method="full", precision="int8"), dict(method="extrapolated"),
                dict(method="extrapolated", layers=(0, 1)), dict(method="extrapolated", precision="int8"),
                dict(method="full", repeats=2)]
    keys = [_measure(tiny, tmp_path, **each).as_dict()["cache_keys"] for each in settings]
    assert [sorted(each) for each in keys[:4]] == [["4"], ["4"], ["0", "2"], ["0", "1"]]
    # Every (method, precision, layer count, repeats) has its own key; the 0-layer timing is the same
    # computation whichever deeper count it is fitted with, so those two share theirs.
    every = {key for each in keys for key in each.values()}
    assert len(every) == 1 + 1 + 2 + 1 + 2 + 1
    assert keys[2]["0"] == keys[3]["0"] and keys[2]["2"] != keys[3]["1"]
    again = _measure(tiny, tmp_path, method="extrapolated").as_dict()
    assert (again["cache_keys"], again["resumed_queries"], again["computed_queries"]) == (keys[2], 3, 0)


def test_a_lost_layer_entry_times_that_query_again_at_every_layer_count(tiny_bert, tmp_path):
    first = _measure(str(tiny_bert), tmp_path, method="extrapolated", layers=(0, 1))
    first.pricing.sessions[1].entry_path("q2", PAIRS["q2"]).unlink()
    again = _measure(str(tiny_bert), tmp_path, method="extrapolated", layers=(0, 1))
    assert (again.resumed, again.computed) == (["q1", "q3"], ["q2"])
    assert again.as_dict()["per_query_milliseconds"]["q1"] == first.as_dict()["per_query_milliseconds"]["q1"]


@pytest.mark.parametrize("settings, field", [
    (dict(precision="fp16"), "precision"), (dict(method="guess"), "method"),
    (dict(method="extrapolated", layers=(1,)), "layers"), (dict(method="extrapolated", layers=(0, 9)), "layers"),
    (dict(method="extrapolated", layers=(-1, 1)), "layers"), (dict(repeats=0), "repeats"),
    (dict(max_length=0), "max_length")])
def test_bad_cost_settings_are_input_errors_naming_the_field(tiny_bert, tmp_path, settings, field):
    with pytest.raises(InputError) as raised:
        _measure(str(tiny_bert), tmp_path, **settings)
    assert raised.value.field == field
    with pytest.raises(InputError) as raised:
        _measure(str(tiny_bert), tmp_path, pairs={})
    assert raised.value.field == "pairs"


def test_readout_cost_sweeps_several_models_and_precisions(tiny_bert, tiny_xlmr, small_dataset, tmp_path, capsys):
    project = cost_project(tmp_path / "project", small_dataset)
    common = ["--cache-dir", str(tmp_path / "cache"), "--max-length", "32", "--precision", "fp32,int8"]
    assert main(["cost", str(tiny_bert), str(tiny_xlmr), str(project), *common, "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(Path(row["model"]).name, row["precision"], row["depth"], row["queries"]) for row in rows] == [
        ("tiny-bert", "fp32", 5, 6), ("tiny-bert", "int8", 5, 6), ("tiny-xlmr", "fp32", 5, 6),
        ("tiny-xlmr", "int8", 5, 6)]
    assert {row["cost"] for row in rows} == {"measured by shape, extrapolated from 2 of 2 layers"}
    assert main(["cost", str(tiny_bert), str(project), *common, "--depth", "2,5"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0] == "cost: measured by shape, extrapolated from 2 of 2 layers"
    assert [line.split()[1:4] for line in table[-4:]] == [["2", "32", "fp32"], ["2", "32", "int8"],
                                                         ["5", "32", "fp32"], ["5", "32", "int8"]]
    assert main(["cost", str(tiny_bert), str(project), "--precision", "fp16"]) == 2
    assert capsys.readouterr().err.startswith("Error: --precision: ")


def test_each_batch_keeps_its_fastest_repeat_so_a_slowed_repeat_is_not_multiplied_by_the_depth():
    """Two repeats of a 2-layer cut, one slowed by another process: the fastest is the batch's cost,
    and the extrapolation to 24 layers does not carry the slow spell twelve-fold (the median of two
    would read 50 ms of a stranger's time as 600 ms of the model's)."""
    from generator.evaluate.query_cost import REPEAT_STATISTIC, _query_cost

    entries = {0: {"pairs": 2, "batches": [[0, 1]], "tokens": [5, 5], "batch_milliseconds": [[10.0], [12.0]]},
               2: {"pairs": 2, "batches": [[0, 1]], "tokens": [5, 5], "batch_milliseconds": [[110.0], [160.0]]}}
    cost = _query_cost("q", entries, full_layers=24)
    assert REPEAT_STATISTIC == "fastest"
    assert cost.layer_milliseconds == {0: (10.0,), 2: (110.0,)}
    assert cost.milliseconds == pytest.approx(10.0 + 24 * 50.0)


def test_a_pricing_warms_up_on_one_batch_of_the_longest_pairs(tiny_bert, tmp_path):
    from generator.evaluate.cost import open_pricing

    pricing = open_pricing(str(tiny_bert), method="full", batch_size=2, max_length=64, cache_dir=tmp_path / "c",
                           device="cpu", log=lambda _: None)
    session = pricing.session
    scorer = session.build()
    seen = []
    predict = scorer.predict
    scorer.predict = lambda pairs, **kwargs: (seen.append(list(pairs)), predict(pairs, **kwargs))[1]
    pairs = [("q", "short"), ("q", "a much longer document text here"), ("q", "mid length text"), ("q", "x")]
    session.ready(pairs)
    session.ready(pairs)
    assert seen == [[("q", "a much longer document text here"), ("q", "mid length text")]]
