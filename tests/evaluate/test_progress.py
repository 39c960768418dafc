"""Progress where output is not a terminal: a line at least every 10 seconds (done/total, rate,
time left), nothing for work shorter than that, a bar on a terminal, and the corpus encoding
reported batch by batch without changing a single embedding."""

import sys

import numpy as np
import pytest

from generator.evaluate import progress as progress_module
from generator.evaluate.progress import PROGRESS_LINE, Progress, progress_line


def _run(total, seconds_per_item, **kwargs):
    now, lines = [0.0], []
    with Progress("rerank", total, unit="queries", log=lines.append, tty=False, clock=lambda: now[0], **kwargs) as bar:
        for _ in range(total):
            now[0] += seconds_per_item
            bar.update()
    return lines


def test_off_a_terminal_a_line_comes_at_least_every_ten_seconds_and_at_the_end():
    lines = _run(20, 3.0)     # 60 s of work: lines at 12, 24, 36, 48, 60 s (each 10 s or more apart)
    assert [line.split(" queries")[0] for line in lines] == [f"rerank: {n}/20" for n in (4, 8, 12, 16, 20)]
    assert lines[0] == "rerank: 4/20 queries (20%), 0.33 queries/s, about 48s left"
    assert lines[-1] == "rerank: 20/20 queries (100%), 0.33 queries/s, about 0s left"
    assert all(PROGRESS_LINE.fullmatch(line) for line in lines)


def test_work_shorter_than_the_interval_prints_nothing_and_disabled_prints_nothing():
    assert _run(5, 1.0) == []
    assert _run(20, 3.0, enabled=False) == []
    assert _run(0, 3.0) == []


def test_an_announced_start_says_the_time_left_is_not_known_yet():
    lines = _run(3, 1.0, announce=True)
    assert lines == ["rerank: 0/3 queries (0%), 0.00 queries/s, time left not known yet",
                     "rerank: 3/3 queries (100%), 1.00 queries/s, about 0s left"]


def test_on_a_terminal_a_bar_and_no_lines(capsys):
    lines = []
    with Progress("cost", 3, unit="queries", log=lines.append, tty=True) as bar:
        for _ in range(3):
            bar.update()
    assert lines == [] and "cost" in capsys.readouterr().err


def test_the_line_pattern_tells_progress_from_messages():
    assert PROGRESS_LINE.fullmatch(progress_line("cost depth 10", 1_234, 5_183, "documents", 61.0))
    assert not PROGRESS_LINE.search("dense: encoding 5183 documents with x (max_seq_length 256); cached afterwards\n")
    assert not PROGRESS_LINE.search("Decision D5: trigger does not fire: do not ship the reranker\n")


@pytest.mark.model
def test_dense_encoding_reports_each_batch_and_its_embeddings_do_not_change(monkeypatch, tmp_path):
    from generator.evaluate.cache import EmbeddingCache
    from generator.evaluate.data import Document
    from generator.evaluate.models import load_bi_encoder, resolve_model
    from generator.evaluate.retrieval import dense_rankings

    identity = resolve_model("minilm-offline")
    model = load_bi_encoder(identity, "cpu")
    documents = [Document(f"d{i}", "", f"document {i} about {'protein ' * (i % 7)}folding") for i in range(70)]
    plain = model.encode([d.retrieval_text for d in documents], batch_size=16, normalize_embeddings=True,
                         convert_to_numpy=True, show_progress_bar=False)
    monkeypatch.setattr(progress_module, "PROGRESS_INTERVAL_SECONDS", 0.0)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    lines = []
    outcome = dense_rankings(documents, {"q": "protein"}, identity, 5, EmbeddingCache(tmp_path), log=lines.append,
                             batch_size=16)
    progress = [line.split(" documents")[0] for line in lines if PROGRESS_LINE.fullmatch(line)]
    assert progress == ["dense: 16/70", "dense: 32/70", "dense: 48/70", "dense: 64/70", "dense: 70/70"]
    cached = EmbeddingCache(tmp_path).load(outcome.cache_key, expected_rows=70, normalized=True)
    assert np.array_equal(cached, plain)

