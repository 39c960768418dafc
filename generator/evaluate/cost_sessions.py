"""The cost cache: one folder per shape, setting and layer count, keyed by everything that changes
how fast the same pairs run, and one entry per query in it, verified before it is believed.

An entry is sealed with its setting's key and its own file name, so an entry copied from another
setting, depth or query does not verify; a bad one is measured again, never estimated.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable, Sequence

from generator.core.dataclass import dataclass
from generator.evaluate.cache import checksum_problem, content_key, is_finite_number, read_json_entry
from generator.evaluate.environment import machine, package_versions
from generator.evaluate.shape_scorer import Pair, build_scorer
from generator.evaluate.shapes import ResolvedShape, TokenizerChoice, shape_summary, with_layers
from generator.storage.fileio import atomic_write_json
from generator.storage.paths import default_cache_dir

DTYPES = {"fp32": "float32", "int8": "int8 (dynamic quantization of the linear layers, float32 elsewhere)"}
DTYPE = DTYPES["fp32"]
# v2: an entry holds every repeat's per-batch times and predict's batches, not one total.
CACHE_VERSION = "cost-v2"
PACKAGES = ("torch", "transformers", "sentence-transformers", "tokenizers")


def _packages() -> dict[str, str | None]:
    """The versions that change how fast the same shape runs (bm25s or numpy do not)."""
    return {name: version for name, version in package_versions().items() if name in PACKAGES}


@dataclass
class _Session:
    """One shape at one setting and one layer count: its cache folder, and the scorer, built and
    warmed up only once a query actually has to be timed (a fully resumed run builds nothing)."""

    shape: ResolvedShape          # at `layers` layers
    tokenizer: TokenizerChoice
    layers: int
    precision: str
    max_length: int
    batch_size: int
    device: str
    threads: int
    root: Path
    key: str
    settings: dict[str, Any]
    log: Callable[[str], None]
    scorer: Any = None
    warmed: bool = False

    def build(self) -> Any:
        if self.scorer is None:
            started = time.perf_counter()
            self.scorer = build_scorer(self.shape, self.tokenizer, max_length=self.max_length, device=self.device,
                                       precision=self.precision)
            self.log(f"cost: built the {self.shape.architecture} shape at {self.layers} layers, {self.precision} "
                     f"({self.shape.parameters:,} parameters, random weights) in "
                     f"{time.perf_counter() - started:.1f} s")
        return self.scorer

    def ready(self, warm_pairs: Sequence[Pair]) -> Any:
        """The scorer, warmed up once by one untimed batch of the longest warm pairs: the first
        call's one-off work (allocating at the largest padded shape, choosing kernels) is then
        done. Scoring a whole query instead cost a 24-layer shape a query's worth of time per
        pricing, for nothing the timings could see."""
        scorer = self.build()
        if not self.warmed:
            longest = sorted(warm_pairs, key=lambda pair: len(pair[0]) + len(pair[1]), reverse=True)
            scorer.predict(longest[:self.batch_size], batch_size=self.batch_size, show_progress_bar=False)
            self.warmed = True
        return scorer

    def entry_path(self, query_id: str, pairs: Sequence[Pair]) -> Path:
        return self.root / f"{content_key(CACHE_VERSION, query_id, [list(pair) for pair in pairs])}.json"


def _open_session(shape: ResolvedShape, tokenizer: TokenizerChoice, *, layers: int, method: str, repeats: int,
                  precision: str, max_length: int, batch_size: int, cache_dir: Path | None, device: str,
                  threads: int, log: Callable[[str], None]) -> _Session:
    settings = {"config_sha256": shape.config_sha256, "tokenizer": {"name": tokenizer.name,
                                                                   "sha256": tokenizer.sha256},
                "method": method, "layers": layers, "repeats": repeats, "precision": precision,
                "max_length": max_length, "batch_size": batch_size, "dtype": DTYPES[precision], "device": device,
                "threads": threads, "packages": _packages(), "machine": machine()}
    key = content_key(CACHE_VERSION, settings)[:24]
    root = Path(cache_dir if cache_dir is not None else default_cache_dir()) / "cost" / key
    atomic_write_json(root / "settings.json", {**settings, "model": shape.requested,
                                               "architecture": shape.architecture, "shape": shape_summary(shape)})
    return _Session(with_layers(shape, layers), tokenizer, layers, precision, max_length, batch_size, device,
                    threads, root, key, settings, log)


def _entry_key(session: _Session, path: Path) -> str:
    """What an entry is sealed with: the settings it was timed under and the file it belongs in,
    so an entry copied from another setting, depth or query does not verify."""
    return f"{session.key}/{path.stem}"


def _batches_problem(entry: dict, pairs: int, repeats: int) -> str | None:
    batches = entry.get("batches")
    if (not isinstance(batches, list) or not all(isinstance(batch, list) for batch in batches)
            or sorted(index for batch in batches for index in batch) != list(range(pairs))):
        return f"batches do not hold each of the {pairs} pairs once"
    runs = entry.get("batch_milliseconds")
    if (not isinstance(runs, list) or len(runs) != repeats
            or any(not isinstance(run, list) or len(run) != len(batches) for run in runs)):
        return f"batch_milliseconds are not {repeats} runs of {len(batches)} batches"
    if any(not is_finite_number(value) or value <= 0 for run in runs for value in run):
        return "batch_milliseconds are not all finite positive numbers"
    return None


def _entry_problem(entry: Any, key: str, query_id: str, pairs: Sequence[Pair], repeats: int) -> str | None:
    """Why `entry` is not a timing of `query_id`'s `pairs` sealed for `key`, or None.

    Fields first, so the reason names a negative time or a short token list; the checksum last,
    for edits that still look plausible (a changed time).
    """
    if not isinstance(entry, dict):
        return f"not a JSON object but {type(entry).__name__}"
    if entry.get("query_id") != query_id:
        return f"made for query {entry.get('query_id')!r}"
    milliseconds = entry.get("milliseconds")
    if not is_finite_number(milliseconds) or milliseconds <= 0:
        return f"milliseconds is {milliseconds!r}, not a finite positive number"
    count = entry.get("pairs")
    if isinstance(count, bool) or not isinstance(count, int) or count != len(pairs):
        return f"pairs is {count!r}, the query has {len(pairs)}"
    tokens = entry.get("tokens")
    if not isinstance(tokens, list) or len(tokens) != len(pairs):
        length = len(tokens) if isinstance(tokens, list) else type(tokens).__name__
        return f"tokens are not {len(pairs)} counts (got {length})"
    if any(isinstance(value, bool) or not isinstance(value, int) or value < 0 for value in tokens):
        return "tokens are not all non-negative integers"
    return _batches_problem(entry, len(pairs), repeats) or checksum_problem(entry, key)


def _read_entry(path: Path, key: str, query_id: str, pairs: Sequence[Pair],
                repeats: int) -> tuple[dict | None, str | None]:
    """(entry, None) for a verified entry, (None, None) when there is none yet, else (None, why)."""
    if not path.is_file():
        return None, None
    entry, problem = read_json_entry(path)
    if problem is None:
        problem = _entry_problem(entry, key, query_id, pairs, repeats)
    return (entry, None) if problem is None else (None, problem)
