"""The Ray engine on the real SciFact collection: a local two-worker cluster encodes a slice of
its corpus into an empty cache and reranks the release sample, and gives the single process's run
files byte for byte, its figures and its embeddings bit for bit.

The slice keeps every fourth test query (in the judgements' own order: 75 of the 300), the 83
documents judged relevant to them and every 128th of the documents judged for no query, in the
corpus's own order: 121 of the 5,183. That is four encoder batches of 32, the fewest in which the
cluster still cuts the corpus into more batches and shards than it has workers (a test holds it
to two shards a worker), so what is proven is the same (batches formed over the whole corpus,
shards reassembled in order, real abstracts of every length), at a forty-third of the encoding.
The full corpus took 13 minutes of a CI worker, every run; every eighth unjudged document, 895 in
all, nearly 3; every judged document and every sixty-fourth other, 359 in all, about a minute and
a half of both cores; every third query's judged documents and every sixty-fourth other, 187 in
six batches, one shard (about 12 s of a worker) more for each worker than now. The engine's code
does not depend on the corpus's size; the small-corpus test (tests/evaluate/test_distributed.py)
covers the rest of the engine.

The single-process run reads the shared cache (~/.cache/readout, where the slice's embeddings stay
between runs); the cluster's run starts from an empty one, so the encoding really runs on the
workers, every time: that is what is being tested.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from generator.core.options import EvaluationOptions
from generator.evaluate.pipeline import evaluate, write_outputs

pytestmark = [pytest.mark.integration, pytest.mark.model]
pytest.importorskip("ray.data")

TIMING_KEYS = ("rerank_milliseconds", "p95_rerank_milliseconds", "rerank_costs", "manifest")
EVERY_NTH_UNJUDGED = 128
EVERY_NTH_QUERY = 4


def _slice_of(scifact_dir, destination):
    """SciFact cut to every EVERY_NTH_QUERY-th test query: its judgements, the documents they judge
    and every EVERY_NTH_UNJUDGED-th document judged for no query, line for line as the original
    spells them (the queries file as it is)."""
    with (scifact_dir / "qrels" / "test.tsv").open(encoding="utf-8", newline="") as qrels:
        header, *lines = qrels.read().splitlines(keepends=True)
    queries = list(dict.fromkeys(line.split("\t", 1)[0] for line in lines))[::EVERY_NTH_QUERY]
    kept_queries = set(queries)
    kept_lines = [line for line in lines if line.split("\t", 1)[0] in kept_queries]
    judged = {line.split("\t")[1] for line in kept_lines}
    every_judged = {line.split("\t")[1] for line in lines}
    (destination / "qrels").mkdir(parents=True)
    (destination / "qrels" / "test.tsv").write_text(header + "".join(kept_lines), encoding="utf-8")
    shutil.copyfile(scifact_dir / "queries.jsonl", destination / "queries.jsonl")
    kept = unjudged = 0
    with (scifact_dir / "corpus.jsonl").open(encoding="utf-8") as corpus, \
            (destination / "corpus.jsonl").open("w", encoding="utf-8") as out:
        for line in corpus:
            document = json.loads(line)["_id"]
            if document in every_judged and document not in judged:
                continue
            if document not in judged:
                unjudged += 1
                if unjudged % EVERY_NTH_UNJUDGED:
                    continue
            out.write(line)
            kept += 1
    return kept, judged


@pytest.fixture(scope="module")
def both(scifact_dir, tmp_path_factory, tiny_cross_encoder):
    root = tmp_path_factory.mktemp("scifact-engines")
    documents, judged = _slice_of(scifact_dir, root / "scifact-slice")
    produced = {"documents": documents, "judged": judged}
    for engine in ("local", "ray"):
        options = EvaluationOptions(data=root / "scifact-slice", outputs_dir=root / engine / "outputs",
                                    dense_model="minilm-offline", rerank_model=str(tiny_cross_encoder),
                                    rerank_max_length=128, progress=False, device="cpu",
                                    **({"engine": "ray", "workers": 2, "cache_dir": root / "empty-cache"}
                                       if engine == "ray" else {}))
        log: list[str] = []
        path = write_outputs(evaluate(options, log=log.append), options, log=log.append)
        produced[engine] = (options, json.loads(path.read_text()), log)
    return produced


def test_the_slice_is_real_scifact_with_the_judged_documents_of_every_fourth_query(both):
    options = both["local"][0]
    with (options.data / "corpus.jsonl").open(encoding="utf-8") as corpus:
        kept = [json.loads(line)["_id"] for line in corpus]
    assert both["judged"] <= set(kept) and len(both["judged"]) == 83
    assert len(kept) == both["documents"] == 83 + (5183 - 283) // EVERY_NTH_UNJUDGED


def test_the_cluster_encoded_the_corpus_itself_in_more_shards_than_workers(both):
    options, results, log = both["ray"]
    assert results["manifest"]["caches"]["dense_embeddings"] == "computed"
    assert any(line.startswith(f"dense: encoding {both['documents']} documents") for line in log)
    from generator.evaluate.encoding import BATCHES_PER_SHARD

    workers = 2
    batches = -(-both["documents"] // options.encode_batch_size)
    per_shard = max(1, min(BATCHES_PER_SHARD, -(-batches // (4 * workers))))
    assert -(-batches // per_shard) >= 2 * workers, "the slice no longer spreads over the workers"


def test_scifact_run_files_are_the_same_bytes_and_the_figures_the_same(both):
    local, local_results, _ = both["local"]
    ray, ray_results, _ = both["ray"]
    names = sorted(path.name for path in local.runs_dir.iterdir())
    assert names == ["dense.trec", "hybrid-rerank.trec", "hybrid.trec", "qrels.tsv", "sparse.trec"]
    for name in names:
        assert (ray.runs_dir / name).read_bytes() == (local.runs_dir / name).read_bytes(), name
    for key in local_results:
        if key not in TIMING_KEYS:
            assert ray_results[key] == local_results[key], key


def test_the_cluster_wrote_the_embeddings_the_single_process_reads(both):
    local, local_results, _ = both["local"]
    ray, _, _ = both["ray"]
    from generator.evaluate.cache import EmbeddingCache
    from generator.storage.paths import default_cache_dir

    [entry] = sorted((ray.cache_dir / "embeddings").glob("*.npy"))
    shared = EmbeddingCache(local.cache_dir or default_cache_dir())
    local_matrix = shared.load(entry.stem, expected_rows=both["documents"], normalized=True)
    assert local_matrix is not None, "the single process's cache holds no entry under the cluster's key"
    assert np.array_equal(np.load(entry), local_matrix)
