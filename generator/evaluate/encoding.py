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


# A text longer than this many characters per token of max_seq_length is cut before it is tokenized
# (bounded_text); a SciFact abstract (about 1,500 characters) is never touched.
CHARACTERS_PER_TOKEN_BOUND = 32
# Tokens beyond max_seq_length a cut prefix must still hold: the tokens next to the cut may differ
# from the whole text's, and these are dropped by truncation either way.
CUT_MARGIN_TOKENS = 16


def bounded_text(model: Any, text: str) -> str:
    """`text`, or a prefix of it that the model reads exactly as it reads the whole text.

    The tokenizer splits on whitespace before it splits words, so the tokens of a prefix that ends
    at whitespace are the whole text's first tokens; when the prefix holds more than max_seq_length
    (plus a margin) of them, truncation keeps the same ones. Tokenizing a 1 MB document in full only
    to keep its first 256 tokens held gigabytes (sixty of them peaked at 2.1 GiB). The prefix is
    checked with the model's own tokenizer; if it is too short, a longer one is tried, up to the
    whole text."""
    limit = getattr(model, "max_seq_length", None)
    tokenizer = getattr(model, "tokenizer", None)
    if not isinstance(limit, int) or limit <= 0 or tokenizer is None:
        return text
    size = limit * CHARACTERS_PER_TOKEN_BOUND
    while size < len(text):
        cut = max(text.rfind(" ", 0, size), text.rfind("\n", 0, size))
        if cut > 0:
            prefix = text[:cut]
            if len(tokenizer(prefix, add_special_tokens=False, verbose=False)["input_ids"]) >= limit + CUT_MARGIN_TOKENS:
                return prefix
        size *= 4
    return text


def encode_batch(model: Any, texts: Sequence[str]) -> np.ndarray:
    """One batch's normalised float32 embeddings, encoded as one forward pass (each text bounded:
    `bounded_text`, which the model reads as the whole text)."""
    return np.asarray(model.encode([bounded_text(model, text) for text in texts], batch_size=max(len(texts), 1),
                                   normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False),
                      dtype=np.float32)


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
