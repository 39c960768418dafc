"""Signals really sent (issue 24): a child `readout` is paused at a chosen point, the rename of the
N-th rerank score, cost timing or output file, the training, or the building of its parser, and
the test sends it SIGINT or SIGTERM with os.kill. Each ends in one line, "Interrupted." with exit
130 or "Terminated." with 143, never a traceback; nothing half-written is left; and the next run
resumes from exactly the cache entries that were complete: one renamed before the signal is
re-used, one that was not is computed again.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
import yaml

from generator.commands.cli import EXCEPTION_EXIT_CODES, Terminated, error_line, exit_code_for, main
from generator.evaluate.cache import checksum_problem
from generator.evaluate.pipeline import set_problem
from tests.child_process import CHILD_HOOKS, CHILD_PRELUDE, CHILD_RUN, PausingChild
from tests.conftest import REPOSITORY_ROOT, Outcome, cost_project

TINY_BEIR = REPOSITORY_ROOT / "examples" / "tiny-beir"
SIGNALS = {"SIGINT": (signal.SIGINT, 130, "Interrupted."), "SIGTERM": (signal.SIGTERM, 143, "Terminated.")}

# The child: `readout ARGV` through the real entry point (generator.commands.cli.run), paused where the spec
# says (tests/child_process.py), with hooks of this module's own: a pause while the parser is built,
# a reranker without a model, a training without training.
CHILD = CHILD_PRELUDE + CHILD_HOOKS + r'''
if spec.get("pause_in") == "parser":
    real_build_parser = cli.build_parser

    def build_parser(chosen=None):
        pause()
        return real_build_parser(chosen)

    cli.build_parser = build_parser

if spec.get("fake_reranker"):
    # Scores from the texts alone, the same in every run: the cache mechanics without a model.
    from generator.evaluate import retrieval

    class Scorer:
        def predict(self, pairs, batch_size=32, show_progress_bar=False):
            return [sum(map(ord, query + text)) % 997 / 997 for query, text in pairs]

    retrieval.load_cross_encoder = lambda identity, max_length, device="cpu": Scorer()

if spec.get("fake_training"):
    # A "model" written into the staging directory, as the trainer saves one, without training.
    from generator.evaluate import training

    def fine_tune(identity, pairs, recipe, target, scratch, progress):
        Path(target).mkdir(parents=True, exist_ok=True)
        (Path(target) / "model.safetensors").write_bytes(b"weights of %d pairs" % len(pairs))
        if spec.get("pause_in") == "training":
            pause()
        return training.TrainingRun({}, {"mean": 0.5, "logged": []}, "cpu", 0.01)

    training.fine_tune = fine_tune
    training.thread_count = lambda: 1

''' + CHILD_RUN


def Child(tmp_path: Path, argv: list[str], cwd: Path, **spec) -> PausingChild:
    return PausingChild(CHILD, tmp_path, argv, cwd, **spec)


def interrupted(tmp_path: Path, argv: list[str], cwd: Path, name: str, **spec) -> Outcome:
    """Run the child to its pause, send it signal `name`, and return what it did."""
    number, code, line = SIGNALS[name]
    child = Child(tmp_path, argv, cwd, **spec)
    os.kill(child.paused_pid(), number)
    outcome = child.outcome()
    assert "Traceback" not in outcome.err + outcome.out, outcome.err
    assert outcome.code == code, outcome.err[-3000:]
    assert outcome.err.splitlines()[-1] == line, outcome.err[-3000:]
    return outcome


def finished(tmp_path: Path, argv: list[str], cwd: Path, **spec) -> Outcome:
    outcome = Child(tmp_path, argv, cwd, **spec).outcome()
    assert outcome.code == 0, outcome.err[-3000:]
    return outcome


def temporaries(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.rglob("*.tmp"))


# --- the exit-code map -------------------------------------------------------------------------


def test_sigterm_has_its_own_line_and_exit_code_and_is_still_an_interrupt():
    assert isinstance(Terminated(), KeyboardInterrupt)   # every cleanup of an interrupt runs for it too
    assert (exit_code_for(Terminated()), error_line(Terminated())) == (143, "Terminated.")
    assert (exit_code_for(KeyboardInterrupt()), error_line(KeyboardInterrupt())) == (130, "Interrupted.")
    assert [code for _, code in EXCEPTION_EXIT_CODES] == [143, 130, 2, 2]


# --- the rerank-score cache --------------------------------------------------------------------


def _rerank_project(root: Path, data: Path) -> Path:
    model = root.parent / "fake-cross-encoder"
    model.mkdir(parents=True)
    (model / "model.safetensors").write_bytes(b"not a real model: the child scores with a fake")
    root.mkdir(parents=True)
    config = {"title": "Signals", "kind": "beir", "data": str(data),
              "evaluate": {"progress": False, "bootstrap_resamples": 200,
                           "rows": [{"name": "bm25", "kind": "sparse"},
                                    {"name": "ce", "kind": "rerank", "over": "bm25", "model": str(model),
                                     "max_length": 32}]}}
    (root / "readout.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return root


RERANK_ENTRY = r"/rerank/[^/]+/[0-9a-f]{64}\.json$"


@pytest.mark.model
@pytest.mark.parametrize("name, when, resumed", [("SIGINT", "before", 2), ("SIGTERM", "after", 3)])
def test_a_signal_at_a_rerank_cache_write_resumes_from_exactly_the_complete_entries(tmp_path, small_dataset, name,
                                                                                     when, resumed):
    project = _rerank_project(tmp_path / "project", small_dataset)
    cache = tmp_path / "cache"
    argv = ["evaluate", project, "--cache-dir", cache]
    # Paused at the third query's entry: before its rename (not written) or after it (written whole).
    interrupted(tmp_path, argv, tmp_path, name, at=RERANK_ENTRY, nth=3, when=when, fake_reranker=True)
    entries = [json.loads(path.read_text()) for path in sorted((cache / "rerank").rglob("*.json"))]
    assert len(entries) == resumed and all(checksum_problem(entry, entry["key"]) is None for entry in entries)
    assert temporaries(cache) == [] and temporaries(project) == []
    assert not (project / "outputs" / "results.json").exists()
    assert not (project / "outputs" / ".readout.lock").exists()

    again = finished(tmp_path, argv, tmp_path, fake_reranker=True)
    assert f"rerank: {resumed} of 6 queries found in the rerank cache" in again.err
    caches = json.loads((project / "outputs" / "results.json").read_text())["manifest"]["caches"]
    queries = [f"q{number}" for number in range(6)]
    assert caches["rerank_resumed_queries"] == queries[:resumed]
    assert caches["rerank_computed_queries"] == queries[resumed:]
    assert set_problem(project / "outputs" / "results.json") is None
    assert not (project / "outputs" / ".readout.lock").exists()


# --- the cost cache ------------------------------------------------------------------------------


COST_ENTRY = r"/cost/[0-9a-f]+/[0-9a-f]{64}\.json$"


@pytest.mark.model
# The child times on one torch thread (tests/child_process.py) and a cost entry's key holds the
# thread count, so the resuming run here does too.
@pytest.mark.usefixtures("one_torch_thread")
def test_sigterm_between_the_layer_entries_of_a_query_times_that_query_again(tmp_path, make_small_dataset,
                                                                              monkeypatch, capsys):
    tiny = tmp_path / "tiny-bert"
    tiny.mkdir()
    (tiny / "config.json").write_text(json.dumps({
        "model_type": "bert", "max_position_embeddings": 512, "hidden_size": 32, "num_hidden_layers": 2,
        "num_attention_heads": 2, "intermediate_size": 64, "vocab_size": 30522}), encoding="utf-8")
    project = cost_project(tmp_path / "project", make_small_dataset(tmp_path / "data", documents=20, queries=3))
    cache = tmp_path / "cache"
    argv = ["cost", tiny, project, "--cache-dir", cache, "--max-length", "32", "--format", "json"]
    # Each query is timed at 0 and 2 layers, one entry each: the fourth is the second query's
    # 2-layer entry, so that query has one of its two entries when the signal comes.
    interrupted(tmp_path, argv, tmp_path, "SIGTERM", at=COST_ENTRY, nth=4, when="before")
    entries = sorted(cache.glob("cost/*/" + "[0-9a-f]" * 64 + ".json"))
    assert len(entries) == 3 and temporaries(cache) == []
    kept = {path: path.read_bytes() for path in entries}
    # The next run, here in this process: the first query resumed, the half-timed one timed again.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    capsys.readouterr()
    assert main([str(word) for word in argv]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert (figures["resumed_queries"], figures["computed_queries"]) == (1, 2)
    entries = sorted(cache.glob("cost/*/" + "[0-9a-f]" * 64 + ".json"))
    assert len(entries) == 6
    assert sum(kept.get(path) == path.read_bytes() for path in entries) == 2, "the first query's two, untouched"


# --- the training output -------------------------------------------------------------------------


# The model tier: train-reranker checks for the train extra (datasets, and accelerate, which installs
# torch) before it trains, fake training or not.
@pytest.mark.model
@pytest.mark.parametrize("name", sorted(SIGNALS))
def test_a_signal_during_training_leaves_no_model_and_no_staging_directory(tmp_path, name):
    base = tmp_path / "base-model"
    base.mkdir()
    (base / "model.safetensors").write_bytes(b"base weights")
    models = tmp_path / "models"
    argv = ["train-reranker", "--data", TINY_BEIR, "--base-model", base, "--output", models / "m", "--steps", "3"]
    interrupted(tmp_path, argv, tmp_path, name, fake_training=True, pause_in="training")
    assert list(models.iterdir()) == []   # neither the model nor the directory it was being written in
    finished(tmp_path, argv, tmp_path, fake_training=True)
    assert sorted(path.name for path in models.iterdir()) == ["m"]
    assert (models / "m" / "training.json").is_file()


# --- render, and an interrupt before the command starts ----------------------------------------------


def _outputs(project: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted((project / "outputs").iterdir()) if path.is_file()}


@pytest.mark.parametrize("name", sorted(SIGNALS))
def test_a_signal_while_the_parser_is_built_is_one_line_not_a_traceback(tmp_path, make_project, name):
    project = make_project(tmp_path / "p")
    before = _outputs(project)
    interrupted(tmp_path, ["render", project], tmp_path, name, pause_in="parser")
    assert _outputs(project) == before


@pytest.mark.parametrize("name", sorted(SIGNALS))
def test_a_signal_at_a_render_rename_keeps_the_old_reports_and_leaves_no_temporary_or_lock(tmp_path, make_project,
                                                                                           name):
    project = make_project(tmp_path / "p")
    before = _outputs(project)
    interrupted(tmp_path, ["render", project], tmp_path, name, at=r"/outputs/[^/]+\.(html|md)$", nth=1,
                when="before")
    assert _outputs(project) == before
    assert temporaries(project) == []
    finished(tmp_path, ["render", project], tmp_path)
    assert sorted(_outputs(project)) == sorted({*before, "readout.html", "TEACHBACK.md", "AAR.md"})
