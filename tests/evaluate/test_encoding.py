"""Encoding in shards gives the embeddings of one `encode` call, bit for bit (what lets a corpus be
written batch by batch into a memory-mapped entry, or spread over Ray workers)."""

from __future__ import annotations

import numpy as np
import pytest

from generator.evaluate.encoding import encode_into, encode_shard, encoding_batches, shards

pytestmark = [pytest.mark.model, pytest.mark.usefixtures("one_torch_thread")]


@pytest.fixture(scope="module")
def model():
    from generator.evaluate.models import load_bi_encoder, resolve_model

    return load_bi_encoder(resolve_model("minilm-offline"), "cpu")


# Lengths vary (so the length sort matters) and repeat (so ties in it matter too).
TEXTS = [f"document {i} on {'protein folding and ' * (i % 9)}cell signalling" for i in range(75)]


def test_the_batches_are_the_encoders_own_and_a_shard_never_splits_one(model):
    batches = encoding_batches(model, TEXTS, 16)
    assert [len(batch) for batch in batches] == [16, 16, 16, 16, 11]
    assert sorted(np.concatenate(batches).tolist()) == list(range(len(TEXTS)))
    grouped = list(shards(batches, 2))
    assert [len(group) for group in grouped] == [2, 2, 1]
    assert all(any(b is batch for group in grouped for b in group) for batch in batches)


def test_batch_by_batch_into_rows_equals_one_encode_call(model):
    whole = model.encode(TEXTS, batch_size=16, normalize_embeddings=True, convert_to_numpy=True,
                         show_progress_bar=False)
    rows = np.zeros_like(whole)
    seen = []
    encode_into(model, TEXTS, 16, rows, seen.append)
    assert np.array_equal(rows, whole)
    assert seen == [16, 16, 16, 16, 11]


def test_shards_in_any_order_equal_one_encode_call(model):
    whole = model.encode(TEXTS, batch_size=16, normalize_embeddings=True, convert_to_numpy=True,
                         show_progress_bar=False)
    batches = encoding_batches(model, TEXTS, 16)
    rows = np.zeros_like(whole)
    for group in reversed(list(shards(batches, 2))):      # as workers might finish them
        for batch, embeddings in zip(group, encode_shard(model, [[TEXTS[i] for i in b[::-1]] for b in group])):
            rows[batch[::-1]] = embeddings
    assert np.array_equal(rows, whole)


# --- long documents: cut before tokenizing, read exactly as the whole ------------------------------


def _long_texts(scifact_dir) -> list[str]:
    import json

    words = []
    with open(scifact_dir / "corpus.jsonl", encoding="utf-8") as handle:
        for line, _ in zip(handle, range(400)):
            words.extend(json.loads(line)["text"].split())
    body = " ".join(words)                                   # about 400 abstracts' words
    return [
        body,                                                 # ~600,000 characters
        body.replace(" ", "\n"),                              # newline-separated
        "   ".join(words[:20000]) + " " * 50000,              # runs of spaces, a long blank tail
        "x" * 30000 + " " + body[:40000],                     # a first "word" of 30,000 characters
        ("\u00e9t\u00e9 na\u00efve r\u00e9sum\u00e9 " * 5000),   # accents the tokenizer strips
        "nowhitespace" * 3000,                               # no cut point: encoded whole
        "short text, never cut",
    ]


def test_a_long_document_is_cut_to_a_prefix_the_model_reads_as_the_whole(model, scifact_dir):
    from generator.evaluate.encoding import bounded_text

    texts = _long_texts(scifact_dir)
    bounded = [bounded_text(model, text) for text in texts]
    assert all(len(cut) < len(text) for cut, text in zip(bounded[:5], texts[:5]))
    assert bounded[5] == texts[5] and bounded[6] == texts[6]
    tokenize = model.tokenize
    for cut, text in zip(bounded, texts):
        assert text.startswith(cut)
        whole, part = tokenize([text]), tokenize([cut])
        assert np.array_equal(whole["input_ids"].numpy(), part["input_ids"].numpy())


def test_long_documents_embed_to_the_same_bits_as_one_encode_call_of_the_whole_texts(model, scifact_dir):
    texts = _long_texts(scifact_dir) + TEXTS[:9]
    whole = model.encode(texts, batch_size=4, normalize_embeddings=True, convert_to_numpy=True,
                         show_progress_bar=False)
    rows = np.zeros_like(whole)
    encode_into(model, texts, 4, rows)
    assert np.array_equal(rows, whole)
