"""The view models templates receive: claims by section with their source notes, the rows table,
provenance groups and the score table. Every string in them has already passed a door."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from generator.claims.tracing.report import CheckReport, ClaimResult
from generator.core.options import SHAPE_COST
from generator.storage.errors import InputError
from generator.project.outputs import OutputSpec, TableSpec
from generator.text.wording import data_text_problem
from generator.claims.record.quotable_units import reduce_markdown
from generator.render.sources import design_quote, measured_sentence, short_value
from generator.render.doors import Door
from generator.render.labels import Labels
from generator.render.twins import twin_rows
from generator.render.values import format_number, raw_json
from generator.results import MISSING, RESULTS_NAME, Results, ResultsModel


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
    # A verdict whose decision's rule was set or moved after results existed (labelled, never hidden:
    # its mark is the tool's, generator.render.disclosure).
    post_hoc: bool = False
    post_hoc_mark: Any = ""
    # Who wrote the sentence (issue 44's claim frames): "frame" (the tool, from results), "quote" (a
    # design document's words, placed with their attribution) or "author" (free prose). A claim
    # without one is the author's.
    origin: str = "author"


@dataclass
class SectionView:
    id: str
    anchor: str
    title: Any
    show: tuple[str, ...]
    claims: list[ClaimView]
    # The section's claims as runs of one origin each, in ledger order: [(origin, [claims])].
    runs: list[tuple[str, list[ClaimView]]] = field(default_factory=list)
    # The data blocks drawn per query set (tables and charts), the others, and the team's slot.
    set_blocks: tuple[str, ...] = ()
    other_blocks: tuple[str, ...] = ()
    slot: Any = ""


ORIGINS = ("frame", "quote", "author")
ORIGIN_LABELS = {"frame": "origin_frame", "quote": "origin_quote", "author": "origin_author"}


def claim_origin(result: Any) -> str:
    """Who wrote a claim: the checker's `origin` when it records one (issue 44), else the author."""
    origin = getattr(result, "origin", "author")
    return origin if origin in ORIGINS else "author"


def origin_runs(claims: list[ClaimView]) -> list[tuple[str, list[ClaimView]]]:
    """Consecutive claims of one origin, together: each run is one paragraph, an author's run
    marked as the author's words."""
    runs: list[tuple[str, list[ClaimView]]] = []
    for claim in claims:
        if runs and runs[-1][0] == claim.origin:
            runs[-1][1].append(claim)
        else:
            runs.append((claim.origin, [claim]))
    return runs


def trace_view(report: CheckReport, door: Door, labels: Labels) -> dict:
    """The trace line: the current and first-draft scores, and the score of each origin counted
    apart (the checker's `by_origin` when it gives one, else counted here from each claim)."""
    by_origin = dict(getattr(report, "by_origin", None) or {})
    if not by_origin:
        for result in report.results:
            untraceable, total = by_origin.get(claim_origin(result), (0, 0))
            by_origin[claim_origin(result)] = (untraceable + int(result.counts_untraceable), total + 1)
    ordered = [name for name in ORIGINS if name in by_origin] + sorted(set(by_origin) - set(ORIGINS))
    first = report.first_draft
    return {"current": door.data(f"{report.untraceable}/{report.total}"),
            "first_draft": door.data(f"{first[0]}/{first[1]}") if first else labels.not_recorded,
            "withdrawn": door.data(f"{report.struck}/{report.total}"),
            "by_output": [(labels[f"trace_output_{name}"], door.data(f"{u}/{t}"))
                          for name, (u, t) in report.by_output.items()],
            "by_origin": [(labels[ORIGIN_LABELS[name]] if name in ORIGIN_LABELS else door.data(name),
                           door.data(f"{by_origin[name][0]}/{by_origin[name][1]}")) for name in ordered]}


def anchor(prefix: str, text: str) -> str:
    return prefix + re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-")


def evidence_notes(result: ClaimResult, door: Door, labels: Labels, queries_by_file: dict[str, Any]) -> list[dict]:
    """Each source as a sentence for people first ("from results.json: hybrid nDCG@5 on 20
    queries = 0.6285, shown as 0.629") and the exact place to look it up second."""
    notes = []
    for evidence in result.evidence:
        if evidence.kind == "design":
            where = [labels.from_design, door.code(evidence.document or ""), labels.line,
                     door.data("?" if evidence.line is None else evidence.line)]
            if evidence.heading:
                where += [labels.section_sign, door.data(reduce_markdown(evidence.heading))]
            notes.append({"say": door.join([door.join(where), door.quote(design_quote(evidence))], ": "),
                          "raw": None})
        elif evidence.kind == "decision":
            decision = evidence.value if isinstance(evidence.value, dict) else {}
            say = [labels.from_decision, door.data(decision.get("decision", "?")), labels.trigger_word,
                   door.data(decision.get("state", "?")), door.data(decision.get("outcome", ""))]
            raw = [door.code(evidence.document or ""), labels.line,
                   door.data("?" if evidence.line is None else evidence.line), door.code(evidence.predicate or "")]
            notes.append({"say": door.join(say), "raw": door.join(raw)})
        else:
            file = evidence.file or RESULTS_NAME
            say = [labels.from_results, door.join([door.code(file), door.data(":")], ""),
                   door.data(measured_sentence(evidence, queries_by_file.get(file)))]
            shown = evidence.value if isinstance(evidence.value, str) else short_value(evidence.value)
            if evidence.formatted is not None and str(evidence.formatted) != shown:
                say = [door.join(say), labels.shown_as, door.data(evidence.formatted)]
            notes.append({"say": door.join(say), "raw": door.join([labels.path_word, door.code(evidence.path or "")])})
    return notes


@dataclass
class Withdrawn:
    text: Any
    reason: Any
    anchor: str


def claim_views(spec: OutputSpec, report: CheckReport, door: Door, labels: Labels, draft: bool,
                queries_by_file: dict[str, Any], verdict_section: str | None
                ) -> tuple[dict[str, list[ClaimView]], list[Withdrawn]]:
    """Each section's claims in ledger order, numbered across the output, and the withdrawn
    (struck) claims: listed at the end by default, inline where the ledger asks for it
    (`strike_display: strike`) except in the verdict, which holds conclusions only; `omit` drops
    a struck claim from the reports."""
    by_section: dict[str, list[ClaimResult]] = {section.id: [] for section in spec.sections}
    for result in report.results:
        if result.claim.output == spec.name and result.claim.section in by_section:
            by_section[result.claim.section].append(result)
    views: dict[str, list[ClaimView]] = {}
    withdrawn: list[Withdrawn] = []
    number = 0
    for section in spec.sections:
        views[section.id] = []
        for result in by_section[section.id]:
            claim = result.claim
            if claim.struck:
                display = claim.strike_display or "withdrawn"
                if display == "omit":
                    continue
                if display != "strike" or section.id == verdict_section:
                    withdrawn.append(Withdrawn(door.claim(result.rendered_text or claim.text),
                                               door.data(claim.strike_reason or ""), anchor("claim-", claim.id)))
                    continue
            number += 1
            notes = []
            if claim.struck:
                notes.append({"say": door.join([labels.struck, door.data(claim.strike_reason or "")], ": "),
                              "raw": None})
            flag = draft and not claim.struck and not result.traceable
            if flag:
                notes.append({"say": door.join([labels.untraceable,
                                                door.join([door.data(r) for r in result.reasons], "; ")], ": "),
                              "raw": None})
            notes.extend(evidence_notes(result, door, labels, queries_by_file))
            views[section.id].append(ClaimView(
                id=claim.id, anchor=anchor("claim-", claim.id), note_anchor=anchor("note-", claim.id),
                number=door.data(number), text=door.claim(result.rendered_text or claim.text), struck=claim.struck,
                flag=flag, notes=notes, post_hoc=_cites_post_hoc(result, report), origin=claim_origin(result)))
    return views, withdrawn


def _table_word(value: object, where: str, file: str = RESULTS_NAME) -> str:
    """A text value from results that a table shows as a word: checked like a label."""
    text = str(value)
    problem = data_text_problem(text)
    if problem:
        raise InputError(f"cannot show {text[:60]!r} in a table: {problem}", path=file, field=where)
    return text


_QUERY_SET_LABELS = {"sample": "query_set_sample", "all": "query_set_all"}


def sample_view(results: Results, door: Door, labels: Labels) -> Any:
    """Which queries a table or chart is measured on, and how many: "release sample, 20 queries"
    (the file's own name where its query set has no label). None when the file does not say."""
    count = results.model.queries
    if count is None:
        return None
    key = _QUERY_SET_LABELS.get(results.model.query_set or "")
    which = labels[key] if key else door.code(results.name)
    return door.join([which, door.join([door.data(f"{count:,}"), labels.queries_unit])], ", ")


def table_view(table: TableSpec, results: Results, door: Door, labels: Labels) -> dict:
    model = results.model
    rows_raw = model.lookup(table.rows)
    if not isinstance(rows_raw, list):
        raise InputError(f"no list of rows at {table.rows!r}", path=results.name, field=table.rows)
    rows = []
    for row in rows_raw:
        if not isinstance(row, dict):
            raise InputError("a row must be an object", path=results.name, field=table.rows)
        name = _table_word(row.get(table.name, "?"), f"{table.rows}[].{table.name}", results.name)
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
            value = row.get(column.key, MISSING) if column.key else model.lookup(column.path)
            if value is MISSING or value is None:
                cells.append({"value": labels.not_measured if value is None else labels.missing,
                              "interval": None, "missing": True})
                continue
            if column.interval:
                bounds = model.lookup(f"{table.rows}[{table.name}={name}].{column.interval}")
                if isinstance(bounds, dict) and isinstance(bounds.get("ci95_low"), (int, float)) \
                        and isinstance(bounds.get("ci95_high"), (int, float)):
                    interval = door.interval(door.data(format_number(bounds["ci95_low"], column.format)),
                                             door.data(format_number(bounds["ci95_high"], column.format)))
            if isinstance(value, str):
                value = _table_word(value, f"{table.rows}[{table.name}={name}].{column.key or column.path}",
                                    results.name)
            cells.append({"value": door.data(format_number(value, column.format)), "interval": interval,
                          "missing": False, "text": isinstance(value, str)})
        reason = row.get("not_measured_reason") if not measured else None
        if reason:
            reason = _table_word(reason, f"{table.rows}[{table.name}={name}].not_measured_reason", results.name)
        rows.append({"name": door.data(name), "measured": measured, "cells": cells,
                     "reason": door.data(reason) if reason else None})
    has_intervals = any(cell["interval"] is not None for row in rows for cell in row["cells"])
    # Numbers align right; a column whose values are all text (a description) aligns left.
    text_columns = [all(row["cells"][index].get("text", True) for row in rows if not row["cells"][index]["missing"])
                    and any(not row["cells"][index]["missing"] for row in rows)
                    for index in range(len(table.columns))]
    gains = _graded_gains(model)
    return {"columns": [door.data(_column_label(column, gains, labels)) for column in table.columns], "rows": rows,
            "has_intervals": has_intervals, "text_columns": text_columns, "sample": sample_view(results, door, labels)}


def _graded_gains(model: ResultsModel) -> dict[str, str]:
    """{metric name: its nDCG gain} when the judgements are graded (more than one positive
    grade), where the gain changes the figure; empty on binary judgements such as SciFact's."""
    grades = model.positive_grades
    if not isinstance(grades, list) or len(grades) < 2:
        return {}
    return {name: entry["gain"] for name, entry in model.manifest_block("metrics").items()
            if isinstance(entry, dict) and entry.get("measure") == "ndcg" and entry.get("gain") in GAIN_LABELS}


GAIN_LABELS = {"linear": "gain_linear", "binary": "gain_binary", "exponential": "gain_exponential"}


def _column_label(column: Any, gains: dict[str, str], labels: Labels) -> str:
    """A column of an nDCG figure says its gain in the header wherever grades exist (`gains`,
    from _graded_gains): the same run scores differently under each, and a reader comparing
    with ranx or trec_eval must know."""
    field = str(column.key or column.path or "")
    found = sorted({gain for name, gain in gains.items()
                    if re.search(rf"(?<![A-Za-z0-9@:]){re.escape(name)}(?![A-Za-z0-9:])", field)})
    if not found:
        return column.label
    return f"{column.label} ({', '.join(labels.raw(GAIN_LABELS[gain]) for gain in found)})"


def provenance_view(spec: OutputSpec, report: CheckReport, results: Results, results_hashes: dict[str, str],
                    template_hashes: dict[str, str], config_hash: str, door: Door, labels: Labels) -> list[dict]:
    def pairs(items: Iterable[tuple[str, Any]]) -> list[tuple[Any, Any]]:
        return [(door.code(key), door.code(value if isinstance(value, str) else raw_json(value)))
                for key, value in items]

    model = results.model
    groups = []
    hashes = [("claims/ledger.yaml", report.ledger_sha256),
              ("design freeze", report.design_freeze_sha256 or "none")]
    hashes += [(f"outputs/{name}", digest) for name, digest in sorted(results_hashes.items())]
    hashes += [("readout.yaml", config_hash)]
    groups.append({"title": labels.hashes, "rows": pairs(hashes)})
    groups.append({"title": labels.templates, "rows": pairs(sorted(template_hashes.items()))})
    models = model.manifest_block("models")
    # A project without a rerank row lists no reranker: none was loaded, none decides anything.
    reranks = [name for name, _ in model.roles.rerank_pairs if name in model.row_names]
    model_rows = []
    for role in sorted(role for role in models if reranks or not str(role).startswith("rerank")):
        info = models[role]
        if isinstance(info, dict):
            # Where the weights sit on the machine that ran says nothing about what ran: no paths.
            for key in sorted(key for key in info if key != "path"):
                model_rows.append((f"{role}.{key}", info[key]))
        else:
            model_rows.append((role, info))
    if model_rows:
        groups.append({"title": labels.models, "rows": pairs(model_rows)})
    packages = model.manifest_block("packages")
    if packages:
        groups.append({"title": labels.packages, "rows": pairs(sorted(packages.items()))})
    inputs = model.manifest_block("inputs")
    input_rows = []
    for name in sorted(inputs):
        info = inputs[name]
        input_rows.append((name, info.get("sha256", raw_json(info)) if isinstance(info, dict) else info))
    if input_rows:
        groups.append({"title": labels.inputs, "rows": pairs(input_rows)})
    run_rows = [(path, value) for path in spec.provenance if (value := model.lookup(path)) is not MISSING]
    if run_rows:
        groups.append({"title": labels.run, "rows": pairs(run_rows)})
    return groups


def claims_by_kind(report: CheckReport, door: Door) -> list[tuple[Any, Any]]:
    return [(door.data(kind), door.data(f"{u}/{t}")) for kind, (u, t) in sorted(report.by_kind.items())]


_STATE_LABELS = {"fires": "state_fires", "does not fire": "state_does_not_fire",
                 "cannot be decided": "state_cannot_be_decided"}
_STATUS_LABELS = {"measured": "status_measured", "measured by shape": "status_measured_by_shape",
                  "not measured": "status_not_measured"}


def _short_number(value: Any) -> str:
    if isinstance(value, float):
        if value.is_integer():
            return format_number(value, ",.0f")
        return format_number(value, ",.1f" if abs(value) >= 100 else ".4g")
    return format_number(value, "")


def decisions_view(report: CheckReport, door: Door, labels: Labels, samples: dict[str, Any] | None = None) -> list[dict]:
    """The decision table: each decision record's trigger, whether it fired, what it read, and
    whether its rule was fixed before the results (anchored) or set or moved after them (post hoc;
    generator.render.amendments shows each such change), and which query set it read (`samples`:
    the caption of each results file, by name)."""
    rows = []
    for row in report.decisions:
        values = []
        for name, entry in sorted(row.read.items()):
            if not entry.get("measured"):
                shown = labels.value_not_measured
            else:
                shown = door.data(_short_number(entry.get("value")))
                if entry.get("from") == "design":
                    shown = door.join([shown, labels.value_from_design])
                elif str(entry.get("how")).startswith("measured by shape"):
                    shown = door.join([shown, labels.status_measured_by_shape], ", ")
            values.append(door.join([door.code(name), door.data("="), shown]))
        values.extend(_power_view(row.power, door, labels))
        rows.append({"decision": door.data(row.trigger.decision), "title": door.data(row.trigger.title),
                     "anchor": anchor("decision-", row.trigger.decision),
                     "trigger": door.code(row.trigger.predicate.source),
                     "state": labels[_STATE_LABELS[row.state]], "state_class": row.state.replace(" ", "-"),
                     "outcome": door.data(row.outcome), "read": values,
                     "sample": (samples or {}).get(row.trigger.file) or door.code(row.trigger.file),
                     "registered": labels.post_hoc if row.post_hoc else registered_view(row, door, labels),
                     "post_hoc": bool(row.post_hoc)})
    return rows


def _power_view(power: dict | None, door: Door, labels: Labels) -> list[Any]:
    """Beside a verdict, what its sample can detect when the rule states the effect it needs: the
    minimum detectable effect at the file's query count, and the queries the stated effect needs."""
    if not power:
        return []
    if power.get("minimum_detectable_effect") is None:
        return [door.join([labels.power_not_computed, door.data(power.get("reason") or "")], ": ")]
    settings = door.data(f"({power['queries']} queries, alpha {power['alpha']:g}, power {power['power']:g})")
    shown = [door.join([door.code("minimum_detectable_effect"), door.data("="),
                        door.data(format_number(power["minimum_detectable_effect"], ".3f")), settings])]
    needed = power.get("queries_needed")
    shown.append(door.join([door.code("queries_needed"), door.data("="),
                            door.data(format_number(needed, ",")) if needed else labels.value_not_measured,
                            door.data(f"(minimum effect {power['minimum_effect']:g})")]))
    return shown


def registered_view(row: Any, door: Door, labels: Labels) -> Any:
    """When a decision's rule was last set, as the design freeze records it: before any results
    or after, and in which freeze. What git shows of that order is the gate's to verify."""
    if not row.changes:
        return labels.rule_not_frozen
    entry = row.changes[-1].entry
    when = labels.after_results_existed if entry.results_existed else labels.before_any_results
    return door.join([door.join([when, labels.in_freeze], ""), door.data(entry.number)])


def order_view(report: CheckReport, door: Door, labels: Labels) -> list[tuple[Any, Any]]:
    """The rows the "how this readout was checked" block adds: when the design was first frozen,
    as the freeze records it, who verifies that order against git, and how many freezes amended
    the design after results."""
    entries = report.freeze_entries
    rows = []
    if entries:
        rows.append((labels.design_first_frozen,
                     labels.after_results_existed if entries[0].results_existed else labels.before_any_results))
    rows.append((labels.order_in_git, labels.order_checked_by_gate))
    amended = [entry for entry in entries[1:] if entry.results_existed and entry.data["changes"]]
    rows.append((labels.amendments_after_results, door.data(len(amended))))
    return rows


def _cites_post_hoc(result: ClaimResult, report: CheckReport) -> bool:
    """A verdict of a decision whose rule was set or moved after the results: one that cites the
    decision, or the decision's own frame."""
    decisions = {row.trigger.decision: row for row in report.decisions}
    cited = [source.trigger for source in result.claim.decision_sources]
    frame = result.claim.frame
    if frame is not None and frame.kind == "decision":
        cited.append(frame.row)
    return any(decision in decisions and decisions[decision].post_hoc for decision in cited)


def _status_label(status: str, labels: Labels, door: Door, where: str) -> Any:
    """How a cost or a quality was measured, in the label registry's words; an extrapolated
    figure says from how many of the model's layers ("2 of 24") as data."""
    if status in _STATUS_LABELS:
        return labels[_STATUS_LABELS[status]]
    extrapolated = re.fullmatch(re.escape(SHAPE_COST) + r", extrapolated from (\d+(?: and \d+)?) of (\d+) layers",
                                status)
    if extrapolated is None:
        raise InputError(f"unknown status {status[:60]!r}", path=RESULTS_NAME, field=where)
    return door.join([labels.status_extrapolated, door.data(f"({extrapolated.group(1)} of "
                                                            f"{extrapolated.group(2)})")], " ")


def rerank_cost_view(results: Results, door: Door, labels: Labels, budget: float | None,
                     margin: float | None = None, metrics: tuple[str, ...] = ()) -> list[dict]:
    """Each reranker's cost with how it was measured, impossible to miss: measured, measured by
    shape (its architecture with random weights, every layer or extrapolated from a few), or not
    measured; and its quality's status. The reranker under decision first, then the others by name.
    An int8 reranker whose fp32 twin ran adds what it keeps of the twin's quality against the
    design's margin, and its speed ratio (generator.render.twins)."""
    sample = sample_view(results, door, labels)
    views = []
    for row, cost in results.model.rerank_costs.items():
        view = _cost_view(f"rerank_costs.{row}", row, cost, door, labels, budget)
        if view:
            view["rows"].extend(twin_rows(results, row, list(metrics), margin, door, labels))
            views.append({**view, "sample": sample})
    return views


def _cost_view(where: str, row: str | None, cost: Any, door: Door, labels: Labels,
               budget: float | None) -> dict | None:
    if not isinstance(cost, dict):
        return None
    status = str(cost.get("cost"))
    quality = str(cost.get("quality"))
    rows = [(labels.cost_model, door.code(_table_word(cost.get("model", "?"), f"{where}.model"))),
            (labels.cost_status, _status_label(status, labels, door, where)),
            (labels.quality_status, _status_label(quality, labels, door, where))]
    if row is not None:
        rows.insert(0, (labels.cost_row, door.code(_table_word(row, where))))
    if cost.get("measured") is not False:
        for label, key, spec in (("cost_p50", "p50_milliseconds", ",.0f"), ("cost_p95", "p95_milliseconds", ",.0f"),
                                 ("cost_pairs", "pairs", ","), ("cost_pairs_per_second", "pairs_per_second", ".2f")):
            if isinstance(cost.get(key), (int, float)):
                rows.append((labels[label], door.data(format_number(cost[key], spec))))
        setting = ", ".join(f"{key} {cost[key]}" for key in ("depth", "max_length", "batch_size", "dtype", "precision",
                                                             "device", "threads") if key in cost)
        rows.append((labels.cost_setting, door.code(setting)))
        tokenizer = cost.get("tokenizer")
        if isinstance(tokenizer, dict) and tokenizer.get("name"):
            rows.append((labels.cost_tokenizer, door.code(str(tokenizer["name"]))))
    elif cost.get("not_measured_reason"):
        rows.append((labels.not_measured_reason,
                     door.data(_table_word(cost["not_measured_reason"], f"{where}.not_measured_reason"))))
    if budget is not None:
        rows.append((labels.cost_budget, door.data(format_number(budget, ",.0f"))))
    short = status.split(",")[0]
    return {"status": short.replace(" ", "-"), "quality": quality.replace(" ", "-"), "rows": rows,
            "caption": door.join([labels.reranker_cost, door.code(row)], ": ") if row else labels.reranker_cost}


def frontier_view(results: Results, door: Door, labels: Labels, budget: float | None) -> dict | None:
    """The reranker frontier as a table, cheapest p95 first: each configuration's setting, its p95
    priced by shape, whether it fits the budget, and the ceiling and headroom of its depth."""
    frontier = results.model.frontier
    if frontier is None or not isinstance(frontier.get("configurations"), list):
        return None
    rows = []
    for entry in frontier["configurations"]:
        p95 = entry.get("p95_milliseconds")
        fits = None if budget is None or not isinstance(p95, (int, float)) else p95 <= budget
        rows.append({"model": door.code(_table_word(str(entry.get("model")), "frontier.model")),
                     "depth": door.data(str(entry.get("depth"))), "max_length": door.data(str(entry.get("max_length"))),
                     "precision": door.code(str(entry.get("precision"))),
                     "p95": door.data(format_number(p95, ",.0f" if p95 >= 100 else ".1f")),
                     "fits": labels.fits_budget if fits else labels.over_budget if fits is False else labels.no_budget,
                     "fits_class": "fits" if fits else "over" if fits is False else "",
                     "ceiling": door.data(format_number(entry.get("ceiling"), ".3f")),
                     "headroom": door.data(format_number(entry.get("headroom"), "+.3f")),
                     "how": _status_label(str(entry.get("cost")), labels, door, "frontier.cost")})
    return {"rows": rows, "metric": door.data(str(frontier.get("metric"))), "over": door.code(str(frontier.get("over"))),
            "over_mean": door.data(format_number(frontier.get("over_mean"), ".3f")),
            "sample": sample_view(results, door, labels)}


def _pair_cell(entry: dict, flipped: bool, door: Door, labels: Labels) -> dict:
    """One cell of a metric's matrix: the change of its row against its column with the paired
    interval, p and p after Holm, and whether the change is clear of zero after the correction."""
    sign = -1.0 if flipped else 1.0
    low, high = entry.get("ci95_low"), entry.get("ci95_high")
    if flipped and isinstance(low, (int, float)) and isinstance(high, (int, float)):
        low, high = -high, -low
    delta = entry.get("delta")
    clear = bool(entry.get("distinguishable_holm"))
    return {"delta": door.data(format_number(sign * delta if isinstance(delta, (int, float)) else delta, "+.3f")),
            "interval": door.interval(door.data(format_number(low, "+.3f")), door.data(format_number(high, "+.3f"))),
            "p": door.data(format_number(entry.get("p_value"), ".4f")),
            "p_holm": door.data(format_number(entry.get("p_holm"), ".4f")),
            "holm_clear": clear}


def all_pairs_view(results: Results, door: Door, labels: Labels) -> list[dict] | None:
    """One matrix per metric of the all_pairs block: each measured row (after the first) against
    each row before it, the cell holding the change with its own paired interval, p and p after
    Holm's correction, and whether it is clear of zero after the correction."""
    block = results.model.all_pairs
    if block is None or not isinstance(block.get("metrics"), dict):
        return None
    tables = []
    for metric, family in block["metrics"].items():
        pairs = family.get("pairs") if isinstance(family, dict) else None
        if not isinstance(pairs, dict) or not pairs:
            continue
        by_pair = {(str(entry.get("row")), str(entry.get("baseline"))): entry for entry in pairs.values()
                   if isinstance(entry, dict)}
        order = [str(name) for name in block.get("rows", []) if isinstance(name, str)]
        for row, baseline in by_pair:
            for name in (baseline, row):
                if name not in order:
                    order.append(name)
        for index, name in enumerate(order):
            _table_word(name, f"all_pairs.{metric}.rows[{index}]")
        matrix = []
        for position, row in enumerate(order[1:], start=1):
            cells = []
            for column in order[:-1]:
                entry = by_pair.get((row, column))
                flipped = entry is None and (column, row) in by_pair
                entry = entry if entry is not None else by_pair.get((column, row))
                cells.append(_pair_cell(entry, flipped, door, labels) if entry is not None and
                             order.index(column) < position else None)
            matrix.append({"row": door.code(row), "cells": cells})
        tables.append({"metric": door.data(str(metric)), "columns": [door.code(name) for name in order[:-1]],
                       "rows": matrix, "family": door.data(str(family.get("family", len(by_pair)))),
                       "sample": sample_view(results, door, labels)})
    return tables or None


def per_query_view(results: Results, door: Door, labels: Labels, preferred: Iterable[str] = ()) -> dict:
    """Every query of the results file with each measured row's value of up to three metrics (the
    change over the baseline beside them) and the candidate diagnosis, the queries with the largest
    change on any of them first. The metrics are those the output's table or charts show (`preferred`), in that
    order, else the file's own: any metric the evaluation computed. A file that holds no per-query
    values says so (`absent`), so the table never disappears without a word."""
    model = results.model
    query_ids = model.query_ids
    baseline = model.roles.baseline
    rows = [row for row in model.measured_rows if model.per_query(row)]
    values = {row: model.per_query(row) for row in rows}
    sample = sample_view(results, door, labels)
    if not rows or not query_ids:
        return {"absent": labels.per_query_absent_values, "sample": sample}
    computed = [name for name in model.metric_names] or sorted(
        {name for row in rows for entry in values[row].values() if isinstance(entry, dict) for name in entry})
    ordered = [name for name in preferred if name in computed] + [name for name in computed if name not in preferred]
    metrics = [name for name in ordered
               if all(isinstance(values[row].get(q, {}).get(name), (int, float)) for row in rows for q in query_ids)][:3]
    if not metrics:
        return {"absent": labels.per_query_absent_values, "sample": sample}
    texts = model.query_texts

    def change(row: str, query: str, metric: str) -> float:
        if row == baseline or baseline not in values:
            return 0.0
        return float(values[row][query][metric]) - float(values[baseline][query][metric])

    order = sorted(range(len(query_ids)),
                   key=lambda i: (-max(abs(change(r, query_ids[i], m)) for r in rows for m in metrics), i))
    view_rows = []
    for index in order:
        query = query_ids[index]
        cells = []
        for metric in metrics:
            for row in rows:
                value = format_number(values[row][query][metric], ".3f")
                delta = change(row, query, metric)
                sign = "win" if delta > 1e-12 else "loss" if delta < -1e-12 else "tie"
                if row != baseline and baseline in values:
                    value += f" ({format_number(delta, '+.3f')})"
                    cells.append({"value": door.data(value), "sign": sign})
                else:
                    cells.append({"value": door.data(value), "sign": "base"})
        verdicts = [f"{row}: {entry['diagnosis']}" for row in rows
                    if isinstance((entry := model.diagnosis(row).get(query, {})).get("diagnosis"), str)]
        text = texts.get(query, "")
        view_rows.append({"id": door.data(query), "text": door.data(text if len(text) <= 160 else text[:157] + "..."),
                          "cells": cells, "diagnosis": door.data("; ".join(verdicts))})
    columns = [door.data(f"{row} {metric}") for metric in metrics for row in rows]
    return {"columns": columns, "rows": view_rows, "sample": sample, "absent": None}
