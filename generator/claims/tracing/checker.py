"""`readout check`: prove every ledger claim against the design documents and the results.

Each claim is read once into a view (generator.claims.tracing.view: its sources bound, its
predicates and assertions evaluated, its sentence as a reader sees it, canonical) and put through
every rule of the registry (generator.claims.tracing.rules; docs/rules.md lists each with its
code). A claim **traces** when no rule finds anything.

`check_project` also checks the design freeze and the tamper-evident first-draft history
(generator.claims.record). It writes nothing but that history file, and only when asked. A claim
whose canonical sentence (as a reader sees it, values filled, look-alikes folded) is the same
words as an earlier claim of its output is a repeat, counted once (generator.claims.language.
repeats). What the report holds and how it is printed: generator.claims.tracing.report.
"""

from __future__ import annotations

import gc
import string
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any, Callable, Iterable, Iterator

from generator.core.text.characters import fold
from generator.claims.language.ledger import KINDS, OUTPUTS, Claim, Ledger
from generator.claims.language.ledger_loader import load_ledger
from generator.claims.language.repeats import find_repeats
from generator.claims.language.visible import UNFILLED_PLACEHOLDER
from generator.storage.memo import save_books
from generator.claims.record.anchoring import ask_git_ahead, project_anchoring
from generator.claims.record.freeze import read_freeze_log
from generator.claims.record.freeze_check import freeze_problems
from generator.claims.record.frozen_rules import rule_changes
from generator.claims.record.git_questions import git_session, in_background
from generator.claims.record.history import append_history, first_draft_score, history_entry, read_history
from generator.claims.record.triggers import DecisionRow
from generator.claims.tracing.context import CheckContext
from generator.claims.tracing.report import AUTHOR, FRAME, ORIGINS, QUOTE, CheckReport, ClaimResult
from generator.claims.tracing.rules import findings
from generator.claims.tracing.rules.prose import closed_rule_problems
from generator.claims.tracing.shown import vouch_for_shown
from generator.claims.tracing.view import build_view
from generator.storage.errors import InputError
from generator.storage.fileio import sha256_file
from generator.storage.paths import display_path
from generator.project import Project


def rendered_markdown(text: str, formatted: dict[str, str]) -> str:
    """The claim's Markdown as the reports show it. A placeholder that cannot be filled is a
    visible gap, never a made-up value or raw `{name:.3f}` markup (struck and draft claims are
    still rendered)."""
    parts = []
    for literal, name, _spec, _conversion in string.Formatter().parse(text):
        parts.append(literal)
        if name is not None:
            parts.append(formatted.get(name, UNFILLED_PLACEHOLDER))
    return "".join(parts)


def check_claim(claim: Claim, context: CheckContext) -> ClaimResult:
    """One claim through every rule of the registry (generator.claims.tracing.rules), read from
    one view of it (generator.claims.tracing.view)."""
    view = build_view(claim, context)
    found = findings(view)
    return ClaimResult(claim=claim, traceable=not found, findings=found,
                       rendered_text=rendered_markdown(view.template, view.formatted), evidence=view.evidence,
                       canonical_text=fold(view.plain), origin=origin_of(claim),
                       post_hoc=bool(view.reading is not None and view.reading.post_hoc))


def origin_of(claim: Claim) -> str:
    """Who wrote the sentence: the package from a computed result (`frame`), the package from a
    design quote (`quote`), or the author (`author`: shown to the reader as the author's words)."""
    if claim.frame is None:
        return AUTHOR
    return QUOTE if claim.frame.kind == "quote" else FRAME


def _score(results: Iterable[ClaimResult], key: Callable[[Claim], str], order: tuple[str, ...]
           ) -> dict[str, tuple[int, int]]:
    scores: dict[str, list[int]] = {}
    for result in results:
        bucket = scores.setdefault(key(result.claim), [0, 0])
        bucket[0] += result.counts_untraceable
        bucket[1] += 1
    return {name: (scores[name][0], scores[name][1]) for name in order if name in scores}


def _check_placement(ledger: Ledger, project: Project, ledger_display: str) -> None:
    if project.outputs is None:
        return
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


def check_ledger(ledger: Ledger, project: Project, freeze_log: Any = None
                 ) -> tuple[list[ClaimResult], dict[str, str], list[DecisionRow], Any]:
    """Check every claim; returns the results (ledger order), the sha256 of each results file read
    and every decision record's trigger, evaluated (with what the design freeze `freeze_log` says
    of its rule)."""
    context = ledger_context(ledger, project, freeze_log)
    checked = [check_claim(claim, context) for claim in ledger.claims]
    return checked, context.results.sha256(), context.decisions


def ledger_context(ledger: Ledger, project: Project, freeze_log: Any = None) -> CheckContext:
    """What every claim of one check shares, the claims' placement in readout.yaml checked first."""
    ledger_display = display_path(ledger.path)
    _check_placement(ledger, project, ledger_display)
    return CheckContext(project, ledger_display, ledger.languages, tuple(claim.id for claim in ledger.claims),
                        freeze_log)


def label_problems(project: Project, ledger: Ledger, context: CheckContext) -> list[str]:
    """Section titles and strike reasons are read by the reader too: beside a result entity they
    keep to the closed rule of free prose (generator.claims.tracing.rules.prose), or a heading
    ("Hybrid takes the cake") would carry the claim no ledger sentence may."""
    problems = []
    for output_name, spec in (project.outputs or {}).items():
        for section in spec.sections:
            for _code, message in closed_rule_problems(context, fold(section.title), "en", context.design.all_text(),
                                                       what="the title names"):
                problems.append(f"{display_path(project.config_path)}: outputs.{output_name}, section {section.id}: "
                                f"{message}")
    ledger_display = display_path(ledger.path)
    for claim in ledger.claims:
        if claim.strike_reason:
            for _code, message in closed_rule_problems(context, fold(claim.strike_reason), claim.language,
                                                       context.design.all_text(), what="the strike reason names"):
                problems.append(f"{ledger_display}:{claim.field_lines.get('strike_reason', claim.line)}: claim "
                                f"{claim.id}: {message}")
    return problems


def check_project(project: Project, *, record_history: bool = False, now: datetime | None = None,
                  git_history: bool = True) -> CheckReport:
    """Check the project's ledger, design freeze and first-draft history. Writes nothing unless
    `record_history` is set, and then only a new history line for a ledger never checked before.
    With `git_history=False` nothing is asked of git (what a render shows must not depend on the
    clone); otherwise a shallow or grafted clone is refused with the fix."""
    with git_session(history=git_history), _no_cycle_collection():
        report = _check_project(project, record_history, now)
    save_books()
    return report


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """The cyclic garbage collector paused for one check. A check builds many objects and no
    cycles (tests/claims/test_checker.py holds it to that), so every pass the collector makes
    during it walks a growing heap and frees nothing: about a seventh of a check of 10k claims.
    Reference counting still frees everything as usual; the collector's state is put back after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _check_project(project: Project, record_history: bool, now: datetime | None) -> CheckReport:
    ledger = load_ledger(project.ledger_path)
    written = find_repeats((claim.id, claim.output, claim.frame.key() if claim.frame else claim.text)
                           for claim in ledger.claims)
    log = read_freeze_log(project)
    git_answered = in_background(lambda: ask_git_ahead(project, log))
    context = ledger_context(ledger, project, log)
    checked = [check_claim(claim, context) for claim in ledger.claims]
    inputs, decisions = context.results.sha256(), context.decisions
    shown = vouch_for_shown(project, context.results, decisions)   # every results file an output shows
    problems_of_labels = label_problems(project, ledger, context)
    # The same sentence for a reader is a repeat however its source spells it (placeholders renamed,
    # a look-alike letter, a soft hyphen): compared as rendered, canonical.
    rendered = find_repeats((result.claim.id, result.claim.output, result.canonical_text) for result in checked)
    for result in checked:
        result.repeats = written.get(result.claim.id) or rendered.get(result.claim.id)
    counted = [result for result in checked if result.repeats is None]
    git_answered()
    problems, current = freeze_problems(project, log)
    untraceable = sum(result.counts_untraceable for result in counted)
    struck = sum(result.claim.struck for result in counted)
    history = read_history(project)
    recorded = False
    if record_history and not history.problems and not any(
            entry["ledger_sha256"] == ledger.sha256 for entry in history.entries):
        entry = history_entry(history, now or datetime.now(timezone.utc), ledger.sha256, untraceable, struck,
                              len(counted))
        recorded = append_history(project, entry, history)
    anchoring = project_anchoring(project, log, history.entries[0]["ledger_sha256"] if history.entries else None)
    problems.extend(anchoring.problems)
    for row in decisions:
        row.changes = rule_changes(log, row.trigger.decision)
        row.anchor = anchoring.entry(row.changes[-1].entry.number) if row.changes else None
    return CheckReport(
        results=checked, untraceable=untraceable, total=len(counted), struck=struck,
        by_output=_score(counted, lambda claim: claim.output, OUTPUTS),
        by_kind=_score(counted, lambda claim: claim.kind, KINDS),
        by_origin=_score(counted, origin_of, ORIGINS),
        first_draft=first_draft_score(history), freeze_ok=not problems,
        freeze_problems=problems, history_problems=history.problems, ledger_sha256=ledger.sha256,
        label_problems=problems_of_labels,
        design_freeze_sha256=sha256_file(project.freeze_path) if project.freeze_path.exists() else None,
        inputs_sha256=inputs, ledger_path=ledger.path, history_recorded=recorded, freeze_documents=current,
        decisions=decisions, anchoring=anchoring, freeze_entries=list(log.entries) if log is not None else [],
        results_problems=shown.problems, rederived=shown.rederived)
