"""`readout check`: prove every ledger claim against the design documents and the results.

A claim **traces** when it has at least one source and all of these hold:

* design sources (generator.claims.design): each quote is one or more whole sentences, list
  items or table cells of a frozen design document;
* measured sources (generator.claims.measured): each results file is sealed and re-derives from
  its run files and judgements (generator.claims.rederive); every path resolves to a measured,
  finite value; every declared value is shown in the text or compared in a predicate;
* predicates (generator.claims.predicates): true, able to fail (not a tautology), and present
  whenever the claim shows two or more measured numbers, uses comparative wording, or is
  evaluative or causal; every number it shows is compared in one;
* placeholders fill with an allowed format (generator.claims.formats);
* attribution (generator.claims.attribution): the sentence names the row, the query and the
  query count each shown value belongs to;
* numbers (generator.numerals): every numeral a reader sees in the rendered sentence, in any
  spelling, was filled from results or lies inside a quoted design span; predicate constants
  account for nothing;
* no link or image leaves the report (generator.claims.visible).

`check_project` also checks the design freeze and the tamper-evident first-draft history
(generator.claims.history). It writes nothing but that history file, and only when asked.
What the report holds and how it is printed: generator.claims.report.
"""

from __future__ import annotations

import math
import re
import string
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable

from generator.claims.attribution import (ShownValue, attribution_reasons, is_query_count, mention_spans,
                                          mentions_row, named_rows, query_of, query_spans, rows_of, shown_value)
from generator.claims.design import DesignLibrary, check_design_source, reduce_markdown
from generator.claims.formats import place
from generator.claims.anchoring import ask_git_ahead, git_session, project_anchoring
from generator.claims.freeze import freeze_problems, read_freeze_log, rule_changes
from generator.claims.identifiers import KnownIdentifiers
from generator.claims.history import append_history, first_draft_score, history_entry, read_history
from generator.claims.ledger import (KINDS, OUTPUTS, Claim, DecisionSource, DesignSource, Ledger, MeasuredSource,
                                     literal_text, load_ledger)
from generator.claims.memo import save_books
from generator.claims.measured import ResultsFiles, evaluate_predicate, resolve_measured_source, short
from generator.claims.predicates import can_fail
from generator.claims.evidence import Evidence
from generator.claims.repeats import find_repeats
from generator.claims.statistic import idle_predicate, statistic_reasons
from generator.claims.subjects import subject_reasons
from generator.core.options import SHAPE_COST, SKIP_RERANK_REASON
from generator.claims.report import CheckReport, ClaimResult
from generator.claims.triggers import UNDECIDED, DecisionRow, DesignRules, evaluate_trigger, read_design_rules
from generator.claims.visible import (PLACED_CLOSE, PLACED_OPEN, UNFILLED_PLACEHOLDER, remote_references, render_visible,
                                      source_with_values)
from generator.errors import InputError
from generator.fileio import display_path, sha256_file
from generator.numerals import find_numerals, inside_quoted_span
from generator.project import Project
from generator.verdicts import Verdict, normalise, phrase_spans, unlicensed, whether_spans
from generator.wording import COMPARATIVE, QUALITY, data_text_problem
from generator.results import Step, cost_block

# Kinds of value that say what was measured rather than how well (generator.results.schema).
SAYS_WHAT_WAS_MEASURED = ("count", "query count", "parameter", "identity")




def _data_dir(project: Project) -> Path | None:
    try:
        return project.data_dir
    except (InputError, AttributeError, TypeError):
        return None




def _skip_rerank_reason(project: Project) -> str | None:
    """The reason readout.yaml gives for not running the rerank row, when it asks for that."""
    block = project.evaluate if isinstance(project.evaluate, dict) else {}
    if block.get("skip_rerank") is not True:
        return None
    reason = block.get("skip_rerank_reason")
    return reason if isinstance(reason, str) else SKIP_RERANK_REASON


class _Context:
    """What every claim of one check shares: the design documents, the results files read and the
    decisions their triggers compute."""

    def __init__(self, project: Project, ledger_display: str, languages: tuple[str, ...] = (),
                 claim_ids: tuple[str, ...] = ()):
        self.languages = languages
        self.claim_ids = claim_ids
        self._identifiers: KnownIdentifiers | None = None
        self.data_dir = _data_dir(project)
        self.design = DesignLibrary(project.design_dir)
        self.results = ResultsFiles(project.outputs_dir, project.root, _skip_rerank_reason(project))
        self.outputs_dir = project.outputs_dir
        self.design_dir = project.design_dir
        self.ledger_display = ledger_display
        self._decisions: list[DecisionRow] | None = None

    @property
    def identifiers(self) -> KnownIdentifiers:
        """What a digit-bearing identifier in a claim may name (generator.claims.identifiers)."""
        if self._identifiers is None:
            self._identifiers = KnownIdentifiers(
                lambda: set(self.claim_ids) | {row.trigger.decision for row in self.decisions},
                self.outputs_dir, self.data_dir)
        return self._identifiers

    @property
    def outcomes(self) -> re.Pattern | None:
        """Every decision's outcome words, one pattern (None without decisions)."""
        if not hasattr(self, "_outcomes"):
            phrases = sorted({normalise(phrase) for row in self.decisions
                              for phrase in (row.trigger.fires, row.trigger.otherwise)}, key=len, reverse=True)
            self._outcomes = re.compile(r"(?<![\w-])(?:" + "|".join(map(re.escape, phrases)) + r")(?![\w])",
                                        re.IGNORECASE) if phrases else None
        return self._outcomes

    @property
    def decisions(self) -> list[DecisionRow]:
        """Every reversal trigger of the design documents, evaluated on the results (once)."""
        if self._decisions is None:
            rules: DesignRules = read_design_rules(self.design_dir)
            self._decisions = []
            for trigger in rules.triggers:
                results, problem = self.results.for_decision(trigger.file)
                self._decisions.append(evaluate_trigger(trigger, rules.budgets, results, problem,
                                                        display_path(self.design_dir / trigger.document)))
        return self._decisions

    def decision(self, decision_id: str) -> DecisionRow | None:
        return next((row for row in self.decisions if row.trigger.decision == decision_id), None)


@dataclass
class _Gathered:
    """What a claim's sources yield before the cross-source rules run."""

    reasons: list[str] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    quotes: list[str] = field(default_factory=list)
    values: dict[str, Any] = field(default_factory=dict)
    value_evidence: dict[str, Evidence] = field(default_factory=dict)
    value_sources: dict[str, MeasuredSource] = field(default_factory=dict)
    shown: dict[str, ShownValue] = field(default_factory=dict)    # each value, located in its own file
    rows: set[str] = field(default_factory=set)     # the rows of the results files cited


def _gather(claim: Claim, context: _Context) -> _Gathered:
    found = _Gathered()
    for source in claim.sources:
        if isinstance(source, DecisionSource):
            continue  # checked against the sentence once it is rendered (_decision_reasons)
        if isinstance(source, DesignSource):
            design = check_design_source(source, context.design, claim.id, context.ledger_display)
            found.evidence.append(design.evidence)
            if design.reason:
                found.reasons.append(design.reason)
            else:
                found.quotes.append(reduce_markdown(source.quote))
            continue
        results, problem = context.results.get(source.file, claim, source.line, context.ledger_display)
        if problem:
            found.reasons.append(f"{display_path(context.outputs_dir / source.file)} cannot be cited: {problem}")
        found.rows |= set(results.model.row_names)
        measured = resolve_measured_source(source, results, context.outputs_dir)
        found.evidence.extend(measured.evidence.values())
        found.value_evidence.update(measured.evidence)
        found.values.update(measured.values)
        found.reasons.extend(measured.reasons)
        found.value_sources.update({name: source for name in source.values})
        found.shown.update({name: shown_value(name, source.file, source.steps[name], results.model)
                            for name in source.values})
    for name, value in sorted(found.values.items()):
        if isinstance(value, float) and not math.isfinite(value):
            found.reasons.append(f"{name} = {found.value_evidence[name].path} is {value!r}, not a finite number: "
                                 "no sentence or comparison can rest on it")
    return found


def _check_predicates(claim: Claim, found: _Gathered) -> set[str]:
    """Evaluate every predicate; returns the names that predicates compare."""
    compared: set[str] = set()
    for source in claim.measured_sources:
        if source.compiled is None:
            continue
        compared |= source.compiled.names
        if not source.compiled.names:
            found.reasons.append(f"predicate {source.predicate!r} compares none of the claim's values: it cannot fail")
            continue
        if not source.compiled.names <= set(found.values):
            continue  # a path already failed
        if any(isinstance(found.values[name], float) and not math.isfinite(found.values[name])
               for name in source.compiled.names):
            continue  # already a reason
        holds, reason = evaluate_predicate(source, found.values)
        if reason:
            found.reasons.append(reason)
        elif not can_fail(source.compiled, found.values):
            found.reasons.append(f"predicate {source.predicate!r} cannot fail: it stays true however its values "
                                 "change, so it supports nothing")
        elif idle := idle_predicate(source.compiled.tree, source.compiled.names):
            found.reasons.append(f"predicate {source.predicate!r}: {idle}")
        for name in source.steps:
            found.value_evidence[name].predicate_holds = holds
    return compared


def _fill(claim: Claim, found: _Gathered) -> dict[str, str]:
    formatted: dict[str, str] = {}
    for placeholder in claim.placeholders:
        if placeholder.name not in found.values:
            continue    # its path already failed
        text, problem = place(found.values[placeholder.name], placeholder.spec)
        if problem:
            found.reasons.append(f"placeholder {{{placeholder.name}{':' + placeholder.spec if placeholder.spec else ''}}}"
                                 f" ({found.value_evidence[placeholder.name].path}): {problem}")
            continue
        if (isinstance(found.values[placeholder.name], str) and len(text.split()) > 1  # type: ignore[union-attr]
                and placeholder.name not in _in_code_spans(claim.text)):
            problem = data_text_problem(text)  # type: ignore[arg-type]
            if problem:
                found.reasons.append(f"placeholder {{{placeholder.name}}} ({found.value_evidence[placeholder.name].path}) "
                                     f"places text that {problem}: prose from results must not carry a claim")
                continue
        formatted[placeholder.name] = text  # type: ignore[assignment]
        found.value_evidence[placeholder.name].formatted = text
    return formatted


def _in_code_spans(text: str) -> set[str]:
    """Placeholders the claim shows as code (between backticks): a formula or an identifier, read
    as a literal string rather than as prose."""
    return {name for span in re.findall(r"`([^`]*)`", text) for name in re.findall(r"\{(\w+)[^}]*\}", span)}


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


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_claim(claim: Claim, context: _Context) -> ClaimResult:
    found = _gather(claim, context)
    reasons = found.reasons
    if not claim.sources:
        reasons.append("no source: attach a design quote or a measured path, or strike it with a reason")
    compared = _check_predicates(claim, found)
    shown_names = [placeholder.name for placeholder in claim.placeholders]
    for name in sorted(set(found.value_sources) - set(shown_names) - compared):
        reasons.append(f"value {name} is declared but neither shown in the text nor compared in a predicate: "
                       "a value that supports nothing is not evidence")
    formatted = _fill(claim, found)
    visible = render_visible(source_with_values(claim.text, formatted))
    reasons.extend(f"remote reference in the text ({reference}): links and images must point to an anchor in "
                   "this report (#...)" for reference in remote_references(visible))
    if claim.measured_sources:
        reasons.extend(_predicate_requirements(claim, found, compared, shown_names, visible.plain))
    shown = [found.shown[name] for name in dict.fromkeys(shown_names) if name in found.shown]
    reasons.extend(attribution_reasons(shown, visible.plain, rows=found.rows))
    reasons.extend(statistic_reasons(shown, visible.plain))
    declared = list(found.shown.values())
    reasons.extend(subject_reasons(visible.plain, [source.quote for source in claim.design_sources], declared))
    reasons.extend(_cost_only_reasons(claim, shown, context, visible.plain))
    reasons.extend(_decision_reasons(claim, context, visible.plain, found))
    reasons.extend(_typed_numbers(visible.text, found, shown, context.identifiers))
    return ClaimResult(claim=claim, traceable=not reasons, reasons=reasons,
                       rendered_text=rendered_markdown(claim.text, formatted), evidence=found.evidence)


def _cost_only_block(steps: tuple[Step, ...], data: Any) -> dict | None:
    """The block on the way to a value that measured cost alone (`"quality": "not measured"`)."""
    block = cost_block(data, steps)
    if block is not None and block.get("quality") == "not measured" and block.get("cost") != "not measured":
        return block
    return None


def _clauses(text: str) -> list[str]:
    return [part for part in re.split(r"[.;:!?,\u2014()]|\s-\s|\b(?:and|but|while|whereas|yet)\b", text) if part]


_SHAPE_WORDS = re.compile(r"\bby\s+(?:its\s+|their\s+)?shapes?\b|\brandom(?:ly\s+initiali[sz]ed)?[\s-]+weights?\b|\bextrapolat\w*",
                          re.IGNORECASE)
_NOT_MEASURED = re.compile(r"\bnot\b[^.;]*\bmeasured\b|\bunmeasured\b|\bunknown\b", re.IGNORECASE)


def _cost_only_reasons(claim: Claim, shown: list[ShownValue], context: _Context, plain: str) -> list[str]:
    """A cost measured without the model's weights says nothing about quality. A sentence that
    shows such a value says how it was measured ("by shape"), and each of its clauses that speaks
    of quality either says that quality was not measured or shows a measured value of its own."""
    cost_only: dict[str, str] = {}
    own_run: list[str] = []
    for value in shown:
        results = context.results.read.get(value.file)
        data = results.data if results is not None else None
        steps = value.canonical or value.steps
        block = _cost_only_block(steps, data)
        if block is not None:
            cost_only[value.name] = str(block.get("cost"))
        elif (timed := cost_block(data, steps)) is not None and timed.get("cost") == "measured":
            own_run.append(value.name)
    if not cost_only:
        # The other way round: a time of the model's own run described as a shape's or an
        # extrapolation's is as false as the reverse (and hides that the weights were loaded).
        said = _SHAPE_WORDS.search(plain)
        if own_run and said:
            names = ", ".join("{" + name + "}" for name in own_run)
            return [f"{names} was timed on the model's own run, with its weights and every layer, but the sentence "
                    f"says {said.group(0)!r}: describe how it was measured, not how another figure was"]
        return []
    reasons = []
    by_shape = [name for name, how in cost_only.items() if how.startswith(SHAPE_COST)]
    if by_shape and not re.search(r"\bshape\b", plain, re.IGNORECASE):
        names = ", ".join("{" + name + "}" for name in by_shape)
        reasons.append(f"{names} was measured by shape (the architecture with random weights), but the sentence "
                       "does not say so: say 'measured by shape' so no reader takes it for the model's own run")
    extrapolated = [name for name, how in cost_only.items() if "extrapolated" in how]
    if extrapolated and not re.search(r"\bextrapolat", plain, re.IGNORECASE):
        names = ", ".join("{" + name + "}" for name in extrapolated)
        reasons.append(f"{names} was extrapolated from a few of the model's layers, but the sentence does not say "
                       "so: say 'extrapolated' so no reader takes it for a timing of the whole model")
    measured_elsewhere = {value.name for value in shown if value.name not in cost_only}
    for clause, names in _clauses_with_names(claim.text):
        match = QUALITY.search(clause)
        if match and not _NOT_MEASURED.search(clause) and not names & measured_elsewhere:
            reasons.append(f"the sentence shows a cost whose quality was not measured ({', '.join('{' + n + '}' for n in sorted(cost_only))}), "
                           f"and its clause {' '.join(clause.split())!r} speaks of quality ({match.group(0)!r}) with no "
                           "measured value: say that quality was not measured, or cite it")
    return reasons


_MARK_OPEN, _MARK_CLOSE = "\ue020", "\ue021"


def _clauses_with_names(text: str) -> list[tuple[str, set[str]]]:
    """What a reader sees of each clause of the claim (the author's words; placeholders blanked),
    with the placeholders it holds. Clauses end at , ; : . ! ? dashes and brackets, and at
    'and', 'but', 'while'."""
    parts = []
    for literal, field_name, _spec, _conversion in string.Formatter().parse(text):
        parts.append(literal)
        if field_name is not None:
            parts.append(f"{_MARK_OPEN}{field_name}{_MARK_CLOSE}")
    found = []
    for clause in _clauses(render_visible("".join(parts)).plain):
        names = set(re.findall(f"{_MARK_OPEN}([^{_MARK_CLOSE}]*){_MARK_CLOSE}", clause))
        found.append((re.sub(f"{_MARK_OPEN}[^{_MARK_CLOSE}]*{_MARK_CLOSE}", " ", clause), names))
    return found


def _decision_reasons(claim: Claim, context: _Context, plain: str, found: _Gathered) -> list[str]:
    """A decision source holds when its trigger computes the state the claim declares and the
    sentence says the decision that state gives; a ship verdict without one is untraceable."""
    reasons = []
    said = " ".join(_unquoted(plain, found.quotes).lower().split())
    for source in claim.decision_sources:
        row = context.decision(source.trigger)
        if row is None:
            known = ", ".join(r.trigger.decision for r in context.decisions) or "none"
            reasons.append(f"decision {source.trigger} has no trigger block in design/ (triggers: {known})")
            continue
        found.evidence.append(Evidence("decision", ok=row.state == source.state, document=row.trigger.document,
                                       line=row.trigger.line, heading=row.trigger.title,
                                       predicate=row.trigger.predicate.source, value=row.as_dict()))
        if row.state != source.state:
            reasons.append(f"decision {source.trigger}: the trigger {row.state} ({_read_values(row)}), but the "
                           f"claim says it {source.state}")
            continue
        problem = _outcome_problem(said, row)
        if problem:
            reasons.append(f"decision {source.trigger} {row.state}: {problem}")
    reasons.extend(_verdict_reasons(claim, context, normalise(_unquoted(plain, found.quotes))))
    return reasons


def _verdict_reasons(claim: Claim, context: _Context, said: str) -> list[str]:
    """Every verdict the sentence gives must be the computed outcome of a decision it cites (or,
    for an undecided one, the question "whether to ..." it leaves open); any other is untraceable."""
    licensed: list[tuple[int, int]] = []
    cited = []
    for source in claim.decision_sources:
        row = context.decision(source.trigger)
        if row is None or row.state != source.state:
            continue
        cited.append(row)
        licensed += phrase_spans(said, row.outcome)
        if row.state == UNDECIDED:
            licensed += whether_spans(said, [row.trigger.fires, row.trigger.otherwise])
    extra = unlicensed(said, licensed, context.languages)
    # Every decision's own outcome words are a verdict too ("keep the hybrid candidates" is D2's).
    if context.outcomes is not None:
        extra += [Verdict(match.start(), match.end(), match.group(0)) for match in context.outcomes.finditer(said)
                  if not any(a <= match.start() and match.end() <= b for a, b in licensed)]
    extra.sort(key=lambda verdict: verdict.start)
    if not extra:
        return []
    if not claim.decision_sources:
        return [f"the claim gives a verdict ({extra[0].text!r}) that no decision record computes: cite the trigger "
                "(decision: {trigger: D5, state: ...}) so the verdict follows from the results"]
    computed = "; ".join(f"{row.trigger.decision}: {row.outcome!r}" for row in cited) or "nothing it can cite"
    return [f"the claim also gives the verdict {extra[0].text!r}, which no cited decision computes ({computed}): a "
            "cited decision licenses its own outcome, word for word, and no other verdict"]


_NEGATION = re.compile(r"\b(not|never|no|cannot|nor|without|n't|against)\b|n't\b", re.IGNORECASE)


def _outcome_problem(said: str, row: DecisionRow) -> str | None:
    """Why the sentence does not say the decision the trigger computed: every outcome phrase it
    holds (longest first, so "do not ship the reranker" is not read as "ship the reranker") must
    be the computed one, at least one must be there, and none may be negated just before it."""
    phrases = sorted({" ".join(row.trigger.outcome(state).lower().split())
                      for state in ("fires", "does not fire", "cannot be decided")}, key=len, reverse=True)
    outcome = " ".join(row.outcome.lower().split())
    found = []
    taken = [False] * len(said)
    if row.state == UNDECIDED:   # "whether to ship the reranker" names the open question, not an answer
        for start, end in whether_spans(said, [row.trigger.fires, row.trigger.otherwise]):
            taken[start:end] = [True] * (end - start)
    for phrase in phrases:
        for match in re.finditer(r"(?<!\w)" + re.escape(phrase) + r"(?!\w)", said):
            if not any(taken[match.start():match.end()]):
                taken[match.start():match.end()] = [True] * (match.end() - match.start())
                found.append((match.start(), phrase))
    if not any(phrase == outcome for _, phrase in found):
        return f"the sentence must say {row.outcome!r}"
    others = sorted({phrase for _, phrase in found if phrase != outcome})
    if others:
        return f"it says {row.outcome!r} but also {others[0]!r}, the decision of another trigger state"
    for start, _phrase in found:
        before = " ".join(said[:start].split()[-3:])
        if _NEGATION.search(before):
            return f"the sentence negates {row.outcome!r} ({before!r} before it)"
    return None


def _unquoted(plain: str, quotes: list[str]) -> str:
    """The sentence without the spans it quotes from a design document (a quoted rule is not a verdict)."""
    def drop(match: re.Match) -> str:
        inner = " ".join(match.group(1).split())
        return " " if any(inner and inner in " ".join(quote.split()) for quote in quotes) else match.group(0)
    return re.sub(r"[\"\u201c]([^\"\u201d]+)[\"\u201d]", drop, plain)


def _read_values(row: DecisionRow) -> str:
    return ", ".join(f"{name}={short(entry['value']) if entry.get('measured') else 'not measured'}"
                     for name, entry in sorted(row.read.items()))


def _measure_groups(names: Iterable[str], found: _Gathered) -> list[list[str]]:
    """Shown numbers that are the same measure (their paths end in the same key, such as nDCG@5):
    set side by side, they read as a comparison."""
    groups: dict[str, list[str]] = {}
    for name in names:
        steps = found.value_sources[name].steps[name]
        if _says_what_was_measured(found.shown[name]):
            continue  # query counts name a sample (attribution); they are not compared
        groups.setdefault(steps[-1].text() if steps else name, []).append(name)
    return [group for group in groups.values() if len(group) >= 2]


def _says_what_was_measured(value: ShownValue) -> bool:
    """A count or a setting of the whole file (the documents, the queries, the query set, the
    candidate depth): it says what was measured, never how well."""
    location = value.location
    return is_query_count(value) or (location is not None and location.block.scalar
                                     and location.kind in SAYS_WHAT_WAS_MEASURED)


def _predicate_requirements(claim: Claim, found: _Gathered, compared: set[str], shown_names: list[str],
                            plain: str) -> list[str]:
    """A predicate is required when the claim is evaluative or causal, uses comparative wording, or
    shows two numbers of the same measure; then each such pair is compared, and with comparative
    wording at least one shown number is."""
    numbers_shown = sorted({name for name in shown_names if _is_number(found.values.get(name))
                            and name in found.value_sources})
    groups = _measure_groups(numbers_shown, found)
    # The author's own words compare; words inside a filled value (a stage record) do not.
    comparative = COMPARATIVE.search(literal_text(claim.text, " "))
    if not (groups or comparative or claim.kind in ("evaluative", "causal")):
        return []
    why = (f"it shows {', '.join('{' + name + '}' for name in groups[0])} side by side" if groups else
           f"it compares ({comparative.group(0)!r})" if comparative else f"it is {claim.kind}")
    if not any(source.compiled is not None for source in claim.measured_sources):
        return [f"the claim needs a predicate because {why}: state the comparison (for example `hybrid > dense`) "
                "so the checker can hold it"]
    missing = [name for group in groups for name in group if name not in compared]
    if missing:
        return [f"the claim shows {', '.join('{' + name + '}' for name in missing)} beside numbers of the same "
                "measure, but no predicate compares them: a comparison a sentence shows must be held"]
    if not comparative:
        return []
    unrelated = sorted(name for name in compared if not _related(name, shown_names, found, plain))
    if unrelated:
        return [f"the claim compares ({comparative.group(0)!r}) but its predicate compares {', '.join(unrelated)}, "
                "a value of a row the sentence does not name: a predicate on another value holds nothing it says"]
    if not compared & (set(shown_names) | _named_row_values(found, plain)):
        return [f"the claim compares ({comparative.group(0)!r}) but its predicate compares no value the sentence "
                "shows or of a row it names: a predicate on another value holds nothing it says"]
    named = named_rows(plain, _known_rows(found))
    covered = set().union(*(rows_of(found.shown[name]) for name in compared if name in found.shown)) & named
    if len(named) >= 2 and len(covered) < 2 and _compares_between(plain, named):
        return [f"the claim compares rows {', '.join(sorted(named))} but its predicates compare values of "
                f"{', '.join(sorted(covered)) or 'none of them'}: hold the comparison between the rows it names"]
    return []


def _compares_between(plain: str, rows: set[str]) -> bool:
    """Comparative wording between the first and the last row the sentence names ("Hybrid beats
    dense"), as opposed to a sentence that mentions a second row in passing."""
    spans = [span for row in rows for span in mention_spans(plain, row)]
    if len({row for row in rows if mention_spans(plain, row)}) < 2:
        return False
    first, last = min(start for start, _ in spans), max(end for _, end in spans)
    return any(first <= match.start() and match.end() <= last for match in COMPARATIVE.finditer(plain)
               if match.group(0).lower() != "rather than")


def _known_rows(found: _Gathered) -> set[str]:
    return set(found.rows).union(*(rows_of(value) for value in found.shown.values()))


def _named_row_values(found: _Gathered, plain: str) -> set[str]:
    return {name for name, value in found.shown.items() if any(mentions_row(plain, row) for row in rows_of(value))}


def _related(name: str, shown_names: list[str], found: _Gathered, plain: str) -> bool:
    """A compared value belongs to the sentence: it is shown, it is a value of a row the sentence
    names (or of no row at all), or it is a count of what was measured."""
    if name in shown_names:
        return True
    value = found.shown.get(name)
    if value is None:
        return False
    rows = rows_of(value)
    return _says_what_was_measured(value) or not rows or any(mentions_row(plain, row) for row in rows)


def _typed_numbers(marked: str, found: _Gathered, shown: list[ShownValue], ids: frozenset[str]) -> list[str]:
    """A reason for every numeral a reader sees that neither a placeholder, a named query id nor a
    quoted design span accounts for."""
    placed: list[tuple[int, int]] = []
    start = None
    for index, char in enumerate(marked):
        if char == PLACED_OPEN:
            start = index
        elif char == PLACED_CLOSE and start is not None:
            placed.append((start, index + 1))
            start = None
    words = marked.replace(PLACED_OPEN, " ").replace(PLACED_CLOSE, " ")
    for value in shown:
        query = query_of(value)
        if query is not None:
            placed.extend(query_spans(words, query))
    reasons = []
    for numeral in find_numerals(marked, ids):
        if any(low <= numeral.start and numeral.end <= high for low, high in placed):
            continue
        if any(inside_quoted_span(words, numeral, quote) for quote in found.quotes):
            continue
        reasons.append(f"number {numeral.token!r} is typed by hand: no placeholder fills it and no quoted design "
                       f"span holds it with the same words around it{_hint(numeral.token, found.values)}")
    return reasons


def _hint(token: str, values: dict[str, Any]) -> str:
    decimals = len(token.split(".")[1]) if re.fullmatch(r"[-+]?\d+\.\d+", token) else 0
    for name, value in values.items():
        if _is_number(value) and f"{value:.{decimals}f}" == token.replace(",", "").lstrip("+"):
            return f"; it matches {name} = {short(value)}: write {{{name}:.{decimals}f}}"
    return ""


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


def check_ledger(ledger: Ledger, project: Project) -> tuple[list[ClaimResult], dict[str, str], list[DecisionRow]]:
    """Check every claim; returns the results (ledger order), the sha256 of each results file read
    and every decision record's trigger, evaluated."""
    ledger_display = display_path(ledger.path)
    _check_placement(ledger, project, ledger_display)
    context = _Context(project, ledger_display, ledger.languages, tuple(claim.id for claim in ledger.claims))
    checked = [check_claim(claim, context) for claim in ledger.claims]
    decisions = context.decisions
    return checked, context.results.sha256(), decisions


def check_project(project: Project, *, record_history: bool = False, now: datetime | None = None) -> CheckReport:
    """Check the project's ledger, design freeze and first-draft history. Writes nothing unless
    `record_history` is set, and then only a new history line for a ledger never checked before."""
    with git_session():
        report = _check_project(project, record_history, now)
    save_books()
    return report


def _check_project(project: Project, record_history: bool, now: datetime | None) -> CheckReport:
    ledger = load_ledger(project.ledger_path)
    repeats = find_repeats((claim.id, claim.output, claim.text) for claim in ledger.claims)
    checked, inputs, decisions = check_ledger(ledger, project)
    for result in checked:
        result.repeats = repeats.get(result.claim.id)
    counted = [result for result in checked if result.repeats is None]
    log = read_freeze_log(project)
    ask_git_ahead(project, log)
    problems, current = freeze_problems(project, log)
    untraceable = sum(result.counts_untraceable for result in counted)
    struck = sum(result.claim.struck for result in counted)
    history = read_history(project)
    recorded = False
    if record_history and not history.problems and not any(
            entry["ledger_sha256"] == ledger.sha256 for entry in history.entries):
        entry = history_entry(history, now or datetime.now(timezone.utc), ledger.sha256, untraceable, struck,
                              len(counted))
        append_history(project, entry)
        history.entries.append(entry)
        recorded = True
    anchoring = project_anchoring(project, log, history.entries[0]["ledger_sha256"] if history.entries else None)
    problems.extend(anchoring.problems)
    for row in decisions:
        row.changes = rule_changes(log, row.trigger.decision)
        row.anchor = anchoring.entry(row.changes[-1].entry.number) if row.changes else None
    return CheckReport(
        results=checked, untraceable=untraceable, total=len(counted), struck=struck,
        by_output=_score(counted, lambda claim: claim.output, OUTPUTS),
        by_kind=_score(counted, lambda claim: claim.kind, KINDS),
        first_draft=first_draft_score(history), freeze_ok=not problems,
        freeze_problems=problems, history_problems=history.problems, ledger_sha256=ledger.sha256,
        design_freeze_sha256=sha256_file(project.freeze_path) if project.freeze_path.exists() else None,
        inputs_sha256=inputs, ledger_path=ledger.path, history_recorded=recorded, freeze_documents=current,
        decisions=decisions, anchoring=anchoring, freeze_entries=list(log.entries) if log is not None else [])
