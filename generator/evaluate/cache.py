"""On-disk caches that survive between runs: corpus embeddings and per-query rerank scores.

Both are keyed by everything that changes their content, so a stale entry is never read:
embeddings by model identity, corpus content hash, max sequence length and normalisation;
rerank scores by model identity, max length, query text and the exact candidate list.
Default location: $READOUT_CACHE or ~/.cache/readout (outside the clone, so CI reuses it).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from generator.fileio import atomic_write_bytes, atomic_write_json


def default_cache_dir() -> Path:
    configured = os.environ.get("READOUT_CACHE")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "readout"


def content_key(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class EmbeddingCache:
    def __init__(self, root: Path):
        self.root = Path(root) / "embeddings"

    def _path(self, key: str) -> Path:
        return self.root / f"{key}.npy"

    def load(self, key: str, expected_rows: int) -> np.ndarray | None:
        path = self._path(key)
        if not path.is_file():
            return None
        try:
            matrix = np.load(path, allow_pickle=False)
        except (OSError, ValueError):
            return None  # a damaged entry is recomputed, never trusted
        return matrix if matrix.ndim == 2 and matrix.shape[0] == expected_rows else None

    def store(self, key: str, matrix: np.ndarray, description: dict) -> Path:
        buffer = io.BytesIO()
        np.save(buffer, np.ascontiguousarray(matrix, dtype=np.float32), allow_pickle=False)
        atomic_write_json(self.root / f"{key}.json", description)
        return atomic_write_bytes(self._path(key), buffer.getvalue())


class RerankCache:
    """One JSON file per (model, query, candidate list): a finished query is never recomputed."""

    def __init__(self, root: Path, model_key: str):
        self.root = Path(root) / "rerank" / model_key

    def _path(self, key: str) -> Path:
        return self.root / f"{key}.json"

    def load(self, key: str) -> dict | None:
        path = self._path(key)
        if not path.is_file():
            return None
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def store(self, key: str, entry: dict) -> None:
        atomic_write_json(self._path(key), entry)
