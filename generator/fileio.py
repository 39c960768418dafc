"""Side effects at the edge: hashing, atomic writes, and naming the file an error came from.

Every output goes to a temporary file in the target directory and is renamed into place, so a
crash or an error never leaves a half-written file where a reader expects a whole one.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

HASH_CHUNK_BYTES = 1 << 20


def sha256_file(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(HASH_CHUNK_BYTES), b""):
            digest.update(chunk)
    return digest.hexdigest()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        # mkstemp creates 0600; outputs are ordinary files, so apply the usual umask instead.
        os.fchmod(fd, 0o666 & ~_current_umask())
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass
        raise
    return target


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def dumps_json(value: Any) -> str:
    """Stable JSON: sorted keys, two-space indent, trailing newline, NaN refused."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def atomic_write_json(path: str | os.PathLike, value: Any) -> Path:
    return atomic_write_text(path, dumps_json(value))


def display_path(path: Path | str) -> str:
    """`path` relative to the working directory when it lies below it, else as given."""
    try:
        cwd = os.getcwd()
    except OSError:
        return str(path)
    return _display_path(str(path), cwd)


@lru_cache(maxsize=4096)
def _display_path(path: str, cwd_text: str) -> str:
    target = Path(path)
    cwd = Path(cwd_text)
    for candidate in (Path(os.path.abspath(target)), target.resolve()):
        try:
            return candidate.relative_to(cwd).as_posix()
        except ValueError:
            continue
    return str(target)


@contextmanager
def reading(path: Path | str) -> Iterator[None]:
    """Tag any unexpected exception raised while `path` is processed with that file's name.

    The CLI reports an unexpected exception as one line; with this tag the line names the file
    the user has to look at (a ledger whose aliases explode, a results file nested too deeply).
    The innermost `reading` wins, so the most specific file is named.
    """
    try:
        yield
    except Exception as error:
        if getattr(error, "readout_path", None) is None:
            try:
                error.readout_path = display_path(path)  # type: ignore[attr-defined]
            except AttributeError:  # pragma: no cover - exceptions with __slots__
                pass
        raise
