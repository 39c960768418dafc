"""Benchmark of the evaluation stage, measured side by side in one run (not a test).

Prints:
- corpus encoding docs/s through the tool's dense path (cache disabled) versus a plain
  SentenceTransformer.encode of the same texts, and their ratio;
- bm25s index time and per-query retrieve time over the same documents;
- cross-encoder pairs/s for a randomly initialised cross-encoder of all-MiniLM-L6-v2's shape
  (6 layers, 384 hidden): a stand-in for the architecture's cost, never a quality figure.

Usage: python bench/bench_evaluation.py [--data DIR] [--documents N] [--queries N]
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPOSITORY / ".." / "shared" / "data" / "scifact")
    parser.add_argument("--documents", type=int, default=1000, help="documents to encode (default 1000)")
    parser.add_argument("--queries", type=int, default=20, help="queries for retrieve and rerank (default 20)")
    args = parser.parse_args()

    import torch
    from sentence_transformers import SentenceTransformer

    from generator.evaluate.cache import EmbeddingCache
    from generator.evaluate.data import load_dataset
    from generator.evaluate.models import load_cross_encoder, resolve_model
    from generator.evaluate.retrieval import dense_rankings, fused_rankings, sparse_rankings

    dataset = load_dataset(args.data)
    documents = dataset.documents[: args.documents]
    query_ids = dataset.test_query_ids()[: args.queries]
    queries = {q: dataset.queries[q] for q in query_ids}
    texts = [d.retrieval_text for d in documents]
    print(f"machine: {platform.platform()}, {os.cpu_count()} CPUs, torch threads {torch.get_num_threads()}")
    print(f"inputs: {len(documents)} documents, {len(queries)} queries from {args.data}")

    identity = resolve_model("minilm-offline")
    with tempfile.TemporaryDirectory() as cache_dir:
        started = time.perf_counter()
        dense_rankings(documents, queries, identity, 50, EmbeddingCache(Path(cache_dir)), progress=False,
                       log=lambda _: None)
        tool_seconds = time.perf_counter() - started
        started = time.perf_counter()
        dense = dense_rankings(documents, queries, identity, 50, EmbeddingCache(Path(cache_dir)), progress=False,
                               log=lambda _: None).rankings
        cached_seconds = time.perf_counter() - started
    model = SentenceTransformer(identity.path, device="cpu")
    started = time.perf_counter()
    model.encode(texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    plain_seconds = time.perf_counter() - started
    print(f"dense, tool path (load + encode + cache write + search): {len(texts) / tool_seconds:8.1f} docs/s")
    print(f"dense, plain SentenceTransformer.encode:                  {len(texts) / plain_seconds:8.1f} docs/s")
    print(f"ratio tool / plain (docs/s):                               {plain_seconds / tool_seconds:8.3f}")
    print(f"dense, tool path with cached embeddings: {cached_seconds:.2f} s "
          f"({tool_seconds / cached_seconds:.1f}x faster than encoding)")

    started = time.perf_counter()
    sparse = sparse_rankings(documents, queries, 50)
    sparse_seconds = time.perf_counter() - started
    print(f"bm25s: tokenise + index + retrieve {len(queries)} queries: {sparse_seconds:.3f} s "
          f"({sparse_seconds / len(queries) * 1000:.1f} ms per query, index included)")

    with tempfile.TemporaryDirectory() as model_dir:
        from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

        torch.manual_seed(0)
        config = BertConfig.from_pretrained(identity.path, num_labels=1)
        BertForSequenceClassification(config).save_pretrained(model_dir)
        BertTokenizerFast.from_pretrained(identity.path).save_pretrained(model_dir)
        cross = load_cross_encoder(resolve_model(model_dir), max_length=512)
        hybrid = fused_rankings([dense, sparse], "rrf", 50, k=60)
        by_id = {d.doc_id: d.retrieval_text for d in documents}
        first = next(iter(hybrid))
        cross.predict([(queries[first], by_id[d]) for d, _ in hybrid[first]], show_progress_bar=False)
        pairs = 0
        started = time.perf_counter()
        for q, ranking in hybrid.items():
            batch = [(queries[q], by_id[d]) for d, _ in ranking]
            cross.predict(batch, batch_size=len(batch), show_progress_bar=False)
            pairs += len(batch)
        rerank_seconds = time.perf_counter() - started
    print(f"cross-encoder, MiniLM-L6 shape, random weights, max_length 512: {pairs / rerank_seconds:.1f} pairs/s "
          f"({rerank_seconds / len(hybrid) * 1000:.0f} ms per 50-pair query)")


if __name__ == "__main__":
    main()
