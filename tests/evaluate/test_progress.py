"""Progress where output is not a terminal: a line at least every 10 seconds (done/total, rate,
time left), nothing for work shorter than that, a bar on a terminal, and the corpus encoding
reported batch by batch without changing a single embedding."""

import types

import numpy as np
import pytest

from generator.evaluate import progress as progress_module
from generator.evaluate.progress import PROGRESS_LINE, Progress, counting_encoder_batches, progress_line


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


def test_counting_batches_advances_by_each_batch_and_restores_the_encoder():
    module = types.SimpleNamespace(trange=range)
    now, lines = [0.0], []
    bar = Progress("dense", 10, unit="documents", log=lines.append, tty=False, interval=0.0, clock=lambda: now[0])
    bar.start()
    seen = []
    with counting_encoder_batches(module, bar, 10):
        for start in module.trange(0, 10, 4, desc="Batches", disable=True):
            now[0] += 1.0
            seen.append(start)
    assert seen == [0, 4, 8] and module.trange is range
    assert [line.split(" documents")[0] for line in lines] == ["dense: 4/10", "dense: 8/10", "dense: 10/10"]


@pytest.mark.model
def test_the_real_encoder_reports_batches_and_its_embeddings_do_not_change(monkeypatch):
    import sys

    from generator.evaluate.models import load_bi_encoder, resolve_model

    model = load_bi_encoder(resolve_model("minilm-offline"), "cpu")
    texts = [f"document {i} about {'protein ' * (i % 7)}folding" for i in range(70)]
    plain = model.encode(texts, batch_size=16, normalize_embeddings=True, convert_to_numpy=True,
                         show_progress_bar=False)
    monkeypatch.setattr(progress_module, "PROGRESS_INTERVAL_SECONDS", 0.0)
    lines = []
    bar = Progress("dense", len(texts), unit="documents", log=lines.append, tty=False)
    bar.start()
    with counting_encoder_batches(sys.modules[type(model).__module__], bar, len(texts)):
        counted = model.encode(texts, batch_size=16, normalize_embeddings=True, convert_to_numpy=True,
                               show_progress_bar=False)
    assert np.array_equal(plain, counted)
    assert [line.split(" documents")[0] for line in lines][-1] == "dense: 70/70"
    assert len(lines) >= 5      # one per batch of 16: 16, 32, 48, 64, 70
