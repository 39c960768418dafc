"""Fine-tuning a cross-encoder on a corpus alone (`readout train-reranker`): no query and no
relevance judgement is read, so the reranker it makes can be evaluated on the test queries
without having seen one.

The task comes from the documents themselves. Each document with a title and a text gives one
positive pair, (title, its own text), and `negatives_per_title` negative pairs, (title, another
document's text): the texts BM25 ranks highest for the title, with the sparse row's own bm25s
configuration (generator.evaluate.retrieval.sparse_rankings) over the texts alone. The document
itself and any document with the very same text are skipped; when BM25 finds too few (a title of
stopwords), seeded random texts fill the rest, and the counts say how many.

Pair mining returns data (`mine_title_pairs`); the model is trained by sentence-transformers'
own CrossEncoderTrainer with BinaryCrossEntropyLoss, its own progress bars and reporting turned
off for ours (`StepProgress`). Everything is written into a temporary directory beside the
output and renamed into place at the end, so an interrupted run leaves no model directory at all.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
import random
import re
import shutil
import tempfile
import time
from collections import Counter
from contextlib import contextmanager
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from generator import __version__
from generator.core.dataclass import dataclass
from generator.storage.errors import InputError, ModelUnavailableError
from generator.storage.fileio import atomic_write_json, held_temporary_directory, sha256_file
from generator.storage.paths import display_path
from generator.core.options import BM25_B, BM25_K1, BM25_METHOD, BM25_STOPWORDS, DEFAULT_SEED
from generator.evaluate.data import CORPUS_FILE, QRELS_FILE, QUERIES_FILE, Document, load_corpus
from generator.evaluate.environment import package_versions, thread_count
from generator.evaluate.models import (OFFLINE_MINILM_ALIAS, REPLACED_MARK, ModelIdentity, resolve_model,
                                      restore_interrupted_replace, weights_sha256)
from generator.evaluate.progress import Progress
from generator.evaluate.progress import progress_line as shared_progress_line
from generator.evaluate.retrieval import sparse_rankings

DEFAULT_BASE_MODEL = OFFLINE_MINILM_ALIAS
# About 11 minutes at max_length 128 on two cores for SciFact's 5,183 documents (docs/commands.md).
DEFAULT_STEPS = 400
DEFAULT_BATCH_SIZE = 16
DEFAULT_MAX_LENGTH = 256
DEFAULT_LEARNING_RATE = 2e-5
DEFAULT_NEGATIVES = 3
# A linear warm-up over the first tenth of the steps, then linear decay to zero (the trainer's default).
WARMUP_FRACTION = 0.1
# BM25 is asked for this many candidates beyond the negatives, room for the document itself and
# copies of its text, which are skipped.
MINING_ROOM = 16
TRAINING_FILE = "training.json"
WRITTEN_BY = f"readout train-reranker {__version__}"
MODELS_DIR = "models"
OUTPUT_SUFFIX = "-titles-cross-encoder"
TRAINING_PACKAGES = ("datasets", "accelerate")
TRAIN_EXTRA = 'pip install "traced-readout[train]"'
NOT_READ = (QUERIES_FILE, str(Path(QRELS_FILE).parent) + "/")
NOTHING_JUDGED = ("no query and no relevance judgement was read: the pairs come from corpus.jsonl alone "
                  "(titles against texts), and queries.jsonl and qrels/ were never opened")

POSITIVE, BM25_NEGATIVE, RANDOM_NEGATIVE = "positive", "bm25", "random"


@dataclass(frozen=True)
class TrainingPair:
    """One labelled pair: a title, a document text, 1.0 when the text is the title's own."""

    title: str
    text: str
    label: float
    title_of: str   # the document whose title this is
    text_of: str    # the document whose text this is
    source: str     # POSITIVE, BM25_NEGATIVE or RANDOM_NEGATIVE


@dataclass(frozen=True)
class MinedPairs:
    pairs: tuple[TrainingPair, ...]
    documents: int
    without_title: int
    without_text: int

    def count(self, source: str) -> int:
        return sum(1 for pair in self.pairs if pair.source == source)

    @property
    def sha256(self) -> str:
        """One hash over every pair in order: the same seed and corpus give the same hash."""
        rows = [(pair.title_of, pair.text_of, pair.label, pair.source) for pair in self.pairs]
        return hashlib.sha256(json.dumps(rows, separators=(",", ":")).encode()).hexdigest()


def mine_title_pairs(documents: Sequence[Document], negatives_per_title: int = DEFAULT_NEGATIVES,
                     seed: int = DEFAULT_SEED) -> MinedPairs:
    """Every titled document's positive pair, each followed by its negatives, best BM25 first
    (ties in corpus order); the seed draws only the random fill, per document, so one document's
    fill never depends on another's."""
    if negatives_per_title < 1:
        raise InputError(f"expected at least 1, got {negatives_per_title}", field="--negatives")
    pool = [Document(document.doc_id, "", document.text) for document in documents if document.text.strip()]
    anchors = [document for document in documents if document.title.strip() and document.text.strip()]
    if not anchors:
        raise InputError(f"no document has both a title and a text, so {CORPUS_FILE} gives nothing to train on")
    copies = Counter(document.text for document in pool)
    for document in anchors:
        others = len(pool) - copies[document.text]
        if others < negatives_per_title:
            raise InputError(f"{negatives_per_title} negatives per title need as many other documents' texts; "
                             f"document {document.doc_id!r} has {others}", field="--negatives")
    texts = {document.doc_id: document.text for document in pool}
    ranked = sparse_rankings(pool, {document.doc_id: document.title for document in anchors},
                             depth=negatives_per_title + MINING_ROOM)
    pairs: list[TrainingPair] = []
    for document in anchors:
        def usable(doc_id: str, chosen: Sequence[str]) -> bool:
            return doc_id != document.doc_id and texts[doc_id] != document.text and doc_id not in chosen

        chosen: list[str] = []
        for doc_id, _ in ranked.get(document.doc_id, []):
            if len(chosen) < negatives_per_title and usable(doc_id, chosen):
                chosen.append(doc_id)
        from_bm25 = len(chosen)
        if from_bm25 < negatives_per_title:
            order = list(range(len(pool)))
            random.Random(f"{seed}\0{document.doc_id}").shuffle(order)
            for index in order:
                if len(chosen) == negatives_per_title:
                    break
                if usable(pool[index].doc_id, chosen):
                    chosen.append(pool[index].doc_id)
        pairs.append(TrainingPair(document.title, document.text, 1.0, document.doc_id, document.doc_id, POSITIVE))
        pairs += [TrainingPair(document.title, texts[doc_id], 0.0, document.doc_id, doc_id,
                               BM25_NEGATIVE if rank < from_bm25 else RANDOM_NEGATIVE)
                  for rank, doc_id in enumerate(chosen)]
    return MinedPairs(tuple(pairs), documents=len(documents),
                      without_title=sum(1 for document in documents if not document.title.strip()),
                      without_text=len(documents) - len(pool))


@dataclass(frozen=True)
class TrainingRecipe:
    """What a training run is asked to do; `checked` names the option of a bad value."""

    base_model: str = DEFAULT_BASE_MODEL
    steps: int = DEFAULT_STEPS
    batch_size: int = DEFAULT_BATCH_SIZE
    max_length: int = DEFAULT_MAX_LENGTH
    learning_rate: float = DEFAULT_LEARNING_RATE
    negatives_per_title: int = DEFAULT_NEGATIVES
    seed: int = DEFAULT_SEED

    def checked(self) -> TrainingRecipe:
        for option, value, low, high in (("--steps", self.steps, 1, 1_000_000),
                                         ("--batch-size", self.batch_size, 1, 4096),
                                         ("--max-length", self.max_length, 8, 65_536),
                                         ("--negatives", self.negatives_per_title, 1, 100),
                                         ("--seed", self.seed, 0, 2**32 - 1)):
            if not low <= value <= high:
                raise InputError(f"expected an integer from {low:,} to {high:,}, got {value:,}", field=option)
        if not (math.isfinite(self.learning_rate) and 0 < self.learning_rate <= 1):
            raise InputError(f"expected a number above 0 and at most 1, got {self.learning_rate}",
                             field="--learning-rate")
        return self

    @property
    def warmup_steps(self) -> int:
        return round(self.steps * WARMUP_FRACTION)


def corpus_label(data_dir: Path, data_source: str | None = None) -> str:
    """The dataset's name in the default output directory: its folder's, or its identifier's."""
    raw = data_source.split(":", 1)[-1] if data_source else Path(os.path.abspath(data_dir)).name
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", raw).strip("-.") or "corpus"


def default_output_dir(project_root: Path, label: str) -> Path:
    return Path(project_root) / MODELS_DIR / f"{label}{OUTPUT_SUFFIX}"


def check_output(output: Path, force: bool) -> None:
    """Refuse to replace anything but a model this command wrote, and that only with --force."""
    if not output.exists() and not output.is_symlink():
        return
    shown = display_path(output)
    if not force:
        raise InputError("already exists; pass --force to replace it", path=shown)
    if output.is_symlink() or not output.is_dir() or not (output / TRAINING_FILE).is_file():
        raise InputError(f"is not a model directory train-reranker wrote (no {TRAINING_FILE}); "
                         "--force replaces only those: remove it yourself or choose another --output", path=shown)


def require_training_packages() -> None:
    missing = [name for name in TRAINING_PACKAGES if importlib.util.find_spec(name) is None]
    if missing:
        raise InputError(f"training needs {' and '.join(missing)}, not installed here: {TRAIN_EXTRA}")


def progress_line(done: int, total: int, elapsed: float) -> str:
    return shared_progress_line("train-reranker", done, total, "steps", elapsed)


class StepProgress(Progress):
    """The training steps: a bar on a terminal; elsewhere (a CI log) one line at the start, then
    at least every `interval` seconds and at the end (generator.evaluate.progress)."""

    def __init__(self, total: int, *, tty: bool, log: Callable[[str], None],
                 interval: float | None = None, clock: Callable[[], float] = time.monotonic):
        super().__init__("train-reranker", total, unit="steps", log=log, tty=tty, announce=True,
                         interval=interval, clock=clock)


@dataclass(frozen=True)
class TrainingRun:
    """What the trainer did: the settings it chose itself, the losses it logged, where it ran."""

    hyperparameters: dict[str, Any]
    training_loss: dict[str, Any]
    device: str
    seconds: float


@dataclass
class TrainingOutcome:
    output: Path
    record: dict[str, Any]


def train_reranker(corpus_path: Path, output: Path, recipe: TrainingRecipe, *, corpus_name: str,
                   force: bool = False, log: Callable[[str], None] = print, tty: bool = False) -> TrainingOutcome:
    """Mine pairs from `corpus_path`, fine-tune `recipe.base_model` on them, and write the model
    with its training.json to `output` (renamed into place whole, or not at all)."""
    recipe = recipe.checked()
    output = Path(output)
    restored = restore_interrupted_replace(output)
    if restored is not None:
        log(f"train-reranker: {restored}")
    check_output(output, force)
    require_training_packages()
    identity = resolve_model(recipe.base_model)
    if not Path(corpus_path).is_file():
        raise InputError(f"no {Path(corpus_path).name} here", path=display_path(Path(corpus_path).parent))
    started_at, started = _now(), time.perf_counter()
    corpus_sha256 = sha256_file(corpus_path)
    documents = load_corpus(Path(corpus_path))
    mined = mine_title_pairs(documents, recipe.negatives_per_title, recipe.seed)
    # Hashing and reading the corpus included: everything before the model is loaded.
    mining_seconds = time.perf_counter() - started
    log(f"train-reranker: {len(mined.pairs):,} pairs from {len(documents):,} documents "
        f"({mined.count(POSITIVE):,} positive, {mined.count(BM25_NEGATIVE):,} BM25 negatives, "
        f"{mined.count(RANDOM_NEGATIVE):,} random) in {mining_seconds:.1f} s; no query or judgement read")
    output.parent.mkdir(parents=True, exist_ok=True)
    # Held while training runs, so that another run's sweep (restore_interrupted_replace) keeps it.
    held = held_temporary_directory(output.parent, f".{output.name}.")
    staging = Path(held.name)
    try:
        progress = StepProgress(recipe.steps, tty=tty, log=log)
        run = fine_tune(identity, mined.pairs, recipe, staging, staging / ".trainer", progress)
        record = training_record(identity, recipe, mined, run, corpus_name=corpus_name,
                                 corpus_file=Path(corpus_path).name,
                                 corpus_sha256=corpus_sha256, corpus_bytes=Path(corpus_path).stat().st_size,
                                 weights=weights_sha256(staging), started_at=started_at,
                                 seconds={"reading_and_mining": round(mining_seconds, 3),
                                          "training": round(run.seconds, 3),
                                          "total": round(time.perf_counter() - started, 3)})
        atomic_write_json(staging / TRAINING_FILE, record)
        _ordinary_permissions(staging)
        _move_into_place(staging, output)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        held.release()
    return TrainingOutcome(output, record)


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _ordinary_permissions(directory: Path) -> None:
    """mkdtemp makes a private directory, and some writers (safetensors) private files; a model
    is an ordinary output, readable as the umask allows."""
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(directory, 0o777 & ~mask)
    for path in directory.rglob("*"):
        os.chmod(path, (0o777 if path.is_dir() else 0o666) & ~mask)


def _move_into_place(staging: Path, output: Path) -> None:
    """The finished model takes the output's name; a model it replaces (--force, checked before
    training) is moved aside first and removed only once the new one is in place."""
    if not output.exists():
        os.replace(staging, output)
        return
    aside = Path(tempfile.mkdtemp(prefix=f".{output.name}{REPLACED_MARK}", suffix=".tmp", dir=output.parent))
    os.replace(output, aside / output.name)
    try:
        os.replace(staging, output)
    except BaseException:
        # Interrupted (or refused) between the two renames: the old model goes back. A SIGKILL
        # here cannot run this; the next run or load restores it (restore_interrupted_replace).
        os.replace(aside / output.name, output)
        shutil.rmtree(aside, ignore_errors=True)
        raise
    shutil.rmtree(aside, ignore_errors=True)


def training_record(identity: ModelIdentity, recipe: TrainingRecipe, mined: MinedPairs, run: TrainingRun, *,
                    corpus_name: str, corpus_file: str = CORPUS_FILE, corpus_sha256: str, corpus_bytes: int, weights: str, started_at: str,
                    seconds: dict[str, float]) -> dict[str, Any]:
    """training.json: what was trained from what, exactly how, and what was never read."""
    return {
        "written_by": WRITTEN_BY,
        "base_model": identity.as_manifest(),
        "weights_sha256": weights,
        "corpus": {"name": corpus_name, "file": corpus_file, "sha256": corpus_sha256, "bytes": corpus_bytes,
                   "documents": mined.documents},
        "labels": {"queries_read": 0, "relevance_judgements_read": 0, "files_read": [corpus_file],
                   "files_not_opened": list(NOT_READ), "statement": NOTHING_JUDGED},
        "recipe": {
            "task": "does this text belong to this title: (title, text) pairs labelled 1 or 0",
            "positives": {"pair": "(title, text) of the same document", "count": mined.count(POSITIVE)},
            "negatives": {
                "pair": "(title, another document's text)",
                "method": "bm25: the other documents' texts ranked highest for the title (ties in corpus order)",
                "bm25": {"library": "bm25s", "method": BM25_METHOD, "k1": BM25_K1, "b": BM25_B,
                         "stopwords": BM25_STOPWORDS, "stemmer": None, "indexed": "text (no title)",
                         "candidates_asked": recipe.negatives_per_title + MINING_ROOM},
                "skipped": "the document itself and any document with the very same text",
                "fill": "seeded random other documents' texts when BM25 ranks too few",
                "per_title": recipe.negatives_per_title, "bm25_count": mined.count(BM25_NEGATIVE),
                "random_count": mined.count(RANDOM_NEGATIVE)},
            "documents_without_title": mined.without_title,
            "documents_without_text": mined.without_text,
            "training_pairs": len(mined.pairs),
            "pairs_sha256": mined.sha256,
            "loss": {"name": "BinaryCrossEntropyLoss", "library": "sentence_transformers.cross_encoder.losses",
                     "activation": "identity (on the logit)", "pos_weight": float(recipe.negatives_per_title)},
            "trainer": "sentence_transformers.cross_encoder.CrossEncoderTrainer",
            "steps": recipe.steps, "batch_size": recipe.batch_size, "max_length": recipe.max_length,
            "learning_rate": recipe.learning_rate, "warmup_steps": recipe.warmup_steps,
            "passes_over_pairs": round(recipe.steps * recipe.batch_size / len(mined.pairs), 4),
            **run.hyperparameters,
        },
        "seed": recipe.seed,
        "steps": recipe.steps,
        "training_loss": run.training_loss,
        "device": run.device,
        "steps_per_second": round(recipe.steps / run.seconds, 4) if run.seconds > 0 else None,
        "wall_seconds": seconds,
        "started_at": started_at,
        "finished_at": _now(),
        "packages": {**package_versions(), **{name: _version(name) for name in TRAINING_PACKAGES}},
        "threads": thread_count(),
    }


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def fine_tune(identity: ModelIdentity, pairs: Sequence[TrainingPair], recipe: TrainingRecipe, target: Path,
              scratch: Path, progress: StepProgress) -> TrainingRun:
    """Train a cross-encoder from `identity` on `pairs` and save it to `target` (the trainer's
    own scratch files go to `scratch`, removed before saving)."""
    import torch
    from datasets import Dataset
    from sentence_transformers.cross_encoder import (CrossEncoder, CrossEncoderModelCardData, CrossEncoderTrainer,
                                                     CrossEncoderTrainingArguments)
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss
    from transformers import PrinterCallback, TrainerCallback, set_seed

    losses: list[dict[str, float]] = []

    class Report(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
            progress.advance(state.global_step)

        def on_log(self, args, state, control, logs=None, **kwargs):  # type: ignore[no-untyped-def]
            if logs and "loss" in logs:
                losses.append({"step": state.global_step, "loss": round(float(logs["loss"]), 6)})

    with _quiet_libraries():
        # The classification head is new for a bi-encoder base: seeded, so it starts the same.
        set_seed(recipe.seed)
        try:
            model = CrossEncoder(identity.path, num_labels=1, max_length=recipe.max_length, local_files_only=True,
                                 model_card_data=CrossEncoderModelCardData(local_files_only=True))
        except Exception as error:
            raise ModelUnavailableError(f"model {identity.requested!r} did not load as a cross-encoder from "
                                        f"{identity.path}: {type(error).__name__}: {error}") from None
        dataset = Dataset.from_dict({"title": [pair.title for pair in pairs], "text": [pair.text for pair in pairs],
                                     "label": [pair.label for pair in pairs]})
        arguments = CrossEncoderTrainingArguments(
            output_dir=str(scratch), max_steps=recipe.steps, per_device_train_batch_size=recipe.batch_size,
            learning_rate=recipe.learning_rate, warmup_steps=recipe.warmup_steps, seed=recipe.seed,
            data_seed=recipe.seed, save_strategy="no", eval_strategy="no", report_to="none", disable_tqdm=True,
            logging_strategy="steps", logging_steps=max(1, recipe.steps // 20), dataloader_num_workers=0,
            dataloader_pin_memory=False, log_level="error")
        loss = BinaryCrossEntropyLoss(model, pos_weight=torch.tensor(float(recipe.negatives_per_title)))
        trainer = CrossEncoderTrainer(model=model, args=arguments, train_dataset=dataset, loss=loss,
                                      callbacks=[Report()])
        # Our progress replaces the trainer's printed log dictionaries.
        trainer.remove_callback(PrinterCallback)
        progress.start()
        started = time.perf_counter()
        try:
            result = trainer.train()
        finally:
            progress.close()
        seconds = time.perf_counter() - started
        shutil.rmtree(scratch, ignore_errors=True)
        model.save_pretrained(str(target), create_model_card=False)
    def named(value: Any) -> str:   # the trainer's enums, by their value
        return str(getattr(value, "value", value))

    hyperparameters = {"optimizer": named(arguments.optim), "lr_scheduler": named(arguments.lr_scheduler_type),
                       "weight_decay": arguments.weight_decay, "adam_beta1": arguments.adam_beta1,
                       "adam_beta2": arguments.adam_beta2, "adam_epsilon": arguments.adam_epsilon,
                       "max_grad_norm": arguments.max_grad_norm, "batch_sampler": named(arguments.batch_sampler),
                       "data_seed": arguments.data_seed,
                       "gradient_accumulation_steps": arguments.gradient_accumulation_steps}
    return TrainingRun(hyperparameters, {"mean": round(float(result.training_loss), 6), "logged": losses},
                       str(arguments.device), seconds)


@contextmanager
def _quiet_libraries() -> Iterator[None]:
    """transformers, sentence-transformers and datasets log load reports, conversion notices and
    bars a log does not need; this run's own lines say what happened."""
    import logging

    from datasets.utils import logging as datasets_logging
    from transformers.utils import logging as transformers_logging

    verbosity = transformers_logging.get_verbosity()
    bars = transformers_logging.is_progress_bar_enabled(), datasets_logging.is_progress_bar_enabled()
    sentence_transformers_logger = logging.getLogger("sentence_transformers")
    level = sentence_transformers_logger.level
    transformers_logging.set_verbosity_error()
    transformers_logging.disable_progress_bar()
    datasets_logging.disable_progress_bar()
    sentence_transformers_logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        transformers_logging.set_verbosity(verbosity)
        if bars[0]:
            transformers_logging.enable_progress_bar()
        if bars[1]:
            datasets_logging.enable_progress_bar()
        sentence_transformers_logger.setLevel(level)
