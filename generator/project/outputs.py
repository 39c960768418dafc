"""The `outputs:` block of readout.yaml: which reports a project renders and what each shows.

    outputs:
      readout:                         # one of teachback | aar | readout (a claim's `output`)
        file: readout.html             # inside outputs/ (defaults below)
        template: readout.html.j2      # in the templates folder
        sections:                      # claims land in the section their ledger `section` names
          - {id: verdict, title: Verdict}
          - {id: results, title: Four rows, show: [table, deltas]}
        table:                         # the rows table, for sections that `show: [table]`
          file: results.json           # which results file it shows (default results.json; or the
                                       # every-query file, evaluate.all_results); its caption says
                                       # which query set and how many queries
          rows: table                  # results path of the list of rows (default table)
          name: search                 # the field naming a row (default search)
          columns:
            - {key: nDCG@5, label: nDCG@5}                         # a field of each row
            - {path: p95_rerank_milliseconds, label: p95 (ms), format: ".1f",
               only: [hybrid+rerank], otherwise: no_rerank}       # one results value
            - {key: delta_nDCG@5_vs_dense, label: change, format: "+.3f",
               interval: paired_vs_dense.nDCG@5}                  # {ci95_low, ci95_high} of the
                                                 # row's comparison with dense (comparisons.<row>_vs_dense)
        charts:                        # HTML outputs only; a section shows them by kind
          quality_vs_time: {metrics: [nDCG@5], time: p95_rerank_milliseconds, time_row: hybrid+rerank}
          deltas: {baseline: dense, delta: "delta_{metric}_vs_dense",   # metrics left out: every
                   interval: "paired_vs_dense.{metric}"}                  # metric the results hold
        provenance: [documents, queries]   # results paths listed under Provenance

`show` may hold `table`, `quality_vs_time`, `deltas`, `provenance`, `claims_by_kind`, `decisions`
(the decision table: every design trigger evaluated by `readout check`), `rerank_cost` (each
reranker's cost, saying whether it was measured, measured by shape or not measured), `frontier`
(every configuration the frontier priced, its p95 against the budget beside its depth's ceiling;
with a chart in HTML outputs), `all_pairs` (every pair of measured rows on each metric, with
Holm's correction across the pairs), `per_query`
(every query, row by row, with the diagnosis; collapsed), `checked` (how the readout was
checked: the current and first-draft trace scores) and `since_baseline` (each row and metric of
the design's `regression` block against the committed baseline file readout.yaml's
`regression.baseline` names: HTML outputs only, generator.render.baseline); a chart
needs a `charts:` entry of its kind, a table a `table:` entry. Titles and labels are headings,
never sentences. Everything is validated when the project loads; an error names the key.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Iterable

from generator.core.dataclass import dataclass
from generator.core.options import RESULTS_NAME
from generator.storage.errors import InputError, clip
from generator.core.results.schema import CANDIDATE_DEPTH, DOCUMENTS, QUERIES, QUERY_SET, TABLE
from generator.core.text.wording import label_problem

# output name -> default file and template; a claim's `output` must be one of these names.
OUTPUT_DEFAULTS: dict[str, dict[str, str]] = {
    "readout": {"file": "readout.html", "template": "readout.html.j2"},
    "teachback": {"file": "TEACHBACK.md", "template": "report.md.j2"},
    "aar": {"file": "AAR.md", "template": "report.md.j2"},
}
OUTPUT_NAMES = ("teachback", "aar", "readout")
OUTPUT_KEYS = ("file", "template", "sections", "table", "charts", "provenance")
REPORT_SUFFIXES = (".html", ".htm", ".md")
SECTION_KEYS = ("id", "title", "show")
CHART_KINDS = ("quality_vs_time", "deltas")
SECTION_BLOCKS = ("table", *CHART_KINDS, "provenance", "claims_by_kind", "decisions", "rerank_cost", "per_query",
                  "checked", "frontier", "all_pairs", "since_baseline")
HTML_ONLY_BLOCKS = ("since_baseline",)
TABLE_KEYS = ("file", "rows", "name", "columns")
COLUMN_KEYS = ("label", "key", "path", "format", "only", "otherwise", "interval")
MAX_FORMAT_NUMBER = 40
DEFAULT_PROVENANCE = (DOCUMENTS.name, QUERIES.name, QUERY_SET.name, CANDIDATE_DEPTH.name, "manifest.platform",
                      "manifest.threads", "manifest.started_at", "manifest.finished_at",
                      "manifest.reproduction.expected_hashes_match")


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
    file: str = RESULTS_NAME        # the results file the table (and the charts drawn from it) reads
    rows: str = TABLE.name
    name: str = "search"
    columns: tuple[ColumnSpec, ...] = ()


@dataclass(frozen=True)
class QualityVsTimeChart:
    """Quality bars per row beside the p95 time of the one row that has a time."""

    metrics: tuple[str, ...]        # empty: every metric the results file holds
    time: str                       # results path of the time value
    time_row: str                   # the row that time belongs to


@dataclass(frozen=True)
class DeltasChart:
    """Signed change over a baseline per row and metric, with interval whiskers when given."""

    baseline: str
    metrics: tuple[str, ...]        # empty: every metric the results file holds
    delta: str                      # row field, `{metric}` filled in
    interval: str | None = None     # row path to {ci95_low, ci95_high}, `{metric}` filled in


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
    quality_vs_time: QualityVsTimeChart | None = None
    deltas: DeltasChart | None = None
    provenance: tuple[str, ...] = DEFAULT_PROVENANCE

    @property
    def is_html(self) -> bool:
        return self.file.endswith((".html", ".htm"))

    @property
    def section_ids(self) -> tuple[str, ...]:
        return tuple(section.id for section in self.sections)


class _Reader:
    """Validation helpers that name readout.yaml and the dotted key in every error."""

    def __init__(self, config_display: str):
        self.config_display = config_display

    def error(self, where: str, message: str) -> InputError:
        return InputError(message, path=self.config_display, field=where)

    def mapping(self, where: str, value: Any, allowed: tuple[str, ...]) -> dict:
        if not isinstance(value, dict):
            raise self.error(where, "expected a mapping")
        unknown = sorted(set(value) - set(allowed), key=str)
        if unknown:
            raise self.error(f"{where}.{unknown[0]}", f"unknown key; choose from {_choices(allowed)}")
        return value

    def string(self, where: str, value: Any) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.error(where, "expected a non-empty string")
        return value.strip()

    def strings(self, where: str, value: Any, what: str) -> tuple[str, ...]:
        if not isinstance(value, list) or not value or not all(isinstance(item, str) and item.strip()
                                                               for item in value):
            raise self.error(where, f"expected a non-empty list of {what}")
        return tuple(item.strip() for item in value)

    def label(self, where: str, value: Any) -> str:
        """A heading or table word the reader sees: generator.core.text.wording's rules."""
        text = self.string(where, value)
        problem = label_problem(text)
        if problem:
            raise self.error(where, problem)
        return text

    def format_spec(self, where: str, spec: Any) -> str:
        spec = self.string(where, spec)
        # A width or precision of millions builds a string of that size each time a value is
        # shown (and here, to try the spec): a table cell needs a few dozen characters at most.
        numbers = [int(digits) for digits in re.findall(r"\d+", spec[:40])]
        if len(spec) > 20 or any(number > MAX_FORMAT_NUMBER for number in numbers):
            raise self.error(where, f"a format spec's width and precision are at most {MAX_FORMAT_NUMBER}, "
                                    f"got {clip(spec, 40)!r} (for example .3f or +.3f)")
        try:
            format(0.5, spec)
        except (ValueError, TypeError):
            raise self.error(where, f"not a Python format spec: {spec!r} (for example .3f or +.3f)") from None
        return spec


def _choices(names: Iterable[str]) -> str:
    return ", ".join(names)


def parse_outputs(raw: Any, config_display: str) -> dict[str, OutputSpec]:
    """The `outputs:` mapping, validated; raises InputError naming readout.yaml and the key."""
    read = _Reader(config_display)
    read.mapping("outputs", raw, tuple(OUTPUT_DEFAULTS))
    specs: dict[str, OutputSpec] = {}
    for name in OUTPUT_DEFAULTS:
        if name in raw:
            specs[name] = _output(read, name, raw[name])
    if not specs:
        raise read.error("outputs", f"declare at least one of {_choices(OUTPUT_DEFAULTS)}")
    files = [spec.file for spec in specs.values()]
    if len(set(files)) != len(files):
        raise read.error("outputs", "two outputs write the same file")
    return specs


def _output(read: _Reader, name: str, raw: Any) -> OutputSpec:
    where = f"outputs.{name}"
    entry = read.mapping(where, raw, OUTPUT_KEYS)
    file = read.string(f"{where}.file", entry.get("file", OUTPUT_DEFAULTS[name]["file"]))
    if "/" in file or "\\" in file:
        raise read.error(f"{where}.file", "a file name inside outputs/, not a path")
    hidden = next((char for char in file if unicodedata.category(char) in ("Cc", "Cf", "Co", "Cs", "Cn")), None)
    if hidden is not None:
        # A NUL cannot be in a file name at all, and a control or format character hides what is written.
        raise read.error(f"{where}.file", f"a file name may not hold the control or format character "
                                          f"U+{ord(hidden):04X}")
    if file.startswith(".") or not file.lower().endswith(REPORT_SUFFIXES) or len(file) > 100:
        # A report never replaces results, run files, caches or a directory: only these suffixes.
        raise read.error(f"{where}.file", f"a report file name ending in {', '.join(REPORT_SUFFIXES)} "
                                          "(not hidden, at most 100 characters)")
    template = read.string(f"{where}.template", entry.get("template", OUTPUT_DEFAULTS[name]["template"]))
    charts = read.mapping(f"{where}.charts", entry.get("charts") or {}, CHART_KINDS)
    quality_vs_time = (_quality_vs_time(read, f"{where}.charts.quality_vs_time", charts["quality_vs_time"])
                       if "quality_vs_time" in charts else None)
    deltas = _deltas(read, f"{where}.charts.deltas", charts["deltas"]) if "deltas" in charts else None
    sections_raw = entry.get("sections")
    if not isinstance(sections_raw, list) or not sections_raw:
        raise read.error(f"{where}.sections", "expected a non-empty list of {id, title}")
    sections: list[SectionSpec] = []
    for index, item in enumerate(sections_raw):
        here = f"{where}.sections[{index}]"
        item = read.mapping(here, item, SECTION_KEYS)
        section_id = read.string(f"{here}.id", item.get("id"))
        if section_id in {section.id for section in sections}:
            raise read.error(f"{here}.id", f"duplicate section id {section_id!r}")
        show = item.get("show") or []
        if not isinstance(show, list):
            raise read.error(f"{here}.show", "expected a list")
        for block in show:
            if block not in SECTION_BLOCKS:
                raise read.error(f"{here}.show", f"unknown block {block!r}; choose from {_choices(SECTION_BLOCKS)}")
            if block in CHART_KINDS and not file.endswith((".html", ".htm")):
                raise read.error(f"{here}.show", f"{block} is a chart: HTML outputs only")
            if block in HTML_ONLY_BLOCKS and not file.endswith((".html", ".htm")):
                raise read.error(f"{here}.show", f"{block}: HTML outputs only")
            if block in CHART_KINDS and block not in charts:
                raise read.error(f"{here}.show", f"{block} needs {where}.charts.{block}")
            if block == "table" and "table" not in entry:
                raise read.error(f"{here}.show", f"table needs {where}.table")
        sections.append(SectionSpec(section_id, read.label(f"{here}.title", item.get("title")), tuple(show)))
    table = _table(read, f"{where}.table", entry["table"]) if "table" in entry else None
    provenance = entry.get("provenance", list(DEFAULT_PROVENANCE))
    if not isinstance(provenance, list) or not all(isinstance(item, str) for item in provenance):
        raise read.error(f"{where}.provenance", "expected a list of results.json paths")
    return OutputSpec(name, file, template, tuple(sections), table, quality_vs_time, deltas, tuple(provenance))


def _quality_vs_time(read: _Reader, where: str, raw: Any) -> QualityVsTimeChart:
    options = read.mapping(where, raw, ("metrics", "time", "time_row"))
    _require(read, where, options, ("time", "time_row"))
    return QualityVsTimeChart(metrics=read.strings(f"{where}.metrics", options["metrics"], "row keys")
                              if "metrics" in options else (),
                              time=read.string(f"{where}.time", options["time"]),
                              time_row=read.string(f"{where}.time_row", options["time_row"]))


def _deltas(read: _Reader, where: str, raw: Any) -> DeltasChart:
    options = read.mapping(where, raw, ("baseline", "metrics", "delta", "interval"))
    _require(read, where, options, ("baseline",))
    baseline = read.string(f"{where}.baseline", options["baseline"])
    return DeltasChart(
        baseline=baseline, metrics=read.strings(f"{where}.metrics", options["metrics"], "row keys")
        if "metrics" in options else (),
        delta=read.string(f"{where}.delta", options.get("delta", "delta_{metric}_vs_" + baseline)),
        interval=read.string(f"{where}.interval", options["interval"]) if "interval" in options else None)


def _require(read: _Reader, where: str, options: dict, keys: tuple[str, ...]) -> None:
    for key in keys:
        if key not in options:
            raise read.error(f"{where}.{key}", "missing")


def _table(read: _Reader, where: str, raw: Any) -> TableSpec:
    raw = read.mapping(where, raw, TABLE_KEYS)
    columns_raw = raw.get("columns")
    if not isinstance(columns_raw, list) or not columns_raw:
        raise read.error(f"{where}.columns", "expected a non-empty list of {label, key|path}")
    columns = []
    for index, item in enumerate(columns_raw):
        here = f"{where}.columns[{index}]"
        item = read.mapping(here, item, COLUMN_KEYS)
        if ("key" in item) == ("path" in item):
            raise read.error(here, "give exactly one of key (a row field) or path (a results.json path)")
        only = item.get("only")
        if only is not None and (not isinstance(only, list) or not all(isinstance(o, str) for o in only)):
            raise read.error(f"{here}.only", "expected a list of row names")
        # A results path is one value for the whole file: shown in several rows' cells it would
        # label one row's figure as another's (the first reranker's p95 beside a second one).
        if "path" in item and (only is None or len(only) != 1):
            raise read.error(f"{here}.only", "a path column reads one results value, so it belongs to one row: "
                             "name exactly that row in `only` (a row field is `key`)")
        columns.append(ColumnSpec(
            label=read.label(f"{here}.label", item.get("label")),
            key=read.string(f"{here}.key", item["key"]) if "key" in item else None,
            path=read.string(f"{here}.path", item["path"]) if "path" in item else None,
            format=read.format_spec(f"{here}.format", item.get("format", ".3f")),
            only=tuple(only) if only is not None else None,
            otherwise=read.string(f"{here}.otherwise", item.get("otherwise", "not_applicable")),
            interval=read.string(f"{here}.interval", item["interval"]) if "interval" in item else None))
    file = read.string(f"{where}.file", raw.get("file", RESULTS_NAME))
    if "/" in file or "\\" in file or file.startswith(".") or not file.endswith(".json"):
        raise read.error(f"{where}.file", "a results file name in outputs/, such as results.json")
    return TableSpec(file=file, rows=read.string(f"{where}.rows", raw.get("rows", TABLE.name)),
                     name=read.string(f"{where}.name", raw.get("name", "search")),
                     columns=tuple(columns))
