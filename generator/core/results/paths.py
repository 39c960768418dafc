"""The path grammar: one value inside a results file, named by a path such as
`table[search=hybrid].nDCG@5`, and the walk that finds it.

Syntax (one path names one JSON value)::

    path      := step ( "." key | selector )*        the first step is a key
    key       := one or more characters other than . [ ] "   e.g. nDCG@5, hybrid+rerank, 12
    selector  := "[" field "=" value "]"   the one list element whose `field` equals `value`
               | "[" digits "]"            a list element by position, from 0
               | '["' text '"]'            a mapping key that holds . [ or ] (corpus.jsonl)

Examples: `documents`, `table[search=hybrid].nDCG@5`,
`comparisons.hybrid_vs_dense.metrics.nDCG@5.ci95_low`, `manifest.models.dense.name`,
`manifest.inputs["corpus.jsonl"].sha256`, `per_query.dense.13.recall@5`.
A selector value is compared with the element's field as text (`true`, `20`, `hybrid`);
it may be double-quoted when it holds `]`. There is no wildcard, slice, arithmetic or call.

Walking stops with a reason the reader can act on: a missing key lists the keys that exist at
the deepest point reached; a selector with no match lists the values that do exist. A mapping
holding `"measured": false` is a row that was not run: walking into any field of it other than
its identity (`search`, `measured`, `not_measured_reason`) is refused, and so is a null value.
What a path *means* (its block, row, query, metric, statistic and unit) is the schema's
(`generator.core.results.location.locate`); a path written in format 1's spelling is read through
`generator.core.results.upgrade`.
"""
from __future__ import annotations

import functools
import json
import re
from typing import Any

from generator.core.dataclass import dataclass
from generator.storage.errors import MAX_ECHO_CHARS, clip, excerpt  # noqa: F401 (the path grammar's messages use them)



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
    if not isinstance(text, str):
        raise PathSyntaxError("empty path")
    return _parsed_path(text)


# A render reads the same few dozen paths hundreds of times (every table cell names one); the steps
# are immutable, and a path that does not parse raises again each time (only values are kept).
@functools.lru_cache(maxsize=4096)
def _parsed_path(text: str) -> tuple[Step, ...]:
    if not text.strip():
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


MISSING = object()


def lookup(data: Any, path: str) -> Any:
    """The value at a results path, null included; MISSING when the path does not parse or leads
    nowhere. For showing values (a renderer): a row that was not measured is walked into too."""
    try:
        resolution = resolve(data, parse_path(path), measured_only=False)
    except PathSyntaxError:
        return MISSING
    return resolution.value if resolution.ok else MISSING
