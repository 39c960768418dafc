"""What a digit-bearing identifier in a claim may name: an id of the results, the dataset or the ledger.

A token shaped like `T-03`, `D-005` or `S-012` is an identifier only when something the readout
stands on holds it: a key or a short string of a results file in outputs/, a line of a run file
or of the judgements beside them, a small file of the data folder (queries, judgements; a large
corpus is left out), a claim's id or a decision's. Any other (`P-629`) is a number typed by hand
(generator.core.text.numerals).

Looked up, not collected: most claims hold no such token, so the files are read only when one
is asked about, and each token is searched for once. A token counts in a text file exactly when
`IDENTIFIER.findall` would find it there (same boundaries: no word character, dot or hyphen on
either side), without listing every identifier of tens of thousands of run lines.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Callable, Iterable

from generator.storage.memo import default_memo
from generator.core.text.numerals import IDENTIFIER

MAX_ID_FILE_BYTES = 2_000_000
_MAX_DEPTH = 60
_SHORT_STRING = 80


def collect_identifiers(value: Any, found: set[str], depth: int = 0) -> None:
    """Every key and short string of a results document shaped like an identifier."""
    if depth > _MAX_DEPTH:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and IDENTIFIER.fullmatch(key):
                found.add(key)
            collect_identifiers(item, found, depth + 1)
    elif isinstance(value, list):
        for item in value:
            collect_identifiers(item, found, depth + 1)
    elif isinstance(value, str) and len(value) <= _SHORT_STRING:
        found.update(IDENTIFIER.findall(value))


def _identifiers_of(raw: bytes) -> set[str]:
    found: set[str] = set()
    try:
        collect_identifiers(json.loads(raw.decode("utf-8")), found)
    except (UnicodeDecodeError, ValueError, RecursionError):
        pass
    return found


class KnownIdentifiers:
    """`token in known`: whether a project's results, dataset or ledger holds `token` as an id."""

    def __init__(self, fixed: Callable[[], Iterable[str]], outputs_dir: Path, data_dir: Path | None):
        self._fixed_source = fixed
        self._outputs_dir = outputs_dir
        self._data_dir = data_dir
        self._fixed: set[str] | None = None
        self._texts: list[str] | None = None
        self._answers: dict[str, bool] = {}

    def __contains__(self, token: object) -> bool:
        if not isinstance(token, str):
            return False
        if token not in self._answers:
            self._answers[token] = token in self._known() or self._in_texts(token)
        return self._answers[token]

    def _known(self) -> set[str]:
        if self._fixed is None:
            found = set(self._fixed_source())
            for path in self._results_files():
                try:
                    raw = path.read_bytes()
                except OSError:
                    continue
                # Remembered by the file's sha256 (generator.storage.memo): reading a results file's
                # every key is most of what a check spends on the few claims that name an id.
                found.update(default_memo().remembered("identifiers", hashlib.sha256(raw).hexdigest(),
                                                       lambda raw=raw: sorted(_identifiers_of(raw))))
            self._fixed = found
        return self._fixed

    def _results_files(self) -> list[Path]:
        return sorted(self._outputs_dir.glob("results*.json")) if self._outputs_dir.is_dir() else []

    def _in_texts(self, token: str) -> bool:
        if self._texts is None:
            paths = [*self._outputs_dir.glob("runs*/*")] if self._outputs_dir.is_dir() else []
            if self._data_dir is not None and self._data_dir.is_dir():
                paths += [path for path in self._data_dir.rglob("*") if path.is_file()
                          and path.stat().st_size <= MAX_ID_FILE_BYTES]
            self._texts = []
            for path in sorted(paths):
                try:
                    self._texts.append(path.read_text(encoding="utf-8", errors="replace"))
                except OSError:
                    continue
        whole = re.compile(rf"(?<![\w.-]){re.escape(token)}(?![\w-])")
        return any(token in text and whole.search(text) for text in self._texts)
