"""Corpus encoding in the very batches `SentenceTransformer.encode` would form, so that it can be
cut into shards (written piece by piece into a memory-mapped cache entry, or spread over Ray
workers: generator.evaluate.distributed) and still give the embeddings of one `encode` call over
the whole corpus, bit for bit.

Why the batches, and only the batches, must be the same: a document's embedding depends on the
other documents of its batch (they set the padded length, and so the shapes of the matrix
products), but not on their order inside the batch nor on the thread count (both measured here:
bit-identical). `encode` sorts the inputs by length, longest first, and cuts that order into
batches of `batch_size`; `encoding_batches` reproduces that cut, and `encode_batch` encodes one
batch on its own. tests/evaluate/test_encoding.py holds the shards to one `encode` call.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Sequence

import numpy as np

# Batches handed out at a time: one shard's texts and embeddings stay small (a few MB), and a
# progress line can follow them.
BATCHES_PER_SHARD = 16


def _input_length(model: Any) -> Callable[[Any], int]:
    # sentence-transformers 6 calls it _input_length; 5 called it _text_length.
    length = getattr(model, "_input_length", None) or getattr(model, "_text_length")
    return length


def encoding_batches(model: Any, texts: Sequence[str], batch_size: int) -> list[np.ndarray]:
    """The corpus positions of each batch `model.encode(texts, batch_size=batch_size)` forms."""
    length = _input_length(model)
    order = np.argsort([-length(text) for text in texts])
    can_flatten = getattr(model, "_can_flatten_inputs", None)
    if callable(can_flatten) and can_flatten():
        order = model._interleave_sorted_indices(order)
    order = np.asarray(order, dtype=np.int64)
    return [order[start:start + batch_size] for start in range(0, len(order), batch_size)]


def shards(batches: Sequence[np.ndarray], batches_per_shard: int = BATCHES_PER_SHARD) -> Iterator[list[np.ndarray]]:
    """Consecutive groups of whole batches: a shard never splits a batch."""
    for start in range(0, len(batches), batches_per_shard):
        yield list(batches[start:start + batches_per_shard])


def encode_batch(model: Any, texts: Sequence[str]) -> np.ndarray:
    """One batch's normalised float32 embeddings, encoded as one forward pass."""
    return np.asarray(model.encode(list(texts), batch_size=max(len(texts), 1), normalize_embeddings=True,
                                   convert_to_numpy=True, show_progress_bar=False), dtype=np.float32)


def encode_shard(model: Any, batch_texts: Sequence[Sequence[str]]) -> list[np.ndarray]:
    """Each batch of a shard encoded on its own (what a worker does with the shard it is given)."""
    return [encode_batch(model, texts) for texts in batch_texts]


def encode_into(model: Any, texts: Sequence[str], batch_size: int, out: np.ndarray,
                on_batch: Callable[[int], None] | None = None) -> np.ndarray:
    """Fill `out` (rows in corpus order, e.g. a memory-mapped cache entry) batch by batch: the
    embeddings of `model.encode(texts, batch_size)` with never more than one batch in memory."""
    for batch in encoding_batches(model, texts, batch_size):
        out[batch] = encode_batch(model, [texts[i] for i in batch])
        if on_batch is not None:
            on_batch(len(batch))
    return out
