"""Caches verify what they return (issue 14): every embedding, rerank and cost entry records the key
it was made for and a checksum of its content, and one that fails any check is reported in one
warning line and recomputed, never used. Each corruption below is one a full disk, bad hardware, a
copy or a hand edit can leave; each must change nothing in the results but the warning."""

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from generator.evaluate.cache import (EmbeddingCache, RerankCache, entry_checksum, seal, verify_embeddings,
                                      verify_rerank_entry)
from generator.evaluate.cost import measure_rerank_cost
from generator.core.options import EvaluationOptions
from generator.evaluate.pipeline import evaluate

pytestmark = [pytest.mark.model, pytest.mark.usefixtures("one_torch_thread")]

WARNING = "cache: ignoring corrupt "
REUSED = "re-using cached corpus embeddings"


def _options(data, tmp_path, cache, **overrides):
    base = dict(data=data, outputs_dir=tmp_path / "outputs", dense_model="minilm-offline", cache_dir=cache,
                progress=False, bootstrap_resamples=500)
    return EvaluationOptions(**{**base, **overrides})


def _run(options, **kwargs):
    log: list[str] = []
    results = evaluate(options, log=log.append, **kwargs).results
    return results, log


def _warnings(log):
    return [line for line in log if line.startswith("cache: ")]


def _without_timings(results):
    """What a run computed, without what it measured by the clock or recorded about itself."""
    stripped = json.loads(json.dumps(results))
    for key in ("manifest", "rerank_milliseconds", "p95_rerank_milliseconds"):
        stripped.pop(key, None)
    for cost in stripped.get("rerank_costs", {}).values():
        for key in ("per_query_milliseconds", "p50_milliseconds", "p95_milliseconds", "pairs_per_second"):
            cost.pop(key, None)
    return stripped


def _fresh_copy(snapshot: Path, target: Path) -> Path:
    shutil.copytree(snapshot, target)
    return target


# --- embeddings -----------------------------------------------------------------------------------

def _unit_rows(rows=6, dimension=8, seed=0):
    matrix = np.random.default_rng(seed).normal(size=(rows, dimension)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def _rewrite_array(npy: Path, transform):
    np.save(npy, transform(np.load(npy)), allow_pickle=False)


def _flip_low_mantissa_byte(npy: Path, _meta: Path, _cache: Path):
    data = bytearray(npy.read_bytes())
    data[-4] ^= 0x01    # the last float's lowest byte: still finite and unit-norm, only the checksum sees it
    npy.write_bytes(bytes(data))


def _nan(npy: Path, _meta: Path, _cache: Path):
    def poison(matrix):
        matrix = matrix.copy()
        matrix[3, 5] = np.nan
        return matrix
    _rewrite_array(npy, poison)


def _metadata_of_another_key(npy: Path, meta: Path, cache: Path):
    # A real entry made for another key (same array), its metadata copied over this one's.
    other = "0" * 64
    EmbeddingCache(cache).store(other, np.load(npy), {"normalized": True})
    shutil.copyfile(meta.parent / f"{other}.json", meta)


def _without_checksum(_npy: Path, meta: Path, _cache: Path):
    description = json.loads(meta.read_text())
    del description["sha256"]
    meta.write_text(json.dumps(description))


EMBEDDING_CORRUPTIONS = {
    "zeroed": (lambda npy, meta, cache: _rewrite_array(npy, np.zeros_like), "norm 0"),
    "one flipped byte": (_flip_low_mantissa_byte, "checksum mismatch"),
    "permuted rows": (lambda npy, meta, cache: _rewrite_array(npy, lambda m: m[::-1]), "checksum mismatch"),
    "a NaN": (_nan, "non-finite"),
    "int8": (lambda npy, meta, cache: _rewrite_array(npy, lambda m: (m * 100).astype(np.int8)), "dtype int8"),
    "truncated": (lambda npy, meta, cache: npy.write_bytes(npy.read_bytes()[:-100]), "unreadable"),
    "unreadable metadata": (lambda npy, meta, cache: meta.write_text("{\"key\": "), "metadata unreadable"),
    "metadata of another key": (_metadata_of_another_key, "another key"),
    "an old entry without checksum": (_without_checksum, "no checksum"),
}


def test_every_embedding_corruption_is_one_warning_then_recomputed_to_the_same_results(
        make_small_dataset, tmp_path):
    data = make_small_dataset(tmp_path / "data", documents=30, queries=4)
    clean_cache = tmp_path / "clean-cache"
    clean, _ = _run(_options(data, tmp_path, clean_cache, skip_rerank=True))
    again, again_log = _run(_options(data, tmp_path, clean_cache, skip_rerank=True))
    assert _warnings(again_log) == [] and any(REUSED in line and "no encoding" in line for line in again_log)
    assert again["manifest"]["caches"]["dense_embeddings"] == "re-used"
    [npy_name] = [path.name for path in (clean_cache / "embeddings").glob("*.npy")]

    for case, (corrupt, reason) in EMBEDDING_CORRUPTIONS.items():
        cache = _fresh_copy(clean_cache, tmp_path / f"cache {case}")
        npy = cache / "embeddings" / npy_name
        corrupt(npy, npy.with_suffix(".json"), cache)
        results, log = _run(_options(data, tmp_path, cache, skip_rerank=True))
        warnings = _warnings(log)
        assert len(warnings) == 1, (case, warnings)
        assert "corpus embeddings" in warnings[0] and reason in warnings[0], (case, warnings[0])
        assert str(npy) in warnings[0] and warnings[0].endswith("; recomputing"), (case, warnings[0])
        assert "\n" not in warnings[0], case
        assert not any(REUSED in line for line in log), case
        assert any("dense: encoding 30 documents" in line for line in log), case
        assert results["manifest"]["caches"]["dense_embeddings"] == "computed", case
        assert _without_timings(results) == _without_timings(clean), case
        # The recomputed entry replaced the bad one: the next run re-uses it without a word.
        _, next_log = _run(_options(data, tmp_path, cache, skip_rerank=True))
        assert _warnings(next_log) == [] and any(REUSED in line for line in next_log), case


def test_verify_embeddings_accepts_what_store_wrote_and_names_each_failure(tmp_path):
    cache = EmbeddingCache(tmp_path)
    matrix = _unit_rows()
    cache.store("k", matrix, {"normalized": True})
    warned: list[str] = []
    loaded = cache.load("k", expected_rows=6, expected_dimension=8, normalized=True, warn=warned.append)
    np.testing.assert_array_equal(loaded, matrix)
    assert warned == []
    meta = json.loads((tmp_path / "embeddings" / "k.json").read_text())
    assert (meta["key"], meta["dtype"], meta["shape"], len(meta["sha256"])) == ("k", "float32", [6, 8], 64)

    def reason(array, **changes):
        expected = {"rows": 6, "dimension": 8, "normalized": True, **changes.pop("expect", {})}
        return verify_embeddings(array, {**meta, **changes}, "k", **expected)

    assert reason(matrix) is None
    assert "dtype >f4" in reason(matrix.astype(">f4"))   # float32, but not the bytes the checksum is over
    assert "dtype float64" in reason(matrix.astype(np.float64))
    assert "rows for 7 documents" in reason(matrix, expect={"rows": 7})
    assert "dimension 8, the model gives 16" in reason(matrix, expect={"dimension": 16})
    assert "norm 2" in reason(matrix * 2)
    assert "another key" in reason(matrix, key="other")
    assert "normalized is False" in reason(matrix, normalized=False)
    assert "not a JSON object" in verify_embeddings(matrix, ["k"], "k", rows=6)
    # An absent entry is no news; a missing metadata file is.
    assert cache.load("absent", expected_rows=6, warn=warned.append) is None and warned == []
    (tmp_path / "embeddings" / "k.json").unlink()
    assert cache.load("k", expected_rows=6, warn=warned.append) is None
    assert len(warned) == 1 and "no metadata" in warned[0]


# --- rerank ---------------------------------------------------------------------------------------

def _rerank_files(cache: Path) -> dict[str, Path]:
    return {json.loads(path.read_text())["query_id"]: path for path in (cache / "rerank").rglob("*.json")}


def _edit(path: Path, change):
    entry = json.loads(path.read_text())
    change(entry)
    path.write_text(json.dumps(entry))   # allow_nan: a hand edit can write NaN


def _other_candidates(files):
    other = json.loads(files["q1"].read_text())

    def change(entry):
        entry["candidates"], entry["scores"] = other["candidates"], other["scores"]
    _edit(files["q2"], change)


RERANK_CORRUPTIONS = {
    "reversed scores": (lambda files: _edit(files["q2"], lambda e: e["scores"].reverse()), "checksum mismatch"),
    "scores for other candidates": (_other_candidates, "candidates are not this query's"),
    "a missing key": (lambda files: _edit(files["q2"], lambda e: e.pop("scores")), "missing scores"),
    "string scores": (lambda files: _edit(files["q2"], lambda e: e.update(scores=[str(s) for s in e["scores"]])),
                      "not a finite number"),
    "a NaN score": (lambda files: _edit(files["q2"], lambda e: e["scores"].__setitem__(4, math.nan)),
                    "score 4 is nan"),
    "copied from another query": (lambda files: shutil.copyfile(files["q1"], files["q2"]), "another key"),
    "unreadable": (lambda files: files["q2"].write_text("{\"query_id\": \"q2\", "), "unreadable"),
    "an old entry without checksum": (lambda files: _edit(files["q2"], lambda e: e.pop("sha256")), "no checksum"),
}


def test_every_rerank_corruption_is_one_warning_then_that_query_is_recomputed(
        make_small_dataset, tmp_path, tiny_cross_encoder):
    data = make_small_dataset(tmp_path / "data", documents=30, queries=4)
    clean_cache = tmp_path / "clean-cache"
    model = str(tiny_cross_encoder)
    clean, _ = _run(_options(data, tmp_path, clean_cache, rerank_model=model))
    assert clean["manifest"]["caches"]["rerank_computed_queries"] == ["q0", "q1", "q2", "q3"]
    again, again_log = _run(_options(data, tmp_path, clean_cache, rerank_model=model))
    assert _warnings(again_log) == []
    assert again["manifest"]["caches"]["rerank_resumed_queries"] == ["q0", "q1", "q2", "q3"]
    assert again["manifest"]["caches"]["rerank_computed_queries"] == []
    clean_q2 = json.loads(_rerank_files(clean_cache)["q2"].read_text())

    for case, (corrupt, reason) in RERANK_CORRUPTIONS.items():
        cache = _fresh_copy(clean_cache, tmp_path / f"cache {case}")
        files = _rerank_files(cache)
        corrupt(files)
        results, log = _run(_options(data, tmp_path, cache, rerank_model=model))
        warnings = _warnings(log)
        assert len(warnings) == 1, (case, warnings)
        assert "rerank entry for query q2" in warnings[0] and reason in warnings[0], (case, warnings[0])
        assert str(files["q2"]) in warnings[0] and "\n" not in warnings[0], (case, warnings[0])
        caches = results["manifest"]["caches"]
        assert caches["rerank_computed_queries"] == ["q2"], case
        assert caches["rerank_resumed_queries"] == ["q0", "q1", "q3"], case
        assert _without_timings(results) == _without_timings(clean), case
        rewritten = json.loads(files["q2"].read_text())
        assert verify_rerank_entry(rewritten, files["q2"].stem, "q2", clean_q2["candidates"]) is None, case
        assert rewritten["scores"] == clean_q2["scores"], case


def test_verify_rerank_entry_checks_types_lengths_and_the_exact_candidates(tmp_path):
    candidates = ["d1", "d2", "d3"]
    entry = {"query_id": "q", "candidates": candidates, "scores": [0.5, -1.0, 2.0], "milliseconds": 3.5}
    cache = RerankCache(tmp_path, "model")
    cache.store("key", entry)
    stored = cache.load("key", query_id="q", candidates=candidates)
    assert {name: stored[name] for name in entry} == entry
    assert stored["sha256"] == entry_checksum(stored) and stored["key"] == "key"

    sealed = seal(entry, "key")
    assert verify_rerank_entry(sealed, "key", "q", candidates) is None
    cases = {
        "made for query 'q'": dict(query_id="other"),
        "another key": dict(key="other-key"),
        "candidates are not": dict(candidates=["d1", "d3", "d2"]),
        "not a list of 3": dict(scores=[0.5, -1.0]),
        "score 1 is True": dict(scores=[0.5, True, 2.0]),
        "score 0 is '0.5'": dict(scores=["0.5", -1.0, 2.0]),
        "score 2 is inf": dict(scores=[0.5, -1.0, math.inf]),
        "milliseconds is 0": dict(milliseconds=0),
        "milliseconds is -3.5": dict(milliseconds=-3.5),
        "checksum mismatch": dict(scores=[2.0, -1.0, 0.5]),
    }
    for expected, changes in cases.items():
        query, changed = changes.pop("query_id", "q"), {**sealed, **changes}
        reason = verify_rerank_entry(changed, "key", query, candidates)
        assert reason is not None and expected in reason, (expected, reason)
    assert "not a JSON object" in verify_rerank_entry([1, 2], "key", "q", candidates)
    assert "missing milliseconds" in verify_rerank_entry(
        {name: value for name, value in sealed.items() if name != "milliseconds"}, "key", "q", candidates)


# --- cost -----------------------------------------------------------------------------------------

TINY = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64,
        "vocab_size": 30522}
PAIRS = {
    "q1": [("insulin receptor signal", "insulin binds its receptor " * 6), ("insulin receptor signal", "sleep")],
    "q2": [("tumor immune therapy", "immune checkpoint therapy shrinks tumors " * 10)],
    "q3": [("gene mutation risk", "mutations raise the risk " * 3), ("gene mutation risk", "a mouse trial")],
}


@pytest.fixture
def tiny_bert(tmp_path) -> Path:
    directory = tmp_path / "tiny-bert"
    directory.mkdir()
    (directory / "config.json").write_text(json.dumps({"model_type": "bert", "max_position_embeddings": 512,
                                                       **TINY}), encoding="utf-8")
    return directory


def _measure(model, cache, log):
    return measure_rerank_cost(PAIRS, model, cache_dir=cache, max_length=32, batch_size=2, device="cpu",
                               progress=False, log=log)


COST_CORRUPTIONS = {
    "negative milliseconds": (lambda e: e.update(milliseconds=-4.0), "milliseconds is -4.0"),
    "a wrong token count": (lambda e: e["tokens"].pop(), "tokens are not 2 counts"),
    "a checksum mismatch": (lambda e: e.update(milliseconds=e["milliseconds"] / 2), "checksum mismatch"),
    "negative tokens": (lambda e: e["tokens"].__setitem__(0, -1), "non-negative integers"),
    "an old entry without checksum": (lambda e: e.pop("sha256"), "no checksum"),
}


def test_every_cost_corruption_is_one_warning_then_measured_again(tiny_bert, tmp_path):
    cache = tmp_path / "cache"
    first = _measure(str(tiny_bert), cache, lambda _: None)
    entries = {query_id: first.session.entry_path(query_id, pairs) for query_id, pairs in PAIRS.items()}
    clean_log: list[str] = []
    again = _measure(str(tiny_bert), cache, clean_log.append)
    assert (again.resumed, again.computed, _warnings(clean_log)) == (["q1", "q2", "q3"], [], [])

    cases = {name: (lambda path, change=change: _edit(path, change), reason)
             for name, (change, reason) in COST_CORRUPTIONS.items()}
    cases["unreadable"] = (lambda path: path.write_text("[1, 2"), "unreadable")
    cases["copied from another query"] = (lambda path: shutil.copyfile(entries["q1"], path), "made for query 'q1'")
    for case, (corrupt, reason) in cases.items():
        corrupt(entries["q3"])
        log: list[str] = []
        measurement = _measure(str(tiny_bert), cache, log.append)
        warnings = _warnings(log)
        assert len(warnings) == 1, (case, warnings)
        assert "cost entry for query q3" in warnings[0] and reason in warnings[0], (case, warnings[0])
        assert warnings[0].endswith("; measuring again") and "\n" not in warnings[0], (case, warnings[0])
        assert (measurement.resumed, measurement.computed) == (["q1", "q2"], ["q3"]), case
        figures = measurement.as_dict()
        assert figures["per_query_pairs"] == {"q1": 2, "q2": 1, "q3": 2}, case
        assert all(value > 0 for value in figures["per_query_milliseconds"].values()), case
    settled: list[str] = []
    assert _measure(str(tiny_bert), cache, settled.append).resumed == ["q1", "q2", "q3"]
    assert _warnings(settled) == []
