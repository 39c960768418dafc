"""The machine and software a measurement ran on: recorded in every manifest, and part of the
cost cache's key (timings from another machine or another torch are never reused)."""

from __future__ import annotations

import os
import platform
from importlib import metadata
from typing import Any

PACKAGES = ("traced-readout", "sentence-transformers", "transformers", "torch", "bm25s", "numpy",
            "huggingface-hub", "tokenizers")


def package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def thread_count() -> int:
    try:
        import torch

        return int(torch.get_num_threads())
    except ImportError:  # pragma: no cover
        return os.cpu_count() or 1


def machine() -> dict[str, Any]:
    """What the timings were taken on; part of the cache key, so another machine's times are not reused."""
    processor = platform.processor()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            processor = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")),
                             processor)
    except OSError:
        pass
    return {"platform": platform.platform(), "machine": platform.machine(), "processor": processor,
            "cpus": os.cpu_count()}
