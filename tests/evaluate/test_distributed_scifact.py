"""The Ray engine on the real SciFact copy: a local two-worker cluster encodes all 5,183 documents
into an empty cache and reranks the release sample, and gives the single process's run files
byte for byte, its figures and its embeddings bit for bit.

The single-process run reads the shared cache (~/.cache/readout, filled by the other SciFact
tests); the cluster's run starts from an empty one, so the encoding really runs on the workers
(minutes on two cores, every time: that is what is being tested).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from generator.core.options import EvaluationOptions
from generator.evaluate.pipeline import evaluate, write_outputs

pytestmark = [pytest.mark.integration, pytest.mark.model]
pytest.importorskip("ray.data")

TIMING_KEYS = ("rerank_milliseconds", "p95_rerank_milliseconds", "rerank_costs", "manifest")


@pytest.fixture(scope="module")
def both(scifact_dir, tmp_path_factory, tiny_cross_encoder):
    root = tmp_path_factory.mktemp("scifact-engines")
    produced = {}
    for engine in ("local", "ray"):
        options = EvaluationOptions(data=scifact_dir, outputs_dir=root / engine / "outputs",
                                    dense_model="minilm-offline", rerank_model=str(tiny_cross_encoder),
                                    rerank_max_length=128, progress=False, device="cpu",
                                    **({"engine": "ray", "workers": 2, "cache_dir": root / "empty-cache"}
                                       if engine == "ray" else {}))
        log: list[str] = []
        path = write_outputs(evaluate(options, log=log.append), options, log=log.append)
        produced[engine] = (options, json.loads(path.read_text()), log)
    return produced


def test_the_cluster_encoded_the_corpus_itself(both):
    _, results, log = both["ray"]
    assert results["manifest"]["caches"]["dense_embeddings"] == "computed"
    assert any(line.startswith("dense: encoding 5183 documents") for line in log)


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
    local_matrix = shared.load(entry.stem, expected_rows=5183, normalized=True)
    assert local_matrix is not None, "the single process's cache holds no entry under the cluster's key"
    assert np.array_equal(np.load(entry), local_matrix)
