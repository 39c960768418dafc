"""On-disk caches that survive between runs: corpus embeddings and per-query rerank scores.

Both are keyed by everything that changes their content, so a stale entry is never read:
embeddings by model identity, corpus content hash, max sequence length and normalisation;
rerank scores by model identity, max length, query text and the exact candidate list.
Default location: $READOUT_CACHE or ~/.cache/readout (outside the clone, so CI reuses it).

A key only says where an entry should be; it proves nothing about what the file now holds. A
file can be truncated by a full disk, flipped by bad hardware, copied from another entry or
edited by hand, and a wrong embedding or score does not fail loudly: it quietly changes the
table. So every entry records the key it was made for and a sha256 of its content, and is
checked before use. An entry that fails is reported in one line and recomputed, never used.

Several processes may share one cache (two evaluations of different projects). A rerank entry is
one file renamed into place, so a reader gets a whole entry or none whoever writes it; an
embedding entry is two files, so both are written and read under the entry's lock
(generator.storage.locks.entry_lock) and a reader never pairs one writer's metadata with another's array.
"""

from __future__ import annotations

import hashlib
import json
import math
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from generator.storage.errors import InputError
from generator.storage.bounded_reads import read_input
from generator.storage.fileio import atomic_write_json, reserve_space, staged_file, sweep_once
from generator.storage.locks import entry_lock

Warn = Callable[[str], None]

# Little-endian on every platform, so the recorded checksum means the same bytes everywhere.
EMBEDDING_DTYPE = np.dtype("<f4")
EMBEDDING_DTYPE_NAME = "float32"
# Normalised float32 rows are within about 1e-6 of unit length; zeroed or rescaled rows are far off.
UNIT_NORM_TOLERANCE = 1e-3
CHECKSUM_FIELD = "sha256"


def content_key(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def entry_checksum(entry: dict) -> str:
    """sha256 of the entry's canonical JSON (sorted keys, no spaces), its checksum field left out.

    NaN is allowed here only so that a tampered entry holding one gets a mismatching checksum
    instead of an exception; entries are written with NaN refused, so an honest one never has one.
    """
    content = {name: value for name, value in entry.items() if name != CHECKSUM_FIELD}
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def seal(entry: dict, key: str) -> dict:
    """The entry with the key it is made for and its checksum, ready to be written."""
    sealed = {name: value for name, value in entry.items() if name != CHECKSUM_FIELD}
    sealed["key"] = key
    sealed[CHECKSUM_FIELD] = entry_checksum(sealed)
    return sealed


def checksum_problem(entry: dict, key: str) -> str | None:
    """Why a sealed JSON entry is not the one written for `key`, or None."""
    if CHECKSUM_FIELD not in entry:
        return "no checksum: written by an older version, so it cannot be verified"
    if entry.get("key") != key:
        return "made for another key"
    if entry[CHECKSUM_FIELD] != entry_checksum(entry):
        return "checksum mismatch: the content changed after it was written"
    return None


def is_finite_number(value: Any) -> bool:
    # bool is an int to Python, but True is not a score or a time.
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def warning_line(what: str, reason: str, path: Path, action: str = "recomputing") -> str:
    """One line, whatever the reason holds (exception texts can span lines)."""
    reason = " ".join(str(reason).split())
    if len(reason) > 200:
        reason = reason[:197] + "..."
    return f"cache: ignoring corrupt {what} ({reason}) at {path}; {action}"


def read_json_entry(path: Path) -> tuple[Any, str | None]:
    """(content, None) when the existing file at `path` parses, else (None, why it does not): a
    FIFO, a device or an overlong file too (a cache restored from elsewhere is an input like any)."""
    try:
        return json.loads(read_input(path, "cache entry").decode("utf-8")), None
    except InputError as error:
        return None, f"unreadable: {error.reason}"
    except (OSError, ValueError, RecursionError) as error:
        return None, f"unreadable: {type(error).__name__}: {error}"


# Rows read at a time when an entry is hashed or verified: a million-row memory map is never
# copied whole into memory (65,536 rows of 384 floats: 96 MB).
VERIFY_CHUNK_ROWS = 65_536


def row_chunks(rows: int, chunk_rows: int = VERIFY_CHUNK_ROWS) -> Iterator[tuple[int, int]]:
    for start in range(0, rows, chunk_rows):
        yield start, min(start + chunk_rows, rows)


def embeddings_checksum(matrix: np.ndarray) -> str:
    """sha256 of the matrix's little-endian float32 bytes, row after row (read chunk by chunk)."""
    digest = hashlib.sha256()
    if matrix.ndim != 2:
        digest.update(np.ascontiguousarray(matrix, dtype=EMBEDDING_DTYPE).tobytes())
        return digest.hexdigest()
    for start, stop in row_chunks(matrix.shape[0]):
        digest.update(np.ascontiguousarray(matrix[start:stop], dtype=EMBEDDING_DTYPE).tobytes())
    return digest.hexdigest()


def _first_bad_rows(matrix: np.ndarray, normalized: bool) -> tuple[int | None, tuple[int, float] | None, str]:
    """One pass over the rows, chunk by chunk: the first row holding a non-finite value, the first
    row whose norm is not 1 (when normalised), and the checksum."""
    digest = hashlib.sha256()
    non_finite: int | None = None
    off_norm: tuple[int, float] | None = None
    for start, stop in row_chunks(matrix.shape[0]):
        chunk = np.ascontiguousarray(matrix[start:stop], dtype=EMBEDDING_DTYPE)
        digest.update(chunk.tobytes())
        finite = np.isfinite(chunk).all(axis=1)
        if non_finite is None and not finite.all():
            non_finite = start + int(np.argmin(finite))
        if normalized and off_norm is None:
            norms = np.linalg.norm(chunk.astype(np.float64), axis=1)
            off = np.abs(norms - 1.0) > UNIT_NORM_TOLERANCE
            if off.any():
                row = int(np.argmax(off))
                off_norm = (start + row, float(norms[row]))
    return non_finite, off_norm, digest.hexdigest()


def verify_embeddings(matrix: Any, meta: Any, key: str, *, rows: int, dimension: int | None = None,
                      normalized: bool | None = None) -> str | None:
    """Why `matrix` with its metadata `meta` is not the embeddings stored for `key`, or None.

    The cheap structural checks come before the checksum so the reason names what is wrong
    (a NaN, a zeroed row) where it can; the checksum then catches what still looks plausible
    (a flipped low bit, permuted rows).
    """
    if not isinstance(meta, dict):
        return "metadata is not a JSON object"
    if CHECKSUM_FIELD not in meta:
        return "no checksum: written by an older version, so it cannot be verified"
    if meta.get("key") != key:
        return "metadata made for another key"
    if not isinstance(matrix, np.ndarray):
        return f"not an array but {type(matrix).__name__}"
    if matrix.dtype != EMBEDDING_DTYPE or meta.get("dtype") != EMBEDDING_DTYPE_NAME:
        return f"dtype {matrix.dtype} (recorded {meta.get('dtype')!r}), expected little-endian float32"
    if matrix.ndim != 2:
        return f"{matrix.ndim}-dimensional, expected a matrix"
    if meta.get("shape") != list(matrix.shape):
        return f"shape {list(matrix.shape)}, recorded {meta.get('shape')!r}"
    if matrix.shape[0] != rows:
        return f"{matrix.shape[0]} rows for {rows} documents"
    if dimension is not None and matrix.shape[1] != dimension:
        return f"dimension {matrix.shape[1]}, the model gives {dimension}"
    if not isinstance(meta.get("normalized"), bool):
        return "metadata does not say whether rows are normalised"
    if normalized is not None and meta["normalized"] != normalized:
        return f"normalized is {meta['normalized']}, expected {normalized}"
    non_finite, off_norm, checksum = _first_bad_rows(matrix, meta["normalized"])
    if non_finite is not None:
        return f"row {non_finite} holds a non-finite value"
    if off_norm is not None:
        return f"row {off_norm[0]} has norm {off_norm[1]:.4g}, not 1"
    if meta[CHECKSUM_FIELD] != checksum:
        return "checksum mismatch: the array changed after it was written"
    return None


class EmbeddingCache:
    """One .npy per key and, beside it, a .json describing it: key, dtype, shape and checksum."""

    def __init__(self, root: Path):
        self.root = Path(root) / "embeddings"

    def _path(self, key: str) -> Path:
        return self.root / f"{key}.npy"

    def _meta_path(self, key: str) -> Path:
        return self.root / f"{key}.json"

    def _lock_path(self, key: str) -> Path:
        return self.root / f"{key}.lock"

    def load(self, key: str, expected_rows: int, *, expected_dimension: int | None = None,
             normalized: bool | None = None, warn: Warn | None = None) -> np.ndarray | None:
        """The verified matrix, or None: absent silently, failing verification with one `warn` line."""
        path = self._path(key)
        sweep_once(self.root)   # a killed encoding's temporary can be as large as the entry
        if not path.is_file():
            return None
        with entry_lock(self._lock_path(key)):
            matrix, reason = self._read_verified(key, expected_rows, expected_dimension, normalized)
        if reason is None:
            return matrix
        if warn is not None:
            warn(warning_line("corpus embeddings", reason, path))
        return None

    def _read_verified(self, key: str, rows: int, dimension: int | None,
                       normalized: bool | None) -> tuple[np.ndarray | None, str | None]:
        meta_path = self._meta_path(key)
        if not meta_path.is_file():
            return None, "no metadata: written by an older version, so it cannot be verified"
        meta, unreadable = read_json_entry(meta_path)
        if unreadable is not None:
            return None, f"metadata {unreadable}"
        try:
            # Memory-mapped: a million-row entry is read from the page cache as it is searched,
            # never copied whole into this process (generator.evaluate.retrieval.dense_search).
            matrix = np.load(self._path(key), mmap_mode="r", allow_pickle=False)
        except Exception as error:  # noqa: BLE001 - a damaged file raises anything from EOFError to BadZipFile
            return None, f"unreadable: {type(error).__name__}: {error}"
        reason = verify_embeddings(matrix, meta, key, rows=rows, dimension=dimension, normalized=normalized)
        return (matrix, None) if reason is None else (None, reason)

    def store(self, key: str, matrix: np.ndarray, description: dict) -> Path:
        matrix = np.asarray(matrix)
        with self.writer(key, matrix.shape, description) as rows:
            for start, stop in row_chunks(matrix.shape[0]):
                rows[start:stop] = matrix[start:stop]
        return self._path(key)

    @contextmanager
    def writer(self, key: str, shape: Sequence[int], description: dict) -> Iterator[np.ndarray]:
        """A memory-mapped float32 matrix of `shape` to fill (in any order, by whoever encodes it);
        when the block ends, the entry is checksummed and put in place with its metadata. A block
        that raises leaves no entry: the array is written to a temporary file first."""
        meta: dict[str, Any] = {}

        def write_metadata() -> None:
            # Metadata first: a crash between the two writes leaves a checksum that does not match
            # the old array, so the pair is recomputed rather than trusted.
            atomic_write_json(self._meta_path(key), meta)

        with staged_file(self._path(key), commit_lock=entry_lock(self._lock_path(key)),
                         before_commit=write_metadata) as staging:
            rows = np.lib.format.open_memmap(staging, mode="w+", dtype=EMBEDDING_DTYPE, shape=tuple(shape))
            # The map is a sparse file: without its blocks reserved, a full disk is a SIGBUS mid-encoding.
            reserve_space(staging)
            yield rows
            rows.flush()
            meta.update({**description, "key": key, "dtype": EMBEDDING_DTYPE_NAME, "shape": list(rows.shape),
                         CHECKSUM_FIELD: embeddings_checksum(rows)})
            del rows


RERANK_FIELDS = ("query_id", "candidates", "scores", "milliseconds")


def verify_rerank_entry(entry: Any, key: str, query_id: str, candidates: Sequence[str]) -> str | None:
    """Why `entry` is not the rerank result of `query_id` over exactly `candidates`, or None.

    Fields are checked before the checksum so a missing field or a string score is named as
    such; the checksum then catches plausible edits such as reversed or swapped scores.
    """
    if not isinstance(entry, dict):
        return f"not a JSON object but {type(entry).__name__}"
    missing = [name for name in RERANK_FIELDS if name not in entry]
    if missing:
        return f"missing {', '.join(missing)}"
    if CHECKSUM_FIELD not in entry or entry.get("key") != key:
        return checksum_problem(entry, key)
    if entry["query_id"] != query_id:
        return f"made for query {entry['query_id']!r}"
    if entry["candidates"] != list(candidates):
        return "candidates are not this query's candidate list"
    scores = entry["scores"]
    if not isinstance(scores, list) or len(scores) != len(candidates):
        length = len(scores) if isinstance(scores, list) else type(scores).__name__
        return f"scores are not a list of {len(candidates)} numbers (got {length})"
    bad = [index for index, score in enumerate(scores) if not is_finite_number(score)]
    if bad:
        return f"score {bad[0]} is {scores[bad[0]]!r}, not a finite number"
    if not is_finite_number(entry["milliseconds"]) or entry["milliseconds"] <= 0:
        return f"milliseconds is {entry['milliseconds']!r}, not a finite positive number"
    return checksum_problem(entry, key)


class RerankCache:
    """One JSON file per (model, query, candidate list): a finished query is never recomputed."""

    def __init__(self, root: Path, model_key: str):
        self.root = Path(root) / "rerank" / model_key

    def _path(self, key: str) -> Path:
        return self.root / f"{key}.json"

    def load(self, key: str, *, query_id: str, candidates: Sequence[str], warn: Warn | None = None) -> dict | None:
        """The verified entry, or None: absent silently, failing verification with one `warn` line."""
        path = self._path(key)
        sweep_once(self.root)
        if not path.is_file():
            return None
        entry, reason = read_json_entry(path)
        if reason is None:
            reason = verify_rerank_entry(entry, key, query_id, candidates)
        if reason is None:
            return entry
        if warn is not None:
            warn(warning_line(f"rerank entry for query {query_id}", reason, path))
        return None

    def store(self, key: str, entry: dict) -> None:
        atomic_write_json(self._path(key), seal(entry, key))
