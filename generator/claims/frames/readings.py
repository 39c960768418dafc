"""A frame computed: what the results and the design say of it, as facts that choose the words
and figures the sentence places (generator.claims.frames.phrasing writes them).

Each kind reads only what its statistic is about, and every choice of words is a fact computed
here, never the author's:

- direction (`higher`, `lower`, `same`) from the sign of the change;
- `distinguished` only when the paired test tells the change from no change (the interval
  excludes zero and the sign-flip p-value is below 0.05), after Holm's correction over every pair
  of the metric when the frame asks for it;
- a size (`cleared`) only when the interval's bound on the side of the change clears a
  pre-registered smallest effect of the same metric;
- `equivalent` only from two one-sided tests, `non-inferior` only from the one-sided test, each
  against a margin of the same metric (generator.core.power);
- a quantifier over queries (`all`, `most`, `none`, `some`) only from the per-query wins, ties
  and losses;
- a budget fit from the row's p95 time against a budget in ms, saying when the time was priced by
  shape;
- below MINIMUM_QUERIES queries an interval, a test or a share decides nothing: the reading says
  it cannot be decided with that many queries.

A reading that cannot be computed (a row not measured, a comparison the file does not hold, a
threshold of another metric) has a `problem` and no sentence: the claim does not trace.

This module holds what every kind shares and the kinds read from the design (a decision, a quote,
the change since the baseline); the kinds read from a paired comparison are in
generator.claims.frames.paired_readings, those read from a row's recorded figures in
generator.claims.frames.row_readings, and what a reading holds in generator.claims.frames.figures.
"""

from __future__ import annotations

from typing import Any, Callable

from generator.claims.evidence import Evidence
from generator.core.dataclass import dataclass
from generator.core.sample_size import DEFAULT_ALPHA as SIGNIFICANCE_LEVEL, minimum_queries
from generator.claims.frames import thresholds
from generator.claims.frames.figures import Figure, Reading, _count, _measured
from generator.claims.frames.paired_readings import PairedReadings
from generator.claims.frames.row_readings import RowReadings
from generator.claims.frames.spec import Frame
from generator.claims.record.design import check_design_source
from generator.claims.record.quotable_units import reduce_markdown
from generator.core.results.schema import QUERIES

# The fewest queries an interval, a test, a share or a decision is read from: below it the exact
# sign-flip test cannot reach p < 0.05 whatever the differences (generator.core.sample_size), the
# same minimum `regress` and the decisions' triggers keep.
MINIMUM_QUERIES = minimum_queries(SIGNIFICANCE_LEVEL)


@dataclass(frozen=True)
class QuotedSource:
    """A quote frame's span, in the shape a design source is checked in (generator.claims.record.design)."""

    document: str
    quote: str
    line: int


class Reader(PairedReadings, RowReadings):
    """What one frame reads: its results file, the design's rules, the freeze."""

    def __init__(self, frame: Frame, context: Any, claim_id: str):
        self.frame = frame
        self.context = context
        self.claim_id = claim_id
        self.reading = Reading(frame)

    # --- shared pieces --------------------------------------------------------------------------

    def results(self):
        results, problem = self.context.results.for_decision(self.frame.file)
        if results is None or problem:
            return None, f"{self.frame.file} cannot be read: {problem or 'missing'}"
        return results, None

    def rows_measured(self, model, rows) -> str | None:
        for row in rows:
            if model.row(row) is None:
                return f"{self.frame.file} has no row {row} (rows: {', '.join(model.row_names) or 'none'})"
            if not model.measured(row):
                return f"row {row} was not measured in {self.frame.file}: nothing can be said of it"
        return None

    def scope(self, model) -> None:
        """The query set the figures are over, and how many queries: every frame names it."""
        queries = model.queries
        self.reading.figures["n"] = Figure("count", queries if queries is not None else 0, noun="query")
        self.reading.figures["n_plain"] = Figure("count", queries if queries is not None else 0)
        query_set = model.query_set
        self.reading.facts["scope"] = query_set if query_set in ("sample", "all") else "set"
        _measured(self.reading, self.frame.file, QUERIES.name, queries)

    def threshold(self, reference: str):
        found, problem = thresholds.resolve(reference, self.context.rules, self.context.frozen_regression,
                                            self.context.freeze_log)
        if found is not None and found.post_hoc:
            self.reading.post_hoc = True
        return found, problem

    def required_threshold(self, option: str, requirement: Callable[[thresholds.Threshold], str | None]):
        """The threshold the frame's `option` names, when it resolves and meets `requirement` (the
        frame's metric, or a unit); otherwise None, and the reading fails naming the option."""
        found, problem = self.threshold(self.frame.options[option])
        if found is None:
            self.reading.fail(f"{option}: {problem}")
            return None
        mismatch = requirement(found)
        if mismatch:
            self.reading.fail(f"{option}: {mismatch}")
            return None
        return found

    def threshold_figures(self, prefix: str, threshold: thresholds.Threshold, metric: str | None = None) -> None:
        figures, facts = self.reading.figures, self.reading.facts
        if threshold.kind == thresholds.BUDGET:
            figures[prefix] = Figure("ms", threshold.value)
        else:
            figures[prefix] = Figure("number", threshold.value)
        figures[prefix + "_name"] = Figure("text", threshold.reference)
        facts[prefix + "_fixed"] = {thresholds.BEFORE: "before", thresholds.AFTER: "after"}.get(threshold.fixed,
                                                                                               "unfrozen")
        if threshold.freeze is not None:
            figures[prefix + "_freeze"] = Figure("count", threshold.freeze, noun="")
        self.reading.evidence.append(Evidence("design", document=threshold.where.rsplit(":", 1)[0],
                                              line=int(threshold.where.rsplit(":", 1)[1]),
                                              quote=f"{threshold.reference} = {threshold.value:g}"))

    def too_few(self, queries: int | None) -> bool:
        if queries is not None and queries < MINIMUM_QUERIES:
            self.reading.case = "undecidable"
            self.reading.figures["n"] = Figure("count", queries, noun="query")
            self.reading.figures["minimum"] = Figure("count", MINIMUM_QUERIES, noun="query")
            return True
        return False

    # --- the kinds ------------------------------------------------------------------------------

    def read(self) -> Reading:
        kind = self.frame.kind
        if kind == "decision":
            return self.decision()
        if kind == "quote":
            return self.quote()
        if kind == "since_baseline":
            return self.since_baseline()
        model_or_problem = self.results()
        if model_or_problem[0] is None:
            return self.reading.fail(model_or_problem[1])
        model = model_or_problem[0].model
        # A cost is priced for a row that could not run too (by its shape): its cost entry decides.
        problem = self.rows_measured(model, self.frame.rows) if kind not in ("frontier", "budget", "cost") else None
        if problem:
            return self.reading.fail(problem)
        self.scope(model)
        return getattr(self, kind)(model)

    def decision(self) -> Reading:
        reading = self.reading
        row = self.context.decision(self.frame.row)
        if row is None:
            known = ", ".join(decision.trigger.decision for decision in self.context.decisions) or "none"
            return reading.fail(f"no decision {self.frame.row} with a trigger in the design (decisions: {known})")
        reading.evidence.append(Evidence("decision", document=row.trigger.document, line=row.trigger.line,
                                         heading=row.trigger.title, predicate=row.trigger.predicate.source,
                                         value=row.as_dict()))
        reading.figures.update(decision=Figure("text", row.trigger.decision), outcome=Figure("text", row.outcome),
                               rule=Figure("text", row.trigger.predicate.source))
        reading.case = {"fires": "fires", "does not fire": "does_not_fire"}.get(row.state, "undecided")
        changes = row.changes or []
        reading.post_hoc = bool(row.post_hoc)
        if changes:
            reading.figures["freeze"] = Figure("count", changes[-1].entry.number, noun="")
            reading.facts["fixed"] = "after" if row.post_hoc else "before"
        else:
            reading.facts["fixed"] = "unfrozen"
            reading.post_hoc = True
        if reading.case == "undecided":
            power = row.power or {}
            queries, needed = _count(power.get("queries")), _count(power.get("queries_needed"))
            if queries is not None and needed is not None:
                reading.case = "needs_queries"
                reading.figures.update(n=Figure("count", queries, noun="query"),
                                       needed=Figure("count", needed, noun="query"))
        return reading

    def quote(self) -> Reading:
        reading, frame = self.reading, self.frame
        source = QuotedSource(document=frame.row, quote=frame.options["text"], line=frame.line)
        found = check_design_source(source, self.context.design, self.claim_id, self.context.ledger_display)
        reading.evidence.append(found.evidence)
        if found.reason:
            return reading.fail(found.reason)
        reading.case = "quote"
        reading.figures.update(document=Figure("text", frame.row), quote=Figure("text", reduce_markdown(source.quote)))
        if found.evidence.heading:
            reading.figures["heading"] = Figure("text", found.evidence.heading)
        return reading

    def since_baseline(self) -> Reading:
        reading, frame = self.reading, self.frame
        change, problem = self.context.since_baseline(frame.row, frame.metric or "")
        if change is None:
            return reading.fail(problem or f"no change since the baseline of {frame.row} on {frame.metric}")
        found, threshold_problem = self.threshold(thresholds.REGRESSION)
        if found is None:
            return reading.fail(threshold_problem)
        self.threshold_figures("margin", found)
        reading.figures.update(row=Figure("text", frame.row), metric=Figure("text", frame.metric or ""),
                               n=Figure("count", change.queries, noun="query"),
                               change=Figure("change", change.change, (0.0, -found.value)),
                               interval=Figure("interval", (change.low, change.high), (0.0, -found.value)))
        reading.facts["scope"] = "set"
        if self.too_few(change.queries):
            return reading
        reading.case = {"regression": "regression", "non-inferior": "noninferior"}.get(change.verdict, "inconclusive")
        reading.facts["direction"] = "higher" if change.change > 0 else "lower" if change.change < 0 else "same"
        reading.evidence.append(Evidence("measured", file="baseline", path=f"since_baseline.{frame.row}.{frame.metric}",
                                         value=change.as_dict()))
        return reading


def read_frame(frame: Frame, context: Any, claim_id: str) -> Reading:
    """The frame computed on the results and the design (a reading with a problem when it cannot be)."""
    return Reader(frame, context, claim_id).read()
