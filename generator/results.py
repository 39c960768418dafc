"""The results document that the evaluation stage (or the sandbox) writes and everything else
reads: its file name, its seal, reading it, and the paths that name one value inside it.

The seal: a results file written by `readout evaluate` or `readout sandbox` carries
`manifest.seal = {"sha256": ..., "writer": ...}`, the sha256 of the canonical JSON of the whole
document without the seal (sorted keys, no spaces, UTF-8). Only sealed files can be cited by a
claim. A seal is not a signature (anyone can recompute it), so the checker also re-derives every
figure from the run files and judgements the file names (generator.claims.rederive).

A path: parse `table[search=hybrid].nDCG@5` and walk a JSON value with it. Syntax (one path names one JSON value)::

    path      := step ( "." key | selector )*        the first step is a key
    key       := one or more characters other than . [ ] "   e.g. nDCG@5, hybrid+rerank, 12
    selector  := "[" field "=" value "]"   the one list element whose `field` equals `value`
               | "[" digits "]"            a list element by position, from 0
               | '["' text '"]'            a mapping key that holds . [ or ] (corpus.jsonl)

Examples: `documents`, `table[search=hybrid].nDCG@5`,
`table[search=dense].paired_vs_dense.nDCG@5.ci95_low`, `manifest.models.dense.name`,
`manifest.inputs["corpus.jsonl"].sha256`, `per_query.dense.13.recall@5`.
A selector value is compared with the element's field as text (`true`, `20`, `hybrid`);
it may be double-quoted when it holds `]`. There is no wildcard, slice, arithmetic or call.

Walking stops with a reason the reader can act on: a missing key lists the keys that exist at
the deepest point reached; a selector with no match lists the values that do exist. A mapping
holding `"measured": false` is a row that was not run: walking into any field of it other than
its identity (`search`, `measured`, `not_measured_reason`) is refused, and so is a null value.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.errors import InputError, ReadoutError
from generator.fileio import display_path, sha256_bytes

# The release sample's results; also the file a measured source cites when it names none.
RESULTS_NAME = "results.json"
SEAL_KEY = "seal"
# Bounds on what a results file may be; beyond them it is an input error, never a crash.
MAX_RESULTS_BYTES = 256 * 1024 * 1024
# A results file the tools write is at most 7 levels deep and its numbers are a float's repr;
# far beyond either, the file was not written by them (and a 5,000-digit integer or a nesting of
# thousands of levels would otherwise cost a crash or a slow conversion).
MAX_RESULTS_DEPTH = 32
MAX_NUMBER_CHARS = 100
# How much of an id or a value an error message repeats: a line an author can read, never a
# 50 MB echo of the input.
MAX_ECHO_CHARS = 80

# Fields of a not-measured row that a claim may cite: they say *that* it was not measured.
ROW_IDENTITY_KEYS = frozenset({"search", "measured", "not_measured_reason", "cost", "quality"})
MAX_LISTED = 24

_KEY = r'[^.\[\]"]+'
_TOKEN = re.compile(
    r'(?P<key>' + _KEY + r')'
    r'|\[(?P<qkey>"(?:[^"\\]|\\.)*")\]'
    r'|\[(?P<index>\d+)\]'
    r'|\[(?P<field>[^=\[\]"]+)=(?:(?P<qvalue>"(?:[^"\\]|\\.)*")|(?P<value>[^\]"]*))\]'
    r'|(?P<dot>\.)'
)


class PathSyntaxError(ValueError):
    """The path text does not follow the grammar in this module's docstring."""


def clip(text: str, limit: int = MAX_ECHO_CHARS) -> str:
    """`text` cut to `limit` characters with an ellipsis, for a message that repeats it."""
    return text if len(text) <= limit else text[:limit] + "..."


def excerpt(value: Any, limit: int = MAX_ECHO_CHARS) -> str:
    """`value` as an error message quotes it: its repr, cut to `limit` characters with an ellipsis
    and the full length, so no input, however long, makes the message longer than a line."""
    try:
        text = value if isinstance(value, str) else str(value)
    except ValueError:      # an integer beyond Python's 4,300-digit conversion limit
        text = f"<an integer of {value.bit_length():,} bits>"
    if len(text) <= limit:
        return repr(text)
    return repr(text[:limit]) + f"... ({len(text):,} characters)"


@dataclass(frozen=True)
class Step:
    kind: str            # "key" | "index" | "select"
    key: str = ""        # key name, or the selector's field
    value: str = ""      # selector value
    index: int = 0

    def text(self) -> str:
        if self.kind == "key":
            return self.key if re.fullmatch(_KEY, self.key) else f"[{json.dumps(self.key)}]"
        if self.kind == "index":
            return f"[{self.index}]"
        return f"[{self.key}={self.value}]"


@dataclass(frozen=True)
class Resolution:
    """The outcome of walking a path: `ok` with `value`, or a `reason` (and `unmeasured`)."""

    ok: bool
    value: Any = None
    reason: str = ""
    unmeasured: bool = False


def parse_path(text: str) -> tuple[Step, ...]:
    if not isinstance(text, str) or not text.strip():
        raise PathSyntaxError("empty path")
    if text != text.strip():
        raise PathSyntaxError(f"path {excerpt(text)} has leading or trailing spaces")
    steps: list[Step] = []
    position = 0
    expect_key = True   # at the start or after a dot, a key must follow
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise PathSyntaxError(f"cannot read path {excerpt(text)} at character {position + 1}")
        if match.group("dot") is not None:
            if expect_key:
                raise PathSyntaxError(f"empty key in path {excerpt(text)} at character {position + 1}")
            expect_key = True
        elif match.group("key") is not None:
            if not expect_key:
                raise PathSyntaxError(f"missing '.' before {excerpt(match.group('key'))} in path {excerpt(text)}")
            steps.append(Step("key", key=match.group("key")))
            expect_key = False
        else:
            if expect_key and steps:
                raise PathSyntaxError(f"'.' followed by '[' in path {excerpt(text)}; write a[...] not a.[...]")
            if not steps and match.group("qkey") is None:
                raise PathSyntaxError(f"path {excerpt(text)} must start with a key")
            if match.group("qkey") is not None:
                steps.append(Step("key", key=json.loads(match.group("qkey"))))
            elif match.group("index") is not None:
                steps.append(Step("index", index=int(match.group("index"))))
            else:
                value = match.group("qvalue")
                value = json.loads(value) if value is not None else match.group("value")
                steps.append(Step("select", key=match.group("field").strip(), value=value))
            expect_key = False
        position = match.end()
    if expect_key:
        raise PathSyntaxError(f"path {excerpt(text)} ends with '.'")
    return tuple(steps)


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value)


def _listing(names: list[str]) -> str:
    if not names:
        return "(none)"
    shown = ", ".join(clip(name) for name in names[:MAX_LISTED])
    if len(names) > MAX_LISTED:
        shown += f", ... ({len(names) - MAX_LISTED} more)"
    return shown


def _suggest(wanted: str, names: list[str], as_key: bool = False) -> str:
    import difflib   # only when a close match or a diff is shown

    close = difflib.get_close_matches(wanted, names, n=1, cutoff=0.6)
    if not close:
        return ""
    if as_key and not re.fullmatch(_KEY, close[0]):
        return f" (did you mean {Step('key', key=close[0]).text()}?)"
    return f" (did you mean {excerpt(close[0])}?)"


def path_text(steps: tuple[Step, ...]) -> str:
    """The canonical text of a path (as messages show it)."""
    text = ""
    for step in steps:
        part = step.text()
        text += ("." if text and not part.startswith("[") else "") + part
    return text


def _unmeasured(row: dict, steps: tuple[Step, ...]) -> Resolution:
    reason = row.get("not_measured_reason") or "no reason recorded"
    search = row.get("search")
    label = search if isinstance(search, str) else (path_text(steps) or "(top level)")
    return Resolution(False, reason=f"row {label} was not measured: {reason}", unmeasured=True)


def resolve(data: Any, steps: tuple[Step, ...], *, measured_only: bool = True) -> Resolution:
    """Walk `steps` through `data`; never raises for a missing value, returns a reason instead.

    With `measured_only` (the checker's rule) a path through a row that was not measured, or one
    that lands on null, fails. The renderer passes False: it shows such values as "not measured".
    """
    current = data
    for number, step in enumerate(steps):
        if measured_only and isinstance(current, dict) and current.get("measured") is False and not (
                step.kind == "key" and step.key in ROW_IDENTITY_KEYS):
            return _unmeasured(current, steps[:number])
        if step.kind == "key":
            if isinstance(current, dict) and step.key in current:
                current = current[step.key]
                continue
            here = path_text(steps[:number]) or "the top level"
            if not isinstance(current, dict):
                return Resolution(False, reason=f"{here} is {_kind(current)}, not an object; "
                                                f"cannot take key {excerpt(step.key)}")
            names = sorted(current)
            suggestion = _suggest(step.key, names, as_key=True)
            return Resolution(False, reason=f"no key {excerpt(step.key)} at {here}{suggestion}; "
                                            f"available: {_listing(names)}")
        here = path_text(steps[:number]) or "the top level"
        if step.kind == "index":
            if not isinstance(current, list):
                return Resolution(False, reason=f"{here} is {_kind(current)}, not a list; "
                                                f"cannot take element [{step.index}]")
            if step.index >= len(current):
                return Resolution(False, reason=f"{here} has {len(current)} elements; no element [{step.index}]")
            current = current[step.index]
        else:
            if not isinstance(current, list):
                return Resolution(False, reason=f"{here} is {_kind(current)}, not a list; "
                                                f"cannot select [{step.key}={step.value}]")
            matches = [item for item in current
                       if isinstance(item, dict) and step.key in item and _as_text(item[step.key]) == step.value]
            if len(matches) != 1:
                values = [_as_text(item[step.key]) for item in current
                          if isinstance(item, dict) and step.key in item]
                if not matches:
                    return Resolution(False, reason=f"no element of {here} has {step.key}={step.value}"
                                                    f"{_suggest(step.value, values)}; "
                                                    f"available {step.key} values: {_listing(values)}")
                return Resolution(False, reason=f"{len(matches)} elements of {here} have "
                                                f"{step.key}={step.value}; a selector must match exactly one")
            current = matches[0]
    if not measured_only:
        return Resolution(True, value=current)
    if isinstance(current, dict) and current.get("measured") is False:
        return _unmeasured(current, steps)
    if current is None:
        return Resolution(False, reason=f"{path_text(steps)} is null (not measured)", unmeasured=True)
    return Resolution(True, value=current)


def cost_block(data: Any, steps: tuple[Step, ...]) -> dict | None:
    """The block on the way to a value that says how a cost was measured (`"cost": "measured"`,
    `"measured by shape"` or `"not measured"`, beside its `"quality"`), or None."""
    current = data
    for step in steps:
        if isinstance(current, dict) and isinstance(current.get("cost"), str):
            return current
        # Through lists too: a frontier's configurations[0] is as much a cost as rerank_cost.
        if step.kind == "key" and isinstance(current, dict) and step.key in current:
            current = current[step.key]
        elif step.kind == "index" and isinstance(current, list) and 0 <= step.index < len(current):
            current = current[step.index]
        elif step.kind == "select" and isinstance(current, list):
            matches = [item for item in current if isinstance(item, dict) and step.key in item
                       and _as_text(item[step.key]) == step.value]
            if len(matches) != 1:
                return None
            current = matches[0]
        else:
            return None
    return current if isinstance(current, dict) and isinstance(current.get("cost"), str) else None


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


# --- reading results files -------------------------------------------------------------------

MISSING = object()


@dataclass(frozen=True)
class Results:
    """One results file as read: its name relative to outputs/, its bytes' sha256 and its data."""

    name: str
    path: Path
    sha256: str
    data: dict[str, Any]


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
    """`json.loads` without Python's extensions: NaN and infinities refused, and numbers longer
    than MAX_NUMBER_CHARS (JSONValueError); nesting beyond the recursion limit and a string holding
    a lone surrogate (`"\\udcff"`, which no UTF-8 file can hold) are JSONValueErrors too, never a
    RecursionError or a UnicodeEncodeError later."""
    try:
        data = json.loads(text, parse_constant=_refuse_constant, parse_int=_bounded_int,
                          parse_float=_bounded_float)
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


def read_results(path: Path, name: str | None = None, *,
                 missing: str = "missing: run `readout evaluate` to write it") -> Results:
    """Read and parse one results file; every problem is an InputError naming the file."""
    shown = display_path(path)
    try:
        if Path(path).stat().st_size > MAX_RESULTS_BYTES:
            raise InputError(f"larger than {MAX_RESULTS_BYTES // (1024 * 1024)} MB: not a results file", path=shown)
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError(missing, path=shown) from None
    except OSError as error:
        raise InputError(f"cannot read results file: {error.strerror}", path=shown) from None
    try:
        data = parse_results_json(raw.decode("utf-8"))
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
    return Results(name=name or Path(path).name, path=Path(path), sha256=sha256_bytes(raw), data=data)


def lookup(data: Any, path: str) -> Any:
    """The value at a results path, null included; MISSING when the path does not parse or leads
    nowhere. For showing values (a renderer): a row that was not measured is walked into too."""
    try:
        resolution = resolve(data, parse_path(path), measured_only=False)
    except PathSyntaxError:
        return MISSING
    return resolution.value if resolution.ok else MISSING
