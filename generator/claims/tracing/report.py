"""What a check found, and the three ways to say it: text for people, JSON for machines, and
GitHub workflow commands for CI annotations.

Scores are `U/T`: T counts every claim in the ledger, struck or not; the current score's U counts
active claims that do not trace (struck claims stay in T but not in U). The first-draft score is
the first entry of the trace history (`generator.claims.record.history`).
"""

from __future__ import annotations

from dataclasses import field
from pathlib import Path
from typing import Any

from generator.claims.record.anchoring import Anchoring
from generator.claims.evidence import Evidence
from generator.claims.tracing.view import Finding
from generator.claims.record.freeze import FreezeEntry
from generator.claims.language.ledger import Claim
from generator.claims.record.triggers import DecisionRow
from generator.core.dataclass import dataclass
from generator.storage.paths import display_path


# Who wrote a claim's sentence (generator.claims.tracing.checker.origin_of): the package from a
# computed result, the package from a design quote, or the author.
FRAME, QUOTE, AUTHOR = "frame", "quote", "author"
ORIGINS = (FRAME, QUOTE, AUTHOR)


@dataclass
class ClaimResult:
    claim: Claim
    traceable: bool
    findings: list[Finding]
    rendered_text: str
    evidence: list[Evidence] = field(default_factory=list)
    # The sentence as a reader sees it, values filled, canonical (generator.core.text.characters.fold).
    canonical_text: str = ""

    # The claim of the same output it repeats word for word (generator.claims.language.repeats): counted once.
    repeats: str | None = None
    # Who wrote the sentence (ORIGINS): the reports show the author's words as such.
    origin: str = AUTHOR
    # A frame that reads a rule or threshold fixed after the results: its sentence says so.
    post_hoc: bool = False

    @property
    def reasons(self) -> list[str]:
        """What each finding says, in order."""
        return [finding.message for finding in self.findings]

    @property
    def counts_untraceable(self) -> bool:
        """Counts in the current score's U: active, not traceable, and not a repeat."""
        return not self.traceable and not self.claim.struck and self.repeats is None

    @property
    def fails(self) -> bool:
        """Fails the check: active and not traceable (a repeat too: a reader sees it)."""
        return not self.traceable and not self.claim.struck


@dataclass
class CheckReport:
    results: list[ClaimResult]
    untraceable: int
    total: int
    struck: int
    by_output: dict[str, tuple[int, int]]
    by_kind: dict[str, tuple[int, int]]
    first_draft: tuple[int, int] | None
    freeze_ok: bool
    freeze_problems: list[str]
    ledger_sha256: str
    design_freeze_sha256: str | None
    inputs_sha256: dict[str, str]
    ledger_path: Path
    history_recorded: bool = False
    freeze_documents: dict[str, str] = field(default_factory=dict)
    history_problems: list[str] = field(default_factory=list)
    # Section titles and strike reasons that carry a result beside a result entity (the closed rule).
    label_problems: list[str] = field(default_factory=list)
    # Every decision record's reversal trigger, evaluated on the results (generator.claims.record.triggers).
    decisions: list[DecisionRow] = field(default_factory=list)
    # What git shows of the order of design, first draft and results (generator.claims.record.anchoring),
    # and every design freeze, oldest first (generator.claims.record.freeze).
    anchoring: Anchoring = field(default_factory=lambda: Anchoring(git=False))
    freeze_entries: list[FreezeEntry] = field(default_factory=list)
    # The score by who wrote the sentences: frames (the package, from results), quotes (the package,
    # from the design) and the author's words.
    by_origin: dict[str, tuple[int, int]] = field(default_factory=dict)
    # Results files an output or a decision shows that do not re-derive, and every file re-derived
    # (real path -> sha256): what a render may read (generator.claims.tracing.shown).
    results_problems: list[str] = field(default_factory=list)
    rederived: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return (not self.failing() and self.freeze_ok and not self.history_problems and not self.label_problems
                and not self.results_problems)

    def result(self, claim_id: str) -> ClaimResult:
        for result in self.results:
            if result.claim.id == claim_id:
                return result
        raise KeyError(claim_id)

    def failing(self) -> list[ClaimResult]:
        """The active claims that do not trace, in ledger order (what every format reports)."""
        return [result for result in self.results if result.fails]

    def repeated(self) -> list[ClaimResult]:
        """The claims that repeat an earlier claim of their output, counted once."""
        return [result for result in self.results if result.repeats is not None]


def claim_location(ledger_display: str, claim: Claim) -> str:
    """`claims/ledger.yaml:14: claim dense-ndcg5 (evaluative)`: how every report names a claim."""
    return f"{ledger_display}:{claim.line}: claim {claim.id} ({claim.kind})"


def finding_text(finding: Finding) -> str:
    """`[word-licensed] the sentence says 'beats' ...`: a finding with its rule's code first."""
    return f"[{finding.code}] {finding.message}"


def failure_lines(report: CheckReport) -> list[str]:
    """One line per failing claim (all its reasons) and per freeze problem, location first."""
    ledger = display_path(report.ledger_path)
    lines = [f"{claim_location(ledger, result.claim)}: "
             f"{'; '.join(finding_text(finding) for finding in result.findings) or 'untraceable'}"
             for result in report.failing()]
    lines.extend(f"design freeze: {problem}" for problem in report.freeze_problems)
    lines.extend(f"trace history: {problem}" for problem in report.history_problems)
    lines.extend(f"label: {problem}" for problem in report.label_problems)
    lines.extend(f"results: {problem}" for problem in report.results_problems)
    return lines


def decision_lines(report: CheckReport) -> list[str]:
    """One line per decision record's trigger: what it computed and the values it read; then one
    per decision whose rule was set or moved after results existed (post hoc)."""
    lines = []
    for row in report.decisions:
        read = ", ".join(f"{name} = {_value_text(entry)}" for name, entry in sorted(row.read.items()))
        # An undecided trigger has no outcome of its own to name ("cannot be decided" twice).
        outcome = f": {row.outcome}" if row.outcome != row.state else ""
        unreadable = next((entry["unreadable"] for entry in row.read.values() if entry.get("unreadable")), None)
        lines.append(f"Decision {row.trigger.decision}: trigger {row.state}{outcome} "
                     f"(when {row.trigger.predicate.source}; {read})" + _power_text(row)
                     + (f"; {unreadable}" if unreadable else ""))
    for row in report.decisions:
        for change in row.post_hoc:
            acknowledged = "acknowledged" if change.decision_acknowledged else "NOT acknowledged"
            lines.append(f"Decision {row.trigger.decision} is post hoc: {rule_change_text(change)}; {acknowledged}, "
                         f"reason: {change.entry.reason or 'none given'}")
    return lines


def _power_text(row: Any) -> str:
    """What the sample can detect, when the rule states the effect it needs; why it cannot be
    decided, when that is the reason."""
    power = row.power
    text = ""
    if power and power.get("minimum_detectable_effect") is not None:
        needed = power.get("queries_needed")
        text = (f"; {power['queries']} queries detect {power['minimum_detectable_effect']:.3g} or more at power "
                f"{power['power']:g} (alpha {power['alpha']:g}), the effect {power['minimum_effect']:g} needs "
                + (f"about {needed:,} queries" if needed else "more queries than can be counted"))
    elif power:
        text = f"; sample size not weighed: {power.get('reason')}"
    if row.reason and row.reason.startswith("cannot be decided with"):
        text += f"; {row.reason}"
    return text


def rule_change_text(change: Any) -> str:
    """`its trigger and budget changed after the results existed (freeze 2, 2026-11-30T13:50:41Z)`."""
    parts = change.parts
    what = ("its rule was written" if parts == ["added"] else
            "its rule was removed" if parts == ["removed"] else
            "its " + " and ".join({"trigger": "trigger", "outcome": "outcome words",
                                   "budget": "budget"}[part] for part in parts) + " changed")
    when = "after the results existed" if change.entry.results_existed else "before any results"
    return f"{what} {when} (freeze {change.entry.number}, {change.entry.frozen_at})"


def order_lines(report: CheckReport) -> list[str]:
    """What the design freeze and git show of the order: every amendment made after results
    existed, and whether the design and the first draft are anchored before the results."""
    lines = []
    for entry in report.freeze_entries:
        if entry.results_existed and entry.data["changes"] and entry.number > 1:
            documents = ", ".join(sorted(entry.data["changes"]))
            lines.append(f"Design amended after results: freeze {entry.number} ({entry.frozen_at}) changed "
                         f"{documents}; reason: {entry.reason or 'none given'}")
    anchoring = report.anchoring
    if not report.freeze_entries:
        design = "design not frozen"
    else:
        first = report.freeze_entries[0]
        design = "design first frozen " + ("after results existed" if first.results_existed else "before any results")
    if not anchoring.git:
        lines.append(f"Order: {design} (by the freeze's own record); not anchored (no git history).")
    elif report.freeze_entries:
        lines.append(f"Order: {design}, {anchoring.entry(report.freeze_entries[0].number).describe()}; "
                     f"first draft {anchoring.first_draft.describe()}.")
    else:
        lines.append(f"Order: {design}; first draft {anchoring.first_draft.describe()}.")
    return lines
def _value_text(entry: dict[str, Any]) -> str:
    if not entry.get("measured"):
        return "not measured"
    value = entry.get("value")
    return f"{value:.6g}" if isinstance(value, float) else str(value)


ORIGIN_WORDS = {FRAME: "written by the package from results", QUOTE: "quoted from the design by the package",
                AUTHOR: "the author's words"}


def origin_line(report: CheckReport) -> str:
    """`Sentences: 14 written by the package from results (0 untraceable), ...`: who wrote what."""
    return "Sentences: " + "; ".join(f"{total} {ORIGIN_WORDS[name]} ({untraceable} untraceable)"
                                     for name, (untraceable, total) in report.by_origin.items()) + "."


def summary_lines(report: CheckReport) -> list[str]:
    lines = [f"Trace score: untraceable claims / total claims = {report.untraceable}/{report.total}"
             + (f" ({report.struck} struck)" if report.struck else "")
             + (f"; first draft {report.first_draft[0]}/{report.first_draft[1]}." if report.first_draft
                else "; no first-draft score recorded yet.")]
    lines.append("By output: " + ", ".join(f"{name} {u}/{t}" for name, (u, t) in report.by_output.items())
                 + "; by kind: " + ", ".join(f"{name} {u}/{t}" for name, (u, t) in report.by_kind.items()) + ".")
    if report.by_origin:
        lines.append(origin_line(report))
    failures = []
    failing = len(report.failing())
    if failing:
        failures.append(f"{report.untraceable} of {report.total} claims"
                        + (f" (and {failing - report.untraceable} repeated)" if failing > report.untraceable else ""))
    if not report.freeze_ok:
        failures.append(f"design freeze broken ({len(report.freeze_problems)} "
                        f"problem{'s' if len(report.freeze_problems) != 1 else ''})")
    if report.history_problems:
        failures.append(f"first-draft history does not prove itself ({len(report.history_problems)} "
                        f"problem{'s' if len(report.history_problems) != 1 else ''})")
    if report.label_problems:
        failures.append(f"{len(report.label_problems)} of the titles and strike reasons "
                        f"carr{'ies' if len(report.label_problems) == 1 else 'y'} a result")
    if report.results_problems:
        failures.append(f"{len(report.results_problems)} results file{'s' if len(report.results_problems) != 1 else ''}"
                        " shown without re-deriving")
    if failures:
        lines.append("Check failed: " + "; ".join(failures))
    elif report.struck:
        lines.append(f"All {report.total - report.struck} active claims trace ({report.struck} of "
                     f"{report.total} struck).")
    else:
        lines.append(f"All {report.total} claims trace.")
    return lines


def format_text(report: CheckReport) -> str:
    ledger_display = display_path(report.ledger_path)
    lines = []
    for result in report.failing():
        for finding in result.findings:
            lines.append(f"{claim_location(ledger_display, result.claim)}: {finding_text(finding)}")
    for result in report.repeated():
        lines.append(f"{claim_location(ledger_display, result.claim)}: repeats claim {result.repeats} of the same "
                     "output word for word: counted once in the trace score")
    lines.extend(report.freeze_problems)
    lines.extend(report.history_problems)
    lines.extend(report.label_problems)
    lines.extend(report.results_problems)
    lines.extend(decision_lines(report))
    lines.extend(order_lines(report))
    lines.extend(summary_lines(report))
    return "\n".join(lines) + "\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def format_github(report: CheckReport) -> str:
    ledger_display = display_path(report.ledger_path)
    lines = []
    for result in report.failing():
        for finding in result.findings:
            title = _escape_property(f"{finding.code}: claim {result.claim.id} ({result.claim.kind})")
            lines.append(f"::error file={_escape_property(ledger_display)},line={result.claim.line},"
                         f"title={title}::{_escape_data(finding.message)}")
    for title, problems in (("design freeze", report.freeze_problems), ("trace history", report.history_problems),
                            ("label", report.label_problems), ("results", report.results_problems)):
        for problem in problems:
            name, _, message = problem.partition(": ")
            lines.append(f"::error file={_escape_property(name.rstrip('/'))},title={title}::{_escape_data(message)}")
    summary = summary_lines(report)
    lines.append(f"::notice title=trace score::{_escape_data(summary[0] + ' ' + summary[1])}")
    lines.extend(summary)
    return "\n".join(lines) + "\n"


def report_dict(report: CheckReport) -> dict[str, Any]:
    claims = []
    for result in report.results:
        claim = result.claim
        item: dict[str, Any] = {
            "id": claim.id, "line": claim.line, "output": claim.output, "section": claim.section,
            "kind": claim.kind, "status": claim.status, "traceable": result.traceable,
            "reasons": result.reasons, "findings": [{"code": finding.code, "message": finding.message}
                                                    for finding in result.findings],
            "text": claim.text, "canonical_text": result.canonical_text, "rendered_text": result.rendered_text,
            "origin": result.origin, "post_hoc": result.post_hoc,
            "frame": ({"kind": claim.frame.kind, "subject": list(claim.frame.subject), **claim.frame.options}
                      if claim.frame else None), "language": claim.language,
            "evidence": [_evidence_dict(item) for item in result.evidence], "repeats": result.repeats}
        if claim.struck:
            item["strike_reason"] = claim.strike_reason
            item["strike_display"] = claim.strike_display
        claims.append(item)
    return {
        "ok": report.ok, "ledger": display_path(report.ledger_path), "ledger_sha256": report.ledger_sha256,
        "untraceable": report.untraceable, "total": report.total, "struck": report.struck,
        "first_draft": ({"untraceable": report.first_draft[0], "total": report.first_draft[1]}
                        if report.first_draft else None),
        "by_output": {name: {"untraceable": u, "total": t} for name, (u, t) in report.by_output.items()},
        "by_kind": {name: {"untraceable": u, "total": t} for name, (u, t) in report.by_kind.items()},
        "by_origin": {name: {"untraceable": u, "total": t} for name, (u, t) in report.by_origin.items()},
        "freeze": {"ok": report.freeze_ok, "problems": report.freeze_problems,
                   "sha256": report.design_freeze_sha256},
        "history": {"ok": not report.history_problems, "problems": report.history_problems},
        "labels": {"ok": not report.label_problems, "problems": report.label_problems},
        "results": {"ok": not report.results_problems, "problems": report.results_problems},
        "inputs_sha256": report.inputs_sha256, "history_recorded": report.history_recorded,
        "decisions": [row.as_dict() for row in report.decisions],
        "order": {"git": report.anchoring.git,
                  "results_first_committed": report.anchoring.results_commit,
                  "first_draft": report.anchoring.first_draft.describe(),
                  "freezes": [{"freeze": entry.number, "frozen_at": entry.frozen_at,
                               "results": entry.data["results"], "changed": sorted(entry.data["changes"]),
                               "amended": entry.amended, "post_hoc": entry.post_hoc, "reason": entry.reason,
                               "anchor": report.anchoring.entry(entry.number).describe()}
                              for entry in report.freeze_entries]},
        "claims": claims}


def _evidence_dict(evidence: Evidence) -> dict[str, Any]:
    if evidence.kind == "decision":
        return {"kind": "decision", "ok": evidence.ok, "document": evidence.document, "line": evidence.line,
                "heading": evidence.heading, "trigger": evidence.predicate, "decision": evidence.value}
    if evidence.kind == "design":
        return {"kind": "design", "ok": evidence.ok, "document": evidence.document, "line": evidence.line,
                "heading": evidence.heading, "quote": evidence.quote}
    return {"kind": "measured", "ok": evidence.ok, "file": evidence.file, "path": evidence.path,
            "name": evidence.name, "value": evidence.value, "formatted": evidence.formatted,
            "predicate": evidence.predicate, "predicate_holds": evidence.predicate_holds}
