"""`readout train-reranker`: pairs mined from the corpus alone (deterministic for a seed, BM25
negatives that share the title's words, never the document itself or a copy of its text), a run
that never opens queries.jsonl or qrels/ (watched by an audit hook in a child process), a model
that loads and scores, a training.json naming everything it was made from, and the refusals: an
existing output, an unknown base model, missing packages, an interrupt that leaves nothing."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from generator.commands.cli import main
from generator.evaluate import training
from generator.evaluate.data import Document, load_corpus
from generator.storage.errors import InputError
from generator.evaluate.models import resolve_model
from generator.evaluate.training import (BM25_NEGATIVE, POSITIVE, RANDOM_NEGATIVE, StepProgress, mine_title_pairs,
                                         progress_line)
from generator.storage.fileio import sha256_file
from tests.conftest import REPOSITORY_ROOT, Outcome, one_line_error, run_python
from tests.one_thread import ONE_THREAD_ENV

TINY_BEIR = REPOSITORY_ROOT / "examples" / "tiny-beir"
QUICK = ["--steps", "6", "--batch-size", "8", "--max-length", "64"]

# A child interpreter that records every path opened (the `open` audit event covers open(),
# io.open and os.open) from before `generator` is imported until the command returns.
AUDITED_RUN = """
import json, os, sys
opened = []
def watch(event, args):
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        opened.append(os.path.abspath(os.fsdecode(args[0])))
sys.addaudithook(watch)
from generator.commands.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "opened": opened}))
"""


def _project(root: Path) -> Path:
    """A beir project whose readout.yaml names a copy of examples/tiny-beir beside it."""
    shutil.copytree(TINY_BEIR, root / "tiny-beir")
    (root / "readout.yaml").write_text(yaml.safe_dump({"title": "Train", "kind": "beir", "data": "tiny-beir"}),
                                       encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def audited_run(tmp_path_factory):
    """`readout train-reranker` from minilm-offline in a project over tiny-beir, in a child
    interpreter under the audit hook: (project, what it printed, its report, the output)."""
    project = _project(tmp_path_factory.mktemp("train"))
    completed = run_python("-c", AUDITED_RUN, "train-reranker", ".", *QUICK, cwd=project, timeout=180,
                           env={**os.environ, **ONE_THREAD_ENV})
    report = json.loads(completed.stdout.strip().splitlines()[-1])
    output = project / "models" / "tiny-beir-titles-cross-encoder"
    return project, Outcome(report["code"], completed.stdout, completed.stderr), report, output


@pytest.mark.model
@pytest.mark.usefixtures("one_torch_thread")
def test_the_command_writes_the_default_output(audited_run):
    # How long training takes is the record's (`wall_seconds`, tested below), not an assertion: a
    # bound on a loaded machine's clock failed when the test ran beside other work.
    project, outcome, report, output = audited_run
    assert report["code"] == 0, outcome.err
    assert outcome.out.startswith("wrote models/tiny-beir-titles-cross-encoder: a cross-encoder fine-tuned from "
                                  "minilm-offline")
    assert "120 from 30 documents of tiny-beir" in outcome.out
    assert sorted(path.name for path in output.parent.iterdir()) == [output.name]   # no temporary left beside it
    mask = os.umask(0)
    os.umask(mask)
    # An ordinary output, not the private directory and files the temporary was made as.
    modes = {path.stat().st_mode & 0o777 for path in (output, output / "model.safetensors", output / "training.json")}
    assert modes == {0o777 & ~mask, 0o666 & ~mask}


@pytest.mark.model
@pytest.mark.usefixtures("one_torch_thread")
def test_stderr_has_progress_lines_and_nothing_from_the_trainer(audited_run):
    _, outcome, _, _ = audited_run
    lines = outcome.err.splitlines()
    assert lines[0].startswith("train-reranker: 120 pairs from 30 documents (30 positive, 90 BM25 negatives, "
                               "0 random)")
    assert lines[1] == "train-reranker: 0/6 steps (0%), 0.00 steps/s, time left not known yet"
    assert lines[-1].startswith("train-reranker: 6/6 steps (100%), ")
    assert all(line.startswith("train-reranker: ") for line in lines), outcome.err   # no bar, dict or load report
    assert "\r" not in outcome.err


@pytest.mark.model
@pytest.mark.usefixtures("one_torch_thread")
def test_the_command_never_opens_queries_or_qrels(audited_run):
    project, _, report, _ = audited_run
    data = (project / "tiny-beir").resolve()
    opened = [Path(path).resolve() for path in report["opened"]]
    assert data / "corpus.jsonl" in opened   # the hook sees what the command reads
    assert [path for path in opened if path == data / "queries.jsonl" or data / "qrels" in path.parents] == []


@pytest.mark.model
@pytest.mark.usefixtures("one_torch_thread")
def test_the_model_loads_and_scores_a_pair(audited_run):
    from sentence_transformers import CrossEncoder

    from generator.evaluate.models import load_cross_encoder

    _, _, _, output = audited_run
    identity = resolve_model(str(output))
    model = load_cross_encoder(identity, max_length=64)
    pair = ("antibody memory obesity", "blood neuron obesity sleep neuron receptor antibody")
    score = float(model.predict([pair], show_progress_bar=False)[0])
    assert 0.0 <= score <= 1.0
    assert float(CrossEncoder(str(output)).predict([pair])[0]) == pytest.approx(score, abs=1e-6)


@pytest.mark.model
@pytest.mark.usefixtures("one_torch_thread")
def test_training_json_names_what_the_model_was_made_from_and_how(audited_run):
    project, _, _, output = audited_run
    record = json.loads((output / "training.json").read_text(encoding="utf-8"))
    base = resolve_model("minilm-offline")
    assert record["base_model"]["requested"] == "minilm-offline"
    assert record["base_model"]["weights_sha256"] == base.weights_sha256
    assert record["weights_sha256"] == resolve_model(str(output)).weights_sha256 != base.weights_sha256
    corpus = project / "tiny-beir" / "corpus.jsonl"
    documents = len(load_corpus(corpus))
    assert record["corpus"] == {"name": "tiny-beir", "file": "corpus.jsonl", "sha256": sha256_file(corpus),
                                "bytes": corpus.stat().st_size, "documents": documents}
    assert record["labels"]["queries_read"] == record["labels"]["relevance_judgements_read"] == 0
    assert "no query and no relevance judgement was read" in record["labels"]["statement"]
    recipe = record["recipe"]
    assert (recipe["steps"], recipe["batch_size"], recipe["max_length"], record["steps"]) == (6, 8, 64, 6)
    assert (record["seed"], recipe["data_seed"]) == (training.DEFAULT_SEED, training.DEFAULT_SEED)
    assert recipe["learning_rate"] == training.DEFAULT_LEARNING_RATE
    assert recipe["training_pairs"] == documents * (1 + training.DEFAULT_NEGATIVES)
    assert recipe["pairs_sha256"] == mine_title_pairs(load_corpus(corpus)).sha256
    assert recipe["loss"]["name"] == "BinaryCrossEntropyLoss"
    assert recipe["negatives"]["method"].startswith("bm25")
    assert recipe["negatives"]["per_title"] == training.DEFAULT_NEGATIVES
    assert recipe["negatives"]["bm25_count"] + recipe["negatives"]["random_count"] == 3 * documents
    for name in ("optimizer", "lr_scheduler", "warmup_steps", "weight_decay", "max_grad_norm", "adam_epsilon"):
        assert name in recipe, name
    assert set(record["wall_seconds"]) == {"reading_and_mining", "training", "total"}
    assert 0 < record["wall_seconds"]["training"] < record["wall_seconds"]["total"]
    for package in ("torch", "sentence-transformers", "transformers", "bm25s", "datasets", "accelerate"):
        assert record["packages"][package], package
    assert len(record["training_loss"]["logged"]) == 6


# --- refusals (nothing is trained) --------------------------------------------------------------


def _run(monkeypatch, capsys, *args: str) -> Outcome:
    monkeypatch.chdir(REPOSITORY_ROOT)
    capsys.readouterr()
    code = main(["train-reranker", "--data", str(TINY_BEIR), *args])
    out, err = capsys.readouterr()
    return Outcome(code, out, err)


def test_an_existing_output_without_force_is_a_one_line_error(tmp_path, monkeypatch, capsys):
    existing = tmp_path / "model"
    existing.mkdir()
    (existing / "keep.txt").write_text("mine", encoding="utf-8")
    outcome = _run(monkeypatch, capsys, "--output", str(existing))
    assert outcome.code == 2
    assert one_line_error(outcome).endswith("model: already exists; pass --force to replace it")
    assert (existing / "keep.txt").read_text(encoding="utf-8") == "mine"


def test_force_replaces_only_a_model_train_reranker_wrote(tmp_path, monkeypatch, capsys):
    existing = tmp_path / "not-a-model"
    existing.mkdir()
    (existing / "keep.txt").write_text("mine", encoding="utf-8")
    outcome = _run(monkeypatch, capsys, "--output", str(existing), "--force")
    assert outcome.code == 2
    assert "is not a model directory train-reranker wrote (no training.json)" in one_line_error(outcome)
    assert (existing / "keep.txt").read_text(encoding="utf-8") == "mine"


def test_an_unknown_base_model_is_a_one_line_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    outcome = _run(monkeypatch, capsys, "--base-model", "no-such-org/no-such-model", "--output",
                   str(tmp_path / "model"))
    assert outcome.code == 2
    assert "model 'no-such-org/no-such-model' is not in the Hugging Face cache" in one_line_error(outcome)
    assert not (tmp_path / "model").exists()


def test_missing_training_packages_name_the_extra(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(training, "TRAINING_PACKAGES", ("datasets", "no_such_training_package"))
    outcome = _run(monkeypatch, capsys, "--output", str(tmp_path / "model"))
    assert outcome.code == 2
    assert one_line_error(outcome) == ("Error: training needs no_such_training_package, not installed here: "
                                       'pip install "traced-readout[train]"')


@pytest.mark.parametrize("option, value", [("--steps", "0"), ("--batch-size", "0"), ("--max-length", "4"),
                                           ("--negatives", "0"), ("--learning-rate", "nan"),
                                           ("--learning-rate", "-1")])
def test_an_out_of_range_setting_names_its_option(tmp_path, monkeypatch, capsys, option, value):
    outcome = _run(monkeypatch, capsys, option, value, "--output", str(tmp_path / "model"))
    assert outcome.code == 2
    assert one_line_error(outcome).startswith(f"Error: {option}: expected ")


# --- training with the random tiny model: interrupts, --force, determinism ---------------------


@pytest.mark.model
@pytest.mark.usefixtures("one_torch_thread")
def test_an_interrupt_during_training_leaves_no_output_directory(tiny_cross_encoder, tmp_path, monkeypatch,
                                                                 capsys):
    advance = StepProgress.advance

    def interrupted(self, done):
        advance(self, done)
        if done == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(StepProgress, "advance", interrupted)
    outcome = _run(monkeypatch, capsys, "--base-model", str(tiny_cross_encoder), "--output",
                   str(tmp_path / "models" / "model"), "--steps", "20", "--max-length", "32")
    assert outcome.code == 130
    assert outcome.err.splitlines()[-1] == "Interrupted." and "Traceback" not in outcome.err
    assert list((tmp_path / "models").iterdir()) == []   # neither the model nor its temporary


@pytest.mark.model
@pytest.mark.usefixtures("one_torch_thread")
def test_the_same_seed_trains_the_same_weights_and_force_replaces_the_model(tiny_cross_encoder, tmp_path,
                                                                            monkeypatch, capsys):
    output = tmp_path / "model"
    settings = ["--base-model", str(tiny_cross_encoder), "--output", str(output), "--steps", "4",
                "--max-length", "32", "--batch-size", "8"]

    def trained(*extra: str) -> dict:
        outcome = _run(monkeypatch, capsys, *settings, *extra)
        assert outcome.code == 0, outcome.err
        return json.loads((output / "training.json").read_text(encoding="utf-8"))

    first = trained()
    again = trained("--force")
    other = trained("--force", "--seed", "7")
    assert again["weights_sha256"] == first["weights_sha256"] != other["weights_sha256"]
    assert again["training_loss"] == first["training_loss"]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["model"]


@pytest.mark.model
@pytest.mark.usefixtures("one_torch_thread")
def test_a_gzip_corpus_trains_the_same_weights_and_training_json_names_the_file_read(tiny_cross_encoder, tmp_path,
                                                                                   monkeypatch, capsys):
    plain, packed = tmp_path / "plain", tmp_path / "packed"
    plain.mkdir()
    packed.mkdir()
    corpus = (TINY_BEIR / "corpus.jsonl").read_bytes()
    (plain / "corpus.jsonl").write_bytes(corpus)
    (packed / "corpus.jsonl.gz").write_bytes(gzip.compress(corpus, mtime=0))
    records = {}
    for folder in (plain, packed):
        monkeypatch.chdir(REPOSITORY_ROOT)
        capsys.readouterr()
        code = main(["train-reranker", "--data", str(folder), "--base-model", str(tiny_cross_encoder),
                     "--output", str(folder / "model"), "--steps", "4", "--max-length", "32", "--batch-size", "8"])
        assert code == 0, capsys.readouterr().err
        records[folder.name] = json.loads((folder / "model" / "training.json").read_text(encoding="utf-8"))
    assert records["packed"]["weights_sha256"] == records["plain"]["weights_sha256"]
    assert records["packed"]["recipe"]["training_pairs"] == records["plain"]["recipe"]["training_pairs"]
    assert records["plain"]["corpus"]["file"] == "corpus.jsonl"
    assert records["packed"]["corpus"]["file"] == "corpus.jsonl.gz"
    assert records["packed"]["labels"]["files_read"] == ["corpus.jsonl.gz"]
    assert records["packed"]["corpus"]["sha256"] == hashlib.sha256((packed / "corpus.jsonl.gz").read_bytes()).hexdigest()


def test_a_plain_and_a_gzip_corpus_side_by_side_are_refused_before_training(tmp_path, monkeypatch, capsys):
    corpus = (TINY_BEIR / "corpus.jsonl").read_bytes()
    (tmp_path / "corpus.jsonl").write_bytes(corpus)
    (tmp_path / "corpus.jsonl.gz").write_bytes(gzip.compress(corpus))
    monkeypatch.chdir(REPOSITORY_ROOT)
    capsys.readouterr()
    code = main(["train-reranker", "--data", str(tmp_path), "--output", str(tmp_path / "model")])
    error = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in error
    assert "both corpus.jsonl and corpus.jsonl.gz are here; keep one" in error
    assert not (tmp_path / "model").exists()


def test_a_data_folder_that_is_not_there_is_one_line_naming_it(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPOSITORY_ROOT)
    capsys.readouterr()
    code = main(["train-reranker", "--data", str(tmp_path / "nowhere"), "--output", str(tmp_path / "model")])
    error = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in error
    assert "nowhere" in error and "dataset directory not found" in error


# --- mining: pure, deterministic, corpus only --------------------------------------------------


def _by_title(mined) -> dict[str, list]:
    grouped: dict[str, list] = {}
    for pair in mined.pairs:
        grouped.setdefault(pair.title_of, []).append(pair)
    return grouped


def test_mining_gives_each_title_its_own_text_and_bm25_negatives_that_share_its_words():
    documents = load_corpus(TINY_BEIR / "corpus.jsonl")
    mined = mine_title_pairs(documents, negatives_per_title=3, seed=1)
    texts = {document.doc_id: document.text for document in documents}
    grouped = _by_title(mined)
    assert list(grouped) == [document.doc_id for document in documents]
    for document in documents:
        positive, *negatives = grouped[document.doc_id]
        assert (positive.title, positive.text, positive.label, positive.source) == (
            document.title, document.text, 1.0, POSITIVE)
        assert len(negatives) == 3 and len({pair.text_of for pair in negatives}) == 3
        for pair in negatives:
            assert pair.label == 0.0 and pair.text_of != document.doc_id and pair.text == texts[pair.text_of]
            if pair.source == BM25_NEGATIVE:
                assert set(document.title.split()) & set(pair.text.split()), (document.title, pair.text)


def test_mining_is_deterministic_for_a_seed():
    documents = load_corpus(TINY_BEIR / "corpus.jsonl")
    assert mine_title_pairs(documents, 3, seed=5) == mine_title_pairs(documents, 3, seed=5)
    assert mine_title_pairs(documents, 3, seed=5).sha256 == mine_title_pairs(documents, 3, seed=5).sha256


def _stopword_corpus() -> list[Document]:
    words = "insulin receptor tumor immune sleep memory vaccine antibody liver heart".split()
    documents = [Document(f"d{number}", f"{words[number]} study", f"{words[number]} {words[(number + 1) % 10]} cells")
                 for number in range(10)]
    # A title BM25 cannot match (stopwords only), and a document that copies another's text.
    return documents + [Document("stop", "the of and", "an unrelated text"),
                        Document("copy", "insulin copy", documents[0].text)]


def test_a_title_bm25_cannot_match_is_filled_at_random_by_the_seed():
    documents = _stopword_corpus()
    fill = {seed: [pair.text_of for pair in _by_title(mine_title_pairs(documents, 3, seed))["stop"][1:]]
            for seed in (1, 2)}
    sources = {pair.source for pair in _by_title(mine_title_pairs(documents, 3, 1))["stop"][1:]}
    assert sources == {RANDOM_NEGATIVE}
    assert fill[1] == [pair.text_of for pair in _by_title(mine_title_pairs(documents, 3, 1))["stop"][1:]]
    assert len(fill[1]) == 3 and fill[1] != fill[2]


def test_a_copy_of_the_documents_own_text_is_never_its_negative():
    mined = _by_title(mine_title_pairs(_stopword_corpus(), 3, 1))
    for title_of, text_of in (("copy", "d0"), ("d0", "copy")):
        assert text_of not in [pair.text_of for pair in mined[title_of][1:]]


def test_too_few_other_texts_is_a_one_line_input_error():
    documents = [Document("a", "alpha", "alpha text"), Document("b", "beta", "beta text")]
    with pytest.raises(InputError, match="3 negatives per title need as many other documents' texts"):
        mine_title_pairs(documents, 3, 1)


# --- progress ------------------------------------------------------------------------------------


def test_progress_off_a_terminal_is_a_line_at_least_every_ten_seconds():
    now = [0.0]
    lines: list[str] = []
    progress = StepProgress(100, tty=False, log=lines.append, clock=lambda: now[0])
    progress.start()
    for step in range(1, 101):
        now[0] += 0.5   # two steps a second: a line every twenty steps
        progress.advance(step)
    progress.close()
    assert lines[0] == "train-reranker: 0/100 steps (0%), 0.00 steps/s, time left not known yet"
    assert [line.split(" steps")[0] for line in lines[1:]] == [f"train-reranker: {n}/100" for n in (20, 40, 60, 80,
                                                                                                    100)]
    assert lines[1] == "train-reranker: 20/100 steps (20%), 2.00 steps/s, about 40s left"


def test_a_progress_line_gives_the_time_left_from_the_rate_so_far():
    assert progress_line(250, 1000, 500.0) == "train-reranker: 250/1,000 steps (25%), 0.50 steps/s, about 25m00s left"
    assert progress_line(1, 10_000, 3.0).endswith("about 8h19m left")


def test_progress_on_a_terminal_is_a_bar_and_no_lines(capsys):
    lines: list[str] = []
    progress = StepProgress(4, tty=True, log=lines.append)
    progress.start()
    for step in range(1, 5):
        progress.advance(step)
    assert progress.bar.n == 4
    progress.close()
    assert lines == [] and "train-reranker" in capsys.readouterr().err
