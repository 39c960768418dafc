"""Still open from round 3 (issue 47, part 8): the BM25 index's full-disk error names its file; two
document ids that differ only by Unicode normalisation (NFC against NFD) are refused; an empty
HOME is no home, never "/"."""

from __future__ import annotations

import json
import os
import pwd
import unicodedata
from pathlib import Path

import pytest

from generator.commands.cli import error_line
from generator.storage.errors import InputError
from generator.storage.paths import default_cache_dir
from generator.storage.memo import default_key_file
from tests.conftest import make_small_dataset, run_tool, write_beir


# --- a full disk while the BM25 index is saved ---------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a small file system needs root")
    mount = tmp_path / "small"
    mount.mkdir()
    done = run_tool("mount", "-t", "tmpfs", "-o", "size=12k", "tmpfs", str(mount))
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    yield mount
    run_tool("umount", str(mount))


def test_a_full_disk_while_the_bm25_index_is_saved_names_the_entry(tmp_path, small_disk):
    from generator.evaluate.data import load_dataset
    from generator.evaluate.retrieval import sparse_rankings

    dataset = load_dataset(make_small_dataset(tmp_path / "data", documents=300))
    queries = dict(list(dataset.queries.items())[:3])
    with pytest.raises(OSError) as raised:
        sparse_rankings(dataset.documents, queries, 10, cache_dir=small_disk / "cache")
    line = error_line(raised.value)
    # bm25s's array write said only "5766 requested and 3040 written": no errno, no file.
    assert line.startswith("Error: No space left on device ("), line
    assert f": {small_disk / 'cache' / 'sparse'}/" in line, line
    assert [path.name for path in (small_disk / "cache" / "sparse").iterdir() if not path.name.endswith(".lock")] == []


# --- ids in two Unicode normalisations ------------------------------------------------------------------

NFC = unicodedata.normalize("NFC", "café")
NFD = unicodedata.normalize("NFD", "café")


@pytest.mark.parametrize("kind", ["corpus", "queries"])
def test_two_ids_that_differ_only_by_normalisation_are_refused(tmp_path, kind):
    from generator.evaluate.data import load_dataset

    assert NFC != NFD and len(NFD) == len(NFC) + 1
    documents = [{"_id": "d1", "title": "", "text": "one"}, {"_id": "d2", "title": "", "text": "two"}]
    queries = [{"_id": "q1", "text": "first"}, {"_id": "q2", "text": "second"}]
    records = documents if kind == "corpus" else queries
    records[0]["_id"], records[1]["_id"] = NFC, NFD
    root = write_beir(tmp_path / "data", documents, queries, [(queries[0]["_id"], documents[0]["_id"], 1)])
    with pytest.raises(InputError) as refused:
        load_dataset(root)
    name = "corpus.jsonl" if kind == "corpus" else "queries.jsonl"
    assert str(refused.value) == (
        f"{root / name}:2: _id: id {NFD!r} is id {NFC!r} of line 1 in another Unicode normalisation (U+0063 U+0061 "
        "U+0066 U+0065 U+0301 against U+0063 U+0061 U+0066 U+00E9): two ids that look the same are one id; spell it "
        "one way")


def test_one_id_spelled_one_way_loads(tmp_path):
    from generator.evaluate.data import load_dataset

    documents = [{"_id": NFD, "title": "", "text": "one"}, {"_id": "d2", "title": "", "text": "two"}]
    root = write_beir(tmp_path / "data", documents, [{"_id": "q1", "text": "first"}], [("q1", NFD, 1)])
    assert [document.doc_id for document in load_dataset(root).documents] == [NFD, "d2"]


# --- an empty HOME ---------------------------------------------------------------------------------------


def test_an_empty_home_is_no_home_not_the_root_directory(monkeypatch):
    monkeypatch.setenv("HOME", "")
    monkeypatch.delenv("READOUT_CACHE", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    assert default_cache_dir() == home / ".cache" / "readout"
    assert default_key_file() == home / ".config" / "readout" / "memo-signing.key"
    assert default_cache_dir() != Path("/.cache/readout") or home == Path("/")


def test_an_empty_home_for_a_uid_without_one_asks_for_readout_cache(monkeypatch):
    def unknown(uid):
        raise KeyError(f"getpwuid(): uid not found: {uid}")

    monkeypatch.setenv("HOME", "")
    monkeypatch.delenv("READOUT_CACHE", raising=False)
    monkeypatch.setattr(pwd, "getpwuid", unknown)
    with pytest.raises(InputError) as refused:
        default_cache_dir()
    assert str(refused.value).startswith("no home directory to keep the cache in")
