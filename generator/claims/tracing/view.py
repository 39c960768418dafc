"""One view of a claim, built once, that every rule reads (generator.claims.tracing.rules).

A rule never re-reads the ledger, the results or the design: it reads what the view bound. The
view holds

- the claim and what its sources yield: each design quote, each measured value with the file,
  path and query set it came from (ShownValue), the rows of the files it cites, each value's
  evidence;
- its predicates evaluated, and the names they compare;
- its placeholders filled, and what a reader sees of the sentence (`visible`: the Markdown
  rendered, with the characters that came from results marked);
- its canonical text (`said`: NFKC, hidden characters removed, look-alike letters folded to
  their ASCII prototype, generator.core.text.characters) and its author's words alone (`authored`: the
  same, with every value filled from results blanked), which every word rule reads;
- for a frame, its reading (the result computed) and the sentence the package wrote for it
  (`template` and `formatted`: generator.claims.frames);
- the findings made while binding (a quote not in its document, a path that does not resolve, a
  format not allowed), each under the code of the rule that reports it.
"""

from __future__ import annotations

import math
import re
from dataclasses import field
from functools import cached_property
from typing import Any

from generator.core.dataclass import dataclass
from generator.core.text.characters import fold
from generator.claims.evidence import Evidence
from generator.claims.language.formats import place
from generator.claims.language.ledger import Claim, DecisionSource, DesignSource, MeasuredSource
from generator.claims.language.visible import PLACED_OPEN, PLACED_VALUE, Visible, render_visible, source_with_values
from generator.claims.record.design import check_design_source
from generator.claims.record.quotable_units import reduce_markdown
from generator.claims.tracing.context import CheckContext
from generator.claims.tracing.measured import evaluate_predicate, resolve_measured_source
from generator.claims.tracing.naming import ShownValue, rows_of, shown_value
from generator.claims.frames.phrasing import PhrasingError, sentence
from generator.claims.frames.figures import Reading
from generator.claims.frames.readings import read_frame
from generator.claims.language.predicates import can_fail, idle_predicate
from generator.storage.paths import display_path
from generator.core.text.wording import data_text_problem

# A filled value, as the author's words read it: one neutral character in place of its text.
BLANK = "\u2022"


@dataclass(frozen=True)
class Finding:
    """One broken rule: its code (docs/rules.md) and what is wrong, in words."""

    code: str
    message: str


@dataclass
class ClaimView:
    claim: Claim
    context: CheckContext
    noted: dict[str, list[str]] = field(default_factory=dict)   # findings made while binding, by code
    evidence: list[Evidence] = field(default_factory=list)
    quotes: list[str] = field(default_factory=list)
    values: dict[str, Any] = field(default_factory=dict)
    value_evidence: dict[str, Evidence] = field(default_factory=dict)
    value_sources: dict[str, MeasuredSource] = field(default_factory=dict)
    declared: dict[str, ShownValue] = field(default_factory=dict)    # each value, located in its own file
    rows: set[str] = field(default_factory=set)     # the rows of the results files cited
    compared: set[str] = field(default_factory=set)
    formatted: dict[str, str] = field(default_factory=dict)
    visible: Visible = field(default_factory=lambda: Visible(""))
    # The sentence's Markdown with `{name}` for each placed value: the claim's own text, or the one
    # the package wrote for its frame (generator.claims.frames).
    template: str = ""
    reading: Reading | None = None

    def note(self, code: str, message: str) -> None:
        self.noted.setdefault(code, []).append(message)

    @property
    def plain(self) -> str:
        """The sentence as a reader sees it."""
        return self.visible.plain

    @cached_property
    def said(self) -> str:
        """The sentence as a reader sees it, canonical: what every word is matched against."""
        return fold(self.plain)

    @cached_property
    def authored(self) -> str:
        """The canonical sentence with every value filled from results blanked: the author's words.
        A word inside a filled value (a stage record, a row's label) is the results', not theirs."""
        pieces = PLACED_VALUE.split(self.visible.text)
        return "".join(BLANK if piece.startswith(PLACED_OPEN) else fold(piece) for piece in pieces)

    @cached_property
    def own_words(self) -> str:
        """`authored` with every span the sentence quotes from a design document blanked (same
        length): a quoted rule is the design's words, not the author's assertion."""
        quotes = [" ".join(quote.lower().split()) for quote in self.quotes]

        def drop(match: re.Match) -> str:
            inner = " ".join(match.group(1).lower().split())
            return " " * len(match.group(0)) if any(inner and inner in quote for quote in quotes) else match.group(0)
        return re.sub(r"(?:\"|''|\u201c)(.+?)(?:\"|''|\u201d)", drop, self.authored)

    @cached_property
    def shown_names(self) -> list[str]:
        """The placeholders the sentence shows, in the order it shows them."""
        return [placeholder.name for placeholder in self.claim.placeholders] if self.reading is None else []

    @cached_property
    def shown(self) -> list[ShownValue]:
        """The values the sentence shows, each once, in the order it shows them."""
        return [self.declared[name] for name in dict.fromkeys(self.shown_names) if name in self.declared]

    @cached_property
    def known_rows(self) -> set[str]:
        """Every row the sentence could name: the rows of the files it cites and of its values."""
        frame_rows = self.claim.frame.rows if self.claim.frame is not None else ()
        return set(self.rows).union(*(rows_of(value) for value in self.declared.values()), frame_rows)

    def results_of(self, file: str):
        return self.context.results.read.get(file)


def build_view(claim: Claim, context: CheckContext) -> ClaimView:
    view = ClaimView(claim, context, template=claim.text)
    if claim.frame is not None:
        _write_frame(view)
    else:
        _gather(view)
        _hold_predicates(view)
        _fill(view)
    view.visible = render_visible(source_with_values(view.template, view.formatted))
    return view


def _write_frame(view: ClaimView) -> None:
    """A frame computed and written by the package (generator.claims.frames): its sentence, its
    figures and what it read; a frame that cannot be computed has no sentence, only a finding."""
    claim = view.claim
    reading = read_frame(claim.frame, view.context, claim.id)
    view.reading = reading
    view.evidence.extend(reading.evidence)
    if reading.problem:
        view.note("frame-computable", f"{claim.frame.describe()}: {reading.problem}")
        view.template = f"[{claim.frame.describe()}: not computed]"
        return
    try:
        view.template, view.formatted = sentence(reading, claim.language, claim.frame.phrasing)
    except PhrasingError as error:
        view.note("frame-phrasing", str(error))
        view.template = f"[{claim.frame.describe()}: not written]"


def _gather(view: ClaimView) -> None:
    claim, context = view.claim, view.context
    for source in claim.sources:
        if isinstance(source, DecisionSource):
            row = context.decision(source.trigger)
            if row is not None:   # the sentence is held to it by rules.decisions
                view.evidence.append(Evidence("decision", ok=row.state == source.state, document=row.trigger.document,
                                              line=row.trigger.line, heading=row.trigger.title,
                                              predicate=row.trigger.predicate.source, value=row.as_dict()))
            continue
        if isinstance(source, DesignSource):
            design = check_design_source(source, context.design, claim.id, context.ledger_display)
            view.evidence.append(design.evidence)
            if design.reason:
                view.note("design-quote", design.reason)
            else:
                view.quotes.append(reduce_markdown(source.quote))
            continue
        results, problem = context.results.get(source.file, claim, source.line, context.ledger_display)
        if problem:
            view.note("results-citable", f"{display_path(context.outputs_dir / source.file)} cannot be cited: "
                                         f"{problem}")
        view.rows |= set(results.model.row_names)
        measured = resolve_measured_source(source, results, context.outputs_dir)
        view.evidence.extend(measured.evidence.values())
        view.value_evidence.update(measured.evidence)
        view.values.update(measured.values)
        for reason in measured.reasons:
            view.note("path-resolves", reason)
        view.value_sources.update({name: source for name in source.values})
        view.declared.update({name: shown_value(name, source.file, source.steps[name], results.model)
                              for name in source.values})
    for name, value in sorted(view.values.items()):
        if isinstance(value, float) and not math.isfinite(value):
            view.note("value-finite", f"{name} = {view.value_evidence[name].path} is {value!r}, not a finite "
                                      "number: no sentence or comparison can rest on it")


def _finite(value: Any) -> bool:
    return not (isinstance(value, float) and not math.isfinite(value))


def _hold_predicates(view: ClaimView) -> None:
    """Evaluate every predicate; records the names that predicates compare."""
    for source in view.claim.measured_sources:
        if source.compiled is None:
            continue
        view.compared |= source.compiled.names
        if not source.compiled.names:
            view.note("predicate-can-fail", f"predicate {source.predicate!r} compares none of the claim's values: "
                                            "it cannot fail")
            continue
        if not source.compiled.names <= set(view.values):
            continue  # a path already failed
        if not all(_finite(view.values[name]) for name in source.compiled.names):
            continue  # already a finding
        holds, reason = evaluate_predicate(source, view.values)
        if reason:
            view.note("predicate-holds", reason)
        elif not can_fail(source.compiled, view.values):
            view.note("predicate-can-fail", f"predicate {source.predicate!r} cannot fail: it stays true however "
                                            "its values change, so it supports nothing")
        elif idle := idle_predicate(source.compiled.tree, source.compiled.names):
            view.note("predicate-compares", f"predicate {source.predicate!r}: {idle}")
        for name in source.steps:
            view.value_evidence[name].predicate_holds = holds


def _fill(view: ClaimView) -> None:
    """Each placeholder of the author's sentence, with its value shown as its format asks."""
    code_spans = _in_code_spans(view.claim.text)
    for placeholder in view.claim.placeholders:
        name = placeholder.name
        if name not in view.values:
            continue    # its path already failed
        text, problem = place(view.values[name], placeholder.spec)
        if problem:
            spec = ":" + placeholder.spec if placeholder.spec else ""
            view.note("placeholder-format", f"placeholder {{{name}{spec}}} ({view.value_evidence[name].path}): "
                                            f"{problem}")
            continue
        if isinstance(view.values[name], str) and len(text.split()) > 1 and name not in code_spans:
            problem = data_text_problem(text)
            if problem:
                view.note("placed-text", f"placeholder {{{name}}} ({view.value_evidence[name].path}) places text "
                                         f"that {problem}: prose from results must not carry a claim")
                continue
        view.formatted[name] = text
        view.value_evidence[name].formatted = text


def _in_code_spans(text: str) -> set[str]:
    """Placeholders the claim shows as code (between backticks): a formula or an identifier, read
    as a literal string rather than as prose."""
    return {name for span in re.findall(r"`([^`]*)`", text) for name in re.findall(r"\{(\w+)[^}]*\}", span)}



