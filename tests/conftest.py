"""Shared fixtures (the only place tests share code): small BEIR-layout datasets, a small
readout project checked by the real checker, and a tiny random cross-encoder.

Unit tests stay on these fixtures so the suite is fast; only tests marked `integration` read
the real SciFact copy, and only tests marked `model` load torch or the packaged MiniLM.

`make_project(root)` writes readout.yaml (the repository's own `outputs:` block, so the real
configuration is what gets tested), one design document, a ledger with claims in every output,
a results.json with the four rows (the rerank row not measured), a design freeze and a
first-draft history entry.
"""

from __future__ import annotations

import copy
import json
import random
import shutil
import textwrap
from pathlib import Path

import pytest
import yaml

from generator.claims.freeze import freeze_project
from generator.project import load_project

REPOSITORY_ROOT = Path(__file__).resolve().parent.parent
SCIFACT_DIR = (REPOSITORY_ROOT / ".." / "shared" / "data" / "scifact").resolve()
ROOT_CONFIG = yaml.safe_load((REPOSITORY_ROOT / "readout.yaml").read_text(encoding="utf-8"))

WORDS = ("protein cell gene tumor virus insulin receptor mutation therapy immune brain neuron blood "
         "vaccine enzyme kinase signal pathway mouse human trial dose risk cancer heart lung liver "
         "bacteria antibody memory sleep diet obesity glucose").split()


def write_beir(root: Path, corpus: list[dict], queries: list[dict], qrels: list[tuple[str, str, object]]) -> Path:
    (root / "qrels").mkdir(parents=True, exist_ok=True)
    (root / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in corpus), encoding="utf-8")
    (root / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in queries), encoding="utf-8")
    lines = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{d}\t{s}" for q, d, s in qrels]
    (root / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def make_small_dataset(root: Path, documents: int = 80, queries: int = 6, seed: int = 7) -> Path:
    rng = random.Random(seed)
    corpus = [{"_id": f"doc{i:03d}", "title": " ".join(rng.sample(WORDS, 3)),
               "text": " ".join(rng.choice(WORDS) for _ in range(25))} for i in range(documents)]
    query_records, qrels = [], []
    for j in range(queries):
        relevant = rng.sample(range(documents), 2)
        words = corpus[relevant[0]]["title"].split() + rng.sample(WORDS, 2)
        query_records.append({"_id": f"q{j}", "text": " ".join(words)})
        qrels += [(f"q{j}", f"doc{r:03d}", 1) for r in relevant]
    return write_beir(root, corpus, query_records, qrels)


@pytest.fixture
def small_dataset(tmp_path: Path) -> Path:
    return make_small_dataset(tmp_path / "data")


@pytest.fixture(name="make_small_dataset")
def make_small_dataset_fixture():
    """A factory: `make_small_dataset(root, documents=80, queries=6, seed=7)`."""
    return make_small_dataset


@pytest.fixture
def repository() -> Path:
    return REPOSITORY_ROOT


@pytest.fixture(scope="session")
def scifact_dir() -> Path:
    if not SCIFACT_DIR.is_dir():
        pytest.fail(f"BEIR SciFact is expected at {SCIFACT_DIR} (CI has it read-only)")
    return SCIFACT_DIR


DECISIONS = """\
# Decision records

## Fusion

Hybrid uses RRF with constant 60 over both top-50 lists.

## Reranking

The cross-encoder reorders the same 50 candidates; nothing enters or leaves.
"""


def _row(search, r5, r50, n5, dense=(0.61, 0.88, 0.5512), ci=True):
    deltas = {"recall@5": r5 - dense[0], "recall@50": r50 - dense[1], "nDCG@5": n5 - dense[2]}
    row = {"search": search, "measured": True, "model": f"{search}-model", "recall@5": r5, "recall@50": r50,
           "nDCG@5": n5, "delta_recall@5_vs_dense": deltas["recall@5"],
           "delta_recall@50_vs_dense": deltas["recall@50"], "delta_nDCG@5_vs_dense": deltas["nDCG@5"]}
    if ci:
        row["paired_vs_dense"] = {metric: {"delta": delta, "ci95_low": delta - 0.05, "ci95_high": delta + 0.04,
                                           "p_value": 0.3, "wins": 3, "ties": 15, "losses": 2}
                                  for metric, delta in deltas.items()}
    return row


RESULTS = {
    "documents": 5183,
    "queries": 20,
    "candidate_depth": 50,
    "query_set": "sample",
    "table": [
        _row("dense", 0.61, 0.88, 0.5512),
        _row("sparse", 0.58, 0.85, 0.52),
        _row("hybrid", 0.66, 0.9, 0.6034),
        {"search": "hybrid+rerank", "measured": False, "not_measured_reason": "no cross-encoder offline",
         "model": "BAAI/bge-reranker-v2-m3", "recall@5": None, "recall@50": None, "nDCG@5": None,
         "delta_recall@5_vs_dense": None, "delta_recall@50_vs_dense": None, "delta_nDCG@5_vs_dense": None},
    ],
    "same_50_rows_after_rerank": None,
    "p95_rerank_milliseconds": None,
    "manifest": {
        "inputs": {"corpus.jsonl": {"sha256": "ab12" * 16, "bytes": 10}},
        "parameters": {"candidate_depth": 50},
        "models": {"dense": {"name": "sentence-transformers/all-MiniLM-L6-v2", "path": "/site-packages/x",
                             "weights_sha256": "cd34" * 16},
                   "rerank": {"name": "BAAI/bge-reranker-v2-m3", "path": None, "weights_sha256": None}},
        "packages": {"sentence-transformers": "6.2.0", "torch": "2.13.0"},
        "platform": "Linux-x86_64", "threads": 2,
        "started_at": "2026-11-30T08:00:00Z", "finished_at": "2026-11-30T08:03:00Z",
    },
}

CLAIMS = """\
  - id: verdict-hybrid
    output: readout
    section: verdict
    kind: evaluative
    text: "Hybrid reaches nDCG@5 {hybrid:.3f} against dense {dense:.3f}."
    sources:
      - measured:
          values: {hybrid: "table[search=hybrid].nDCG@5", dense: "table[search=dense].nDCG@5"}
          predicate: "hybrid > dense"
  - id: rrf-constant
    output: readout
    section: results
    kind: factual
    text: "Hybrid fuses both lists with RRF constant 60."
    sources:
      - design: {document: decisions.md, quote: "RRF with constant 60"}
  - id: rerank-not-measured
    output: readout
    section: cost
    kind: factual
    text: "The rerank row was not measured: {why}."
    sources:
      - measured:
          values: {measured: "table[search=hybrid+rerank].measured",
                   why: "table[search=hybrid+rerank].not_measured_reason"}
          predicate: "not measured"
  - id: struck-speed
    output: readout
    section: cost
    kind: performance
    text: "Reranking adds 12 ms per query."
    status: struck
    strike_reason: "typed by hand; the rerank row was not measured"
    strike_display: strike
  - id: omitted-guess
    output: readout
    section: limits
    kind: causal
    text: "The guess that should never be printed."
    status: struck
    strike_reason: "no source"
    strike_display: omit
  - id: same-candidates
    output: teachback
    section: candidates
    kind: factual
    text: "The cross-encoder reorders the *same* candidates; nothing enters or leaves."
    sources:
      - design: {document: decisions.md, quote: "nothing enters or leaves"}
  - id: happened-hybrid
    output: aar
    section: happened
    kind: performance
    text: "Hybrid reached nDCG@5 {hybrid:.3f}."
    sources:
      - measured:
          values: {hybrid: "table[search=hybrid].nDCG@5"}
"""

FIRST_DRAFT = {"checked_at": "2026-11-30T07:00:00Z", "ledger_sha256": "0" * 64, "untraceable": 4,
               "struck": 0, "total": 7}


def ledger_text(extra: str = "") -> str:
    extra = textwrap.dedent(extra)
    return "version: 1\nclaims:\n" + CLAIMS + "".join(
        "  " + line if line.strip() else line for line in extra.splitlines(keepends=True))


def _make_project(root: Path, *, extra_claims: str = "", results=None, outputs=None,
                  own_templates: bool = False) -> Path:
    """Write a fixture project at `root` and freeze its design; returns root."""
    (root / "design").mkdir(parents=True)
    (root / "claims").mkdir()
    (root / "outputs").mkdir()
    config = {"title": ROOT_CONFIG["title"], "kind": "beir",
              "outputs": copy.deepcopy(outputs if outputs is not None else ROOT_CONFIG["outputs"])}
    (root / "readout.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    (root / "design" / "decisions.md").write_text(DECISIONS, encoding="utf-8")
    (root / "outputs" / "results.json").write_text(
        json.dumps(results if results is not None else RESULTS, indent=2), encoding="utf-8")
    (root / "claims" / "ledger.yaml").write_text(ledger_text(extra_claims), encoding="utf-8")
    (root / "claims" / "trace-history.jsonl").write_text(json.dumps(FIRST_DRAFT) + "\n", encoding="utf-8")
    if own_templates:
        shutil.copytree(REPOSITORY_ROOT / "templates", root / "templates")
    freeze_project(load_project(root))
    return root




@pytest.fixture(name="make_project")
def make_project_fixture():
    """A factory: `make_project(root, extra_claims="", results=None, outputs=None, own_templates=False)`."""
    return _make_project


@pytest.fixture
def fixture_results() -> dict:
    """A fresh copy of the fixture project's results.json content."""
    return copy.deepcopy(RESULTS)


@pytest.fixture(scope="session")
def tiny_cross_encoder(tmp_path_factory) -> Path:
    """A randomly initialised two-layer BERT cross-encoder (one output): its scores mean nothing;
    it exists to exercise the rerank mechanics without a model hub."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    from generator.evaluate.models import _packaged_minilm_path

    torch.manual_seed(0)
    target = tmp_path_factory.mktemp("models") / "tiny-random-cross-encoder"
    tokenizer = BertTokenizerFast.from_pretrained(str(_packaged_minilm_path()))
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=512,
                        num_labels=1)
    BertForSequenceClassification(config).save_pretrained(str(target))
    tokenizer.save_pretrained(str(target))
    return target
