"""Signed memos (generator.storage.memo): a remembered derivation answers only for the bytes it was
made from, and only when the tool itself wrote it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from generator.storage import memo as memo_module
from generator.claims.tracing.measured import ResultsFiles
from generator.storage.memo import MEMO_DIR, Memo
from generator.core.results import read_results

L03 = Path(__file__).resolve().parents[2] / "examples" / "l03"


def _memo(root: Path, key: str = "key") -> Memo:
    """A cache and a signing key of the test's own."""
    return Memo(root, key_file=root / key)


def _counting(outcome):
    calls = []

    def compute():
        calls.append(1)
        return outcome
    return compute, calls


def test_an_outcome_is_computed_once_and_then_remembered(tmp_path):
    memo = _memo(tmp_path)
    compute, calls = _counting({"problem": None})
    assert memo.remembered("kind", {"a": 1}, compute) == {"problem": None}
    assert _memo(tmp_path).remembered("kind", {"a": 1}, compute) == {"problem": None}
    assert len(calls) == 1
    # other inputs or another kind are other memos
    _memo(tmp_path).remembered("kind", {"a": 2}, compute)
    _memo(tmp_path).remembered("other", {"a": 1}, compute)
    assert len(calls) == 3


def _entries(cache: Path) -> list[Path]:
    return sorted(path for path in (cache / MEMO_DIR).glob("*.json"))


@pytest.mark.parametrize("forge", ["edited outcome", "foreign key", "unsigned", "cut short", "not json"])
def test_an_entry_the_tool_did_not_write_is_ignored_and_computed_again(tmp_path, forge):
    compute, calls = _counting({"problem": None})
    _memo(tmp_path).remembered("derivation", {"sha256": "x"}, compute)
    [entry] = _entries(tmp_path)
    record = json.loads(entry.read_text())
    if forge == "edited outcome":
        record["outcome"] = json.dumps({"problem": "forged"})
    elif forge == "foreign key":
        (tmp_path / "key").write_text("0" * 64)
    elif forge == "unsigned":
        del record["signature"]
    entry.write_text(json.dumps(record))
    if forge == "cut short":
        entry.write_text(entry.read_text()[:20])
    elif forge == "not json":
        entry.write_bytes(b"\xff\xfe")
    forged_outcome = {"problem": "a forged verdict"}
    assert _memo(tmp_path).remembered("derivation", {"sha256": "x"}, lambda: forged_outcome) == forged_outcome


def test_a_forged_entry_with_the_right_name_cannot_make_a_verdict_pass(tmp_path):
    """The attack: write `{"problem": null}` under the name the checker looks for, signed with a key
    of one's own (or none); the checker draws the figure again and says what is wrong."""
    memo = _memo(tmp_path)
    name = memo._name("kind", {"sha256": "x"})
    (tmp_path / MEMO_DIR).mkdir(parents=True)
    (tmp_path / MEMO_DIR / f"{name}.json").write_text(json.dumps({"outcome": "null", "signature": "0" * 64}))
    assert memo.remembered("kind", {"sha256": "x"}, lambda: "mismatch") == "mismatch"


def test_a_change_of_code_is_another_memo(tmp_path, monkeypatch):
    compute, calls = _counting(1)
    _memo(tmp_path).remembered("kind", {}, compute)
    monkeypatch.setattr(memo_module, "code_fingerprint", lambda: "another version of the package")
    _memo(tmp_path).remembered("kind", {}, compute)
    assert len(calls) == 2


def test_the_code_fingerprint_covers_every_module_and_the_statistics_libraries():
    fingerprint = memo_module.code_fingerprint()
    assert len(fingerprint) == 64
    assert memo_module._version_file("numpy").startswith(b"\n") or b"version" in memo_module._version_file("numpy")
    assert memo_module._version_file("no_such_library_here") == b"absent"


def test_a_cache_restored_from_another_machine_answers_for_nothing(tmp_path):
    """A CI cache restored from elsewhere holds entries signed with that machine's key, which is
    kept apart from the cache (generator.storage.memo.default_key_file) and so never comes with it."""
    compute, calls = _counting({"problem": None})
    _memo(tmp_path, key="their-key").remembered("derivation", {"sha256": "x"}, compute)
    assert _memo(tmp_path, key="our-key").remembered("derivation", {"sha256": "x"}, lambda: "drawn again") == \
        "drawn again"


def test_the_default_key_lives_outside_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("READOUT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    memo = Memo()
    assert memo.key_file == tmp_path / "config" / "readout" / "memo-signing.key"
    assert not memo.key_file.is_relative_to(memo.directory.parent)


def test_memos_can_be_turned_off(tmp_path, monkeypatch):
    monkeypatch.setenv("READOUT_NO_MEMO", "1")
    compute, calls = _counting(1)
    _memo(tmp_path).remembered("kind", {}, compute)
    _memo(tmp_path).remembered("kind", {}, compute)
    assert len(calls) == 2 and not (tmp_path / MEMO_DIR).exists()


def test_a_cache_that_cannot_be_written_costs_only_time(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    compute, calls = _counting(7)
    assert _memo(blocked).remembered("kind", {}, compute) == 7
    assert _memo(blocked).remembered("kind", {}, compute) == 7
    assert len(calls) == 2


def test_the_signing_key_is_private_and_made_once(tmp_path):
    _memo(tmp_path).remembered("kind", {}, lambda: 1)
    key = tmp_path / "key"
    first = key.read_bytes()
    assert key.stat().st_mode & 0o077 == 0 and len(first) == 64
    _memo(tmp_path).remembered("kind", {"b": 1}, lambda: 1)
    assert key.read_bytes() == first


# --- the checker's derivation ------------------------------------------------------------------


@pytest.fixture
def l03_outputs(tmp_path):
    outputs = tmp_path / "outputs"
    shutil.copytree(L03 / "outputs", outputs)
    return outputs


def _problem(outputs: Path, cache: Path) -> str | None:
    files = ResultsFiles(outputs, memo=_memo(cache))
    return files._problem(read_results(outputs / "results.json"))


def test_a_remembered_derivation_holds_only_while_every_file_it_read_is_unchanged(l03_outputs, tmp_path):
    cache = tmp_path / "cache"
    assert _problem(l03_outputs, cache) is None
    assert _entries(cache), "the derivation was not remembered"
    run = sorted((l03_outputs / "runs").glob("*"))[0]
    run.write_text(run.read_text().replace("\t1\t", "\t9\t", 1))
    problem = _problem(l03_outputs, cache)
    assert problem is not None and "changed after the results were sealed" in problem


def test_a_remembered_derivation_is_the_one_computed_afresh(l03_outputs, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    warm_first = _problem(l03_outputs, cache)
    warm = _problem(l03_outputs, cache)
    monkeypatch.setenv("READOUT_NO_MEMO", "1")
    assert warm_first == warm == _problem(l03_outputs, cache)


def test_without_a_home_directory_there_are_no_memos_and_no_error(monkeypatch):
    def no_home():
        raise RuntimeError("Could not determine home directory.")
    monkeypatch.setattr(memo_module, "default_cache_dir", no_home)
    compute, calls = _counting(3)
    assert Memo().remembered("kind", {}, compute) == 3 and Memo().remembered("kind", {}, compute) == 3
    assert len(calls) == 2


@pytest.mark.parametrize("document", sorted(path.name for path in (L03.parent.parent / "design").glob("*.md")))
def test_a_remembered_design_layout_is_the_parsed_one(document, tmp_path, monkeypatch):
    from generator.claims.record import fences, quotable_units

    source = (L03.parent.parent / "design" / document).read_text(encoding="utf-8")
    monkeypatch.setenv("READOUT_CACHE", str(tmp_path))
    monkeypatch.delenv("READOUT_NO_MEMO", raising=False)
    parsed = []
    for _ in range(2):   # the first parses and remembers, the second reads the memo back
        quotable_units._layout_of.cache_clear()
        fences._fences.cache_clear()
        parsed.append((quotable_units._layout_of(source), fences._fences(source)))
    assert _entries(tmp_path)
    monkeypatch.setenv("READOUT_NO_MEMO", "1")
    quotable_units._layout_of.cache_clear()
    fences._fences.cache_clear()
    assert parsed[0] == parsed[1] == (quotable_units._layout_of(source), fences._fences(source))
    quotable_units._layout_of.cache_clear()
    fences._fences.cache_clear()


@pytest.mark.parametrize("planted", ["fifo", "directory", "huge key"])
def test_a_planted_file_neither_blocks_nor_floods_a_check(tmp_path, planted):
    import os

    memo = _memo(tmp_path)
    name = memo._name("kind", {})
    (tmp_path / MEMO_DIR).mkdir()
    entry = tmp_path / MEMO_DIR / f"{name}.json"
    if planted == "fifo":
        os.mkfifo(entry)
    elif planted == "directory":
        entry.mkdir()
    else:
        (tmp_path / "key").write_bytes(b"0" * 10_000)
    assert memo.remembered("kind", {}, lambda: "computed") == "computed"


def test_a_corpus_count_is_remembered_only_for_the_very_file_it_was_made_from(tmp_path, monkeypatch):
    import hashlib
    import os
    import time

    from generator.claims.tracing import dataset

    monkeypatch.setenv("READOUT_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("READOUT_NO_MEMO", raising=False)
    monkeypatch.setattr(dataset, "_SETTLED_SECONDS", 0)   # every file counts as settled here
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_bytes(b'{"_id": "a"}\n{"_id": "b"}\n')
    recorded = hashlib.sha256(corpus.read_bytes()).hexdigest()
    dataset._counted.cache_clear()
    assert dataset._documents_in(corpus, recorded) == 2
    assert len(_entries(tmp_path / "cache")) == 1
    before = corpus.stat()
    time.sleep(0.01)
    corpus.write_bytes(b'{"_id": "a"}\n{"_id": "c"}\n')       # same size, other bytes,
    os.utime(corpus, ns=(before.st_atime_ns, before.st_mtime_ns))  # and the old times put back
    dataset._counted.cache_clear()
    assert dataset._documents_in(corpus, recorded) is None     # the change time gave it away
    dataset._counted.cache_clear()


def test_a_corpus_changed_a_moment_ago_is_counted_not_remembered(tmp_path, monkeypatch):
    import hashlib

    from generator.claims.tracing import dataset

    monkeypatch.setenv("READOUT_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("READOUT_NO_MEMO", raising=False)
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_bytes(b'{"_id": "a"}\n')
    dataset._counted.cache_clear()
    assert dataset._documents_in(corpus, hashlib.sha256(corpus.read_bytes()).hexdigest()) == 1
    assert _entries(tmp_path / "cache") == []
    dataset._counted.cache_clear()


def test_a_book_keeps_many_results_in_one_signed_memo(tmp_path, monkeypatch):
    from generator.storage.memo import MemoBook

    monkeypatch.setenv("READOUT_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("READOUT_NO_MEMO", raising=False)
    first = MemoBook("test book")
    assert first.get("a", lambda: "A") == "A" and first.get("b", lambda: "B") == "B"
    first.save()
    assert len(_entries(tmp_path / "cache")) == 1
    again = MemoBook("test book")
    assert again.get("a", lambda: "computed again") == "A"
    [entry] = _entries(tmp_path / "cache")
    record = json.loads(entry.read_text())
    record["outcome"] = json.dumps({"a": "forged"})
    entry.write_text(json.dumps(record))
    assert MemoBook("test book").get("a", lambda: "computed again") == "computed again"


def test_a_book_past_its_limit_keeps_what_the_last_check_used(tmp_path, monkeypatch):
    from generator.storage import memo as memo_module
    from generator.storage.memo import MemoBook

    monkeypatch.setenv("READOUT_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("READOUT_NO_MEMO", raising=False)
    monkeypatch.setattr(memo_module, "BOOK_LIMIT", 2)
    filled = MemoBook("small book")
    for key in "abc":
        filled.get(key, lambda key=key: key.upper())
    filled.save()
    assert MemoBook("small book").get("a", lambda: "gone") == "A"   # under the limit nothing was dropped
    filled.get("d", lambda: "D")
    filled.save()                                                   # 4 entries; the last check used only d
    assert MemoBook("small book").get("a", lambda: "gone") == "gone"
    assert MemoBook("small book").get("d", lambda: "gone") == "D"


@pytest.mark.parametrize("text", ["plain words", "a **bold** claim with `code` and [a link](#x)",
                                  "![an image](pic.png) and <b>html</b> & more", "line\nbreak\\\nhard"])
def test_a_remembered_rendering_is_the_parsed_one(text, tmp_path, monkeypatch):
    from generator.claims.record import quotable_units
    from generator.claims.language import visible

    monkeypatch.setenv("READOUT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("READOUT_NO_MEMO", "1")
    visible._render_cached.cache_clear()
    fresh = (visible._parsed(text), quotable_units._reduced(text))
    assert (visible._render_cached(text), quotable_units.reduce_markdown(text)) == fresh
    visible._render_cached.cache_clear()


# --- values kept with marshal (a parsed results file) ---------------------------------------------

VALUES = {"table": [{"search": "dense", "nDCG@5": 0.5, "measured": True, "note": None}], "z": -0.0,
          "per_query": {"q2": [1, 2.25], "q1": []}, "text": "naïve \u2014 ok"}


def _values_entry(root: Path) -> Path:
    [entry] = sorted((root / MEMO_DIR).glob(f"*{memo_module.VALUES_SUFFIX}"))
    return entry


def test_values_read_back_equal_in_order_and_type(tmp_path):
    _memo(tmp_path).store_values("parsed", "digest", VALUES)
    [found] = _memo(tmp_path).load_values("parsed", "digest")
    assert found == VALUES and list(found) == list(VALUES) and list(found["per_query"]) == ["q2", "q1"]
    assert str(found["z"]) == "-0.0" and found["table"][0]["measured"] is True
    assert _memo(tmp_path).load_values("parsed", "another digest") is None
    assert _memo(tmp_path).load_values("another kind", "digest") is None


@pytest.mark.parametrize("forge", ["edited body", "foreign key", "unsigned", "cut short", "empty"])
def test_values_the_tool_did_not_write_are_never_unmarshalled(tmp_path, forge, monkeypatch):
    import marshal

    _memo(tmp_path).store_values("parsed", "digest", VALUES)
    entry = _values_entry(tmp_path)
    signature, _, body = entry.read_bytes().partition(b"\n")
    if forge == "edited body":
        entry.write_bytes(signature + b"\n" + marshal.dumps({**VALUES, "z": 1.0}))
    elif forge == "foreign key":
        (tmp_path / "key").write_text("0" * 64)
    elif forge == "unsigned":
        entry.write_bytes(body)
    elif forge == "cut short":
        entry.write_bytes(entry.read_bytes()[:-10])
    else:
        entry.write_bytes(b"")
    unmarshalled = []
    monkeypatch.setattr(memo_module.marshal, "loads", lambda data: unmarshalled.append(data))
    assert _memo(tmp_path).load_values("parsed", "digest") is None
    assert unmarshalled == []


def test_a_results_file_reads_back_the_values_it_parsed_to(tmp_path, monkeypatch):
    import importlib

    seal = importlib.import_module("generator.core.results.seal")   # the package exports a function of that name
    monkeypatch.setenv("READOUT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("READOUT_NO_MEMO", raising=False)
    raw = (L03 / "outputs" / "results.json").read_bytes()
    parsed = seal._parsed(raw)
    assert list((tmp_path / "cache" / MEMO_DIR).glob(f"*{memo_module.VALUES_SUFFIX}")), "not remembered"
    monkeypatch.setattr(seal, "parse_results_json", lambda text: pytest.fail("parsed again"))
    again = seal._parsed(raw)
    assert again is not parsed and again == json.loads(raw)
    assert json.dumps(again) == json.dumps(parsed)   # the same order, the same float text


@pytest.mark.parametrize("text", ["plain words", "a **bold** claim with `code` and [a link](https://x.org)",
                                  "![an image](pic.png) and <b>html</b> & more", "<https://x.org> and a@b.org"])
def test_a_remembered_claim_rendering_is_the_rendered_one_without_a_markdown_parser(text, tmp_path, monkeypatch):
    from generator.render import doors

    monkeypatch.setenv("READOUT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("READOUT_NO_MEMO", raising=False)
    monkeypatch.setattr(memo_module, "_BOOKS", {})
    rendered = doors.HtmlDoor().claim(text)
    assert rendered == doors.markdown_inline().renderInline(doors._one_line(text), {}).strip().join(
        [doors.OPEN, doors.CLOSE])
    memo_module.save_books()
    monkeypatch.setattr(memo_module, "_BOOKS", {})
    monkeypatch.setattr(doors, "markdown_inline", lambda: pytest.fail("rendered again"))
    assert doors.HtmlDoor().claim(text) == rendered


def test_reading_a_memo_allocates_what_it_holds_not_the_limit(tmp_path):
    import tracemalloc

    _memo(tmp_path).remembered("kind", {"a": 1}, lambda: {"x": 1})
    _memo(tmp_path).store_values("parsed", "digest", VALUES)
    tracemalloc.start()
    try:
        assert _memo(tmp_path).remembered("kind", {"a": 1}, lambda: pytest.fail("computed again")) == {"x": 1}
        assert _memo(tmp_path).load_values("parsed", "digest") == (VALUES,)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1024 * 1024, f"{peak:,} bytes to read two small memos"


def test_a_json_memos_signed_body_never_verifies_as_values(tmp_path, monkeypatch):
    memo = _memo(tmp_path)
    memo.store("parsed", "digest", {"x": 1})
    [entry] = _entries(tmp_path)
    record = json.loads(entry.read_text())
    name = entry.name.removesuffix(".json")
    planted = tmp_path / MEMO_DIR / f"{name}{memo_module.VALUES_SUFFIX}"
    planted.write_bytes(record["signature"].encode() + b"\n" + record["outcome"].encode())
    unmarshalled = []
    monkeypatch.setattr(memo_module.marshal, "loads", lambda data: unmarshalled.append(data))
    assert _memo(tmp_path).load_values("parsed", "digest") is None
    assert unmarshalled == []
