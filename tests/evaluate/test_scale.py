"""Bounded memory without changed numbers: the chunked, memory-mapped paths a million-document
corpus takes give exactly what the whole-corpus computations gave (and give on small corpora).

- best_positions is np.argsort(-scores, kind="stable")[:depth], ties at the cut included;
- dense_search over chunks is the full product's stable top-k, duplicates equalised across chunks;
- corpus_fingerprint hashed document by document is content_key of the whole list (cache keys
  written before it still match);
- embedding entries load memory-mapped and are verified chunk by chunk with the same reasons;
  a writer that fails leaves no entry;
- the BM25 index is saved once, searched memory-mapped, verified, and gives the same rankings.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from generator.evaluate import cache as cache_module
from generator.evaluate.cache import EmbeddingCache, content_key
from generator.evaluate.data import Document, load_dataset
from generator.evaluate.retrieval import (best_positions, corpus_fingerprint, dense_search,
                                          equalise_duplicate_scores, sparse_rankings)
from generator.evaluate.sparse_index import SparseIndexCache


@pytest.mark.parametrize("size,depth", [(5, 10), (40, 10), (41, 10), (1000, 10), (1000, 1), (3000, 100)])
def test_best_positions_is_the_stable_sort_with_ties_at_the_cut(size, depth):
    rng = np.random.default_rng(size + depth)
    # Few distinct values: ties everywhere, including across the depth-th position.
    scores = rng.integers(0, 7, size=size).astype(np.float64)
    assert np.array_equal(best_positions(scores, depth), np.argsort(-scores, kind="stable")[:depth])
    continuous = rng.standard_normal(size)
    assert np.array_equal(best_positions(continuous, depth), np.argsort(-continuous, kind="stable")[:depth])


def test_best_positions_with_a_non_finite_cut_falls_back_to_the_full_sort():
    scores = np.array([np.nan] * 60 + [1.0, 2.0], dtype=np.float64)
    assert np.array_equal(best_positions(scores, 5), np.argsort(-scores, kind="stable")[:5])


def _whole_product_top(queries: np.ndarray, corpus: np.ndarray, depth: int) -> list[np.ndarray]:
    scores = queries @ corpus.T
    equalise_duplicate_scores(scores, corpus)
    return [np.argsort(-row, kind="stable")[:depth] for row in scores]


@pytest.mark.parametrize("chunk_rows", [1, 7, 64, 10_000])
def test_dense_search_in_chunks_is_the_whole_products_top_k(chunk_rows):
    rng = np.random.default_rng(3)
    # Small integers: every dot product is exact in float32, so chunking cannot change a score, and
    # ties are frequent; rows 5, 40 and 63 repeat rows 2, 2 and 11 across chunk boundaries.
    corpus = rng.integers(-2, 3, size=(70, 8)).astype(np.float32)
    corpus[[5, 40, 63]] = corpus[[2, 2, 11]]
    queries = rng.integers(-2, 3, size=(9, 8)).astype(np.float32)
    found = dense_search(queries, corpus, depth=12, chunk_rows=chunk_rows)
    expected = _whole_product_top(queries, corpus, 12)
    whole = queries @ corpus.T
    for query, ((positions, scores), want) in enumerate(zip(found, expected)):
        assert np.array_equal(positions, want)
        assert scores.dtype == np.float32 and np.array_equal(scores, whole[query][want])


def test_a_duplicate_in_a_later_chunk_takes_its_first_occurrences_score():
    corpus = np.eye(4, dtype=np.float32)
    corpus = np.vstack([corpus, corpus[1:2]])             # row 4 repeats row 1, one chunk later
    queries = np.array([[0.0, 1.0, 0.0, 0.0]], dtype=np.float32)
    positions, scores = dense_search(queries, corpus, depth=2, chunk_rows=2)[0]
    assert positions.tolist() == [1, 4] and scores[0] == scores[1]


@pytest.mark.parametrize("documents", [
    [],
    [Document("d1", "Title", "text")],
    [Document("d\"1", "Ünïcode — ✓", "tab\there \\ back"), Document("d2", "", " spaced "), Document("日本", "😀", "")],
])
def test_the_streamed_corpus_fingerprint_is_the_whole_lists_key(documents):
    assert corpus_fingerprint(documents) == content_key([(d.doc_id, d.retrieval_text) for d in documents])


def _unit_rows(rows: int, seed: int = 0) -> np.ndarray:
    matrix = np.random.default_rng(seed).standard_normal((rows, 6)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def test_an_entry_loads_memory_mapped_and_is_verified_chunk_by_chunk(tmp_path, monkeypatch):
    monkeypatch.setattr(cache_module, "VERIFY_CHUNK_ROWS", 4)
    cache = EmbeddingCache(tmp_path)
    matrix = _unit_rows(10)
    cache.store("k", matrix, {"normalized": True})
    loaded = cache.load("k", expected_rows=10, normalized=True)
    assert isinstance(loaded, np.memmap) and np.array_equal(loaded, matrix)
    assert json.loads((tmp_path / "embeddings" / "k.json").read_text())["sha256"] == \
        __import__("hashlib").sha256(matrix.tobytes()).hexdigest()

    # A bad row in the third chunk is named by its corpus row, as the whole-matrix check named it.
    for damage, reason in [(lambda m: m.__setitem__((9, 2), np.nan), "row 9 holds a non-finite value"),
                           (lambda m: m.__setitem__(7, m[7] * 2), "row 7 has norm 2, not 1")]:
        damaged = matrix.copy()
        damage(damaged)
        np.save(tmp_path / "embeddings" / "k.npy", damaged)
        warnings = []
        assert cache.load("k", expected_rows=10, normalized=True, warn=warnings.append) is None
        assert reason in warnings[0]


def test_a_writer_that_fails_leaves_no_entry_and_no_temporary_file(tmp_path):
    cache = EmbeddingCache(tmp_path)
    with pytest.raises(RuntimeError):
        with cache.writer("k", (3, 6), {"normalized": True}) as rows:
            rows[0] = _unit_rows(1)[0]
            raise RuntimeError("encoder died")
    assert sorted(path.name for path in (tmp_path / "embeddings").iterdir()) == []
    with cache.writer("k", (3, 6), {"normalized": True}) as rows:
        rows[:] = _unit_rows(3)
    assert np.array_equal(cache.load("k", expected_rows=3, normalized=True), _unit_rows(3))


@pytest.fixture
def small_documents(small_dataset):
    dataset = load_dataset(small_dataset)
    return dataset.documents, dict(dataset.queries)


def test_the_saved_bm25_index_is_searched_memory_mapped_with_the_same_rankings(small_documents, tmp_path,
                                                                               monkeypatch):
    import bm25s

    documents, queries = small_documents
    in_memory = sparse_rankings(documents, queries, 20)
    built = sparse_rankings(documents, queries, 20, cache_dir=tmp_path)
    assert built == in_memory
    [entry] = [path for path in (tmp_path / "sparse").iterdir() if path.is_dir()]

    original = bm25s.tokenize
    def corpus_tokenized_again(texts, *args, **kwargs):   # queries are tokenised one at a time
        assert len(texts) == 1, "the corpus was tokenised again instead of re-using the saved index"
        return original(texts, *args, **kwargs)
    monkeypatch.setattr(bm25s, "tokenize", corpus_tokenized_again)
    loaded = SparseIndexCache(tmp_path).load(entry.name, documents=len(documents))
    assert isinstance(loaded.scores["data"], np.memmap)
    assert sparse_rankings(documents, queries, 20, cache_dir=tmp_path) == in_memory


def test_a_tampered_bm25_index_is_reported_and_rebuilt(small_documents, tmp_path):
    documents, queries = small_documents
    expected = sparse_rankings(documents, queries, 20, cache_dir=tmp_path)
    [entry] = [path for path in (tmp_path / "sparse").iterdir() if path.is_dir()]
    data = entry / "data.csc.index.npy"
    values = np.load(data)
    np.save(data, values[::-1].copy())                   # same shape and dtype, other scores
    warnings = []
    assert sparse_rankings(documents, queries, 20, cache_dir=tmp_path, log=warnings.append) == expected
    assert warnings[0].startswith("cache: ignoring corrupt BM25 index (data.csc.index.npy: checksum mismatch")
    assert warnings[0].endswith("; rebuilding") and warnings[1:] == ["sparse: indexing with bm25s; saved afterwards"]
    rebuilt = []
    assert sparse_rankings(documents, queries, 20, cache_dir=tmp_path, log=rebuilt.append) == expected
    assert len(rebuilt) == 1 and rebuilt[0].startswith("sparse: re-using the saved BM25 index (80 documents, key ")


def test_another_corpus_or_parameters_do_not_read_this_index(small_documents, tmp_path):
    documents, queries = small_documents
    sparse_rankings(documents, queries, 20, cache_dir=tmp_path)
    other = [Document(d.doc_id, d.title, d.text + " extra") for d in documents]
    assert sparse_rankings(other, queries, 20, cache_dir=tmp_path) == sparse_rankings(other, queries, 20)
    assert sparse_rankings(documents, queries, 20, k1=0.9, cache_dir=tmp_path) == \
        sparse_rankings(documents, queries, 20, k1=0.9)
    assert len([path for path in (tmp_path / "sparse").iterdir() if path.is_dir()]) == 3
