"""What one output's page receives: every value of its template context, already through its door.

The shell's order of sections (generator.render.shell.section_order), the claims, decisions and
provenance of the views (generator.render.views), the tables and charts of each query set the page
reads (generator.render.tables, generator.render.charts) and the blocks the tool owns
(generator.render.disclosure), gathered in one place so that a page of the package's and a page of
the project's own receive the same values under the same names.
"""

from __future__ import annotations

from dataclasses import field, replace
from pathlib import Path
from typing import Any

from markupsafe import Markup

from generator.claims.tracing.report import CheckReport
from generator.core.dataclass import dataclass
from generator.project import Project
from generator.project.outputs import OutputSpec, TableSpec
from generator.render import charts
from generator.render.amendments import amendment_records, post_hoc_lines
from generator.render.baseline import since_baseline_view
from generator.claims.record.noninferiority import read_regression_block
from generator.render.disclosure import build_disclosure
from generator.render.doors import Door
from generator.render.labels import Labels
from generator.render.shell import SET_BLOCKS, SHELL_BLOCKS, section_order
from generator.render.stamps import STAMP_NAME, stamp_text
from generator.render.tables import (all_pairs_view, frontier_view, per_query_view, rerank_cost_view, sample_view,
                                     table_view)
from generator.render.theme import Theme
from generator.render.views import (SectionView, anchor, claim_views, claims_by_kind, decisions_view, order_view,
                                    origin_runs, provenance_view, trace_view)
from generator.core.results import Results


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


def _context(project: Project, report: CheckReport, spec: OutputSpec, shared: _Shared, door: Door, labels: Labels,
             draft: bool, stamp: dict[str, Any], theme: Theme) -> dict[str, Any]:
    """What one output's page receives, every value already through its door: the shell's order
    (generator.render.shell.section_order), the query sets its tables and charts read, and the
    blocks the tool owns. The older keys (`disclosure`, `table`, `charts`, ...) stay for a page of
    the project's own."""
    results = shared.results
    first_id, middle_ids, last_id = section_order(spec)
    claims, withdrawn = claim_views(spec, report, door, labels, draft, shared.queries_by_file, first_id)
    query_sets = _query_sets(project, report, spec, shared, door, labels)
    samples = {entry["file"]: entry["label"] for entry in query_sets}
    decisions = decisions_view(report, door, labels, samples)
    order = order_view(report, door, labels)
    table = query_sets[-1]["table"] if spec.table else None
    provenance = provenance_view(spec, report, results, shared.results_hashes, shared.template_hashes,
                                 shared.config_hash, door, labels)
    disclosure = build_disclosure(labels, decisions=decisions, order=order, provenance=provenance,
                                  table_sample=table["sample"] if table else None, html=spec.is_html)
    for section_claims in claims.values():
        for claim in section_claims:
            claim.post_hoc_mark = disclosure.post_hoc_mark if claim.post_hoc else ""
    by_id = {s.id: s for s in spec.sections}

    def drawn(block: str) -> bool:
        """Whether a block shows anything on some query set: a reranker's block of a project
        without a rerank row shows nothing, and its section goes when nothing else is in it."""
        return any(block in entry["charts"] if block in ("quality_vs_time", "deltas") else bool(entry.get(block))
                   for entry in query_sets)

    def section_view(section_id: str | None, title_key: str) -> SectionView:
        section = by_id.get(section_id) if section_id else None
        if section is None:
            return SectionView("", anchor("section-", title_key), labels[title_key], (), [], [])
        shown = tuple(block for block in section.show if block not in SHELL_BLOCKS
                      and (block not in SET_BLOCKS or drawn(block)))
        return SectionView(section.id, anchor("section-", section.id), labels[f"section:{section.id}"], section.show,
                           claims[section.id], origin_runs(claims[section.id]),
                           set_blocks=tuple(block for block in shown if block in SET_BLOCKS),
                           other_blocks=tuple(block for block in shown if block not in SET_BLOCKS))

    first = section_view(first_id, "verdict_heading") if first_id or decisions else None
    sections = [section_view(section_id, "") for section_id in middle_ids]
    last = section_view(last_id, "provenance_heading")
    amendments = amendment_records(report, door, labels)
    trace = trace_view(report, door, labels)
    return {
        "title": door.data(project.title),
        "L": labels,
        "theme_css": Markup(theme.css()),
        "logo": theme.logo,
        "team_css": "",
        "first": first,
        "sections": sections,
        "last": last,
        "end_slot": "",
        "query_sets": query_sets,
        "post_hoc_lines": post_hoc_lines(report, door, labels),
        "amendments": amendments,
        "flags": _flags(report, door, labels) if shared.flagged else [],
        "draft": shared.flagged,
        "trace": trace,
        "withdrawn": withdrawn,
        "disclosure": disclosure,
        "provenance": provenance,
        "claims_by_kind": claims_by_kind(report, door),
        "decisions": decisions,
        "order": order,
        "since_baseline": since_baseline_view(project, spec, results, door, labels),
        "stamp_name": STAMP_NAME,
        "stamp": stamp_text(stamp),
        # For a page of the project's own, as the page before the shell received them.
        "table": table,
        "charts": query_sets[-1]["charts"],
        "per_query": query_sets[-1]["per_query"],
        "rerank_cost": query_sets[-1]["rerank_cost"],
        "frontier": query_sets[-1]["frontier"],
        "frontier_chart": query_sets[-1]["frontier_chart"],
        "all_pairs": query_sets[-1]["all_pairs"],
    }


def _query_sets(project: Project, report: CheckReport, spec: OutputSpec, shared: _Shared, door: Door,
                labels: Labels) -> list[dict[str, Any]]:
    """The results files the page's tables and charts read, each one's blocks drawn from it: every
    file a decision read first (in decision order), then the table's own (`table.file`); each
    captioned with its query set and count. A section shows them side by side as labelled tabs,
    the first open: never a sample's table under a verdict read on every query."""
    table = spec.table or TableSpec()
    names = []
    for name in [row.trigger.file for row in report.decisions] + [table.file]:
        if name not in names and name in shared.table_files:
            names.append(name)
    decided = {row.trigger.file for row in report.decisions}
    preferred = list(spec.deltas.metrics if spec.deltas else ()) + [column.key for column in table.columns if column.key] \
        + list(spec.quality_vs_time.metrics if spec.quality_vs_time else ())
    budget = _budget(report)
    sets = []
    for index, name in enumerate(names, start=1):
        results = shared.table_files[name]
        has_rerank = _has_rerank(results)
        suffix = "" if len(names) == 1 else f"-{index}"
        sets.append({
            "file": name, "label": sample_view(results, door, labels) or door.code(name),
            "read_by_decisions": name in decided,
            "table": table_view(spec.table, results, door, labels) if spec.table else None,
            "charts": _charts(spec, results, door, labels, budget if has_rerank else None, suffix, has_rerank)
            if spec.is_html else {},
            "all_pairs": all_pairs_view(results, door, labels),
            "per_query": per_query_view(results, door, labels, preferred),
            "rerank_cost": rerank_cost_view(results, door, labels, budget, *_quality_margin(project))
            if has_rerank else None,
            "frontier": frontier_view(results, door, labels, budget) if has_rerank else None,
            "frontier_chart": charts.frontier(results.model, door, labels, budget, chart_id=f"chart-frontier{suffix}",
                                              sample=sample_view(results, door, labels))
            if spec.is_html and has_rerank else "",
        })
    return sets


def _has_rerank(results: Results) -> bool:
    """Whether the results hold a rerank row: without one the page shows no reranker's cost,
    frontier, time chart or budget line (a project without a cross-encoder has nothing to price)."""
    roles = results.model.roles
    return any(name in results.model.row_names for name, _ in roles.rerank_pairs)


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


def _flags(report: CheckReport, door: Door, labels: Labels) -> list[Any]:
    flags = [door.join([labels.untraceable_count, door.data(f"{report.untraceable}/{report.total}")])]
    flags.extend(door.join([labels.untraceable, door.code(result.claim.id),
                            door.join([door.data(reason) for reason in result.reasons], "; ")], " ")
                 for result in report.failing())
    flags.extend(door.join([labels.freeze_problem, door.data(problem)], ": ") for problem in report.freeze_problems)
    flags.extend(door.join([labels.history_problem, door.data(problem)], ": ") for problem in report.history_problems)
    return flags


def _charts(spec: OutputSpec, results: Results, door: Door, labels: Labels, budget: float | None,
            suffix: str = "", has_rerank: bool = True) -> dict[str, Any]:
    """The charts of an output, drawn from one results file; each says which queries and how many
    (generator.render.tables.sample_view). Without a rerank row there is no time to draw: the
    quality chart stands alone, with no budget line."""
    table = spec.table or TableSpec()
    rows = results.model.lookup(table.rows)
    rows = rows if isinstance(rows, list) else []
    column_labels = {c.key: c.label for c in table.columns if c.key}
    sample = sample_view(results, door, labels)
    metrics = results.model.metric_names
    drawn = {}
    if spec.quality_vs_time is not None:
        chart = replace(spec.quality_vs_time, metrics=spec.quality_vs_time.metrics or tuple(metrics))
        drawn["quality_vs_time"] = charts.quality(rows, chart, table.name, column_labels, door, labels,
                                                  chart_id=f"chart-quality{suffix}", sample=sample, known=metrics)
        if has_rerank:
            drawn["quality_vs_time"] += charts.time(rows, results.model, chart, table.name, door,
                                                    labels, budget, chart_id=f"chart-time{suffix}", sample=sample)
    if spec.deltas is not None:
        deltas = replace(spec.deltas, metrics=spec.deltas.metrics or tuple(metrics))
        method = results.model.manifest_block("uncertainty").get("interval")
        kind = method.get("kind") if isinstance(method, dict) else None
        drawn["deltas"] = charts.deltas(rows, deltas, table, results.model, column_labels, door, labels,
                                        kind if isinstance(kind, str) else None, chart_id=f"chart-deltas{suffix}",
                                        sample=sample, known=metrics)
    return drawn
