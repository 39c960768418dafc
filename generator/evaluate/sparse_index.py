"""The BM25 index in the cache: built once per corpus and parameters, saved by bm25s, and searched
memory-mapped, so a second run neither tokenizes the corpus again nor holds the index in memory
(at a million documents the index is hundreds of MB the kernel pages in as queries touch it).

An entry is a directory named by its key holding bm25s's own files, plus `entry.json` written last:
the key and the sha256 of every file. As with every cache entry (generator.evaluate.cache), the
entry is verified before use, and one that does not verify is reported in one line and rebuilt.
The directory is built under a temporary name and renamed into place whole, under the entry's lock.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Callable

from generator.evaluate.cache import content_key, read_json_entry, warning_line
from generator.storage.fileio import atomic_write_json, error_naming_file, held_temporary_directory, sha256_file, sweep_once
from generator.storage.locks import entry_lock

ENTRY_FILE = "entry.json"


def sparse_index_key(corpus_fingerprint: str, method: str, k1: float, b: float, stopwords: str,
                     library_version: str) -> str:
    # The library version is part of the key: bm25s's scoring or file layout may change with it.
    return content_key("sparse-bm25s-v1", corpus_fingerprint, method, k1, b, stopwords, library_version)


class SparseIndexCache:
    def __init__(self, root: Path):
        self.root = Path(root) / "sparse"

    def _path(self, key: str) -> Path:
        return self.root / key

    def load(self, key: str, *, documents: int, warn: Callable[[str], None] | None = None) -> Any | None:
        """The memory-mapped bm25s.BM25 of `key`, or None: absent silently, unverified with a warning."""
        path = self._path(key)
        sweep_once(self.root, staging_directories=True)   # a killed build's staging directory
        if path.is_symlink():
            # Not an entry this cache wrote: never followed, replaced by the rebuild.
            if warn is not None:
                warn(warning_line("BM25 index", "is a symbolic link, not an entry this cache wrote", path, "rebuilding"))
            return None
        if not path.is_dir():
            return None
        with entry_lock(self.root / f"{key}.lock"):
            reason = self._problem(path, key)
            retriever = None
            if reason is None:
                try:
                    import bm25s

                    retriever = bm25s.BM25.load(str(path), mmap=True, show_progress=False)
                    if int(retriever.scores["num_docs"]) != documents:
                        reason = f"{retriever.scores['num_docs']} documents indexed, the corpus has {documents}"
                except Exception as error:  # noqa: BLE001 - a damaged entry raises anything bm25s can
                    reason = f"unreadable: {type(error).__name__}: {error}"
        if reason is None:
            return retriever
        if warn is not None:
            warn(warning_line("BM25 index", reason, path, "rebuilding"))
        return None

    @staticmethod
    def _problem(path: Path, key: str) -> str | None:
        entry, unreadable = read_json_entry(path / ENTRY_FILE)
        if unreadable is not None:
            return f"{ENTRY_FILE} {unreadable}"
        if not isinstance(entry, dict) or entry.get("key") != key or not isinstance(entry.get("files"), dict):
            return f"{ENTRY_FILE} is not this key's record"
        present = sorted(name for name in os.listdir(path) if name != ENTRY_FILE)
        if present != sorted(entry["files"]):
            return f"files {present}, recorded {sorted(entry['files'])}"
        for name, digest in sorted(entry["files"].items()):
            if sha256_file(path / name) != digest:
                return f"{name}: checksum mismatch: the file changed after it was written"
        return None

    def store(self, key: str, retriever: Any) -> None:
        """Save `retriever` as the entry of `key` (whole, or not at all)."""
        self.root.mkdir(parents=True, exist_ok=True)
        sweep_once(self.root, staging_directories=True)
        held = held_temporary_directory(self.root, f".{key}.")
        staging = Path(held.name)
        try:
            retriever.save(str(staging), show_progress=False)
            files = {name: sha256_file(staging / name) for name in sorted(os.listdir(staging))}
            atomic_write_json(staging / ENTRY_FILE, {"key": key, "files": files})
            target = self._path(key)
            with entry_lock(self.root / f"{key}.lock"):
                if target.is_symlink() or target.is_file():
                    target.unlink()   # a link is removed, never followed
                elif target.exists():
                    # Another process built it meanwhile, or an unverified entry is being replaced.
                    shutil.rmtree(target)
                os.replace(staging, target)
        except OSError as error:   # a full disk names the entry being written, whatever bm25s said
            raise error_naming_file(error, self._path(key)) from None
        finally:
            shutil.rmtree(staging, ignore_errors=True)
            held.release()

