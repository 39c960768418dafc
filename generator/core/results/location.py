"""What a path names: the declared block a path's steps follow, and the row, baseline, query,
metric and field (with its kind and unit) its layout binds.

Every reader that needs to know what a value is (the attribution and statistic rules of the
checker, the source notes of the reports) asks `locate` here; the layouts and fields it matches
against are declared once, in `generator.core.results.schema`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import field
from typing import Iterable

from generator.core.dataclass import dataclass
from generator.core.results.schema import BY_NAME, Block, Field, _slot_pattern, field_named


# --- locating a value ------------------------------------------------------------------------


@dataclass(frozen=True)
class Location:
    """What a path names, read from its block's layout: the block, the row, the baseline, the
    query, the metric and the field (with its kind and unit), where the path names them."""

    block: Block
    slots: dict[str, str] = field(default_factory=dict)
    field: Field | None = None

    @property
    def row(self) -> str | None:
        return self.slots.get("row")

    @property
    def baseline(self) -> str | None:
        return self.slots.get("baseline")

    @property
    def query(self) -> str | None:
        return self.slots.get("query")

    @property
    def metric(self) -> str | None:
        return self.slots.get("metric")

    @property
    def side(self) -> str | None:
        return self.slots.get("side")

    @property
    def kind(self) -> str:
        if self.field is not None:
            return self.field.kind
        return self.block.kind if self.block.scalar else "record"

    @property
    def unit(self) -> str:
        if self.field is not None:
            return self.field.unit
        return self.block.unit if self.block.scalar else ""

    @property
    def name(self) -> str | None:
        """The field's key as written (`p95_milliseconds`, `nDCG@5`), or a scalar block's name."""
        return self.slots.get("field_key") or (self.block.name if self.block.scalar else None)


REST = "..."


@dataclass(frozen=True)
class _Token:
    kind: str           # "key" | "select" | "index"
    text: str = ""      # a key's pattern, or a selector's value pattern
    key: str = ""       # a selector's field


@functools.lru_cache(maxsize=None)
def _tokens(layout: str) -> tuple[tuple[_Token, ...], bool]:
    """A layout's steps, and whether it reaches deeper (`...`)."""
    rest = layout.endswith(REST)
    body = layout[:-len(REST)].rstrip(".") if rest else layout
    tokens: list[_Token] = []
    for part in re.finditer(r"([^.\[\]]+)|\[([^\]]*)\]", body):
        if part.group(1) is not None:
            tokens.append(_Token("key", part.group(1)))
        elif "=" in part.group(2):
            key, value = part.group(2).split("=", 1)
            tokens.append(_Token("select", value, key))
        else:
            tokens.append(_Token("index", part.group(2)))
    return tuple(tokens), rest


def _split_pair(key: str, rows: frozenset[str] | None) -> dict[str, str] | None:
    """`{row}_vs_{baseline}`: the split that names two known rows when the rows are known (a row's
    name may hold `_vs_` itself), else the last `_vs_`."""
    splits = [(key[:match.start()], key[match.end():]) for match in re.finditer("_vs_", key)]
    splits = [(row, baseline) for row, baseline in splits if row and baseline]
    if not splits:
        return None
    if rows:
        known = [pair for pair in splits if pair[0] in rows and pair[1] in rows]
        if known:
            return {"row": known[0][0], "baseline": known[0][1]}
    row, baseline = splits[-1]
    return {"row": row, "baseline": baseline}


def _match_key(pattern: str, key: str, rows: frozenset[str] | None) -> dict[str, str] | None:
    if "{" not in pattern:
        return {} if pattern == key else None
    if pattern == "{row}_vs_{baseline}":
        return _split_pair(key, rows)
    match = _slot_pattern(pattern).match(key)
    return {name: value for name, value in match.groupdict().items() if name != "field"} if match else None


def _match(block: Block, steps: tuple, rows: frozenset[str] | None) -> Location | None:
    """The block's first layout the steps follow (or a group on the way to one)."""
    for layout in block.layouts:
        tokens, rest = _tokens(layout)
        slots: dict[str, str] = {}
        found: Field | None = None
        matched = True
        for number, step in enumerate(steps):
            if number >= len(tokens):
                matched = rest
                # Beyond the layout, a record's own field still says what it is, when declared.
                last = steps[-1]
                deeper = field_named(last.key, block.fields)[0] if last.kind == "key" else None
                if deeper is not None and "{" not in deeper.name:
                    found = deeper
                    slots["field_key"] = last.key
                break
            token = tokens[number]
            if token.kind == "key":
                bound = _match_key(token.text, step.key, rows) if step.kind == "key" else None
                if bound is None:
                    matched = False
                    break
                slots.update(bound)
                if token.text == "{field}" or "{" not in token.text or token.text == "{series}":
                    declared, inner = field_named(step.key, block.fields)
                    if declared is not None or token.text == "{field}":
                        found = declared
                        slots.update(inner)
                        slots["field_key"] = step.key
                elif number == len(steps) - 1:
                    slot = next(iter(bound), None)
                    own = next((entry for entry in block.fields if entry.name == "{" + str(slot) + "}"), None)
                    found = own or found
            elif token.kind == "select":
                if step.kind != "select" or step.key != token.key:
                    matched = False
                    break
                bound = _match_key(token.text, step.value, rows)
                if bound is None:
                    matched = False
                    break
                slots.update(bound)
            else:
                if step.kind != "index":
                    matched = False
                    break
                slots[token.text.strip("{}")] = str(step.index)
        if matched:
            if len(steps) < len(tokens) and found is not None and found.kind != "record":
                found = None   # a group on the way to a value, not the value
            return Location(block, slots, found)
    return None


def locate(steps: tuple, *, rows: Iterable[str] | None = None, decided_rerank: str | None = None) -> Location | None:
    """What a path (format 2 spelling) names, or None when no declared layout has it.

    `rows` are the file's row names (they settle a `{row}_vs_{baseline}` key whose row holds
    `_vs_`); `decided_rerank` is the row that blocks about the decided reranker belong to."""
    if not steps or steps[0].kind != "key" or steps[0].key not in BY_NAME:
        return None
    declared = BY_NAME[steps[0].key]
    location = _match(declared, tuple(steps), frozenset(rows) if rows is not None else None)
    if location is None:
        return None
    if declared.row_role == "rerank" and "row" not in location.slots and decided_rerank is not None:
        location = Location(location.block, {**location.slots, "row": decided_rerank}, location.field)
    return location
