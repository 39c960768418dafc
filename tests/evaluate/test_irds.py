"""Datasets by ir_datasets identifier (generator/evaluate/irds.py): `data: irds:<id>` is exported
once to a BEIR folder in the cache and evaluated like any other. ir_datasets itself needs the
network, so these tests stand a small fake module in for it: the export, its caching, every
refusal, and a whole `readout evaluate` from an identifier."""

from __future__ import annotations

import json
import sys
import types
from collections import namedtuple
from pathlib import Path

import pytest

from generator.commands.cli import main
from generator.storage.errors import InputError
from generator.evaluate.data import load_dataset
from generator.core.data_source import export_dir, identifier_of
from generator.evaluate.irds import ensure_exported, is_exported
from generator.core.options import build_options

Doc = namedtuple("Doc", "doc_id title text")
Query = namedtuple("Query", "query_id text")
Qrel = namedtuple("Qrel", "query_id doc_id relevance iteration")


class FakeDataset:
    def __init__(self, docs, queries, qrels, fail_on=None):
        self.docs, self.queries, self.qrels, self.fail_on = docs, queries, qrels, fail_on

    def has_docs(self):
        return bool(self.docs)

    def has_queries(self):
        return bool(self.queries)

    def has_qrels(self):
        return bool(self.qrels)

    def docs_iter(self):
        if self.fail_on == "docs":
            raise ConnectionError("Could not download https://example.org/corpus.zip: network is unreachable")
        return iter(self.docs)

    def queries_iter(self):
        return iter(self.queries)

    def qrels_iter(self):
        return iter(self.qrels)


def _from_beir(root: Path) -> FakeDataset:
    docs = [Doc(r["_id"], r["title"], r["text"]) for r in map(json.loads, (root / "corpus.jsonl").open())]
    queries = [Query(r["_id"], r["text"]) for r in map(json.loads, (root / "queries.jsonl").open())]
    qrels = [Qrel(*line.split("\t")[:2], int(line.split("\t")[2]), "0")
             for line in (root / "qrels" / "test.tsv").read_text().splitlines()[1:]]
    return FakeDataset(docs, queries, qrels)


@pytest.fixture
def fake_irds(monkeypatch, make_small_dataset, tmp_path):
    """A stand-in `ir_datasets` module knowing `fake/small` (the small fixture) and a few broken ids."""
    small = _from_beir(make_small_dataset(tmp_path / "beir"))
    calls: list[str] = []
    known = {"fake/small": small,
             "fake/no-qrels": FakeDataset(small.docs, small.queries, []),
             "fake/offline": FakeDataset(small.docs, small.queries, small.qrels, fail_on="docs")}

    def load(identifier):
        calls.append(identifier)
        return known[identifier]

    module = types.SimpleNamespace(load=load, __version__="0.0-fake")
    monkeypatch.setitem(sys.modules, "ir_datasets", module)
    module.calls = calls
    return module


def test_an_identifier_is_recognised_only_with_its_prefix():
    assert identifier_of("irds:beir/scifact/test") == "beir/scifact/test"
    assert identifier_of(Path("irds:beir/scifact/test")) == "beir/scifact/test"
    for data in ("beir/scifact", "../shared/data/scifact", "irds:", "IRDS:beir/scifact", None):
        assert identifier_of(data) is None


def test_the_export_is_a_beir_folder_every_stage_reads_and_is_made_once(fake_irds, tmp_path):
    target = export_dir("fake/small", tmp_path / "cache")
    log: list[str] = []
    ensure_exported("fake/small", target, log.append)
    dataset = load_dataset(target)
    assert len(dataset.documents) == 80 and len(dataset.queries) == 6
    assert sum(len(grades) for grades in dataset.qrels.scores.values()) == 12
    assert any("exporting irds:fake/small" in line for line in log)
    source = json.loads((target / "source.json").read_text())
    assert source["identifier"] == "fake/small" and source["ir_datasets"] == "0.0-fake"
    ensure_exported("fake/small", target, log.append)
    assert fake_irds.calls == ["fake/small"]          # the second time, the cache answers


def test_a_damaged_export_is_exported_again(fake_irds, tmp_path):
    target = ensure_exported("fake/small", export_dir("fake/small", tmp_path / "cache"), lambda _: None)
    with (target / "corpus.jsonl").open("a") as corpus:
        corpus.write('{"_id": "forged", "title": "", "text": "planted"}\n')
    assert not is_exported(target, "fake/small")
    ensure_exported("fake/small", target, lambda _: None)
    assert fake_irds.calls == ["fake/small", "fake/small"]
    assert "forged" not in (target / "corpus.jsonl").read_text()


def test_the_export_of_one_identifier_is_not_read_as_another(fake_irds, tmp_path):
    target = ensure_exported("fake/small", tmp_path / "shared", lambda _: None)
    assert not is_exported(target, "fake/other")
    assert export_dir("fake/small", tmp_path) != export_dir("fake/small2", tmp_path)


@pytest.mark.parametrize("identifier, message", [
    ("fake/unknown", "ir_datasets has no dataset 'fake/unknown'"),
    ("fake/no-qrels", "has no qrels"),
    ("fake/offline", "ir_datasets could not provide 'fake/offline': ConnectionError: Could not download"),
])
def test_what_ir_datasets_cannot_give_is_one_line(fake_irds, tmp_path, identifier, message):
    target = export_dir(identifier, tmp_path / "cache")
    with pytest.raises(InputError, match=message) as raised:
        ensure_exported(identifier, target, lambda _: None)
    assert "\n" not in str(raised.value) and raised.value.field == "data"
    assert not target.exists() or not is_exported(target, identifier)


def test_without_ir_datasets_the_error_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "ir_datasets", None)   # import fails as when not installed
    with pytest.raises(InputError, match=r"needs the ir_datasets package: pip install 'traced-readout\[ir-datasets\]'"):
        ensure_exported("beir/scifact/test", tmp_path / "x", lambda _: None)


def test_the_options_read_the_export_and_keep_the_identifier(tmp_path):
    options = build_options(Path("irds:beir/scifact/test"), tmp_path / "outputs", {"cache_dir": str(tmp_path / "c")})
    assert options.data_source == "irds:beir/scifact/test"
    assert options.data == export_dir("beir/scifact/test", tmp_path / "c")
    plain = build_options(tmp_path / "data", tmp_path / "outputs", {})
    assert plain.data_source is None and plain.data == tmp_path / "data"


@pytest.mark.model
def test_readout_evaluate_runs_on_an_identifier(fake_irds, tmp_path, monkeypatch, capsys):
    project = tmp_path / "project"
    project.mkdir()
    (project / "readout.yaml").write_text(
        "title: From an identifier\nkind: beir\ndata: irds:fake/small\n"
        "evaluate:\n  dense_model: minilm-offline\n  skip_rerank: true\n  progress: false\n"
        f"  bootstrap_resamples: 200\n  cache_dir: {tmp_path / 'cache'}\n", encoding="utf-8")
    assert main(["evaluate", str(project)]) == 0
    results = json.loads((project / "outputs" / "results.json").read_text())
    manifest = results["manifest"]
    assert manifest["data_source"] == "irds:fake/small" and "data_directory" not in manifest
    assert manifest["reproduction"]["of"] == "custom dataset"
    assert results["queries"] == 6 and [row["search"] for row in results["table"]][:3] == ["dense", "sparse", "hybrid"]
    assert "exporting irds:fake/small" in capsys.readouterr().err
