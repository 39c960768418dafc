"""The view models templates receive: claims by section with their source notes, provenance groups,
the decision table and the score table (the results tables are generator.render.tables). Every
string in them has already passed a door."""

from __future__ import annotations

import re
from dataclasses import field
from typing import Any, Iterable

from generator.claims.tracing.report import CheckReport, ClaimResult
from generator.core.dataclass import dataclass
from generator.project.outputs import OutputSpec
from generator.claims.record.quotable_units import reduce_markdown
from generator.render.sources import design_quote, measured_sentence, short_value
from generator.render.doors import Door
from generator.render.labels import Labels
from generator.render.values import format_number, raw_json
from generator.core.results import MISSING, RESULTS_NAME, Results


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
