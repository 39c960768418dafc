"""The offline L03 sandbox and the oracle ceiling calculator: no model, no network, no numpy.

Modules: `config` (the `sandbox:` block), `inputs` (the five validated input files), `bm25` (its
own tokenizer and BM25), `pipeline` (ranking, fusion, reranking, diagnosis and the funnel, as
pure functions), `runner` (stop conditions and writing the outputs), `ceiling` (the calculator).
"""
