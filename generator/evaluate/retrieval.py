"""The built-in row kinds (generator.core.rows): dense (bi-encoder), sparse (BM25 via bm25s),
fusion (RRF or min-max) and rerank (a cross-encoder over exactly another row's candidates).

Every row returns, per query, a list of (doc_id, score) pairs best first. Heavy libraries are
imported inside the functions that use them, never at module level.
Ties are broken by corpus order (dense, sparse), first appearance (fusion) or candidate order
(rerank) so runs are
deterministic.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np

from generator.evaluate.cache import EmbeddingCache, RerankCache, content_key
from generator.evaluate.data import Document
from generator.core.fusion import min_max_fused_ranking, reciprocal_rank_fusion
from generator.evaluate.models import ModelIdentity, apply_precision, load_bi_encoder, load_cross_encoder
from generator.evaluate.progress import Progress, counting_encoder_batches
from generator.core.options import (BM25_B, BM25_K1, BM25_METHOD, BM25_STOPWORDS, DEFAULT_PRECISION,
                                    ENCODE_BATCH_SIZE, RERANK_BATCH_SIZE)

Ranking = list[tuple[str, float]]


def top_k(scores: np.ndarray, doc_ids: Sequence[str], depth: int, *, positive_only: bool = False) -> Ranking:
    """The `depth` best documents by score; ties keep corpus order (a stable sort)."""
    order = np.argsort(-scores, kind="stable")[:depth]
    return [(doc_ids[i], float(scores[i])) for i in order if not positive_only or scores[i] > 0]


def equalise_duplicate_scores(scores: np.ndarray, corpus: np.ndarray) -> int:
    """Give documents with identical embeddings identical scores (in place); returns how many
    columns were set.

    A batched float32 matrix product can score two identical rows a few ulps apart, and then
    "ties keep corpus order" silently fails (a duplicate pair straddling rank 5 or 50 changes a
    metric). Each duplicate takes the score of its first occurrence, so the stable top-k puts the
    copies in corpus order; every other score is left exactly as the product gave it.
    """
    first: dict[bytes, int] = {}
    copies, originals = [], []
    for index, row in enumerate(np.ascontiguousarray(corpus)):
        key = row.tobytes()
        if key in first:
            copies.append(index)
            originals.append(first[key])
        else:
            first[key] = index
    if copies:
        scores[:, copies] = scores[:, originals]
    return len(copies)


def corpus_fingerprint(documents: Sequence[Document]) -> str:
    return content_key([(document.doc_id, document.retrieval_text) for document in documents])


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


def dense_rankings(documents: Sequence[Document], queries: Mapping[str, str], identity: ModelIdentity,
                   depth: int, cache: EmbeddingCache, *, progress: bool = True,
                   log: Callable[[str], None] = print, device: str = "cpu",
                   batch_size: int = ENCODE_BATCH_SIZE) -> DenseOutcome:
    """Normalised embeddings, dot product, top `depth`; corpus embeddings cached on disk, and
    re-used only when the cached entry verifies (otherwise one warning line, then encoded again)."""
    model = load_bi_encoder(identity, device)
    max_seq_length = int(model.max_seq_length)
    # v2: entries carry their key, dtype, shape and checksum; v1 entries cannot be verified.
    key = content_key("dense-corpus-v2", identity.name, identity.weights_sha256,
                      corpus_fingerprint(documents), max_seq_length, "normalized")
    doc_ids = [document.doc_id for document in documents]
    corpus_matrix = cache.load(key, expected_rows=len(documents), expected_dimension=_embedding_dimension(model),
                               normalized=True, warn=log)
    encode_seconds = None
    if corpus_matrix is not None:
        log(f"dense: re-using cached corpus embeddings ({len(documents)} documents, key {key[:12]}); "
            "no encoding")
    else:
        log(f"dense: encoding {len(documents)} documents with {identity.name} "
            f"(max_seq_length {max_seq_length}); cached afterwards")
        started = time.perf_counter()
        bar = Progress("dense", len(documents), unit="documents", log=log, enabled=progress)
        bar.start()
        with counting_encoder_batches(sys.modules[type(model).__module__], bar, len(documents)):
            corpus_matrix = model.encode([document.retrieval_text for document in documents],
                                         batch_size=batch_size, normalize_embeddings=True,
                                         convert_to_numpy=True, show_progress_bar=progress and bar.tty)
        bar.close()
        encode_seconds = time.perf_counter() - started
        cache.store(key, corpus_matrix, {"model": identity.as_manifest(), "documents": len(documents),
                                         "max_seq_length": max_seq_length, "normalized": True})
    query_ids = list(queries)
    query_matrix = model.encode([queries[q] for q in query_ids], batch_size=batch_size,
                                normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    corpus32 = np.asarray(corpus_matrix, dtype=np.float32)
    scores = np.asarray(query_matrix, dtype=np.float32) @ corpus32.T
    equalise_duplicate_scores(scores, corpus32)
    rankings = {q: top_k(scores[i], doc_ids, depth) for i, q in enumerate(query_ids)}
    return DenseOutcome(rankings, encode_seconds is None, key, max_seq_length, encode_seconds)


def sparse_rankings(documents: Sequence[Document], queries: Mapping[str, str], depth: int,
                    k1: float = BM25_K1, b: float = BM25_B) -> dict[str, Ranking]:
    """BM25 via bm25s, Lucene variant, with its own defaults stated explicitly (k1 1.5, b 0.75),
    English stopwords, no stemmer.

    Scores come from `get_scores` and a stable top-k so equal scores keep corpus order, and
    documents sharing no term with the query (score 0) are not returned as candidates.
    """
    import bm25s

    doc_ids = [document.doc_id for document in documents]
    corpus_tokens = bm25s.tokenize([document.retrieval_text for document in documents], stopwords=BM25_STOPWORDS,
                                   show_progress=False)
    retriever = bm25s.BM25(method=BM25_METHOD, k1=k1, b=b)
    retriever.index(corpus_tokens, show_progress=False)
    vocabulary = corpus_tokens.vocab
    rankings: dict[str, Ranking] = {}
    for query_id, text in queries.items():
        # Tokenise the query with the corpus vocabulary; words the corpus never uses cannot score.
        query_words = bm25s.tokenize([text], stopwords=BM25_STOPWORDS, return_ids=False, show_progress=False)[0]
        known = [word for word in query_words if word in vocabulary]
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
                    precision: str = DEFAULT_PRECISION) -> RerankOutcome:
    """Score the top `depth` candidates of the `over` row (all of them without a depth) with a
    cross-encoder and reorder them; the candidates below the depth keep their order under them.

    All scored pairs of one query go to the model in one `predict` call, `batch_size` pairs per
    forward pass (the batching `readout cost` times a shape with); the model is warmed up on the
    first pending query before any timing. Each finished query is cached at once (scores and its
    own measured milliseconds), so an interrupted run resumes without recomputing it; a cached
    entry that does not verify is reported in one line and its query scored again, never used.
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
    cached_entries = _cached_rerank_entries(over, scored, cache, cache_key, log)
    pending = [query_id for query_id in over if query_id not in cached_entries]
    model = None
    if pending:
        model = apply_precision((load_model or load_cross_encoder)(identity, max_length, device), precision)
        model.predict(candidate_pairs(queries[pending[0]], scored(pending[0]), texts), batch_size=batch_size,
                      show_progress_bar=False)

    bar = Progress("rerank", len(pending), unit="queries", log=log, enabled=progress)
    bar.start()
    for query_id in over:
        candidates = scored(query_id)
        if query_id in cached_entries:
            entry = cached_entries[query_id]
            outcome.resumed_queries.append(query_id)
        else:
            entry = _score_query(model, query_id, queries[query_id], candidates, texts, batch_size)
            cache.store(cache_key(query_id), entry)
            outcome.computed_queries.append(query_id)
            bar.update(1)
        outcome.rankings[query_id] = reordered(candidates, entry["scores"], over[query_id][len(candidates):])
        outcome.milliseconds[query_id] = float(entry["milliseconds"])
    bar.close()
    return outcome


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


def _score_query(model, query_id: str, query: str, candidates: Sequence[str], texts: Mapping[str, str],
                 batch_size: int) -> dict:
    """One query's pairs in one `predict` call, timed; the cache entry it makes."""
    pairs = candidate_pairs(query, candidates, texts)
    started = time.perf_counter()
    raw = model.predict(pairs, batch_size=batch_size, show_progress_bar=False)
    elapsed_ms = (time.perf_counter() - started) * 1000.0
    return {"query_id": query_id, "candidates": list(candidates),
            "scores": [float(score) for score in np.asarray(raw, dtype=np.float64).reshape(-1)],
            "milliseconds": elapsed_ms}
