"""A reranker fine-tuned here (`readout train-reranker`) as an evaluation records it: the
training.json written beside its weights, read and checked against these very weights and this
very corpus, and the label its row earns.

A record that does not describe the weights that ran earns no label: a reader is told what the
model is only where the record can vouch for it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from generator.evaluate.data import Dataset
from generator.evaluate.training import TRAINING_FILE
from generator.core.results.model import corpus_input
from generator.storage.fileio import sha256_file


def read_training_record(identity: Any) -> dict[str, Any] | None:
    """The training.json `readout train-reranker` wrote beside a local model's weights, or None."""
    if identity.source != "local path":
        return None
    path = Path(identity.path) / TRAINING_FILE
    try:
        record = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) and isinstance(record.get("recipe"), dict) else None


def training_provenance(identity: Any, corpus_sha256: str | None) -> dict[str, Any] | None:
    """What a reader needs to know of a reranker trained here: from what, on what, how, and
    whether training.json describes these very weights and this very corpus."""
    record = read_training_record(identity)
    if record is None:
        return None
    base = record.get("base_model") if isinstance(record.get("base_model"), dict) else {}
    corpus = record.get("corpus") if isinstance(record.get("corpus"), dict) else {}
    recipe = record["recipe"]
    labels = record.get("labels") if isinstance(record.get("labels"), dict) else {}
    return {"training_json_sha256": sha256_file(Path(identity.path) / TRAINING_FILE),
            "written_by": record.get("written_by"),
            "base_model": {"name": base.get("name"), "weights_sha256": base.get("weights_sha256")},
            "corpus": {"name": corpus.get("name"), "sha256": corpus.get("sha256")},
            "statement": labels.get("statement"),
            "queries_read": labels.get("queries_read"), "relevance_judgements_read": labels.get("relevance_judgements_read"),
            "recipe": {key: recipe.get(key) for key in ("task", "training_pairs", "steps", "batch_size", "max_length",
                                                        "learning_rate", "passes_over_pairs")},
            "seed": record.get("seed"),
            "wall_seconds": (record.get("wall_seconds") or {}).get("total")
            if isinstance(record.get("wall_seconds"), dict) else None,
            "describes_these_weights": record.get("weights_sha256") == identity.weights_sha256,
            "trained_on_this_corpus": corpus_sha256 is not None and corpus.get("sha256") == corpus_sha256}


def trained_label(identity: Any, corpus_sha256: str | None) -> str | None:
    """A rerank row's label when its model was fine-tuned here: what it is, not only its path."""
    training = training_provenance(identity, corpus_sha256)
    if training is None or not training["describes_these_weights"]:
        return None
    corpus = training["corpus"]["name"] or "its corpus"
    base = training["base_model"]["name"] or "an encoder"
    return (f"{identity.name}: cross-encoder fine-tuned here from {base} on {corpus} titles and texts, "
            "no queries or judgements")


def _corpus_sha256(dataset: Dataset) -> str | None:
    recorded = corpus_input(dataset.input_hashes) if isinstance(dataset.input_hashes, dict) else None
    return recorded[1].get("sha256") if recorded is not None else None
