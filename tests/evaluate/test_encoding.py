"""Encoding in shards gives the embeddings of one `encode` call, bit for bit (what lets a corpus be
written batch by batch into a memory-mapped entry, or spread over Ray workers)."""

from __future__ import annotations

import numpy as np
import pytest

from generator.evaluate.encoding import encode_into, encode_shard, encoding_batches, shards

pytestmark = pytest.mark.model


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
