"""The frame kinds read from what a results file records of its rows, with no test drawn: a value (a
row's mean or one query's), a recorded field as it is, a row's oracle ceiling, its diagnosis, its
cost, its p95 time against a budget, and the cheapest configuration of the frontier within a limit.
"""

from __future__ import annotations

import math
from typing import Any

from generator.claims.frames import thresholds
from generator.claims.frames.figures import Figure, Reading, _count, _measured, _number
from generator.claims.frames.spec import CHEAPEST, QUERY
from generator.core.results.model import cheapest_within, within_budget
from generator.core.results.paths import MISSING

DIAGNOSES = ("candidate miss", "ordering problem", "none")


class RowReadings:
    """The row kinds of a frame's reader (generator.claims.frames.readings.Reader), which sets the
    frame, the context and the reading these fill, and the thresholds they read."""

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

    def budget(self, model) -> Reading:
        frame, reading = self.frame, self.reading
        found = self.required_threshold("limit", lambda found: thresholds.require_unit(found, "ms"))
        if found is None:
            return reading
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
        found = self.required_threshold("limit", lambda found: thresholds.require_unit(found, "ms"))
        if found is None:
            return reading
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


def _by_shape(cost: dict[str, Any]) -> bool:
    """A cost measured by the architecture alone (random weights), never a quality."""
    text = str(cost.get("cost") or "")
    return "by shape" in text or str(cost.get("weights", "")).startswith("random")
