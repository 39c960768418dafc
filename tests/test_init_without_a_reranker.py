"""Issue 45 part 5, only what the team has: `readout init` leaves the rerank row out where no
cross-encoder can be loaded, and says so; the page of a project without a rerank row has no
reranker section, chart, model line or budget line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPOSITORY_ROOT, run_python

RERANKER = "BAAI/bge-reranker-v2-m3"


def _init(tmp_path: Path, cache: Path, *args: str):
    env = {**os.environ, "HF_HUB_CACHE": str(cache), "HF_HOME": str(cache.parent / "hf-home"), "HF_HUB_OFFLINE": "1"}
    return run_python("-m", "generator.commands.cli", "init", str(tmp_path / "review"), "--data",
                      str(REPOSITORY_ROOT / "examples" / "tiny-beir"), *args, cwd=tmp_path, env=env)


def _rows(tmp_path: Path) -> list[dict]:
    return yaml.safe_load((tmp_path / "review" / "readout.yaml").read_text(encoding="utf-8"))["evaluate"]["rows"]


def _cached(cache: Path) -> Path:
    """A Hugging Face cache holding the design's reranker (its config is all init looks for)."""
    snapshot = cache / ("models--" + RERANKER.replace("/", "--")) / "snapshots" / "0123abcd"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}", encoding="utf-8")
    (snapshot.parent.parent / "refs").mkdir()
    (snapshot.parent.parent / "refs" / "main").write_text("0123abcd", encoding="utf-8")
    return cache


def test_init_leaves_the_rerank_row_out_where_no_cross_encoder_can_load_and_says_so(tmp_path):
    completed = _init(tmp_path, tmp_path / "empty-cache")
    assert completed.returncode == 0, completed.stderr
    assert (f"No cross-encoder can be loaded here ({RERANKER} is not in the Hugging Face cache, and init downloads "
            "nothing): the project has no rerank row") in completed.stdout
    assert [row["name"] for row in _rows(tmp_path)] == ["dense", "sparse", "hybrid"]
    config = (tmp_path / "review" / "readout.yaml").read_text(encoding="utf-8")
    assert "skip_rerank" not in config and "What reranking costs" not in config


def test_init_keeps_the_rerank_row_where_a_cross_encoder_loads_and_with_rerank(tmp_path):
    completed = _init(tmp_path, _cached(tmp_path / "cache"))
    assert completed.returncode == 0, completed.stderr
    assert "No cross-encoder" not in completed.stdout
    config = yaml.safe_load((tmp_path / "review" / "readout.yaml").read_text(encoding="utf-8"))
    assert "skip_rerank" not in config["evaluate"], "the row runs: it is not recorded as not measured"
    assert "cost" in [section["id"] for section in config["outputs"]["readout"]["sections"]]
    forced = tmp_path / "forced"
    forced.mkdir()
    completed = _init(forced, forced / "empty-cache", "--rerank")
    assert completed.returncode == 0 and "No cross-encoder" not in completed.stdout
    config = yaml.safe_load((forced / "review" / "readout.yaml").read_text(encoding="utf-8"))
    assert config["evaluate"]["skip_rerank"] is True and config["evaluate"]["skip_rerank_reason"]


@pytest.mark.model
def test_the_page_of_a_project_without_a_rerank_row_shows_no_reranker(tmp_path, monkeypatch, capsys):
    """`readout init` where no cross-encoder loads, built for real (the packaged MiniLM, no
    network): no reranker anywhere a reader looks, even once readout.yaml asks for the reranker's
    cost, its frontier and its time chart (there is no rerank row to price): the section that
    would hold only those goes, and the quality chart stands alone."""
    from generator.commands.cli import main
    from tests.conftest import edit_config

    completed = _init(tmp_path, tmp_path / "empty-cache")
    assert completed.returncode == 0 and "No cross-encoder can be loaded here" in completed.stdout
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("READOUT_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "review"
    assert main(["build", str(root), "--draft"]) == 0

    def ask_for_the_reranker(config):
        readout = config["outputs"]["readout"]
        readout["sections"].insert(2, {"id": "cost", "title": "What reranking costs", "show": ["rerank_cost", "frontier"]})
        readout["sections"][1]["show"].append("quality_vs_time")
        readout["charts"]["quality_vs_time"] = {"metrics": ["nDCG@5"], "time_row": "hybrid+rerank",
                                                "time": "rerank_costs.hybrid+rerank.p95_milliseconds"}
    edit_config(root, ask_for_the_reranker)
    assert main(["render", str(root), "--draft"]) == 0
    capsys.readouterr()
    page = (root / "outputs" / "readout.html").read_text(encoding="utf-8")
    body = page.split("<body", 1)[1]
    assert "rerank" not in body.lower(), "no reranker anywhere a reader looks"
    assert 'class="budget"' not in page and "chart-time" not in page and 'id="section-cost"' not in page
    assert "chart-quality" in page, "the quality chart stands alone"
    for name in ("TEACHBACK.md", "AAR.md"):
        assert "rerank" not in (root / "outputs" / name).read_text(encoding="utf-8").lower(), name
