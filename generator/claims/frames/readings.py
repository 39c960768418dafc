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
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from generator.claims.evidence import Evidence
from generator.core.sample_size import DEFAULT_ALPHA as SIGNIFICANCE_LEVEL, minimum_queries
from generator.claims.frames import thresholds
from generator.claims.frames.spec import CHEAPEST, MEAN, QUERY, SHARE, Frame
from generator.claims.record.design import check_design_source
from generator.claims.record.quotable_units import reduce_markdown
from generator.results import comparison_name
from generator.results.paths import MISSING
from generator.results.model import cheapest_within, within_budget
from generator.results.schema import QUERIES

# The fewest queries an interval, a test, a share or a decision is read from: below it the exact
# sign-flip test cannot reach p < 0.05 whatever the differences (generator.core.sample_size), the
# same minimum `regress` and the decisions' triggers keep.
MINIMUM_QUERIES = minimum_queries(SIGNIFICANCE_LEVEL)
DIAGNOSES = ("candidate miss", "ordering problem", "none")


@dataclass(frozen=True)
class Figure:
    """A value the sentence places, and what it is (generator.claims.frames.present shows it)."""

    kind: str           # text | score | number | change | interval | p | ms | count | percent | relative | pairs
    value: Any
    thresholds: tuple[float, ...] = ()
    noun: str | None = None         # a count's noun (query, configuration)


@dataclass
class Reading:
    frame: Frame
    case: str = ""                                   # which sentence of the kind
    facts: dict[str, str] = field(default_factory=dict)      # word choices, each computed
    figures: dict[str, Figure] = field(default_factory=dict)
    evidence: list[Evidence] = field(default_factory=list)
    problem: str | None = None
    post_hoc: bool = False                           # it reads a rule or threshold fixed after the results

    def fail(self, problem: str) -> "Reading":
        self.problem = problem
        return self


@dataclass(frozen=True)
class QuotedSource:
    """A quote frame's span, in the shape a design source is checked in (generator.claims.record.design)."""

    document: str
    quote: str
    line: int


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _measured(reading: Reading, file: str, path: str, value: Any) -> None:
    reading.evidence.append(Evidence("measured", file=file, path=path, value=value))


class Reader:
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

    def paired(self, model, row: str, against: str, metric: str, correction: str):
        """The paired statistics of row against `against` (from either orientation, turned to
        row minus against), and the path they were read at."""
        def turned(stats: dict[str, Any], flip: bool) -> dict[str, Any]:
            if not flip:
                return dict(stats)
            turned_stats = dict(stats)
            for key in ("delta",):
                if _number(stats.get(key)) is not None:
                    turned_stats[key] = -stats[key]
            if _number(stats.get("ci95_low")) is not None and _number(stats.get("ci95_high")) is not None:
                turned_stats["ci95_low"], turned_stats["ci95_high"] = -stats["ci95_high"], -stats["ci95_low"]
            turned_stats["wins"], turned_stats["losses"] = stats.get("losses"), stats.get("wins")
            return turned_stats

        if correction == "none":
            for first, second, flip in ((row, against, False), (against, row, True)):
                stats = model.paired(first, second).get(metric)
                if stats is not None:
                    return turned(stats, flip), f"comparisons.{comparison_name(first, second)}.metrics.{metric}"
        # Not in `comparisons` (which pairs each row with its baseline), or Holm's correction asked:
        # every pair of measured rows is in `all_pairs`, its uncorrected figures beside Holm's.
        family = (model.all_pairs or {}).get("metrics", {}).get(metric, {})
        pairs = family.get("pairs", {}) if isinstance(family, dict) else {}
        for first, second, flip in ((row, against, False), (against, row, True)):
            stats = pairs.get(comparison_name(first, second)) if isinstance(pairs, dict) else None
            if isinstance(stats, dict):
                found = turned(stats, flip)
                found["family"] = family.get("family")
                return found, f"all_pairs.metrics.{metric}.pairs.{comparison_name(first, second)}"
        return None, (f"{self.frame.file} holds no paired comparison of {row} with {against} on {metric}"
                      + (" in all_pairs (correction: holm)" if correction == "holm" else ""))

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

    def value(self, model) -> Reading:
        metric = self.frame.metric or ""
        reading, file = self.reading, self.frame.file
        reading.figures["metric"] = Figure("text", metric)
        if self.frame.statistic == QUERY:
            query = self.frame.options["query"]
            value = _number(model.per_query(self.frame.row).get(query, {}).get(metric))
            if value is None:
                return reading.fail(f"{file} holds no {metric} of query {query} for {self.frame.row}")
            reading.case = "query"
            reading.figures.update(row=Figure("text", self.frame.row), query=Figure("text", query),
                                   value=Figure("score", value))
            _measured(reading, file, f"per_query.{self.frame.row}.{query}.{metric}", value)
            return reading
        values = []
        for row in self.frame.subject:
            value = _number((model.row(row) or {}).get(metric))
            if value is None:
                return reading.fail(f"{file} holds no mean {metric} of {row}")
            values.append((row, value))
            _measured(reading, file, f"table[search={row}].{metric}", value)
        if len(values) == 1:
            reading.case = "mean"
            reading.figures.update(row=Figure("text", values[0][0]), value=Figure("score", values[0][1]))
        else:
            reading.case = "means"
            reading.figures["values"] = Figure("pairs", values)
        return reading

    def record(self, model) -> Reading:
        """What a results file records at each path (a count, a flag, a version, a hash), as it is."""
        reading, values = self.reading, []
        for path in self.frame.subject:
            value = model.lookup(path)
            if value is MISSING or value is None or isinstance(value, (dict, list)):
                what = "nothing" if value is MISSING or value is None else "a block, not one value"
                return reading.fail(f"{self.frame.file} records {what} at {path}")
            if isinstance(value, float) and not math.isfinite(value):
                return reading.fail(f"{self.frame.file} records {value!r} at {path}, not a finite number")
            values.append((path, value))
            _measured(reading, self.frame.file, path, value)
        reading.case = "record"
        reading.figures["records"] = Figure("records", values)
        reading.figures["file"] = Figure("text", self.frame.file)
        return reading

    def comparison(self, model) -> Reading:
        frame, reading = self.frame, self.reading
        row, against, metric = frame.row, frame.options["against"], frame.metric or ""
        reading.figures.update(row=Figure("text", row), against=Figure("text", against), metric=Figure("text", metric))
        if frame.statistic == QUERY:
            return self._one_query(model, row, against, metric)
        correction = frame.options.get("correction", "none")
        stats, where = self.paired(model, row, against, metric, correction)
        if stats is None:
            return reading.fail(where)
        queries = _count(stats.get("queries"))
        if frame.statistic == SHARE:
            return self._share(stats, where, queries)
        return self._mean(model, stats, where, queries, correction)

    def _one_query(self, model, row: str, against: str, metric: str) -> Reading:
        reading, query = self.reading, self.frame.options["query"]
        mine = _number(model.per_query(row).get(query, {}).get(metric))
        theirs = _number(model.per_query(against).get(query, {}).get(metric))
        if mine is None or theirs is None:
            return reading.fail(f"{self.frame.file} holds no {metric} of query {query} for both {row} and {against}")
        reading.case = "query"
        reading.facts["direction"] = "higher" if mine > theirs else "lower" if mine < theirs else "same"
        reading.figures.update(query=Figure("text", query), value=Figure("pair score", (mine, theirs)),
                               other=Figure("pair score", (theirs, mine)))
        _measured(reading, self.frame.file, f"per_query.{row}.{query}.{metric}", mine)
        _measured(reading, self.frame.file, f"per_query.{against}.{query}.{metric}", theirs)
        return reading

    def _share(self, stats: dict[str, Any], where: str, queries: int | None) -> Reading:
        reading = self.reading
        wins, ties, losses = (_count(stats.get(key)) for key in ("wins", "ties", "losses"))
        if wins is None or ties is None or losses is None:
            return reading.fail(f"{where} holds no wins, ties and losses")
        total = wins + ties + losses
        if self.too_few(total):
            return reading
        reading.case = "share"
        reading.facts["quantifier"] = ("all" if wins == total else "none" if wins == 0
                                       else "most" if wins * 2 > total else "some")
        reading.figures.update(wins=Figure("count", wins), ties=Figure("count", ties),
                               losses=Figure("count", losses), total=Figure("count", total, noun="query"),
                               total_plain=Figure("count", total))
        for key in ("wins", "ties", "losses"):
            _measured(reading, self.frame.file, f"{where}.{key}", stats.get(key))
        return reading

    def _mean(self, model, stats: dict[str, Any], where: str, queries: int | None, correction: str) -> Reading:
        reading, frame = self.reading, self.frame
        delta, low, high = (_number(stats.get(key)) for key in ("delta", "ci95_low", "ci95_high"))
        p_key = "p_holm" if correction == "holm" else "p_value"
        told_key = "distinguishable_holm" if correction == "holm" else "distinguishable"
        p, told = _number(stats.get(p_key)), stats.get(told_key)
        if delta is None or low is None or high is None or p is None or not isinstance(told, bool):
            return reading.fail(f"{where} holds no change, interval and {p_key}")
        for key in ("delta", "ci95_low", "ci95_high", p_key, told_key):
            _measured(reading, frame.file, f"{where}.{key}", stats.get(key))
        reading.facts["direction"] = "higher" if delta > 0 else "lower" if delta < 0 else "same"
        reading.figures["change"] = Figure("change", delta)
        if self.too_few(queries):
            return reading
        reading.case = "mean"
        bounds = [0.0]
        if frame.options.get("effect"):
            found, problem = self.threshold(frame.options["effect"])
            if found is None:
                return reading.fail(f"effect: {problem}")
            mismatch = thresholds.require_metric(found, frame.metric or "")
            if mismatch:
                return reading.fail(f"effect: {mismatch}")
            self.threshold_figures("effect", found)
            bounds += [found.value, -found.value]
            cleared = (delta > 0 and low > found.value) or (delta < 0 and high < -found.value)
            reading.facts["size"] = "cleared" if cleared else "not_cleared"
        else:
            reading.facts["size"] = "unstated"
        reading.figures["change"] = Figure("change", delta, tuple(bounds))
        reading.figures["interval"] = Figure("interval", (low, high), tuple(bounds))
        reading.figures["p"] = Figure("p", p)
        reading.facts["significance"] = "distinguished" if told else "not_distinguished"
        reading.facts["correction"] = correction
        if correction == "holm":
            reading.figures["family"] = Figure("count", _count(stats.get("family")) or 0, noun="pair")
        if frame.options.get("relative") == "true":
            base = _number((model.row(frame.options["against"]) or {}).get(frame.metric or ""))
            if base is None or base == 0:
                return reading.fail(f"no relative change: {frame.options['against']}'s mean {frame.metric} is "
                                    f"{'zero' if base == 0 else 'not in ' + frame.file}")
            reading.figures["relative"] = Figure("relative", delta / base)
            reading.facts["relative"] = "shown"
            _measured(reading, frame.file, f"table[search={frame.options['against']}].{frame.metric}", base)
        else:
            reading.facts["relative"] = "hidden"
        return reading

    def _differences(self, model, row: str, against: str, metric: str) -> list[float]:
        return model.paired_differences(row, against, metric)

    def _margin_test(self, model, test: str) -> Reading:
        """Equivalence (TOST) or non-inferiority against a margin of the frame's metric."""
        frame, reading = self.frame, self.reading
        row, to, metric = frame.row, frame.options["to"], frame.metric or ""
        reading.figures.update(row=Figure("text", row), against=Figure("text", to), metric=Figure("text", metric))
        found, problem = self.threshold(frame.options["margin"])
        if found is None:
            return reading.fail(f"margin: {problem}")
        mismatch = thresholds.require_metric(found, metric)
        if mismatch:
            return reading.fail(f"margin: {mismatch}")
        self.threshold_figures("margin", found)
        differences = self._differences(model, row, to, metric)
        if not differences:
            return reading.fail(f"{frame.file} holds no per-query {metric} of both {row} and {to}")
        _measured(reading, frame.file, f"per_query.{row}.*.{metric} - per_query.{to}.*.{metric}",
                  f"{len(differences)} paired differences")
        if self.too_few(len(differences)):
            return reading
        outcome = _margin_outcome(test, differences, found.value, self.context)
        margin = found.value
        reading.figures["change"] = Figure("change", outcome["mean"], (0.0, margin, -margin))
        if test == "equivalence":
            reading.case = "equivalence"
            reading.facts["verdict"] = "equivalent" if outcome["decided"] else "not_shown"
            reading.figures["interval"] = Figure("interval", (outcome["low"], outcome["high"]), (margin, -margin, 0.0))
            reading.figures["confidence"] = Figure("percent", outcome["confidence"])
        else:
            reading.case = "noninferiority"
            inferior = outcome["upper"] is not None and outcome["upper"] < -margin
            reading.facts["verdict"] = "noninferior" if outcome["decided"] else "inferior" if inferior else "not_shown"
            reading.figures["bound"] = Figure("change", outcome["low"], (-margin, 0.0))
            reading.figures["confidence"] = Figure("percent", outcome["confidence"])
        reading.figures["p"] = Figure("p", outcome["p"])
        return reading

    def equivalence(self, model) -> Reading:
        return self._margin_test(model, "equivalence")

    def noninferiority(self, model) -> Reading:
        return self._margin_test(model, "noninferiority")

    def budget(self, model) -> Reading:
        frame, reading = self.frame, self.reading
        found, problem = self.threshold(frame.options["limit"])
        if found is None:
            return reading.fail(f"limit: {problem}")
        mismatch = thresholds.require_unit(found, "ms")
        if mismatch:
            return reading.fail(f"limit: {mismatch}")
        cost = model.cost(frame.row)
        p95 = _number((cost or {}).get("p95_milliseconds"))
        if cost is None or p95 is None:
            return reading.fail(f"{frame.file} holds no p95 time of {frame.row}")
        self.threshold_figures("limit", found)
        reading.figures.update(row=Figure("text", frame.row), p95=Figure("ms", p95, (found.value,)))
        reading.facts["fit"] = "within" if p95 <= found.value else "over"
        reading.case = "shape" if _by_shape(cost) else "timed"
        if reading.case == "shape":
            self._shape_figures(cost)
        _measured(reading, frame.file, f"rerank_costs.{frame.row}.p95_milliseconds", p95)
        return reading

    def _shape_figures(self, cost: dict[str, Any]) -> None:
        layers = _count(cost.get("full_layers"))
        timed = cost.get("layers_timed") if isinstance(cost.get("layers_timed"), list) else []
        self.reading.figures["layers"] = Figure("count", layers or 0, noun="layer")
        self.reading.figures["timed"] = Figure("count", max([len(timed), 1]), noun="")
        self.reading.facts["extrapolated"] = "yes" if cost.get("method") == "extrapolated" else "no"

    def power(self, model) -> Reading:
        frame, reading = self.frame, self.reading
        row, against, metric = frame.row, frame.options["against"], frame.metric or ""
        entry = model.power(row, against, metric)
        reading.figures.update(row=Figure("text", row), against=Figure("text", against), metric=Figure("text", metric))
        if entry is None:
            return reading.fail(f"{frame.file} holds no power of {row} against {against} on {metric}")
        where = f"power.comparisons.{comparison_name(row, against)}.metrics.{metric}"
        power, alpha = (_number(level) for level in model.power_levels)
        mde, queries = _number(entry.get("minimum_detectable_effect")), _count(entry.get("queries"))
        if power is None or alpha is None or queries is None:
            return reading.fail(f"{where} holds no power, alpha and query count")
        _measured(reading, frame.file, f"{where}.minimum_detectable_effect", entry.get("minimum_detectable_effect"))
        reading.figures.update(power=Figure("number", power), alpha=Figure("number", alpha),
                               n=Figure("count", queries, noun="query"))
        if self.too_few(queries):
            return reading
        if mde is None:
            reading.case = "no_mde"
            reading.figures["why"] = Figure("text", str(entry.get("why") or "the differences do not vary"))
            return reading
        reading.case = "mde"
        reading.figures["mde"] = Figure("score", mde)
        if frame.options.get("effect"):
            found, problem = self.threshold(frame.options["effect"])
            if found is None:
                return reading.fail(f"effect: {problem}")
            mismatch = thresholds.require_metric(found, metric)
            if mismatch:
                return reading.fail(f"effect: {mismatch}")
            self.threshold_figures("effect", found)
            needed = _queries_needed(_number(entry.get("sd_difference")), found.value, alpha, power, self.context)
            if needed is None:
                reading.facts["needed"] = "uncountable"
            else:
                reading.figures["needed"] = Figure("count", needed, noun="query")
                reading.facts["needed"] = "enough" if mde <= found.value else "more"
        else:
            reading.facts["needed"] = "unstated"
        return reading

    def ceiling(self, model) -> Reading:
        frame, reading = self.frame, self.reading
        metric = frame.metric or ""
        entry = ((model.ceiling or {}).get("rows", {}).get(frame.row) or {}).get(metric)
        values = {key: _number((entry or {}).get(key)) for key in ("ceiling", "row", "headroom")}
        if entry is None or None in values.values():
            return reading.fail(f"{frame.file} holds no oracle ceiling of {frame.row}'s candidates on {metric}")
        reading.case = "ceiling"
        reading.figures.update(row=Figure("text", frame.row), metric=Figure("text", metric),
                               ceiling=Figure("score", values["ceiling"]), value=Figure("score", values["row"]),
                               headroom=Figure("score", values["headroom"]))
        for key, value in values.items():
            _measured(reading, frame.file, f"ceiling.rows.{frame.row}.{metric}.{key}", value)
        return reading

    def diagnosis(self, model) -> Reading:
        """Why a row's relevant documents are not in its top k: a candidate miss (not among its
        candidates) or an ordering problem (among them, below the cutoff), per query or counted."""
        frame, reading = self.frame, self.reading
        by_query = model.diagnosis(frame.row)
        if not by_query:
            return reading.fail(f"{frame.file} holds no diagnosis of {frame.row}")
        reading.figures["row"] = Figure("text", frame.row)
        query = frame.options.get("query")
        if query is None:
            counts = {name: 0 for name in DIAGNOSES}
            for entry in by_query.values():
                category = entry.get("diagnosis") if isinstance(entry, dict) else None
                if category not in counts:
                    return reading.fail(f"{frame.file}: diagnosis of {frame.row} holds {category!r}")
                counts[category] += 1
            reading.case = "counted"
            reading.figures.update(missed=Figure("count", counts["candidate miss"]),
                                   ordering=Figure("count", counts["ordering problem"]),
                                   neither=Figure("count", counts["none"]),
                                   total=Figure("count", sum(counts.values()), noun="query"))
            _measured(reading, frame.file, f"diagnosis.{frame.row}", counts)
            return reading
        entry = by_query.get(query)
        if not isinstance(entry, dict) or entry.get("diagnosis") not in DIAGNOSES:
            return reading.fail(f"{frame.file} holds no diagnosis of {frame.row} on query {query}")
        reading.case = {"none": "query_none", "ordering problem": "query_ordering",
                        "candidate miss": "query_miss"}[entry["diagnosis"]]
        missed = entry.get("missed_by_candidates", entry.get("misses")) or []
        below = next((value for key, value in entry.items() if key.startswith("ranked_below_")), None)
        if below is None:   # the sandbox names the misses of the top k only
            below = [document for document in entry.get("misses", []) if document in entry.get("candidates", [])]
        missed = [document for document in missed if document not in below]
        if reading.case == "query_ordering" and not below:
            reading.case = "query_order"
        reading.figures.update(query=Figure("text", query), missed=Figure("documents", missed),
                               below=Figure("documents", below))
        _measured(reading, frame.file, f"diagnosis.{frame.row}.{query}", entry.get("diagnosis"))
        return reading

    def cost(self, model) -> Reading:
        frame, reading = self.frame, self.reading
        cost = model.cost(frame.row)
        p50, p95 = (_number((cost or {}).get(key)) for key in ("p50_milliseconds", "p95_milliseconds"))
        if cost is None or p50 is None or p95 is None:
            return reading.fail(f"{frame.file} holds no cost of {frame.row}")
        reading.figures.update(row=Figure("text", frame.row), p50=Figure("ms", p50), p95=Figure("ms", p95),
                               model=Figure("text", str(cost.get("model") or frame.row)))
        reading.case = "shape" if _by_shape(cost) else "timed"
        if reading.case == "shape":
            self._shape_figures(cost)
        reading.facts["quality"] = "measured" if cost.get("quality") == "measured" and not _by_shape(cost) \
            else "not_measured"
        for key in ("p50_milliseconds", "p95_milliseconds"):
            _measured(reading, frame.file, f"rerank_costs.{frame.row}.{key}", cost.get(key))
        return reading

    def frontier(self, model) -> Reading:
        frame, reading = self.frame, self.reading
        if frame.row != CHEAPEST:
            return reading.fail("frontier: only the cheapest fitting configuration is a frame")
        found, problem = self.threshold(frame.options["limit"])
        if found is None:
            return reading.fail(f"limit: {problem}")
        mismatch = thresholds.require_unit(found, "ms")
        if mismatch:
            return reading.fail(f"limit: {mismatch}")
        block = model.frontier
        if block is None:
            return reading.fail(f"{frame.file} holds no frontier")
        self.threshold_figures("limit", found)
        fitting = within_budget(block, found.value)
        total = len(block.get("configurations", []))
        reading.figures.update(fitting=Figure("count", len(fitting)), total=Figure("count", total))
        _measured(reading, frame.file, "frontier.configurations", f"{total} configurations")
        cheapest = cheapest_within(block, found.value)
        if cheapest is None:
            reading.case = "none_fits"
            return reading
        reading.case = "cheapest"
        index = block["configurations"].index(cheapest)
        reading.figures.update(model=Figure("text", str(cheapest.get("model"))),
                               depth=Figure("count", int(cheapest.get("depth") or 0), noun=""),
                               max_length=Figure("count", int(cheapest.get("max_length") or 0), noun="token"),
                               precision=Figure("text", str(cheapest.get("precision"))),
                               p95=Figure("ms", float(cheapest["p95_milliseconds"]), (found.value,)))
        self._shape_figures(cheapest)
        _measured(reading, frame.file, f"frontier.configurations[{index}].p95_milliseconds",
                  cheapest.get("p95_milliseconds"))
        return reading

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


def _by_shape(cost: dict[str, Any]) -> bool:
    """A cost measured by the architecture alone (random weights), never a quality."""
    text = str(cost.get("cost") or "")
    return "by shape" in text or str(cost.get("weights", "")).startswith("random")


def _margin_outcome(test: str, differences: list[float], margin: float, context: Any) -> dict[str, Any]:
    """TOST or the one-sided test on the paired differences (generator.core.power), remembered by
    the differences and the margin so a check that has run it once needs no SciPy."""
    def compute() -> dict[str, Any]:
        from generator.core.power import non_inferiority, tost_paired   # NumPy and SciPy, only when not remembered

        if test == "equivalence":
            result = tost_paired(differences, margin)
            return {"mean": result["mean_difference"], "low": result["ci_low"], "high": result["ci_high"],
                    "p": result["p_value"], "decided": bool(result["equivalent"]), "upper": result["ci_high"],
                    "confidence": result["confidence"]}
        result = non_inferiority(differences, margin)
        upper = tost_paired(differences, margin)["ci_high"]
        return {"mean": result["mean_difference"], "low": result["lower_bound"], "high": None,
                "p": result["p_value"], "decided": bool(result["non_inferior"]), "upper": upper,
                "confidence": result["confidence"]}
    return context.results.memo.remembered("frame margin test", {"test": test, "margin": margin,
                                                                  "differences": differences}, compute)


def _queries_needed(sd: float | None, effect: float, alpha: float, power: float, context: Any) -> int | None:
    """The queries a paired test needs to detect `effect` (generator.core.power.queries_needed)."""
    if sd is None:
        return None

    def compute() -> int | None:
        from generator.core.power import queries_needed   # SciPy, only when not remembered

        try:
            return queries_needed(sd, effect, alpha=alpha, power=power)
        except ValueError:
            return None
    return context.results.memo.remembered("frame queries needed", {"effect": effect, "alpha": alpha, "power": power,
                                                                     "sd": sd}, compute)


def read_frame(frame: Frame, context: Any, claim_id: str) -> Reading:
    """The frame computed on the results and the design (a reading with a problem when it cannot be)."""
    return Reader(frame, context, claim_id).read()
