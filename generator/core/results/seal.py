"""A results file as written and read: its name, its seal, and reading it strictly.

The seal: a results file written by `readout evaluate` or `readout sandbox` carries
`manifest.seal = {"sha256": ..., "writer": ...}`, the sha256 of the canonical JSON of the whole
document without the seal (sorted keys, no spaces, UTF-8). Only sealed files can be cited by a
claim. A seal is not a signature (anyone can recompute it), so the checker also rebuilds every
block from the run files and judgements the file names (generator.claims.tracing.rederive). The seal is
checked on the file as written; readers get it in the current format (`Results.data`, upgraded by
`generator.core.results.upgrade`), and through the model (`Results.model`).

Strict reading refuses what two JSON readers could read differently: a key written twice in one
object (the seal covers the object Python builds, where the last one wins; a reader keeping the
first would see another value under the same seal), NaN and infinities, overlong numbers. Within
`only_rederived` (a render), `read_results` returns only the files the check re-derived, with the
very bytes it re-derived: a report shows no value the check did not re-derive.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import re
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import Any, Iterator, Mapping

from generator.core.dataclass import dataclass
from generator.core.options import RESULTS_NAME  # noqa: F401 (the results file's name, read from here)
from generator.storage.errors import InputError, ReadoutError
from generator.storage.bounded_reads import INPUT_BOUNDS, read_input
from generator.storage.fileio import sha256_bytes
from generator.storage.paths import display_path
from generator.storage.memo import default_memo
from generator.core.results.model import ResultsModel
from generator.core.results.paths import clip
from generator.core.results.upgrade import upgrade

SEAL_KEY = "seal"
# Bounds on what a results file may be; beyond them it is an input error, never a crash.
MAX_RESULTS_BYTES = INPUT_BOUNDS["results file"]
# A results file the tools write is at most 7 levels deep and its numbers are a float's repr;
# far beyond either, the file was not written by them (and a 5,000-digit integer or a nesting of
# thousands of levels would otherwise cost a crash or a slow conversion).
MAX_RESULTS_DEPTH = 32
MAX_NUMBER_CHARS = 100


@dataclass(frozen=True)
class Results:
    """One results file as read: its name relative to outputs/, its bytes' sha256, the document as
    written (`raw`, what the seal covers) and in the current format (`data`)."""

    name: str
    path: Path
    sha256: str
    data: dict[str, Any]
    raw: dict[str, Any] | None = None

    @property
    def written(self) -> dict[str, Any]:
        """The document as written: what its seal covers."""
        return self.raw if self.raw is not None else self.data

    @cached_property
    def model(self) -> ResultsModel:
        return ResultsModel(self.data)
class UnsealableError(ReadoutError, ValueError):
    """The data holds what no results file may hold (NaN, an infinity, an overlong number, a deep
    nesting): refused on write, so that what is sealed can always be read back."""

    def __init__(self, problem: str):
        self.problem = problem
        super().__init__(f"cannot seal results: {problem}")


_TOO_LARGE = 10 ** MAX_NUMBER_CHARS


def _unrepresentable(data: Any) -> str | None:
    """Why `data` cannot be a results file (naming where, clipped), or None."""
    stack: list[tuple[Any, str, int]] = [(data, "", 1)]
    while stack:
        value, where, depth = stack.pop()
        shown = clip(where, 120) or "the top level"
        if depth > MAX_RESULTS_DEPTH:
            return f"nested too deeply (more than {MAX_RESULTS_DEPTH} levels) at {shown}"
        if isinstance(value, float) and not math.isfinite(value):
            return f"{value!r} at {shown} is not a finite number"
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= _TOO_LARGE:
            return f"the integer at {shown} has more than {MAX_NUMBER_CHARS} digits"
        if isinstance(value, dict):
            stack.extend((item, f"{where}.{key}" if where else str(key), depth + 1) for key, item in value.items())
        elif isinstance(value, (list, tuple)):
            stack.extend((item, f"{where}[{index}]", depth + 1) for index, item in enumerate(value))
    return None


def canonical_bytes(data: Any) -> bytes:
    """The bytes a seal hashes: sorted keys, no insignificant spaces; NaN, infinities, numbers
    longer than MAX_NUMBER_CHARS and nesting deeper than MAX_RESULTS_DEPTH refused (UnsealableError),
    since `read_results` refuses them too."""
    problem = _unrepresentable(data)
    if problem is not None:
        raise UnsealableError(problem)
    try:
        return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                          allow_nan=False).encode("utf-8")
    except UnicodeEncodeError as error:
        raise UnsealableError(f"a string holds the lone surrogate {error.object[error.start]!r}, "
                              "which is not text") from None


def _unsealed(data: dict[str, Any]) -> dict[str, Any]:
    unsealed = copy.copy(data)
    manifest = dict(unsealed.get("manifest") or {})
    manifest.pop(SEAL_KEY, None)
    unsealed["manifest"] = manifest
    return unsealed


def seal(data: dict[str, Any], writer: str) -> dict[str, Any]:
    """A copy of `data` with `manifest.seal` set; `writer` names the command that wrote it."""
    sealed = _unsealed(data)
    digest = hashlib.sha256(canonical_bytes(sealed)).hexdigest()
    sealed["manifest"] = {**sealed["manifest"], SEAL_KEY: {"sha256": digest, "writer": writer}}
    return sealed


def seal_problem(data: Any) -> str | None:
    """None when `data` carries a seal that matches its content; otherwise why not."""
    manifest = data.get("manifest") if isinstance(data, dict) else None
    recorded = manifest.get(SEAL_KEY) if isinstance(manifest, dict) else None
    if not isinstance(recorded, dict) or not isinstance(recorded.get("sha256"), str):
        return ("not sealed: only files written by `readout evaluate` or `readout sandbox` can be cited "
                "(no manifest.seal)")
    try:
        digest = hashlib.sha256(canonical_bytes(_unsealed(data))).hexdigest()
    except UnsealableError as error:
        # Data read by `read_results` never gets here; data built in memory can.
        return f"holds what a sealed file never does (NaN, an infinity, a huge number): {error.problem}"
    if digest != recorded["sha256"]:
        return (f"seal broken: the content hashes to {digest[:12]}, the seal says {recorded['sha256'][:12]}; "
                "the file was changed after the tool wrote it")
    return None


class JSONValueError(ValueError):
    """A JSON text holds what `strict_json` refuses: NaN, an infinity, an overlong number, or (for
    a results file) a nesting deeper than MAX_RESULTS_DEPTH."""


def _refuse_constant(literal: str) -> Any:
    raise JSONValueError(f"{literal} is not a number JSON allows")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose every key is written once: with a key written twice, a reader that keeps
    the first and one that keeps the last (Python's) read different values under one seal."""
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise JSONValueError(f"duplicate key {clip(key, 60)!r}: written twice in one object (readers "
                                     "disagree on which value it holds)")
            seen.add(key)
    return found


def _bounded_int(literal: str) -> int:
    digits = len(literal.lstrip("-"))
    if digits > MAX_NUMBER_CHARS:
        raise JSONValueError(f"a number of {digits:,} digits is too long (more than {MAX_NUMBER_CHARS} digits)")
    return int(literal)


def _bounded_float(literal: str) -> float:
    if len(literal) > MAX_NUMBER_CHARS:
        raise JSONValueError(f"a number of {len(literal):,} characters is too long "
                             f"(more than {MAX_NUMBER_CHARS} digits)")
    value = float(literal)
    if not math.isfinite(value):
        raise JSONValueError(f"{literal} is too large to be a finite number")
    return value


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def strict_json(text: str) -> Any:
    """`json.loads` without Python's extensions: NaN and infinities refused, numbers longer than
    MAX_NUMBER_CHARS and a key written twice in one object (JSONValueError); nesting beyond the
    recursion limit and a string holding a lone surrogate (`"\\udcff"`, which no UTF-8 file can hold)
    are JSONValueErrors too, never a RecursionError or a UnicodeEncodeError later."""
    try:
        data = json.loads(text, parse_constant=_refuse_constant, parse_int=_bounded_int,
                          parse_float=_bounded_float, object_pairs_hook=_unique_keys)
    except RecursionError:
        raise JSONValueError("nested too deeply (beyond the parser's recursion limit)") from None
    if _SURROGATE_ESCAPE.search(text):
        try:
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as error:
            raise JSONValueError(f"a string holds the lone surrogate {error.object[error.start]!r}, "
                                 "which is not text") from None
    return data


def parse_results_json(text: str) -> Any:
    """The JSON of a results file (`strict_json`, at most MAX_RESULTS_DEPTH levels deep), so that
    no value a claim or a table shows is NaN, an infinity or a number Python cannot print."""
    data = strict_json(text)
    # Only the depth can still be wrong here: the hooks refused every other case. The walk that
    # names where is run only once the quick one has found something.
    if _deeper_than(data, MAX_RESULTS_DEPTH):
        raise JSONValueError(_unrepresentable(data) or f"nested more than {MAX_RESULTS_DEPTH} levels deep")
    return data


def _deeper_than(data: Any, limit: int) -> bool:
    """Whether any value of `data` lies more than `limit` levels deep (the top level is level 1),
    walking containers only."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            return True
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        if children and depth + 1 > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


# While a `parsed_once()` block runs: sha256 of bytes -> the values parsed from them.
_parsed_in_block: dict[str, Any] | None = None


@contextmanager
def parsed_once() -> Iterator[None]:
    """Within the block, bytes already parsed are not parsed again: every read of the same bytes
    gets the same values. `render` reads each results file up to four times (the check, the page,
    its tables, the files it wrote); each read still reads and hashes the file, so a file that
    changed in between is read anew. The readers in a block only read (a test holds check and
    render to it: tests/core/results/test_parsed_once.py); nothing outlives the block."""
    global _parsed_in_block
    outer = _parsed_in_block
    if outer is None:
        _parsed_in_block = {}
    try:
        yield
    finally:
        _parsed_in_block = outer


def _parsed(raw: bytes) -> Any:
    """`parse_results_json` of a file's bytes. For bytes it has accepted before, the values they
    parsed to are read back from a signed memo under their sha256 (generator.storage.memo's
    `load_values`): the same values, without the JSON parse, its hooks and the walk that made sure
    of them (a megabyte of results parsed in 20 ms; read back in 5)."""
    digest = hashlib.sha256(raw).hexdigest()
    if _parsed_in_block is not None:
        if digest not in _parsed_in_block:
            _parsed_in_block[digest] = _parse_accepted(raw, digest)
        return _parsed_in_block[digest]
    return _parse_accepted(raw, digest)


def _parse_accepted(raw: bytes, digest: str) -> Any:
    memo = default_memo()
    found = memo.load_values("parsed results", digest)
    if found is not None:
        return found[0]
    data = parse_results_json(raw.decode("utf-8"))
    memo.store_values("parsed results", digest, data)
    return data


# The files a render may read (real path -> sha256 of the bytes the check re-derived); None: no limit.
_rederived: dict[str, str] | None = None


@contextmanager
def only_rederived(files: Mapping[str, str] | None) -> Iterator[None]:
    """Within the block, `read_results` reads only the files of `files` (real path -> sha256, the
    check report's `rederived`), and only with the bytes the check re-derived; None lifts the limit."""
    global _rederived
    outer, _rederived = _rederived, dict(files) if files is not None else None
    try:
        yield
    finally:
        _rederived = outer


def rederiving():
    """A block whose code re-derives what it reads itself (a regression baseline a render compares
    with is re-derived where it is read, not by the check): `read_results` reads any file there."""
    return only_rederived(None)


def read_results(path: Path, name: str | None = None, *,
                 missing: str = "missing: run `readout evaluate` to write it") -> Results:
    """Read and parse one results file; every problem is an InputError naming the file."""
    shown = display_path(path)
    try:
        raw = read_input(path, "results file", shown)
    except FileNotFoundError:
        raise InputError(missing, path=shown) from None
    if _rederived is not None and _rederived.get(os.path.realpath(path)) != sha256_bytes(raw):
        raise InputError("not re-derived by this render's check (it does not re-derive from its run files and "
                         "judgements, or it changed since): a report shows only what the check re-derived; "
                         "`readout check` says why", path=shown)
    try:
        data = _parsed(raw)
    except UnicodeDecodeError as error:
        raise InputError(f"results file is not UTF-8 (byte {error.start})", path=shown) from None
    except json.JSONDecodeError as error:
        raise InputError(f"not valid JSON: {error.msg} (column {error.colno})", path=shown,
                         line=error.lineno) from None
    except ValueError as error:
        # JSONValueError, or any other conversion the decoder refuses.
        raise InputError(f"not a results file: {clip(str(error), 160)}", path=shown) from None
    if not isinstance(data, dict):
        raise InputError("expected a JSON object", path=shown, line=1)
    try:
        current = upgrade(data)
    except ValueError as error:
        raise InputError(str(error), path=shown, field="format_version") from None
    return Results(name=name or Path(path).name, path=Path(path), sha256=sha256_bytes(raw), data=current,
                   raw=data if current is not data else None)
