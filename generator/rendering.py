"""Render readout.html, TEACHBACK.md and AAR.md from the checked ledger and results.json.

`readout render` runs the claim check first and refuses to render when it fails (exit 1);
`--draft` renders anyway and flags every failure where the reader sees it. Rendering happens in
memory; the orphan scan (`generator.orphans`) then proves that every word and number in the
outputs came from a ledger claim, a registered label or a data value, and only then are the
files written (atomically). `--check` writes nothing and names each output that differs from a
fresh render, like `cog --check`.

What the outputs contain is configured per project in readout.yaml under `outputs:` (see
`OUTPUT_KEYS`, `SECTION_BLOCKS`, `COLUMN_KEYS`, `CHART_KINDS`), so the SciFact review and the
L03 sandbox share the templates in `templates/`.

Determinism: no clock is read; every mapping is emitted in sorted or configured order. Each
output records what it was built from (ledger, results, design freeze, readout.yaml and every
template file, by sha256) in a stamp: a meta tag in the HTML, a comment at the end of Markdown.
"""

from __future__ import annotations

import json
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, TextIO

from generator.errors import FindingsError, InputError
from generator.orphans import CLOSE, MARKS, OPEN, Orphan, scan, strip_marks

RESULTS_NAME = "results.json"
LABELS_NAME = "labels.yaml"
STAMP_NAME = "readout-built-from"
LABEL_MAX_WORDS = 10

# output name -> default file and template; a claim's `output` must be one of these names.
OUTPUT_DEFAULTS: dict[str, dict[str, str]] = {
    "readout": {"file": "readout.html", "template": "readout.html.j2"},
    "teachback": {"file": "TEACHBACK.md", "template": "report.md.j2"},
    "aar": {"file": "AAR.md", "template": "report.md.j2"},
}
OUTPUT_KEYS = ("file", "template", "sections", "table", "charts", "provenance")
SECTION_KEYS = ("id", "title", "show")
# what a section may show besides its claims; charts need a `charts:` entry of the same name.
SECTION_BLOCKS = ("table", "quality_vs_time", "deltas", "provenance", "claims_by_kind")
CHART_KINDS = ("quality_vs_time", "deltas")
HTML_ONLY_BLOCKS = ("quality_vs_time", "deltas")
TABLE_KEYS = ("rows", "name", "columns")
COLUMN_KEYS = ("label", "key", "path", "format", "only", "otherwise", "interval")
DEFAULT_PROVENANCE = ("documents", "queries", "query_set", "candidate_depth", "manifest.platform",
                      "manifest.threads", "manifest.started_at", "manifest.finished_at",
                      "manifest.reproduction.expected_hashes_match")


# --- configuration -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ColumnSpec:
    label: str
    key: str | None = None          # a field of the row object
    path: str | None = None         # a path into results.json (same value for every row in `only`)
    format: str = ".3f"
    only: tuple[str, ...] | None = None   # rows the column applies to; others show `otherwise`
    otherwise: str = "not_applicable"     # label key shown in rows outside `only`
    interval: str | None = None     # path inside the row to {ci95_low, ci95_high}


@dataclass(frozen=True)
class TableSpec:
    rows: str = "table"
    name: str = "search"
    columns: tuple[ColumnSpec, ...] = ()


@dataclass(frozen=True)
class SectionSpec:
    id: str
    title: str
    show: tuple[str, ...] = ()


@dataclass(frozen=True)
class OutputSpec:
    name: str
    file: str
    template: str
    sections: tuple[SectionSpec, ...]
    table: TableSpec | None = None
    charts: dict[str, dict[str, Any]] = field(default_factory=dict)
    provenance: tuple[str, ...] = DEFAULT_PROVENANCE

    @property
    def is_html(self) -> bool:
        return self.file.endswith((".html", ".htm"))


def _config_error(project, where: str, message: str) -> InputError:
    return InputError(message, path=_display(project, project.config_path), field=where)


def _choices(names: Iterable[str]) -> str:
    return ", ".join(names)


def _check_keys(project, where: str, mapping: Any, allowed: tuple[str, ...]) -> dict:
    if not isinstance(mapping, dict):
        raise _config_error(project, where, "expected a mapping")
    unknown = sorted(set(mapping) - set(allowed))
    if unknown:
        raise _config_error(project, f"{where}.{unknown[0]}",
                            f"unknown key; choose from {_choices(allowed)}")
    return mapping


def _string(project, where: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _config_error(project, where, "expected a non-empty string")
    return value.strip()


def _format_ok(project, where: str, spec: str) -> str:
    try:
        format(0.5, spec)
    except (ValueError, TypeError):
        raise _config_error(project, where, f"not a Python format spec: {spec!r} (for example .3f or +.3f)") \
            from None
    return spec


def parse_outputs(project) -> dict[str, OutputSpec]:
    """The `outputs:` mapping of readout.yaml, validated; raises InputError naming the field."""
    raw = project.config.get("outputs")
    if raw is None:
        raise _config_error(project, "outputs", "missing: declare the outputs, their sections and table "
                                                "(see README, 'Outputs')")
    _check_keys(project, "outputs", raw, tuple(OUTPUT_DEFAULTS))
    specs: dict[str, OutputSpec] = {}
    for name in OUTPUT_DEFAULTS:
        if name not in raw:
            continue
        where = f"outputs.{name}"
        entry = _check_keys(project, where, raw[name], OUTPUT_KEYS)
        file = _string(project, f"{where}.file", entry.get("file", OUTPUT_DEFAULTS[name]["file"]))
        if "/" in file or "\\" in file:
            raise _config_error(project, f"{where}.file", "a file name inside outputs/, not a path")
        template = _string(project, f"{where}.template", entry.get("template", OUTPUT_DEFAULTS[name]["template"]))
        charts = entry.get("charts") or {}
        _check_keys(project, f"{where}.charts", charts, CHART_KINDS)
        for kind, options in charts.items():
            _check_chart(project, f"{where}.charts.{kind}", kind, options)
        sections_raw = entry.get("sections")
        if not isinstance(sections_raw, list) or not sections_raw:
            raise _config_error(project, f"{where}.sections", "expected a non-empty list of {id, title}")
        sections: list[SectionSpec] = []
        seen: set[str] = set()
        for index, item in enumerate(sections_raw):
            here = f"{where}.sections[{index}]"
            item = _check_keys(project, here, item, SECTION_KEYS)
            section_id = _string(project, f"{here}.id", item.get("id"))
            if section_id in seen:
                raise _config_error(project, f"{here}.id", f"duplicate section id {section_id!r}")
            seen.add(section_id)
            show = item.get("show") or []
            if not isinstance(show, list):
                raise _config_error(project, f"{here}.show", "expected a list")
            for block in show:
                if block not in SECTION_BLOCKS:
                    raise _config_error(project, f"{here}.show", f"unknown block {block!r}; choose from "
                                                                 f"{_choices(SECTION_BLOCKS)}")
                if block in HTML_ONLY_BLOCKS and not file.endswith(".html"):
                    raise _config_error(project, f"{here}.show", f"{block} is a chart: HTML outputs only")
                if block in CHART_KINDS and block not in charts:
                    raise _config_error(project, f"{here}.show", f"{block} needs {where}.charts.{block}")
                if block == "table" and "table" not in entry:
                    raise _config_error(project, f"{here}.show", f"table needs {where}.table")
            sections.append(SectionSpec(section_id, _string(project, f"{here}.title", item.get("title")),
                                        tuple(show)))
        table = _parse_table(project, f"{where}.table", entry["table"]) if "table" in entry else None
        provenance = entry.get("provenance", list(DEFAULT_PROVENANCE))
        if not isinstance(provenance, list) or not all(isinstance(p, str) for p in provenance):
            raise _config_error(project, f"{where}.provenance", "expected a list of results.json paths")
        specs[name] = OutputSpec(name, file, template, tuple(sections), table, dict(charts), tuple(provenance))
    if not specs:
        raise _config_error(project, "outputs", f"declare at least one of {_choices(OUTPUT_DEFAULTS)}")
    files = [spec.file for spec in specs.values()]
    if len(set(files)) != len(files):
        raise _config_error(project, "outputs", "two outputs write the same file")
    return specs


# chart kind -> (required keys, optional keys); see generator/charts.py for what each draws
CHART_OPTIONS = {
    "quality_vs_time": (("metrics", "time", "time_row"), ()),
    "deltas": (("baseline", "metrics"), ("delta", "interval")),
}


def _check_chart(project, where: str, kind: str, options: Any) -> None:
    required, optional = CHART_OPTIONS[kind]
    _check_keys(project, where, options, required + optional)
    for key in required:
        if key not in options:
            raise _config_error(project, f"{where}.{key}", "missing")
    for key, value in options.items():
        if key == "metrics":
            if not isinstance(value, list) or not value or not all(isinstance(m, str) for m in value):
                raise _config_error(project, f"{where}.metrics", "expected a non-empty list of row keys")
        else:
            _string(project, f"{where}.{key}", value)


def _parse_table(project, where: str, raw: Any) -> TableSpec:
    raw = _check_keys(project, where, raw, TABLE_KEYS)
    columns_raw = raw.get("columns")
    if not isinstance(columns_raw, list) or not columns_raw:
        raise _config_error(project, f"{where}.columns", "expected a non-empty list of {label, key|path}")
    columns = []
    for index, item in enumerate(columns_raw):
        here = f"{where}.columns[{index}]"
        item = _check_keys(project, here, item, COLUMN_KEYS)
        if ("key" in item) == ("path" in item):
            raise _config_error(project, here, "give exactly one of key (a row field) or path (a results.json path)")
        only = item.get("only")
        if only is not None and (not isinstance(only, list) or not all(isinstance(o, str) for o in only)):
            raise _config_error(project, f"{here}.only", "expected a list of row names")
        columns.append(ColumnSpec(
            label=_string(project, f"{here}.label", item.get("label")),
            key=_string(project, f"{here}.key", item["key"]) if "key" in item else None,
            path=_string(project, f"{here}.path", item["path"]) if "path" in item else None,
            format=_format_ok(project, f"{here}.format", item.get("format", ".3f")),
            only=tuple(only) if only is not None else None,
            otherwise=_string(project, f"{here}.otherwise", item.get("otherwise", "not_applicable")),
            interval=_string(project, f"{here}.interval", item["interval"]) if "interval" in item else None))
    return TableSpec(rows=_string(project, f"{where}.rows", raw.get("rows", "table")),
                     name=_string(project, f"{where}.name", raw.get("name", "search")),
                     columns=tuple(columns))


# --- results paths --------------------------------------------------------------------------

MISSING = object()


def lookup(data: Any, path: str) -> Any:
    """The value at a results path (grammar: generator/paths.py), null included; MISSING when the
    path does not parse or leads nowhere."""
    from generator.paths import PathSyntaxError, parse_path, resolve

    try:
        resolution = resolve(data, parse_path(path), measured_only=False)
    except PathSyntaxError:
        return MISSING
    return resolution.value if resolution.ok else MISSING


def format_number(value: Any, spec: str) -> str:
    """A results value as shown: numbers with the column's spec (no negative zero), others as is."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            return str(value)
        text = format(value, spec)
        if re.fullmatch(r"-0*\.?0*%?", text):  # a tiny negative rounds to zero: no "-0.000"
            text = format(0.0, spec)
        return text
    return str(value)


def raw_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


# --- the three doors: claim text, labels, data ----------------------------------------------


def _clean(text: Any) -> str:
    return str(text).translate(MARKS)


def _one_line(text: str) -> str:
    return " ".join(_clean(text).split())


_MD_DATA_SPECIALS = re.compile(r"([\\`*\[\]|<>~&])")
_MD_BLOCK_START = re.compile(r"^(#|>|[-+*](?=\s)|=|(\d+)([.)])(?=\s))")


def _markdown_inline():
    """Claim Markdown to inline HTML. Raw HTML is off (it comes out escaped). Links, autolinks
    and images render as their text followed by the address in parentheses, never as href or
    src: the readout makes no request, and a reader still sees every address."""
    from markdown_it import MarkdownIt
    from markupsafe import escape

    md = MarkdownIt("commonmark", {"html": False})

    def link_open(self, tokens, idx, options, env):
        env.setdefault("links", []).append(tokens[idx].attrGet("href") or "")
        return ""

    def link_close(self, tokens, idx, options, env):
        href = env["links"].pop()
        text = tokens[idx - 1].content if idx > 0 and tokens[idx - 1].type == "text" else None
        return "" if text == href or f"mailto:{text}" == href else f' (<span class="addr">{escape(href)}</span>)'

    def image(self, tokens, idx, options, env):
        token = tokens[idx]
        alt = "".join(child.content for child in token.children or [])
        return f'{escape(alt)} (<span class="addr">{escape(token.attrGet("src") or "")}</span>)'

    md.add_render_rule("link_open", link_open)
    md.add_render_rule("link_close", link_close)
    md.add_render_rule("image", image)
    return md


class HtmlDoor:
    """Marked, escaped values for HTML templates (Jinja autoescape is on for these)."""

    def __init__(self) -> None:
        self._md = _markdown_inline()

    def data(self, value: Any):
        from markupsafe import Markup, escape

        return Markup(OPEN + str(escape(_one_line(value))) + CLOSE)

    def code(self, value: Any):
        from markupsafe import Markup, escape

        return Markup(OPEN + "<code>" + str(escape(_one_line(value))) + "</code>" + CLOSE)

    def claim(self, text: str):
        from markupsafe import Markup

        return Markup(OPEN + self._md.renderInline(_one_line(text), {}).strip() + CLOSE)

    def join(self, parts: Iterable[Any], sep: str = " "):
        from markupsafe import Markup, escape

        return Markup(escape(sep)).join(parts)

    def quote(self, value: Any):
        from markupsafe import Markup, escape

        return Markup("<q>" + OPEN + str(escape(_one_line(value))) + CLOSE + "</q>")

    def interval(self, low: Any, high: Any):
        from markupsafe import Markup

        return Markup("[") + low + Markup(", ") + high + Markup("]")


class MarkdownDoor:
    """Marked values for Markdown templates: data escaped so it cannot become Markdown syntax."""

    def data(self, value: Any) -> str:
        return OPEN + _MD_DATA_SPECIALS.sub(r"\\\1", _one_line(value)) + CLOSE

    def code(self, value: Any) -> str:
        text = _one_line(value)
        fence = "``" if "`" in text else "`"
        return OPEN + f"{fence}{text}{fence}" + CLOSE

    def claim(self, text: str) -> str:
        # Claims are Markdown; raw HTML is neutralised and a leading block marker escaped, so a
        # claim can neither inject markup nor turn into a heading, quote or list item.
        text = _one_line(text).replace("<", "&lt;").replace(">", "&gt;")
        match = _MD_BLOCK_START.match(text)
        if match:
            if match.group(2):
                text = match.group(2) + "\\" + text[len(match.group(2)):]
            else:
                text = "\\" + text
        return OPEN + text + CLOSE

    def join(self, parts: Iterable[Any], sep: str = " ") -> str:
        return sep.join(parts)

    def quote(self, value: Any) -> str:
        return "“" + self.data(value) + "”"

    def interval(self, low: Any, high: Any) -> str:
        return "[" + low + ", " + high + "]"


class Labels:
    """The label registry (templates/labels.yaml): the only fixed words a template may show.

    A label is a heading or a table word, never a sentence: at most LABEL_MAX_WORDS words and no
    closing full stop, question or exclamation mark. Templates write `L.key`; an unknown key stops
    the render with the registry's file name.
    """

    def __init__(self, texts: dict[str, str], door, source: str, extra: dict[str, str] | None = None):
        self._texts = dict(texts)
        self._texts.update(extra or {})
        self._door = door
        self._source = source

    def __getattr__(self, key: str):
        if key.startswith("_"):
            raise AttributeError(key)
        return self[key]

    def __getitem__(self, key: str):
        if key not in self._texts:
            raise InputError(f"no label {key!r}; add it to the label registry", path=self._source)
        return self._door.data(self._texts[key])

    def has(self, key: str) -> bool:
        return key in self._texts


def load_labels(path: Path, display: str | None = None) -> dict[str, str]:
    import yaml

    shown = display or str(path)
    if not path.is_file():
        raise InputError("missing: the label registry every template uses", path=shown)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as error:
        raise InputError(f"not valid YAML ({error})", path=shown) from None
    if not isinstance(raw, dict):
        raise InputError("expected a mapping of label key to text", path=shown, line=1)
    for key, text in raw.items():
        validate_label(text, path=shown, field=str(key))
    return {str(key): str(text) for key, text in raw.items()}


def validate_label(text: Any, *, path: str, field: str) -> None:
    if not isinstance(text, str) or not text.strip():
        raise InputError("a label must be a non-empty string", path=path, field=field)
    if len(text.split()) > LABEL_MAX_WORDS or text.rstrip().endswith((".", "!", "?")):
        raise InputError(f"a label is a heading or a table word, not a sentence (at most {LABEL_MAX_WORDS} "
                         f"words, no closing punctuation): put prose in the claim ledger", path=path, field=field)


# --- context --------------------------------------------------------------------------------


@dataclass
class ClaimView:
    id: str
    anchor: str
    note_anchor: str
    number: Any
    text: Any
    struck: bool
    flag: bool
    notes: list[Any]


@dataclass
class SectionView:
    id: str
    anchor: str
    title: Any
    show: tuple[str, ...]
    claims: list[ClaimView]


def _anchor(prefix: str, text: str) -> str:
    return prefix + re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-")


def _display(project, path: Path | str) -> str:
    """A path in a message: relative to the working directory, as the user would type it."""
    from generator.fileio import display_path

    return display_path(path)


def _evidence_notes(result, door, labels: Labels) -> list[Any]:
    notes = []
    for evidence in getattr(result, "evidence", None) or []:
        kind = getattr(evidence, "kind", None)
        if kind == "design":
            parts = [labels.source_design, door.code(getattr(evidence, "document", "")),
                     labels.line, door.data(getattr(evidence, "line", "?"))]
            heading = getattr(evidence, "heading", None)
            if heading:
                parts += [labels.section_sign, door.data(heading)]
            notes.append(door.join([door.join(parts), door.quote(getattr(evidence, "quote", ""))], ": "))
        elif kind == "measured":
            value = getattr(evidence, "value", None)
            parts = [labels.source_measured, door.code(getattr(evidence, "file", RESULTS_NAME)),
                     door.code(getattr(evidence, "path", "")), labels.raw_value, door.code(raw_json(value))]
            formatted = getattr(evidence, "formatted", None)
            if formatted is not None and str(formatted) != raw_json(value):
                parts += [labels.shown_as, door.data(formatted)]
            notes.append(door.join(parts))
    return notes


def _claim_views(spec: OutputSpec, report, door, labels: Labels, draft: bool) -> dict[str, list[ClaimView]]:
    by_section: dict[str, list] = {section.id: [] for section in spec.sections}
    for result in report.results:
        claim = result.claim
        if claim.output == spec.name and claim.section in by_section:
            by_section[claim.section].append(result)
    views: dict[str, list[ClaimView]] = {}
    number = 0
    for section in spec.sections:
        views[section.id] = []
        for result in by_section[section.id]:
            claim = result.claim
            struck = claim.status == "struck"
            if struck and (getattr(claim, "strike_display", None) or "strike") == "omit":
                continue
            number += 1
            notes = []
            if struck:
                notes.append(door.join([labels.struck, door.data(getattr(claim, "strike_reason", "") or "")], ": "))
            flag = draft and not struck and not result.traceable
            if flag:
                notes.append(door.join([labels.untraceable,
                                        door.join([door.data(r) for r in result.reasons], "; ")], ": "))
            notes.extend(_evidence_notes(result, door, labels))
            text = result.rendered_text if getattr(result, "rendered_text", None) else claim.text
            views[section.id].append(ClaimView(
                id=claim.id, anchor=_anchor("claim-", claim.id), note_anchor=_anchor("note-", claim.id),
                number=door.data(number), text=door.claim(text), struck=struck, flag=flag, notes=notes))
    return views


def unplaced_claims(specs: dict[str, OutputSpec], report) -> list[str]:
    """Claims whose output or section readout.yaml does not declare: they would vanish silently."""
    problems = []
    for result in report.results:
        claim = result.claim
        spec = specs.get(claim.output)
        where = f"claim {claim.id}"
        if spec is None:
            problems.append(f"{where}: output {claim.output!r} is not declared in readout.yaml outputs "
                            f"(declared: {_choices(specs)})")
        elif claim.section not in {s.id for s in spec.sections}:
            problems.append(f"{where}: section {claim.section!r} is not declared in readout.yaml "
                            f"outputs.{claim.output}.sections (declared: "
                            f"{_choices(s.id for s in spec.sections)})")
    return problems


def _row_name(row: dict, table: TableSpec) -> str:
    return str(row.get(table.name, "?"))


def _table_view(table: TableSpec, results: dict, door, labels: Labels) -> dict:
    rows_raw = lookup(results, table.rows)
    if not isinstance(rows_raw, list):
        raise InputError(f"no list of rows at {table.rows!r}", path=RESULTS_NAME, field=table.rows)
    rows = []
    for row in rows_raw:
        name = _row_name(row, table)
        measured = row.get("measured", True) is not False
        cells = []
        for column in table.columns:
            interval = None
            if column.only is not None and name not in column.only:
                cells.append({"value": labels[column.otherwise], "interval": None, "missing": True})
                continue
            if not measured:
                cells.append({"value": labels.not_measured, "interval": None, "missing": True})
                continue
            value = row.get(column.key, MISSING) if column.key else lookup(results, column.path)
            if value is MISSING or value is None:
                cells.append({"value": labels.not_measured if value is None else labels.missing,
                              "interval": None, "missing": True})
                continue
            if column.interval:
                bounds = lookup(row, column.interval)
                if isinstance(bounds, dict) and isinstance(bounds.get("ci95_low"), (int, float)) \
                        and isinstance(bounds.get("ci95_high"), (int, float)):
                    interval = door.interval(door.data(format_number(bounds["ci95_low"], column.format)),
                                             door.data(format_number(bounds["ci95_high"], column.format)))
            cells.append({"value": door.data(format_number(value, column.format)), "interval": interval,
                          "missing": False, "text": isinstance(value, str)})
        reason = row.get("not_measured_reason") if not measured else None
        rows.append({"name": door.data(name), "measured": measured, "cells": cells,
                     "reason": door.data(reason) if reason else None})
    has_intervals = any(cell["interval"] is not None for row in rows for cell in row["cells"])
    # Numbers align right; a column whose values are all text (a description) aligns left.
    text_columns = [all(row["cells"][index].get("text", True) for row in rows if not row["cells"][index]["missing"])
                    and any(not row["cells"][index]["missing"] for row in rows)
                    for index in range(len(table.columns))]
    return {"columns": [door.data(column.label) for column in table.columns], "rows": rows,
            "has_intervals": has_intervals, "text_columns": text_columns}


def _provenance_view(spec: OutputSpec, project, report, results: dict, results_hashes: dict[str, str],
                     template_hashes: dict[str, str], config_hash: str, door, labels: Labels) -> list[dict]:
    def pairs(items: Iterable[tuple[str, Any]]) -> list[tuple[Any, Any]]:
        return [(door.code(key), door.code(value if isinstance(value, str) else raw_json(value)))
                for key, value in items]

    groups = []
    hashes = [("claims/ledger.yaml", report.ledger_sha256),
              ("design freeze", getattr(report, "design_freeze_sha256", None) or "none")]
    hashes += [(f"outputs/{name}", digest) for name, digest in sorted(results_hashes.items())]
    hashes += [("readout.yaml", config_hash)]
    groups.append({"title": labels.hashes, "rows": pairs(hashes)})
    groups.append({"title": labels.templates, "rows": pairs(sorted(template_hashes.items()))})
    manifest = results.get("manifest") if isinstance(results.get("manifest"), dict) else {}
    models = manifest.get("models") if isinstance(manifest.get("models"), dict) else {}
    model_rows = []
    for role in sorted(models):
        info = models[role]
        if isinstance(info, dict):
            for key in sorted(info):
                model_rows.append((f"{role}.{key}", info[key]))
        else:
            model_rows.append((role, info))
    if model_rows:
        groups.append({"title": labels.models, "rows": pairs(model_rows)})
    packages = manifest.get("packages") if isinstance(manifest.get("packages"), dict) else {}
    if packages:
        groups.append({"title": labels.packages, "rows": pairs(sorted(packages.items()))})
    inputs = manifest.get("inputs") if isinstance(manifest.get("inputs"), dict) else {}
    input_rows = []
    for name in sorted(inputs):
        info = inputs[name]
        input_rows.append((name, info.get("sha256", raw_json(info)) if isinstance(info, dict) else info))
    if input_rows:
        groups.append({"title": labels.inputs, "rows": pairs(input_rows)})
    run_rows = [(path, value) for path in spec.provenance
                if (value := lookup(results, path)) is not MISSING]
    if run_rows:
        groups.append({"title": labels.run, "rows": pairs(run_rows)})
    return groups


def _claims_by_kind(report, door) -> list[tuple[Any, Any]]:
    by_kind = getattr(report, "by_kind", None) or {}
    return [(door.data(kind), door.data(f"{u}/{t}")) for kind, (u, t) in sorted(by_kind.items())]


def template_hashes(templates_dir: Path) -> dict[str, str]:
    from generator.fileio import sha256_file

    return {path.relative_to(templates_dir).as_posix(): sha256_file(path)
            for path in sorted(templates_dir.rglob("*")) if path.is_file() and "__pycache__" not in path.parts}


def _environment(templates_dir: Path):
    from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

    return Environment(
        loader=FileSystemLoader(str(templates_dir)),
        # Autoescape on for every HTML template (and any unknown kind); off for Markdown only.
        autoescape=select_autoescape(enabled_extensions=("html", "htm", "xml", "svg", "html.j2"),
                                     disabled_extensions=("md", "md.j2"),
                                     default_for_string=True, default=True),
        undefined=StrictUndefined, keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)


# --- rendering -------------------------------------------------------------------------------


@dataclass
class Rendered:
    """One output rendered in memory."""

    name: str
    path: Path
    marked: str
    stamp: dict[str, Any]

    @property
    def text(self) -> str:
        return strip_marks(self.marked)


def load_results(project) -> tuple[dict, Path]:
    path = project.outputs_dir / RESULTS_NAME
    if not path.is_file():
        raise InputError("missing: run `readout evaluate` (or `readout build`) first", path=_display(project, path))
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise InputError(f"not valid JSON ({error.msg})", path=_display(project, path), line=error.lineno) from None
    if not isinstance(data, dict):
        raise InputError("expected a JSON object", path=_display(project, path), line=1)
    return data, path


def stamp_text(stamp: dict[str, Any]) -> str:
    return json.dumps(stamp, sort_keys=True, separators=(",", ":"))


def render_outputs(project, report, *, draft: bool = False) -> list[Rendered]:
    """Render every configured output in memory (nothing is written)."""
    from generator.fileio import sha256_file

    specs = parse_outputs(project)
    problems = unplaced_claims(specs, report)
    if problems:
        raise FindingsError("cannot place every claim: " + "; ".join(problems))
    results, results_path = load_results(project)
    results_hashes = dict(getattr(report, "inputs_sha256", None) or {})
    results_hashes = {Path(name).name: digest for name, digest in results_hashes.items()}
    results_hashes[RESULTS_NAME] = sha256_file(results_path)
    templates_dir = project.templates_dir
    label_texts = load_labels(templates_dir / LABELS_NAME, _display(project, templates_dir / LABELS_NAME))
    hashes = template_hashes(templates_dir)
    config_hash = sha256_file(project.config_path)
    env = _environment(templates_dir)
    flagged = draft and not report.ok
    first_draft = getattr(report, "first_draft", None)

    rendered = []
    for spec in specs.values():
        door = HtmlDoor() if spec.is_html else MarkdownDoor()
        extra = {f"section:{s.id}": s.title for s in spec.sections}
        labels = Labels(label_texts, door, _display(project, templates_dir / LABELS_NAME), extra)
        stamp = {
            "output": spec.file, "draft": flagged,
            "ledger_sha256": report.ledger_sha256,
            "design_freeze_sha256": getattr(report, "design_freeze_sha256", None),
            "results_sha256": dict(sorted(results_hashes.items())),
            "config_sha256": config_hash,
            "templates_sha256": hashes,
        }
        claims = _claim_views(spec, report, door, labels, draft)
        sections = [SectionView(s.id, _anchor("section-", s.id), labels[f"section:{s.id}"], s.show, claims[s.id])
                    for s in spec.sections]
        flags = []
        if flagged:
            flags.append(door.join([labels.untraceable_count, door.data(f"{report.untraceable}/{report.total}")]))
            flags.extend(door.join([labels.untraceable, door.code(r.claim.id),
                                    door.join([door.data(reason) for reason in r.reasons], "; ")], " ")
                         for r in report.results if r.claim.status != "struck" and not r.traceable)
            flags.extend(door.join([labels.freeze_problem, door.data(p)], ": ")
                         for p in getattr(report, "freeze_problems", None) or [])
        context = {
            "title": door.data(project.title),
            "L": labels,
            "sections": sections,
            "flags": flags,
            "draft": flagged,
            "trace": {"current": door.data(f"{report.untraceable}/{report.total}"),
                      "first_draft": door.data(f"{first_draft[0]}/{first_draft[1]}") if first_draft
                      else labels.not_recorded},
            "table": _table_view(spec.table, results, door, labels) if spec.table else None,
            "charts": _charts(spec, results, door, labels) if spec.is_html else {},
            "provenance": _provenance_view(spec, project, report, results, results_hashes, hashes,
                                           config_hash, door, labels),
            "claims_by_kind": _claims_by_kind(report, door),
            "stamp_name": STAMP_NAME,
            "stamp": stamp_text(stamp),
        }
        try:
            template = env.get_template(spec.template)
            marked = template.render(**context)
        except InputError:
            raise
        except Exception as error:  # jinja2 errors: name the template and line, never a traceback
            line = getattr(error, "lineno", None)
            raise InputError(f"cannot render: {error}", path=_display(project, templates_dir / spec.template),
                             line=line) from None
        if not marked.endswith("\n"):
            marked += "\n"
        rendered.append(Rendered(spec.name, project.outputs_dir / spec.file, marked, stamp))
    return rendered


def _charts(spec: OutputSpec, results: dict, door, labels: Labels) -> dict[str, Any]:
    from generator import charts

    out = {}
    table = spec.table or TableSpec()
    rows = lookup(results, table.rows)
    rows = rows if isinstance(rows, list) else []
    column_labels = {c.key: c.label for c in (spec.table.columns if spec.table else ()) if c.key}
    if "quality_vs_time" in spec.charts:
        out["quality_vs_time"] = charts.quality_vs_time(rows, results, spec.charts["quality_vs_time"], table.name,
                                                         column_labels, door, labels)
    if "deltas" in spec.charts:
        out["deltas"] = charts.deltas(rows, spec.charts["deltas"], table.name, column_labels, door, labels)
    return out


def find_orphans(rendered: Iterable[Rendered], project) -> list[Orphan]:
    found: list[Orphan] = []
    for output in rendered:
        found.extend(scan(output.marked, _display(project, output.path)))
    return found


# --- staleness --------------------------------------------------------------------------------

_STAMP_HTML = re.compile(r'<meta name="' + STAMP_NAME + r'" content="([^"]*)">')
_STAMP_MD = re.compile(r"<!-- " + STAMP_NAME + r" (\{.*?\}) -->")


def read_stamp(text: str) -> dict[str, Any] | None:
    import html

    match = _STAMP_HTML.search(text)
    raw = html.unescape(match.group(1)) if match else None
    if raw is None:
        match = _STAMP_MD.search(text)
        raw = match.group(1) if match else None
    try:
        return json.loads(raw) if raw else None
    except json.JSONDecodeError:
        return None


def why_stale(old: dict[str, Any] | None, new: dict[str, Any]) -> str:
    if old is None:
        return "no build stamp (not rendered by readout render, or edited)"
    changed = []
    names = {"ledger_sha256": "claims/ledger.yaml", "design_freeze_sha256": "design freeze",
             "config_sha256": "readout.yaml", "draft": "draft mode"}
    for key, name in names.items():
        if old.get(key) != new.get(key):
            changed.append(name)
    for group, prefix in (("results_sha256", "outputs/"), ("templates_sha256", "templates/")):
        before, after = old.get(group) or {}, new.get(group) or {}
        changed.extend(prefix + name for name in sorted(set(before) | set(after)) if before.get(name) != after.get(name))
    if changed:
        return "built from an older " + ", ".join(changed)
    return "differs from a fresh render (edited by hand, or the renderer changed)"


def stale_outputs(rendered: Iterable[Rendered], project) -> list[str]:
    """One line per output on disk that differs from its fresh render."""
    lines = []
    for output in rendered:
        name = _display(project, output.path)
        if not output.path.is_file():
            lines.append(f"{name}: missing")
            continue
        on_disk = output.path.read_text(encoding="utf-8")
        if on_disk != output.text:
            lines.append(f"{name}: stale: {why_stale(read_stamp(on_disk), output.stamp)}")
    return lines


# --- the command --------------------------------------------------------------------------------


def check_failures(project, report) -> list[str]:
    from generator.checker import claim_location, failing_results

    lines = []
    ledger = _display(project, getattr(report, "ledger_path", None) or project.ledger_path)
    for result in failing_results(report):
        reasons = "; ".join(result.reasons) or "untraceable"
        lines.append(f"{claim_location(ledger, result.claim)}: {reasons}")
    lines.extend(f"design freeze: {problem}" for problem in getattr(report, "freeze_problems", None) or [])
    return lines


def render_project(project, *, draft: bool = False, check_only: bool = False,
                   out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Check, render in memory, scan for orphans, then write (or compare with `check_only`)."""
    from generator import checker
    from generator.fileio import atomic_write_text

    out = out or sys.stdout
    err = err or sys.stderr
    report = checker.check_project(project)
    if not report.ok:
        failures = check_failures(project, report)
        if not draft:
            for line in failures:
                print(line, file=err)
            print(f"Render refused: the claim check failed ({report.untraceable} of {report.total} claims "
                  f"untraceable{', design freeze broken' if not report.freeze_ok else ''}). Fix or strike "
                  f"the claims (readout check lists them), or pass --draft to render with every failure "
                  f"flagged.", file=err)
            return 1
        print(f"Draft: rendering with {len(failures)} flagged failure(s); not for release.", file=err)
    rendered = render_outputs(project, report, draft=draft)
    orphans = find_orphans(rendered, project)
    if orphans:
        for orphan in orphans:
            print(orphan, file=err)
        print(f"Render failed: {len(orphans)} orphan text(s) in the outputs; nothing written.", file=err)
        return 1
    if check_only:
        stale = stale_outputs(rendered, project)
        for line in stale:
            print(line, file=out)
        if stale:
            print(f"Check failed: {len(stale)} of {len(rendered)} outputs differ from a fresh render; "
                  f"run `readout render`.", file=out)
            return 1
        print(f"{len(rendered)} outputs up to date.", file=out)
        return 0
    for output in rendered:
        atomic_write_text(output.path, output.text)
        print(f"wrote {_display(project, output.path)} ({len(output.text.encode('utf-8'))} bytes)", file=out)
    return 0


def render_command(args) -> int:
    from generator.project import load_project

    project = load_project(args.project)
    return render_project(project, draft=args.draft, check_only=args.check_only)
