"""The results file's reference, generated from its schema (generator.core.results.schema): a JSON Schema
(`results.schema.json`, package data beside this module, for any tool that reads results files)
and a page (`docs/results.md`). Both are deterministic; `docs/generate_results_reference.py`
writes them and tests/core/results/test_results_format.py checks the committed copies equal a fresh
render and that every committed results file validates against the JSON Schema.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from generator.core.results import upgrade
from generator.core.results.schema import BLOCKS, FIELDS, FORMAT, FORMAT_VERSION, KINDS, Block, Field

JSON_SCHEMA_PATH = Path(__file__).resolve().parent / "results.schema.json"
REGENERATE = "python docs/generate_results_reference.py"
# The JSON type of a scalar block's value, by its kind.
_SCALAR_TYPES = {"count": "integer", "query count": "integer", "identity": ["string", "integer"],
                 "parameter": "integer", "flag": ["boolean", "null"], "time": ["number", "null"],
                 "category": "string"}


def _scalar_type(block: Block) -> Any:
    if block is FORMAT:
        return "integer"
    if block.json_type is not None:
        return block.json_type
    return _SCALAR_TYPES.get(block.kind, ["number", "string", "boolean", "null"])


def _annotations(block: Block) -> dict[str, Any]:
    notes: dict[str, Any] = {"x-layouts": list(block.layouts), "x-writers": list(block.writers),
                             "x-over-queries": block.over_queries, "x-derived": block.derived}
    if block.scalar:
        notes["x-kind"] = block.kind
        if block.unit:
            notes["x-unit"] = block.unit
    if block.row_role:
        notes["x-row"] = "the decided reranker (the first rerank row of manifest.rows)"
    if block.formerly:
        notes["x-format-1-names"] = list(block.formerly)
    if block.fields:
        notes["x-fields"] = {entry.name: _field_note(entry) for entry in block.fields}
    return notes


def _field_note(entry: Field) -> dict[str, str]:
    note = {"meaning": entry.meaning, "kind": entry.kind}
    if entry.unit:
        note["unit"] = entry.unit
    return note


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a results file in the current format."""
    properties: dict[str, Any] = {}
    for block in BLOCKS:
        node: dict[str, Any] = {"description": block.meaning}
        if block is FORMAT:
            node["const"] = FORMAT_VERSION
        elif block.scalar:
            node["type"] = _scalar_type(block)
        elif block.layouts[0].startswith(f"{block.name}["):
            node["type"] = "array"
        else:
            node["type"] = "object"
        properties[block.name] = {**node, **_annotations(block)}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://github.com/traced-readout/results.schema.json",
        "title": f"readout results file, format {FORMAT_VERSION}",
        "description": "What `readout evaluate` and `readout sandbox` write (results.json and the every-query file): "
                       "each top-level block declared once. Generated from generator/core/results/schema.py; "
                       "format 1 files (no format_version) are read through generator/core/results/upgrade.py.",
        "type": "object",
        "required": [block.name for block in BLOCKS if block.required],
        "additionalProperties": False,
        "properties": properties,
        "$defs": {"fields": {entry.name: _field_note(entry) for entry in FIELDS},
                  "kinds": dict(KINDS)},
    }


def load_json_schema() -> dict[str, Any]:
    """The JSON Schema shipped with the package."""
    return json.loads(JSON_SCHEMA_PATH.read_text(encoding="utf-8"))


def render_json_schema() -> str:
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _keyed_by(block: Block) -> str:
    return "<br>".join(f"`{layout}`" for layout in block.layouts)


def _query_set(block: Block) -> str:
    if block.row_role:
        return "the file's queries (the decided reranker)" if block.over_queries else "none"
    return "the file's queries" if block.over_queries else "none"


def render_reference() -> str:
    """docs/results.md: the blocks, their layouts and fields, the kinds, and what format 1 spelled
    otherwise."""
    lines = [f"<!-- Generated from generator/core/results/schema.py by `{REGENERATE}`: edit the schema, then",
             "     regenerate; tests/core/results/test_results_format.py fails when this page is stale. -->", "",
             f"# results.json reference (format {FORMAT_VERSION})", "",
             "The file every stage shares: `readout evaluate` and `readout sandbox` write it, `readout check` "
             "rebuilds every derived block from the run files and judgements it names and compares, and the "
             "reports read it. Each top-level key is a **block**, declared once in "
             "`generator/core/results/schema.py`; this page and the JSON Schema "
             "(`generator/core/results/results.schema.json`) are generated from that declaration.", "",
             "A **layout** is a path pattern in the path grammar the ledger uses "
             "(`table[search=hybrid].nDCG@5`): `{row}`, `{baseline}`, `{query}`, `{metric}` and `{field}` "
             "say what each step stands for, `...` that a record's details go deeper. The checker reads a "
             "value's row, baseline, query, metric, kind and unit from here: a sentence showing it must name "
             "its row and metric, a change its baseline, one query's value its query, and every value is read "
             "with the query count of its own file.", "",
             "| Block | What it holds | Keyed by | Query set | Written by |", "| --- | --- | --- | --- | --- |"]
    for block in BLOCKS:
        lines.append(f"| `{block.name}` | {_cell(block.meaning)} | {_keyed_by(block)} | {_query_set(block)} | "
                     f"{', '.join(block.writers)} |")
    lines += ["", "## Blocks", ""]
    for block in BLOCKS:
        lines += [f"### `{block.name}`", "", block.meaning[0].upper() + block.meaning[1:] + ".", ""]
        lines.append(f"- Layout: {', '.join(f'`{layout}`' for layout in block.layouts)}")
        if block.scalar:
            lines.append(f"- Kind: {block.kind}" + (f", in {block.unit}" if block.unit else ""))
        lines.append(f"- Query set: {_query_set(block)}")
        lines.append("- Rebuilt by `check` from the run files and judgements: "
                     + ("yes" if block.derived else "no (recorded: checked for consistency where it can be)"))
        if block.required:
            lines.append("- Required")
        if block.formerly:
            lines.append(f"- Format 1 name: {', '.join(f'`{name}`' for name in block.formerly)}")
        for entry in block.fields:
            unit = f", {entry.unit}" if entry.unit else ""
            lines.append(f"- Field `{entry.name}`: {entry.meaning} ({entry.kind}{unit})")
        lines.append("")
    lines += ["## Fields", "", "A field means the same wherever it appears (a block may declare its own, above).", "",
              "| Field | Meaning | Kind | Unit |", "| --- | --- | --- | --- |"]
    for entry in FIELDS:
        lines.append(f"| `{entry.name}` | {_cell(entry.meaning)} | {entry.kind} | {entry.unit} |")
    lines += ["", "## Kinds", "", "| Kind | What a value of it is |", "| --- | --- |"]
    lines += [f"| {kind} | {_cell(meaning)} |" for kind, meaning in KINDS.items()]
    history = (upgrade.__doc__ or "").split("\n\n", 1)[1].strip()
    lines += ["", "## Format 1", "", history, ""]
    return "\n".join(lines)
