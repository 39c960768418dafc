"""The built-in row kinds (generator.core.rows): dense (bi-encoder), sparse (BM25 via bm25s),
fusion (RRF or min-max) and rerank (a cross-encoder over exactly another row's candidates).

Every row returns, per query, a list of (doc_id, score) pairs best first. Heavy libraries are
imported inside the functions that use them, never at module level.
Ties are broken by corpus order (dense, sparse), first appearance (fusion) or candidate order
(rerank) so runs are
deterministic.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from generator.core.dataclass import dataclass
from generator.evaluate.cache import EmbeddingCache, RerankCache, content_key, row_chunks
from generator.evaluate.data import Document
from generator.core.fusion import min_max_fused_ranking, reciprocal_rank_fusion
from generator.evaluate.models import ModelIdentity, apply_precision, load_bi_encoder, load_cross_encoder
from generator.evaluate.encoding import encode_batch, encode_into
from generator.evaluate.progress import Progress
from generator.evaluate.sparse_tokens import tokenize_corpus
from generator.evaluate.sparse_index import SparseIndexCache, sparse_index_key
from generator.core.options import (BM25_B, BM25_K1, BM25_METHOD, BM25_STOPWORDS, DEFAULT_PRECISION,
                                    ENCODE_BATCH_SIZE, RERANK_BATCH_SIZE)

Ranking = list[tuple[str, float]]


def best_positions(scores: np.ndarray, depth: int) -> np.ndarray:
    """The positions of the `depth` highest scores, best first, ties in position order: exactly
    `np.argsort(-scores, kind="stable")[:depth]`, without sorting a million scores to keep a hundred.

    Every score at least the depth-th highest is a candidate (ties at the cut included, so the
    stable order among them is decided by position, as the full sort decides it), and only the
    candidates are sorted.
    """
    if depth <= 0:
        return np.zeros(0, dtype=np.int64)
    if len(scores) <= 4 * depth:
        return np.argsort(-scores, kind="stable")[:depth]
    cut = np.partition(scores, len(scores) - depth)[len(scores) - depth]
    if not np.isfinite(cut):
        return np.argsort(-scores, kind="stable")[:depth]
    candidates = np.flatnonzero(scores >= cut)
    return candidates[np.argsort(-scores[candidates], kind="stable")][:depth]


def top_k(scores: np.ndarray, doc_ids: Sequence[str], depth: int, *, positive_only: bool = False) -> Ranking:
    """The `depth` best documents by score; ties keep corpus order (a stable sort)."""
    order = best_positions(scores, depth)
    return [(doc_ids[i], float(scores[i])) for i in order if not positive_only or scores[i] > 0]


def duplicate_rows(corpus: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(copies, originals): each row identical to an earlier one, and the first row it repeats.

    Rows are compared by a 16-byte digest of their bytes, read chunk by chunk (a million rows of a
    memory-mapped entry are never copied whole), and every digest match is confirmed byte for byte.
    """
    first: dict[bytes, int] = {}
    copies, originals = [], []
    for start, stop in row_chunks(corpus.shape[0]):
        chunk = np.ascontiguousarray(corpus[start:stop])
        for offset, row in enumerate(chunk):
            data = row.tobytes()
            earlier = first.setdefault(hashlib.blake2b(data, digest_size=16).digest(), start + offset)
            if earlier != start + offset and np.asarray(corpus[earlier]).tobytes() == data:
                copies.append(start + offset)
                originals.append(earlier)
    return np.asarray(copies, dtype=np.int64), np.asarray(originals, dtype=np.int64)


def equalise_duplicate_scores(scores: np.ndarray, corpus: np.ndarray) -> int:
    """Give documents with identical embeddings identical scores (in place); returns how many
    columns were set.

    A batched float32 matrix product can score two identical rows a few ulps apart, and then
    "ties keep corpus order" silently fails (a duplicate pair straddling rank 5 or 50 changes a
    metric). Each duplicate takes the score of its first occurrence, so the stable top-k puts the
    copies in corpus order; every other score is left exactly as the product gave it.
    """
    copies, originals = duplicate_rows(corpus)
    if len(copies):
        scores[:, copies] = scores[:, originals]
    return len(copies)


# Corpus rows scored at a time: queries x 65,536 float32 scores (26 MB for 100 queries) instead of
# queries x corpus (400 MB per 100 queries at a million documents). A corpus of up to this many
# rows is scored in one product, as it always was.
SEARCH_CHUNK_ROWS = 65_536


def dense_search(query_matrix: np.ndarray, corpus: np.ndarray, depth: int,
                 chunk_rows: int = SEARCH_CHUNK_ROWS) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each query's `depth` best corpus rows by dot product, best first, ties in corpus order, as
    (positions, float32 scores); the corpus (a memory map) is read `chunk_rows` rows at a time.

    A chunk's best rows are merged with those of the chunks before it by a stable sort over
    [earlier best, chunk best]: every earlier position is smaller, so ties still fall in corpus
    order, and the result is exactly the full product's stable top `depth`. A duplicate row takes
    its first occurrence's score (equalise_duplicate_scores), wherever that occurrence fell.
    """
    queries = np.asarray(query_matrix, dtype=np.float32)
    copies, originals = duplicate_rows(corpus)
    kept_originals = np.unique(originals)
    original_scores: dict[int, np.ndarray] = {}
    best = [(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)) for _ in range(len(queries))]
    for start, stop in row_chunks(corpus.shape[0], chunk_rows):
        scores = queries @ np.asarray(corpus[start:stop], dtype=np.float32).T
        in_chunk = (copies >= start) & (copies < stop)
        for copy, original in zip(copies[in_chunk], originals[in_chunk]):
            scores[:, copy - start] = (scores[:, original - start] if original >= start
                                       else original_scores[int(original)])
        for original in kept_originals[(kept_originals >= start) & (kept_originals < stop)]:
            original_scores[int(original)] = scores[:, original - start].copy()
        for index, row in enumerate(scores):
            chunk_best = best_positions(row, depth)
            positions = np.concatenate([best[index][0], chunk_best + start])
            values = np.concatenate([best[index][1], row[chunk_best]])
            keep = np.argsort(-values, kind="stable")[:depth]
            best[index] = (positions[keep], values[keep])
    return best


def corpus_fingerprint(documents: Sequence[Document]) -> str:
    """content_key([(doc_id, retrieval_text), ...]), hashed document by document: the JSON text
    of a million documents is never built whole (tests hold the two equal)."""
    digest = hashlib.sha256(b"[[")
    for position, document in enumerate(documents):
        if position:
            digest.update(b", ")
        digest.update(json.dumps([document.doc_id, document.retrieval_text], ensure_ascii=False).encode())
    digest.update(b"]]")
    return digest.hexdigest()


@dataclass
class DenseOutcome:
    rankings: dict[str, Ranking]
    embeddings_cached: bool
    cache_key: str
    max_seq_length: int
    encode_seconds: float | None


def _embedding_dimension(model) -> int | None:
    """The bi-encoder's output width, when it says (sentence-transformers renamed the method in 6)."""
    for name in ("get_embedding_dimension", "get_sentence_embedding_dimension"):
        method = getattr(model, name, None)
        if callable(method):
            dimension = method()
            return int(dimension) if dimension else None
    return None


# How a corpus is encoded into a cache entry's rows: (model, texts, batch_size, rows, on_batch).
# The default encodes here (generator.evaluate.encoding.encode_into); the Ray engine spreads the
# same batches over workers (generator.evaluate.distributed).
CorpusEncoder = Callable[[Any, Sequence[str], int, np.ndarray, Callable[[int], None]], Any]


def dense_cache_key(identity: ModelIdentity, documents: Sequence[Document], max_seq_length: int) -> str:
    # v2: entries carry their key, dtype, shape and checksum; v1 entries cannot be verified.
    return content_key("dense-corpus-v2", identity.name, identity.weights_sha256,
                       corpus_fingerprint(documents), max_seq_length, "normalized")


def dense_rankings(documents: Sequence[Document], queries: Mapping[str, str], identity: ModelIdentity,
                   depth: int, cache: EmbeddingCache, *, progress: bool = True,
                   log: Callable[[str], None] = print, device: str = "cpu",
                   batch_size: int = ENCODE_BATCH_SIZE, encode_corpus: CorpusEncoder = encode_into) -> DenseOutcome:
    """Normalised embeddings, dot product, top `depth`; corpus embeddings cached on disk, and
    re-used only when the cached entry verifies (otherwise one warning line, then encoded again).

    The embeddings are written batch by batch into the memory-mapped cache entry and searched from
    it chunk by chunk (dense_search): a million documents never hold their embeddings, or their
    scores, in memory at once.
    """
    model = load_bi_encoder(identity, device)
    max_seq_length = int(model.max_seq_length)
    key = dense_cache_key(identity, documents, max_seq_length)
    doc_ids = [document.doc_id for document in documents]
    dimension = _embedding_dimension(model)
    corpus_matrix = cache.load(key, expected_rows=len(documents), expected_dimension=dimension,
                               normalized=True, warn=log)
    encode_seconds = None
    if corpus_matrix is not None:
        log(f"dense: re-using cached corpus embeddings ({len(documents)} documents, key {key[:12]}); "
            "no encoding")
    else:
        log(f"dense: encoding {len(documents)} documents with {identity.name} "
            f"(max_seq_length {max_seq_length}); cached afterwards")
        started = time.perf_counter()
        texts = [document.retrieval_text for document in documents]
        if dimension is None:
            dimension = int(encode_batch(model, texts[:1]).shape[1]) if texts else 0
        with Progress("dense", len(documents), unit="documents", log=log, enabled=progress) as bar, \
                cache.writer(key, (len(documents), dimension),
                             {"model": identity.as_manifest(), "documents": len(documents),
                              "max_seq_length": max_seq_length, "normalized": True}) as rows:
            encode_corpus(model, texts, batch_size, rows, bar.update)
        del texts
        encode_seconds = time.perf_counter() - started
        corpus_matrix = cache.load(key, expected_rows=len(documents), expected_dimension=dimension,
                                   normalized=True, warn=log)
        if corpus_matrix is None:
            raise RuntimeError(f"the corpus embeddings just written under key {key[:12]} do not verify")
    query_ids = list(queries)
    query_matrix = model.encode([queries[q] for q in query_ids], batch_size=batch_size,
                                normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    best = dense_search(query_matrix, corpus_matrix, depth)
    rankings = {q: [(doc_ids[i], float(score)) for i, score in zip(*best[n])] for n, q in enumerate(query_ids)}
    return DenseOutcome(rankings, encode_seconds is None, key, max_seq_length, encode_seconds)


def sparse_rankings(documents: Sequence[Document], queries: Mapping[str, str], depth: int,
                    k1: float = BM25_K1, b: float = BM25_B, *, cache_dir: Path | None = None,
                    log: Callable[[str], None] | None = None, row: str = "sparse") -> dict[str, Ranking]:
    """BM25 via bm25s, Lucene variant, with its own defaults stated explicitly (k1 1.5, b 0.75),
    English stopwords, no stemmer.

    Scores come from `get_scores` and a stable top-k so equal scores keep corpus order, and
    documents sharing no term with the query (score 0) are not returned as candidates. With a
    `cache_dir`, the index is saved there once and searched memory-mapped
    (generator.evaluate.sparse_index); the scores are the same either way.
    """
    import bm25s

    doc_ids = [document.doc_id for document in documents]
    retriever = None
    if cache_dir is not None:
        index_cache = SparseIndexCache(cache_dir)
        key = sparse_index_key(corpus_fingerprint(documents), BM25_METHOD, k1, b, BM25_STOPWORDS,
                               bm25s.__version__)
        retriever = index_cache.load(key, documents=len(documents), warn=log)
        if retriever is not None and log is not None:
            log(f"{row}: re-using the saved BM25 index ({len(documents)} documents, key {key[:12]}); no indexing")
    if retriever is None:
        if log is not None:
            log(f"{row}: indexing with bm25s" + ("; saved afterwards" if cache_dir is not None else ""))
        # Streamed and packed (generator.evaluate.sparse_tokens): the same index as bm25s.tokenize's.
        corpus_tokens = tokenize_corpus((document.retrieval_text for document in documents), BM25_STOPWORDS)
        retriever = bm25s.BM25(method=BM25_METHOD, k1=k1, b=b)
        retriever.index(corpus_tokens, show_progress=False)
        del corpus_tokens
        if cache_dir is not None:
            index_cache.store(key, retriever)
            retriever = index_cache.load(key, documents=len(documents), warn=log) or retriever
    vocabulary = retriever.vocab_dict
    rankings: dict[str, Ranking] = {}
    for query_id, text in queries.items():
        # Tokenise the query with the corpus vocabulary; words the corpus never uses cannot score.
        query_words = bm25s.tokenize([text], stopwords=BM25_STOPWORDS, return_ids=False, show_progress=False)[0]
        known = [word for word in query_words if word and word in vocabulary]
        scores = retriever.get_scores(known) if known else np.zeros(len(doc_ids))
        rankings[query_id] = top_k(np.asarray(scores, dtype=np.float64), doc_ids, depth, positive_only=True)
    return rankings


def fused_rankings(inputs: Sequence[Mapping[str, Ranking]], method: str, depth: int, *, k: int | None = None,
                   alpha: float | None = None) -> dict[str, Ranking]:
    """A fusion row: RRF with constant `k` over every input, or min-max interpolation of two
    (`alpha` on the first); ties by first appearance, inputs read in the order given."""
    query_ids = list(dict.fromkeys(q for ranked in inputs for q in ranked))
    if method == "rrf":
        return {q: reciprocal_rank_fusion([[d for d, _ in ranked.get(q, [])] for ranked in inputs], k=k, depth=depth)
                for q in query_ids}
    if method == "minmax" and len(inputs) == 2:
        return {q: min_max_fused_ranking(inputs[0].get(q, []), inputs[1].get(q, []), alpha, depth)
                for q in query_ids}
    raise ValueError(f"unknown fusion {method!r} over {len(inputs)} rows")


@dataclass
class RerankOutcome:
    rankings: dict[str, Ranking]
    milliseconds: dict[str, float]
    resumed_queries: list[str] = field(default_factory=list)
    computed_queries: list[str] = field(default_factory=list)


def rerank_rankings(over: Mapping[str, Ranking], queries: Mapping[str, str],
                    texts: Mapping[str, str], identity: ModelIdentity, max_length: int,
                    cache: RerankCache, *, progress: bool = True,
                    log: Callable[[str], None] = print,
                    load_model: Callable | None = None, device: str = "cpu",
                    batch_size: int = RERANK_BATCH_SIZE, depth: int | None = None,
                    precision: str = DEFAULT_PRECISION, engine: Any = None) -> RerankOutcome:
    """Score the top `depth` candidates of the `over` row (all of them without a depth) with a
    cross-encoder and reorder them; the candidates below the depth keep their order under them.

    All scored pairs of one query go to the model in one `predict` call, `batch_size` pairs per
    forward pass (the batching `readout cost` times a shape with); the model is warmed up on the
    first pending query before any timing. Each finished query is cached at once (scores and its
    own measured milliseconds), so an interrupted run resumes without recomputing it; a cached
    entry that does not verify is reported in one line and its query scored again, never used.
    With an `engine` (generator.evaluate.distributed.RayEngine) the pending queries are scored on
    its workers, the same way, and cached here as they come back.
    """
    def scored(query_id: str) -> list[str]:
        return [doc_id for doc_id, _ in over[query_id][:depth]]

    def cache_key(query_id: str) -> str:
        candidates = scored(query_id)
        # v3: entries carry their key and checksum; v2 entries cannot be verified. fp32 keys are
        # those of the rows before precision existed, so their cached entries still serve.
        return content_key("rerank-v3", identity.name, identity.weights_sha256, max_length, batch_size, device,
                           *(() if precision == DEFAULT_PRECISION else (precision,)), query_id,
                           queries[query_id], candidates, [texts[d] for d in candidates])

    outcome = RerankOutcome(rankings={}, milliseconds={})
    entries = _cached_rerank_entries(over, scored, cache, cache_key, log)
    outcome.resumed_queries = [query_id for query_id in over if query_id in entries]
    pending = [query_id for query_id in over if query_id not in entries]
    if engine is not None:
        jobs = [(q, queries[q], scored(q), [texts[d] for d in scored(q)]) for q in pending]
        computed = engine.score_queries(jobs, identity=identity, max_length=max_length, batch_size=batch_size,
                                        device=device, precision=precision)
    else:
        computed = _score_here(pending, queries, scored, texts, identity, max_length, load_model, device,
                               batch_size, precision)
    with Progress("rerank", len(pending), unit="queries", log=log, enabled=progress) as bar:
        for query_id, entry in computed:
            # Each query cached as soon as it is scored: an interrupted run resumes from here.
            cache.store(cache_key(query_id), entry)
            entries[query_id] = entry
            bar.update(1)
    outcome.computed_queries = pending
    for query_id in over:
        candidates = scored(query_id)
        entry = entries[query_id]
        outcome.rankings[query_id] = reordered(candidates, entry["scores"], over[query_id][len(candidates):])
        outcome.milliseconds[query_id] = float(entry["milliseconds"])
    return outcome


def _score_here(pending: Sequence[str], queries: Mapping[str, str], scored: Callable[[str], list[str]],
                texts: Mapping[str, str], identity: ModelIdentity, max_length: int, load_model: Callable | None,
                device: str, batch_size: int, precision: str) -> Iterator[tuple[str, dict]]:
    """This process's cross-encoder, warmed up on the first pending query before any timing."""
    if not pending:
        return
    model = apply_precision((load_model or load_cross_encoder)(identity, max_length, device), precision)
    model.predict(candidate_pairs(queries[pending[0]], scored(pending[0]), texts), batch_size=batch_size,
                  show_progress_bar=False)
    for query_id in pending:
        yield query_id, score_query(model, query_id, queries[query_id], scored(query_id), texts, batch_size)


def candidate_pairs(query: str, candidates: Sequence[str], texts: Mapping[str, str]) -> list[tuple[str, str]]:
    """The (query, document text) pairs a cross-encoder scores, in candidate order."""
    return [(query, texts[doc_id]) for doc_id in candidates]


def reordered(candidates: Sequence[str], scores: Sequence[float], tail: Ranking = ()) -> Ranking:
    """The scored candidates best first (ties keep candidate order), then the unscored `tail` in
    its own order, each below every scored candidate (run files keep this order: format_run)."""
    if len(scores) != len(candidates):
        # A model that returned fewer scores than pairs (a dropped batch) must not shift the rest.
        raise ValueError(f"{len(scores)} scores for {len(candidates)} candidates")
    order = sorted(range(len(candidates)), key=lambda i: (-scores[i], i))
    head = [(candidates[i], float(scores[i])) for i in order]
    floor = min((score for _, score in head), default=0.0)
    return head + [(doc_id, floor - position) for position, (doc_id, _) in enumerate(tail, start=1)]


def _cached_rerank_entries(over: Mapping[str, Ranking], scored: Callable[[str], list[str]], cache: RerankCache,
                           cache_key: Callable[[str], str], log: Callable[[str], None]) -> dict[str, dict]:
    """The queries whose scores the cache holds and verifies (a bad entry is reported, not used)."""
    cached_entries: dict[str, dict] = {}
    for query_id in over:
        entry = cache.load(cache_key(query_id), query_id=query_id, candidates=scored(query_id), warn=log)
        if entry is not None:
            cached_entries[query_id] = entry
    if cached_entries:
        log(f"rerank: {len(cached_entries)} of {len(over)} queries found in the rerank cache "
            f"(resumed, not recomputed); {len(over) - len(cached_entries)} to score")
    return cached_entries


def score_query(model, query_id: str, query: str, candidates: Sequence[str], texts: Mapping[str, str],
                 batch_size: int) -> dict:
    """One query's pairs in one `predict` call, timed; the cache entry it makes."""
    pairs = candidate_pairs(query, candidates, texts)
    started = time.perf_counter()
    raw = model.predict(pairs, batch_size=batch_size, show_progress_bar=False)
    elapsed_ms = (time.perf_counter() - started) * 1000.0
    return {"query_id": query_id, "candidates": list(candidates),
            "scores": [float(score) for score in np.asarray(raw, dtype=np.float64).reshape(-1)],
            "milliseconds": elapsed_ms}
