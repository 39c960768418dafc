"""Render readout.html, TEACHBACK.md and AAR.md from the checked ledger and results.json.

`render_project` runs the claim check first and refuses to render when it fails; with `draft` it
renders anyway and flags every failure where the reader sees it. Rendering happens in memory; the
orphan scan (generator.render.orphans) then proves that every word and number in the outputs came
from a ledger claim, a registered label or a data value, and only then are the files written
(atomically). With `check_only` nothing is written and each output that differs from a fresh
render is named (generator.render.stamps), like `cog --check`.

What the outputs contain is configured per project in readout.yaml under `outputs:`
(generator.project.outputs), so the SciFact review and the L03 sandbox share the templates.
Determinism: no clock is read; every mapping is emitted in sorted or configured order.
"""

from __future__ import annotations

import base64
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable

import jinja2
from jinja2 import BytecodeCache, Environment, FileSystemLoader, StrictUndefined, select_autoescape
from jinja2.bccache import Bucket

from generator.claims.tracing.checker import check_project
from generator.memo import Memo, default_memo
from generator.claims.tracing.report import CheckReport, failure_lines
from generator.errors import InputError
from generator.fileio import display_path, reading, sha256_file, sha256_text, write_set
from generator.project import Project, default_templates_dir
from generator.project.outputs import OutputSpec, TableSpec
from generator.render import charts
from generator.render.baseline import since_baseline_view
from generator.noninferiority import read_regression_block
from generator.render.disclosure import build_disclosure, css_problems, missing_blocks, relabelled
from generator.render.doors import Door, HtmlDoor, MarkdownDoor
from generator.render.labels import LABELS_NAME, Labels, load_labels
from generator.render.orphans import Orphan, scan
from generator.render.stamps import STAMP_NAME, Rendered, stale_outputs, stamp_text, template_hashes
from generator.render.views import (SectionView, all_pairs_view, anchor, claim_views, claims_by_kind, decisions_view,
                                    order_view, frontier_view, per_query_view, provenance_view, rerank_cost_view,
                                    sample_view, table_view)
from generator.results import RESULTS_NAME, Results, read_results
from generator.results.seal import only_rederived


def _environment(templates_dir: Path) -> Environment:
    return Environment(
        loader=FileSystemLoader(str(templates_dir)),
        # Autoescape on for every HTML template (and any unknown kind); off for Markdown only.
        autoescape=select_autoescape(enabled_extensions=("html", "htm", "xml", "svg", "html.j2"),
                                     disabled_extensions=("md", "md.j2"),
                                     default_for_string=True, default=True),
        undefined=StrictUndefined, keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True,
        bytecode_cache=_SignedBytecode(default_memo()))


def load_project_results(project: Project, name: str = RESULTS_NAME) -> Results:
    """One results file the project declares (the release sample's by default)."""
    path = project.outputs_dir / name
    with reading(path):
        return read_results(path, name, missing="missing: run `readout evaluate` (or `readout build`) first"
                            if name == RESULTS_NAME else "missing: run `readout evaluate --queries all` to write it")


@dataclass
class _Shared:
    """What every output of one render reads: the results, the labels, the hashes it is stamped with."""
    results: Results
    results_hashes: dict[str, str]
    labels_path: Path
    label_texts: Any
    template_hashes: dict[str, str]
    config_hash: str
    flagged: bool
    queries_by_file: dict[str, Any]
    # Every results file a table reads, by name (the release sample's among them).
    table_files: dict[str, Results] = field(default_factory=dict)


def render_outputs(project: Project, report: CheckReport, *, draft: bool = False) -> list[Rendered]:
    """Render every configured output in memory (nothing is written)."""
    specs = project.require_outputs()
    results = load_project_results(project)
    results_hashes = {Path(name).name: digest for name, digest in report.inputs_sha256.items()}
    results_hashes[RESULTS_NAME] = results.sha256
    templates_dir = project.templates_dir
    labels_path = templates_dir / LABELS_NAME
    label_texts = load_labels(labels_path, display_path(labels_path))
    hashes = template_hashes(templates_dir)
    _refuse_hidden_characters(templates_dir, hashes)
    shared = _Shared(results, results_hashes, labels_path, label_texts, hashes, sha256_file(project.config_path),
                     draft and not report.ok, _queries_by_file(project, report, results),
                     _table_files(project, specs.values(), results, results_hashes))
    env = _environment(templates_dir)
    rendered = []
    for spec in specs.values():
        door = HtmlDoor() if spec.is_html else MarkdownDoor()
        labels = Labels(label_texts, door, display_path(labels_path),
                        {f"section:{s.id}": s.title for s in spec.sections})
        stamp = {
            "output": spec.file, "draft": shared.flagged,
            "ledger_sha256": report.ledger_sha256,
            "design_freeze_sha256": report.design_freeze_sha256,
            "results_sha256": dict(sorted(results_hashes.items())),
            "config_sha256": shared.config_hash,
            "templates_sha256": hashes,
        }
        context = _context(project, report, spec, shared, door, labels, draft, stamp)
        marked = _render_template(env, templates_dir, spec.template, context)
        output = Rendered(spec.name, project.outputs_dir / spec.file, marked, stamp)
        if spec.is_html and not shared.flagged:
            output.disclosure_problems = _disclosure_problems(output, context, label_texts, templates_dir)
        rendered.append(output)
    return rendered


def _disclosure_problems(output: Rendered, context: dict[str, Any], label_texts: dict[str, str],
                         templates_dir: Path) -> list[str]:
    """What the page does to the disclosure blocks the tool owns (generator.render.disclosure): each
    one present verbatim, in the package's words, and not hidden by any stylesheet."""
    disclosure = context["disclosure"]
    shown = display_path(output.path)
    problems = []
    package_dir = default_templates_dir()
    if templates_dir.resolve() != package_dir.resolve():
        package = load_labels(package_dir / LABELS_NAME)
        problems += [f"{display_path(templates_dir / LABELS_NAME)}: {key}: a disclosure label the tool owns "
                     f"reads {package[key]!r} in every readout; it may not be changed"
                     for key in relabelled(disclosure.labels_read, label_texts, package)]
    post_hoc = [str(claim.text) + str(claim.post_hoc_mark) for section in context["sections"]
                for claim in section.claims if claim.post_hoc]
    problems += missing_blocks(output.marked, disclosure, post_hoc, shown)
    # The page's stylesheets read against its blocks: remembered by the page's bytes, as the
    # orphan scan is (an HTML5 parse and every selector matched on it).
    problems += default_memo().remembered("disclosure styles", {"name": shown, "sha256": sha256_text(output.text)},
                                          lambda: css_problems(output.text, shown))
    return problems


def _context(project: Project, report: CheckReport, spec: OutputSpec, shared: _Shared, door: Door, labels: Labels,
             draft: bool, stamp: dict[str, Any]) -> dict[str, Any]:
    """What one output's template receives: every value already through its door."""
    results = shared.results
    first_draft = report.first_draft
    claims, withdrawn = claim_views(spec, report, door, labels, draft, shared.queries_by_file,
                                    "verdict" if "verdict" in spec.section_ids else None)
    table = table_view(spec.table, shared.table_files[spec.table.file], door, labels) if spec.table else None
    provenance = provenance_view(spec, report, results, shared.results_hashes, shared.template_hashes,
                                 shared.config_hash, door, labels)
    disclosure = build_disclosure(labels, decisions=decisions_view(report, door, labels),
                                  order=order_view(report, door, labels), provenance=provenance,
                                  table_sample=table["sample"] if table else None, html=spec.is_html)
    for section_claims in claims.values():
        for claim in section_claims:
            claim.post_hoc_mark = disclosure.post_hoc_mark if claim.post_hoc else ""
    sections = [SectionView(s.id, anchor("section-", s.id), labels[f"section:{s.id}"], s.show, claims[s.id])
                for s in spec.sections]
    return {
        "title": door.data(project.title),
        "L": labels,
        "sections": sections,
        "flags": _flags(report, door, labels) if shared.flagged else [],
        "draft": shared.flagged,
        "trace": {"current": door.data(f"{report.untraceable}/{report.total}"),
                  "first_draft": door.data(f"{first_draft[0]}/{first_draft[1]}") if first_draft
                  else labels.not_recorded,
                  "withdrawn": door.data(f"{report.struck}/{report.total}"),
                  "by_output": [(labels[f"trace_output_{name}"], door.data(f"{u}/{t}"))
                                for name, (u, t) in report.by_output.items()]},
        "withdrawn": withdrawn,
        "per_query": per_query_view(results, door, labels),
        "table": table,
        "disclosure": disclosure,
        "charts": _charts(spec, shared.table_files[(spec.table or TableSpec()).file], door, labels,
                          _budget(report)) if spec.is_html else {},
        "provenance": provenance,
        "claims_by_kind": claims_by_kind(report, door),
        "decisions": decisions_view(report, door, labels),
        "order": order_view(report, door, labels),
        "rerank_cost": rerank_cost_view(results, door, labels, _budget(report), *_quality_margin(project)),
        "frontier": frontier_view(results, door, labels, _budget(report)),
        "all_pairs": all_pairs_view(results, door, labels),
        "since_baseline": since_baseline_view(project, spec, results, door, labels),
        "frontier_chart": charts.frontier(results.model, door, labels, _budget(report),
                                          sample=sample_view(results, door, labels)) if spec.is_html else "",
        "stamp_name": STAMP_NAME,
        "stamp": stamp_text(stamp),
    }


def _render_template(env: Environment, templates_dir: Path, template: str, context: dict[str, Any]) -> str:
    try:
        marked = env.get_template(template).render(**context)
    except InputError:
        raise
    except Exception as error:  # jinja2 errors: name the template and line, never a traceback
        raise InputError(f"cannot render: {error}", path=display_path(templates_dir / template),
                         line=getattr(error, "lineno", None)) from None
    return marked if marked.endswith("\n") else marked + "\n"


def _queries_by_file(project: Project, report: CheckReport, results: Results) -> dict[str, Any]:
    """How many queries each cited results file was measured on, for the source notes."""
    counts = {RESULTS_NAME: results.model.queries}
    for name in report.inputs_sha256:
        if name not in counts and (project.outputs_dir / name).is_file():
            with reading(project.outputs_dir / name):
                counts[name] = read_results(project.outputs_dir / name, name).model.queries
    return counts


def _table_files(project: Project, specs: Iterable[OutputSpec], results: Results,
                 results_hashes: dict[str, str]) -> dict[str, Results]:
    """The results file each output's table reads (readout.yaml `table.file`), each read once; a
    file other than the release sample's is stamped into the outputs like any other input."""
    files = {RESULTS_NAME: results}
    for spec in specs:
        name = (spec.table or TableSpec()).file
        if name not in files:
            files[name] = load_project_results(project, name)
            results_hashes.setdefault(name, files[name].sha256)
    return files


def _quality_margin(project: Project) -> tuple[float | None, tuple[str, ...]]:
    """The non-inferiority margin and metrics the design's `regression` block fixes (a quantized
    twin is held to the same margin as a change since the baseline), or none."""
    block = read_regression_block(project.design_dir)
    return (block.margin, tuple(block.metrics)) if block is not None else (None, ())


def _budget(report: CheckReport) -> float | None:
    """The latency budget a decision trigger compares the reranker's p95 with, when one does."""
    for row in report.decisions:
        for name, entry in row.read.items():
            if str(entry.get("path", "")).startswith("budget.") and entry.get("measured"):
                return float(entry["value"])
            if str(entry.get("path", "")).startswith("frontier.") and isinstance(entry.get("budget"), (int, float)):
                return float(entry["budget"])
    return None


def _refuse_hidden_characters(templates_dir: Path, names: Iterable[str]) -> None:
    """A template holding private-use characters could forge the orphan scan's marks."""
    for name in names:
        path = templates_dir / name
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            hidden = _PRIVATE_USE.search(line)
            if hidden:
                raise InputError(f"holds the private-use character U+{ord(hidden.group(0)):04X}; templates may not "
                                 "use them (the render marks its own output with them)", path=display_path(path),
                                 line=number)


_PRIVATE_USE = re.compile("[\ue000-\uf8ff\U000f0000-\U0010ffff]")


def _flags(report: CheckReport, door: Door, labels: Labels) -> list[Any]:
    flags = [door.join([labels.untraceable_count, door.data(f"{report.untraceable}/{report.total}")])]
    flags.extend(door.join([labels.untraceable, door.code(result.claim.id),
                            door.join([door.data(reason) for reason in result.reasons], "; ")], " ")
                 for result in report.failing())
    flags.extend(door.join([labels.freeze_problem, door.data(problem)], ": ") for problem in report.freeze_problems)
    flags.extend(door.join([labels.history_problem, door.data(problem)], ": ") for problem in report.history_problems)
    return flags


def _charts(spec: OutputSpec, results: Results, door: Door, labels: Labels, budget: float | None) -> dict[str, Any]:
    """The charts of an output, drawn from the results file its table reads; each says which
    queries and how many (generator.render.views.sample_view)."""
    table = spec.table or TableSpec()
    rows = results.model.lookup(table.rows)
    rows = rows if isinstance(rows, list) else []
    column_labels = {c.key: c.label for c in table.columns if c.key}
    sample = sample_view(results, door, labels)
    drawn = {}
    if spec.quality_vs_time is not None:
        drawn["quality_vs_time"] = (
            charts.quality(rows, spec.quality_vs_time, table.name, column_labels, door, labels, sample=sample)
            + charts.time(rows, results.model, spec.quality_vs_time, table.name, door, labels, budget, sample=sample))
    if spec.deltas is not None:
        method = results.model.manifest_block("uncertainty").get("interval")
        kind = method.get("kind") if isinstance(method, dict) else None
        drawn["deltas"] = charts.deltas(rows, spec.deltas, table, results.model, column_labels, door, labels,
                                        kind if isinstance(kind, str) else None, sample=sample)
    return drawn


def find_orphans(rendered: list[Rendered], memo: Memo | None = None) -> list[Orphan]:
    """Every orphan text of the outputs; the scan of a text already scanned is remembered
    (generator.memo: an HTML5 parse of the readout is the slowest step of `render --check`)."""
    memo = memo if memo is not None else default_memo()
    found: list[Orphan] = []
    for output in rendered:
        name = display_path(output.path)
        inputs = {"name": name, "sha256": sha256_text(output.marked)}
        scanned = memo.remembered("orphan scan", inputs,
                                  lambda text=output.marked, name=name: [asdict(orphan) for orphan in scan(text, name)])
        found.extend(Orphan(**orphan) for orphan in scanned)
    return found


class _SignedBytecode(BytecodeCache):
    """Jinja's compiled templates, kept as signed memos: compiling the three templates is a fifth
    of `render --check`; Jinja itself refuses bytecode whose template source changed."""

    def __init__(self, memo: Memo):
        self.memo = memo

    def load_bytecode(self, bucket: Bucket) -> None:
        found = self.memo.load("jinja bytecode", [bucket.key, jinja2.__version__])
        if found is not None and isinstance(found[0], str):
            bucket.bytecode_from_string(base64.b64decode(found[0]))

    def dump_bytecode(self, bucket: Bucket) -> None:
        self.memo.store("jinja bytecode", [bucket.key, jinja2.__version__], base64.b64encode(bucket.bytecode_to_string()).decode("ascii"))


@dataclass
class RenderOutcome:
    """What `render_project` did. `refused` holds the check's failures when it would not render;
    `orphans` the unaccounted text when nothing was written; `stale` the outputs that differ
    (with `check_only`); `written` the files written."""

    report: CheckReport
    refused: list[str] = field(default_factory=list)
    # What a release page would do to the disclosure blocks the tool owns (nothing is written).
    hidden: list[str] = field(default_factory=list)
    drafted: list[str] = field(default_factory=list)
    orphans: list[Orphan] = field(default_factory=list)
    rendered: list[Rendered] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    written: list[tuple[Path, int]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.refused and not self.hidden and not self.orphans and not self.stale


def render_project(project: Project, *, draft: bool = False, check_only: bool = False,
                   report: CheckReport | None = None) -> RenderOutcome:
    """Check, render in memory, scan for orphans, then write (or compare with `check_only`)."""
    # The order in git is the gate's (`readout check`) to verify: a report cannot stamp the commit
    # it will be committed in, and must read the same in a shallow and a full clone.
    report = report or check_project(project, git_history=False)
    outcome = RenderOutcome(report=report)
    if not report.ok:
        if not draft:
            outcome.refused = failure_lines(report)
            return outcome
        outcome.drafted = failure_lines(report)
    with only_rederived(report.rederived):   # a report shows only what the check re-derived
        outcome.rendered = render_outputs(project, report, draft=draft)
    outcome.orphans = find_orphans(outcome.rendered)
    if outcome.orphans:
        return outcome
    hidden = [problem for output in outcome.rendered for problem in output.disclosure_problems]
    if hidden and not draft:
        outcome.hidden = hidden
        return outcome
    if check_only:
        outcome.stale = stale_outputs(outcome.rendered)
        return outcome
    for output in outcome.rendered:
        if output.path.is_dir() or output.path.is_symlink():
            raise InputError("is a directory or a link; a report is written as a plain file here",
                             path=display_path(output.path))
    # The outputs are one set: each is written in full before any replaces its predecessor.
    encoded = [(output.path, output.text.encode("utf-8")) for output in outcome.rendered]
    write_set(encoded)
    outcome.written.extend((path, len(data)) for path, data in encoded)
    return outcome
