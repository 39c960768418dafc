"""How readout.yaml names a dataset: a BEIR folder, or `irds:<identifier>` for an ir_datasets
dataset, and where the export of such an identifier lives in the cache.

Pure and light: the project model validates `data:` with these, and the evaluation stage
(generator.evaluate.irds) does the export itself.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

PREFIX = "irds:"


def identifier_of(data: str | Path | None) -> str | None:
    """`beir/scifact/test` for `irds:beir/scifact/test`; None for a directory."""
    text = str(data) if data is not None else ""
    return text[len(PREFIX):] if text.startswith(PREFIX) and len(text) > len(PREFIX) else None


def export_dir(identifier: str, cache_dir: Path) -> Path:
    """Where the export of one identifier lives: readable, and unique by a hash of the identifier."""
    readable = re.sub(r"[^A-Za-z0-9_.-]+", "-", identifier).strip("-")[:60] or "dataset"
    digest = hashlib.sha256(identifier.encode("utf-8")).hexdigest()[:12]
    return Path(cache_dir) / "irds" / f"{readable}-{digest}"
