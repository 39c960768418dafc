"""The Ray engine (generator.evaluate.distributed) on a local two-worker cluster gives the single
process's outputs: the same run files byte for byte, the same figures, the same cache entries, so
a run on a cluster and a run here meet in one cache."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from generator.core.options import EvaluationOptions
from generator.errors import InputError
from generator.evaluate.pipeline import evaluate, write_outputs

pytestmark = pytest.mark.model
pytest.importorskip("ray.data")

# What may differ between two evaluations of the same inputs: when and how fast they ran.
TIMING_KEYS = ("rerank_milliseconds", "p95_rerank_milliseconds", "rerank_costs", "manifest")


def _options(data, root, name, cross_encoder, **overrides):
    return EvaluationOptions(data=data, outputs_dir=root / name / "outputs", dense_model="minilm-offline",
                             rerank_model=str(cross_encoder), cache_dir=root / f"cache-{name}", progress=False,
                             bootstrap_resamples=200, device="cpu", **overrides)


def _evaluate(options, log=None):
    lines = []
    write_outputs(evaluate(options, log=log or lines.append), options, log=lines.append)
    return json.loads(options.results_path.read_text()), lines


@pytest.fixture(scope="module")
def runs(tmp_path_factory, tiny_cross_encoder):
    from tests.conftest import make_small_dataset

    root = tmp_path_factory.mktemp("engines")
    data = make_small_dataset(root / "data", documents=90, queries=7)
    local = _options(data, root, "local", tiny_cross_encoder)
    ray = _options(data, root, "ray", tiny_cross_encoder, engine="ray", workers=2)
    ray_log: list[str] = []
    produced = {"local": (local, *_evaluate(local)), "ray": (ray, *_evaluate(ray, ray_log.append))}
    # The single process on the cache the cluster filled: nothing left to compute.
    again = _options(data, root, "ray", tiny_cross_encoder)
    again = EvaluationOptions(**{**again.__dict__, "outputs_dir": root / "again" / "outputs"})
    produced["again"] = (again, *_evaluate(again))
    produced["ray_log"] = ray_log
    return produced


def test_the_run_files_are_the_same_bytes(runs):
    local, ray = runs["local"][0], runs["ray"][0]
    names = sorted(path.name for path in local.runs_dir.iterdir())
    assert names == ["dense.trec", "hybrid-rerank.trec", "hybrid.trec", "qrels.tsv", "sparse.trec"]
    assert names == sorted(path.name for path in ray.runs_dir.iterdir())
    for name in names:
        assert (ray.runs_dir / name).read_bytes() == (local.runs_dir / name).read_bytes(), name


def test_the_figures_are_the_same(runs):
    local, ray = runs["local"][1], runs["ray"][1]
    assert {key for key in local if key not in TIMING_KEYS} == {key for key in ray if key not in TIMING_KEYS}
    for key in local:
        if key not in TIMING_KEYS:
            assert ray[key] == local[key], key
    assert ray["table"][3]["measured"] is True and ray["table"][3]["nDCG@5"] == local["table"][3]["nDCG@5"]
    assert ray["manifest"]["runtime"]["engine"] == "ray" and "engine" not in local["manifest"]["runtime"]


def test_the_cluster_wrote_the_entries_the_single_process_reads(runs):
    local, ray = runs["local"][0], runs["ray"][0]
    [local_entry] = sorted((local.cache_dir / "embeddings").glob("*.npy"))
    [ray_entry] = sorted((ray.cache_dir / "embeddings").glob("*.npy"))
    assert ray_entry.name == local_entry.name
    assert np.array_equal(np.load(ray_entry), np.load(local_entry))
    local_rerank = sorted(path.name for path in (local.cache_dir / "rerank").rglob("*.json"))
    assert local_rerank == sorted(path.name for path in (ray.cache_dir / "rerank").rglob("*.json"))
    again = runs["again"][1]
    assert again["manifest"]["caches"]["dense_embeddings"] == "re-used"
    assert again["manifest"]["caches"]["rerank_computed_queries"] == []
    assert again["manifest"]["caches"]["rerank_resumed_queries"] == again["manifest"]["query_ids"]
    assert again["rerank_milliseconds"] == runs["ray"][1]["rerank_milliseconds"]


def test_the_driver_says_where_the_work_ran(runs):
    log = runs["ray_log"]
    assert any(line == "ray: 2 workers on a local cluster" for line in log)
    assert not any("WARNING" in line or "INFO" in line for line in log)


def test_engine_options_are_refused_without_the_engine(tmp_path, make_project, monkeypatch, capsys):
    from generator.cli import main

    project = tmp_path / "project"
    make_project(project)
    for option, value in (("--workers", "2"), ("--ray-address", "auto")):
        assert main(["evaluate", str(project), option, value]) == 2
        err = capsys.readouterr().err
        assert f"{option} is for --engine ray" in err and len(err.strip().splitlines()) == 1


def test_without_ray_installed_the_error_says_how_to_install_it(monkeypatch):
    from generator.evaluate.distributed import RayEngine

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(InputError, match=r"pip install 'traced-readout\[ray\]'"):
        RayEngine(workers=2)
