"""The streamed, packed tokenization (generator.evaluate.sparse_tokens) builds the index
`bm25s.tokenize` builds, bit for bit: the same vocabulary and ids, and the same score matrix."""

from __future__ import annotations

import bm25s
import numpy as np
import pytest

from generator.evaluate.data import load_corpus
from generator.evaluate.retrieval import BM25_B, BM25_K1, BM25_METHOD, BM25_STOPWORDS
from generator.evaluate.sparse_tokens import PackedTokenIds, tokenize_corpus

AWKWARD = ["", "   ", "the and of", "Protein folding: THE protein", "x y z", "ünïcode wörds ünïcode",
           "numbers 2024 and 3.14 and 3,14", "tabs\tand\nnewlines", "a", "it's o'clock don't",
           "日本語のテキスト 日本語", "protein"]


def _index(tokens) -> bm25s.BM25:
    retriever = bm25s.BM25(method=BM25_METHOD, k1=BM25_K1, b=BM25_B)
    retriever.index(tokens, show_progress=False)
    return retriever


def _assert_same_index(texts: list[str], chunk: int) -> None:
    reference = bm25s.tokenize(texts, stopwords=BM25_STOPWORDS, show_progress=False)
    packed = tokenize_corpus(iter(texts), BM25_STOPWORDS, chunk=chunk)
    assert packed.vocab == reference.vocab
    assert list(packed.vocab) == list(reference.vocab)   # the same ids in the same order
    assert list(packed.ids) == reference.ids
    expected, built = _index(reference), _index(packed)
    assert built.vocab_dict == expected.vocab_dict
    for name in ("data", "indices", "indptr"):
        assert built.scores[name].dtype == expected.scores[name].dtype, name
        assert np.array_equal(built.scores[name], expected.scores[name]), name
    assert built.scores["num_docs"] == expected.scores["num_docs"]


@pytest.mark.parametrize("chunk", [1, 3, 1000])
def test_awkward_texts_give_bm25s_own_index_whatever_the_chunk(chunk):
    _assert_same_index(AWKWARD, chunk)


def test_scifact_gives_bm25s_own_index(scifact_dir):
    texts = [document.retrieval_text for document in load_corpus(scifact_dir / "corpus.jsonl")]
    _assert_same_index(texts, chunk=997)   # a chunk that does not divide the corpus


def test_packed_ids_read_like_the_list_they_replace():
    # ids in order of first appearance: cc 0, aa 1, dd 2, ee 3, ii 4, bb 5
    packed = tokenize_corpus(["cc aa dd", "", "aa ee", "ii bb dd ee"], stopwords=[], chunk=2).ids
    assert isinstance(packed, PackedTokenIds)
    assert list(packed) == [[0, 1, 2], [], [1, 3], [4, 5, 2, 3]]
    assert len(packed) == 4 and packed.token_count == 9
    assert packed[1] == [] and packed[-1] == [4, 5, 2, 3] and packed[1:3] == [[], [1, 3]]
    with pytest.raises(IndexError):
        packed[4]
