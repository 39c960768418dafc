"""The corpus as bm25s token ids, read one document at a time and held packed: one int32 array of
every document's ids end to end, and where each document starts.

`bm25s.tokenize(texts)` holds the whole list of texts and returns a Python list of ids per
document: at a million 60-word documents that is some 35 million int objects, about 1 GB, on top of
a second copy of every text. Here bm25s's own tokenizer splits a chunk of documents at a time
(the same pattern, lower-casing and stopwords), and the ids are assigned exactly as bm25s assigns
them (in order of first appearance over the corpus), so the index built from `PackedTokens` is the
one `bm25s.tokenize` would give, bit for bit (tests/evaluate/test_sparse_tokens.py), in about
4 bytes per token. The trade-off: bm25s reads the ids as lists, so each document's list is made
again each time the index builder walks the corpus (three walks), which costs a few seconds per
million documents.
"""

from __future__ import annotations

from array import array
from itertools import islice
from typing import Iterable, Iterator, Sequence

from generator.core.dataclass import dataclass

# Documents split per call of bm25s's tokenizer: enough to amortise the call, few enough that the
# chunk's token strings are a few MB.
TOKENIZE_CHUNK = 10_000


class PackedTokenIds(Sequence[list[int]]):
    """Each document's token ids, as the list bm25s expects, from the packed arrays."""

    def __init__(self, ids: array, starts: array):
        self._ids = ids
        self._starts = starts

    def __len__(self) -> int:
        return len(self._starts) - 1

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [self[position] for position in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._ids[self._starts[index]:self._starts[index + 1]].tolist()

    def __iter__(self) -> Iterator[list[int]]:
        ids, starts = self._ids, self._starts
        for position in range(len(starts) - 1):
            yield ids[starts[position]:starts[position + 1]].tolist()

    @property
    def token_count(self) -> int:
        return len(self._ids)


@dataclass
class PackedTokens:
    """What `bm25s.BM25.index` reads from a tokenized corpus: `ids` per document and `vocab`."""

    ids: PackedTokenIds
    vocab: dict[str, int]


def tokenize_corpus(texts: Iterable[str], stopwords: str, chunk: int = TOKENIZE_CHUNK) -> PackedTokens:
    import bm25s

    vocab: dict[str, int] = {}
    ids, starts = array("i"), array("q", [0])
    stream = iter(texts)
    while batch := list(islice(stream, chunk)):
        for words in bm25s.tokenize(batch, stopwords=stopwords, return_ids=False, show_progress=False):
            ids.extend(vocab.setdefault(word, len(vocab)) for word in words)
            starts.append(len(ids))
    return PackedTokens(PackedTokenIds(ids, starts), vocab)
