"""The evaluation stage: load a dataset, run the configured rows with real models, write
results.json. The only stage that runs torch, sentence-transformers and bm25s (imported inside
the functions that need them); the arithmetic it scores with is the kernel's (generator.core).

Modules: `data` (the validating BEIR loader), `irds` (datasets by ir_datasets identifier),
`models` (resolving and loading models), `cache` (embeddings and rerank scores on disk),
`sparse_index` (the BM25 index saved in the cache and searched memory-mapped), `sparse_tokens`
(the corpus tokenized for it a chunk at a time, packed), `encoding` (a
corpus encoded in the encoder's own batches, so shards give the bits of one call),
`retrieval` (the dense, sparse, fusion and rerank rows), `distributed` (encoding and reranking
as Ray Data jobs writing the same cache entries), `candidates` (the pairs a reranker
scores), `shapes`, `cost` and `cost_report` (a reranker's cost measured by its shape; the shape's
random-weights scorer timed batch by batch in `shape_scorer`, the per-query cache of timings in
`cost_sessions`, a query's cost fitted from them in `query_cost`),
`sweep` (many configurations priced by shape, each timing reused where it is exact), `training`
(fine-tuning a cross-encoder on the corpus alone), `progress` (a bar on a terminal, a line at
least every 10 seconds in a log), `environment` (the machine and package
versions), `currency` (whether a results file still describes its inputs, run files included, by
content), `row_runner` (the configured rows run in order, each model resolved first),
`trained_reranker` (a reranker fine-tuned here: its training record checked and its row's label)
and `pipeline` (the orchestration and the writer).
"""
