"""A shape's cross-encoder with seeded random weights, and its `predict` timed batch by batch.

The scorer is a real `sentence_transformers.CrossEncoder`, so the pairs go through the very call
the rerank row makes; predict's batches are observed as it forms them, never assumed, because
sentence-transformers orders pairs its own way. torch, transformers and sentence-transformers are
imported inside the functions that use them.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

from generator.core.options import DEFAULT_SEED
from generator.evaluate.models import apply_precision
from generator.evaluate.shapes import TOKENIZER_FILES, ResolvedShape, TokenizerChoice
from generator.storage.errors import ModelUnavailableError

Pair = tuple[str, str]
COST_SEED = DEFAULT_SEED


def build_scorer(shape: ResolvedShape, tokenizer: TokenizerChoice, *, max_length: int, device: str,
                 seed: int = COST_SEED, precision: str = "fp32") -> Any:
    """A real CrossEncoder of `shape` with seeded random fp32 weights, built in memory, then put
    at `precision` (int8: the linear layers dynamically quantized in place).

    It is loaded the way `CrossEncoder(path, max_length=...)` loads a model directory (its
    sequence-classification Transformer module with `model_max_length` = max_length, then the
    CrossEncoder around it), except that the weights come from `from_config` instead of a file.
    A cut shape (shapes.with_layers) is built whole at its own depth, so quantization sees only
    the layers that exist.
    """
    import torch
    from sentence_transformers import CrossEncoder
    from sentence_transformers.base.modules import Transformer
    from transformers import AutoModelForSequenceClassification

    class RandomWeightsTransformer(Transformer):
        def _load_model(self, model_name_or_path, transformer_task, config, backend, is_peft_model, **model_kwargs):
            torch.manual_seed(seed)
            return AutoModelForSequenceClassification.from_config(config, dtype=torch.float32).eval()

    with tempfile.TemporaryDirectory(prefix="readout-shape-") as temporary:
        directory = Path(temporary)
        shape.config.save_pretrained(directory)
        for name in TOKENIZER_FILES:
            if (tokenizer.directory / name).is_file():
                shutil.copyfile(tokenizer.directory / name, directory / name)
        if tokenizer.input_names is not None:
            settings_path = directory / "tokenizer_config.json"
            settings = json.loads(settings_path.read_text(encoding="utf-8")) if settings_path.is_file() else {}
            settings["model_input_names"] = list(tokenizer.input_names)
            settings_path.write_text(json.dumps(settings), encoding="utf-8")
        try:
            module = RandomWeightsTransformer(str(directory), transformer_task="sequence-classification",
                                              processor_kwargs={"model_max_length": max_length})
            scorer = CrossEncoder(modules=[module], device=device)
        except (OSError, ValueError, KeyError) as error:
            raise ModelUnavailableError(f"model {shape.requested!r}: its shape did not build as a cross-encoder: "
                                        f"{type(error).__name__}: {error}") from None
    return apply_precision(scorer.eval(), precision)


def _batch_indices(batches: Sequence[Sequence[Pair]], pairs: Sequence[Pair]) -> list[list[int]]:
    """Each batch as positions in `pairs` (equal pairs take their positions in order)."""
    positions: dict[Any, list[int]] = {}
    for index, pair in enumerate(pairs):
        positions.setdefault(tuple(pair), []).append(index)
    return [[positions[tuple(pair)].pop(0) for pair in batch] for batch in batches]


def timed_predict(scorer: Any, pairs: Sequence[Pair], batch_size: int) -> tuple[list[float], list[list[int]]]:
    """One real `predict` of `pairs`, timed batch by batch: (milliseconds of each batch, the
    positions in `pairs` of each batch's pairs), in the order predict scored them.

    predict orders pairs its own way (sentence-transformers 5+ sorts them by length), so the
    batches are observed, not assumed: the scorer's `preprocess`, which predict calls once per
    batch, is wrapped for the call to note the time and the batch. A batch runs from its
    preprocess to the next one's; the first starts with the call and the last ends with it, so the
    batch times add up to the call's wall time.
    """
    marks: list[float] = []
    seen: list[list[Pair]] = []
    preprocess = scorer.preprocess

    def noting(batch, *args, **kwargs):
        marks.append(time.perf_counter())
        seen.append(list(batch))
        return preprocess(batch, *args, **kwargs)

    scorer.preprocess = noting
    try:
        started = time.perf_counter()
        scorer.predict(list(pairs), batch_size=batch_size, show_progress_bar=False)
        ended = time.perf_counter()
    finally:
        del scorer.preprocess
    if not seen:  # a predict that does not call preprocess per batch: one batch of everything
        return [(ended - started) * 1000.0], [list(range(len(pairs)))]
    bounds = [started, *marks[1:], ended]
    return [(after - before) * 1000.0 for before, after in zip(bounds, bounds[1:])], _batch_indices(seen, pairs)


def predict_batches(scorer: Any, pairs: Sequence[Pair], batch_size: int) -> list[list[int]] | None:
    """The batches `predict(pairs, batch_size)` would form (positions in `pairs`), without scoring:
    predict itself runs, with tokenizing and the forward pass stubbed out for the call, so its own
    ordering decides. None when predict cannot run that way (then nothing is assumed)."""
    import torch

    seen: list[list[Pair]] = []

    def noting(batch, *args, **kwargs):
        seen.append(list(batch))
        return {"rows": len(batch)}

    def no_forward(features, *args, **kwargs):
        return {"scores": torch.zeros(features["rows"], max(int(scorer.num_labels), 1))}

    scorer.preprocess, scorer.forward = noting, no_forward
    try:
        scorer.predict(list(pairs), batch_size=batch_size, show_progress_bar=False)
    except Exception:  # noqa: BLE001 - another predict: time the depth instead of guessing its batches
        return None
    finally:
        del scorer.preprocess, scorer.forward
    return _batch_indices(seen, pairs) if seen else None
