"""`readout check`: prove every ledger claim against the design documents and the results.

A claim **traces** when it has at least one source and every source holds:

* design source (generator.claims.design): the quote is in the frozen document;
* measured source (generator.claims.measured): every path resolves to a measured value and the
  predicate, if any, is true;
* an evaluative or causal claim that cites a measured source states its comparison as a predicate;
* every placeholder fills with its format spec;
* every number written in the text is accounted for (generator.claims.numbers).

`check_project` also checks the design freeze and keeps the first-draft history
(generator.claims.freeze). It writes nothing but that history file, and only when asked.
What the report holds and how it is printed: generator.claims.report.
"""

from __future__ import annotations

import string
from datetime import datetime, timezone
from typing import Any, Callable, Iterable

from generator.claims.design import DesignLibrary, check_design_source
from generator.claims.freeze import append_history, draft_score, freeze_problems, history_entry, read_history
from generator.claims.ledger import KINDS, OUTPUTS, Claim, DesignSource, Ledger, MeasuredSource, literal_text, load_ledger
from generator.claims.measured import ResultsFiles, evaluate_predicate, resolve_measured_source, short
from generator.claims.numbers import number_tokens, number_value
from generator.claims.report import CheckReport, ClaimResult, Evidence
from generator.errors import InputError
from generator.fileio import display_path, sha256_file
from generator.project import Project

UNFILLED_PLACEHOLDER = "[no value]"


class _Context:
    """What every claim of one check shares: the design documents and the results files read."""

    def __init__(self, project: Project, ledger_display: str):
        self.design = DesignLibrary(project.design_dir)
        self.results = ResultsFiles(project.outputs_dir)
        self.outputs_dir = project.outputs_dir
        self.ledger_display = ledger_display


def check_claim(claim: Claim, context: _Context) -> ClaimResult:
    reasons: list[str] = []
    evidence: list[Evidence] = []
    if not claim.sources:
        reasons.append("no source: attach a design quote or a measured path, or strike it with a reason")
    accounted: set[float] = set()
    values: dict[str, Any] = {}
    value_evidence: dict[str, Evidence] = {}
    for source in claim.sources:
        if isinstance(source, DesignSource):
            accounted.update(number_value(token) for token in number_tokens(source.quote))
            found = check_design_source(source, context.design, claim.id, context.ledger_display)
            evidence.append(found.evidence)
            if found.reason:
                reasons.append(found.reason)
        else:
            results = context.results.get(source.file, claim, source.line, context.ledger_display)
            measured = resolve_measured_source(source, results, context.outputs_dir)
            evidence.extend(measured.evidence.values())
            value_evidence.update(measured.evidence)
            values.update(measured.values)
            reasons.extend(measured.reasons)
    for source in claim.measured_sources:
        if source.compiled is None:
            continue
        accounted.update(number_value(token) for token in number_tokens(source.predicate or ""))
        if source.compiled.names <= set(values):
            holds, reason = evaluate_predicate(source, values)
            if reason:
                reasons.append(reason)
            for name in source.steps:
                value_evidence[name].predicate_holds = holds
    if claim.kind in ("evaluative", "causal") and claim.measured_sources and not any(
            source.compiled is not None for source in claim.measured_sources):
        reasons.append(f"{claim.kind} claim cites measured values without a predicate: state the comparison "
                       "(for example `hybrid > dense`) so the checker can hold it")
    rendered = _fill_placeholders(claim, values, value_evidence, reasons)
    reasons.extend(_typed_numbers(claim, accounted, values))
    return ClaimResult(claim=claim, traceable=not reasons, reasons=reasons, rendered_text=rendered,
                       evidence=evidence)


def _fill_placeholders(claim: Claim, values: dict[str, Any], value_evidence: dict[str, Evidence],
                       reasons: list[str]) -> str:
    """The claim's text as the reader sees it. A placeholder that cannot be filled is shown as a
    visible gap, never as a made-up value or as raw `{name:.3f}` markup (struck and draft claims
    are still rendered for the reader)."""
    formatted: dict[str, str] = {}
    for placeholder in claim.placeholders:
        if placeholder.name not in values:
            continue    # its path already failed
        value = values[placeholder.name]
        if isinstance(value, (dict, list)):
            reasons.append(f"placeholder {{{placeholder.name}}}: {value_evidence[placeholder.name].path} is "
                           f"{'an object' if isinstance(value, dict) else 'a list'}; only numbers and text "
                           "can be placed in a sentence")
            continue
        try:
            formatted[placeholder.name] = format(value, placeholder.spec)
        except (ValueError, TypeError) as error:
            reasons.append(f"placeholder {{{placeholder.name}:{placeholder.spec}}} cannot format "
                           f"{short(value)}: {error}")
            continue
        value_evidence[placeholder.name].formatted = formatted[placeholder.name]
    parts = []
    for literal, name, _spec, _conversion in string.Formatter().parse(claim.text):
        parts.append(literal)
        if name is not None:
            parts.append(formatted.get(name, UNFILLED_PLACEHOLDER))
    return "".join(parts)


def _typed_numbers(claim: Claim, accounted: set[float], values: dict[str, Any]) -> list[str]:
    """A reason for every number in the literal text that no quote or predicate accounts for."""
    reasons = []
    for token in number_tokens(literal_text(claim.text)):
        if number_value(token) in accounted:
            continue
        hint = ""
        for name, value in values.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                decimals = len(token.split(".")[1]) if "." in token else 0
                if f"{value:.{decimals}f}" == token.replace(",", ""):
                    hint = f"; it matches {name} = {short(value)}: write {{{name}:.{decimals}f}}"
                    break
        reasons.append(f"number {token} is typed by hand: no placeholder or quoted design span accounts for "
                       f"it{hint}")
    return reasons


def _score(results: Iterable[ClaimResult], key: Callable[[Claim], str], order: tuple[str, ...]
           ) -> dict[str, tuple[int, int]]:
    scores: dict[str, list[int]] = {}
    for result in results:
        bucket = scores.setdefault(key(result.claim), [0, 0])
        bucket[0] += result.counts_untraceable
        bucket[1] += 1
    return {name: (scores[name][0], scores[name][1]) for name in order if name in scores}


def check_ledger(ledger: Ledger, project: Project) -> tuple[list[ClaimResult], dict[str, str]]:
    """Check every claim; returns the results (ledger order) and the sha256 of each results file read."""
    ledger_display = display_path(ledger.path)
    if project.outputs is not None:
        for claim in ledger.claims:
            spec = project.outputs.get(claim.output)
            if spec is None:
                raise InputError(f"claim {claim.id}: output {claim.output!r} is not declared in readout.yaml "
                                 f"outputs; declared: {', '.join(project.outputs)}", path=ledger_display,
                                 line=claim.field_lines.get("output", claim.line), field="output")
            if claim.section not in spec.section_ids:
                raise InputError(f"claim {claim.id}: section {claim.section!r} is not declared for output "
                                 f"{claim.output} in readout.yaml; choose one of {', '.join(spec.section_ids)}",
                                 path=ledger_display, line=claim.field_lines.get("section", claim.line),
                                 field="section")
    context = _Context(project, ledger_display)
    checked = [check_claim(claim, context) for claim in ledger.claims]
    return checked, context.results.sha256()


def check_project(project: Project, *, record_history: bool = False, now: datetime | None = None) -> CheckReport:
    """Check the project's ledger and design freeze. Writes nothing unless `record_history` is set,
    and then only a new line in the history when the ledger's sha256 has never been checked."""
    ledger = load_ledger(project.ledger_path)
    checked, inputs = check_ledger(ledger, project)
    problems, current = freeze_problems(project)
    untraceable = sum(result.counts_untraceable for result in checked)
    struck = sum(result.claim.struck for result in checked)
    history = read_history(project)
    recorded = False
    if record_history and not any(entry["ledger_sha256"] == ledger.sha256 for entry in history):
        entry = history_entry(now or datetime.now(timezone.utc), ledger.sha256, untraceable, struck, len(checked))
        append_history(project, entry)
        history.append(entry)
        recorded = True
    return CheckReport(
        results=checked, untraceable=untraceable, total=len(checked), struck=struck,
        by_output=_score(checked, lambda claim: claim.output, OUTPUTS),
        by_kind=_score(checked, lambda claim: claim.kind, KINDS),
        first_draft=draft_score(history[0]) if history else None, freeze_ok=not problems,
        freeze_problems=problems, ledger_sha256=ledger.sha256,
        design_freeze_sha256=sha256_file(project.freeze_path) if project.freeze_path.exists() else None,
        inputs_sha256=inputs, ledger_path=ledger.path, history_recorded=recorded, freeze_documents=current)
