"""Shared fixtures: small BEIR-layout datasets and a tiny random cross-encoder.

Unit tests stay on these fixtures so the suite is fast; only tests marked `integration` read
the real SciFact copy.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

REPOSITORY_ROOT = Path(__file__).resolve().parent.parent
SCIFACT_DIR = (REPOSITORY_ROOT / ".." / "shared" / "data" / "scifact").resolve()

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


@pytest.fixture(scope="session")
def tiny_cross_encoder(tmp_path_factory) -> Path:
    """A randomly initialised two-layer BERT cross-encoder (one output): its scores mean nothing;
    it exists to exercise the rerank mechanics without a model hub."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    from generator.models import _packaged_minilm_path

    torch.manual_seed(0)
    target = tmp_path_factory.mktemp("models") / "tiny-random-cross-encoder"
    tokenizer = BertTokenizerFast.from_pretrained(str(_packaged_minilm_path()))
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=512,
                        num_labels=1)
    BertForSequenceClassification(config).save_pretrained(str(target))
    tokenizer.save_pretrained(str(target))
    return target
