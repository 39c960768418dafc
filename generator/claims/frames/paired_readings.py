"""The frame kinds read from a paired comparison of two rows: a change (its mean with its interval
and test, the share of queries it wins, or one query), equivalence and non-inferiority against a
margin of the same metric, and the power to detect an effect.

The margin tests and the queries an effect needs are remembered by their inputs, so a check that
has drawn them once needs no SciPy.
"""

from __future__ import annotations

from typing import Any

from generator.claims.frames import thresholds
from generator.claims.frames.figures import Figure, Reading, _count, _measured, _number
from generator.claims.frames.spec import QUERY, SHARE
from generator.core.results import comparison_name


class PairedReadings:
    """The paired kinds of a frame's reader (generator.claims.frames.readings.Reader), which sets
    the frame, the context and the reading these fill, and the thresholds they read."""

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
            found = self.required_threshold("effect", lambda found: thresholds.require_metric(found, frame.metric or ""))
            if found is None:
                return reading
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
        found = self.required_threshold("margin", lambda found: thresholds.require_metric(found, metric))
        if found is None:
            return reading
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
            found = self.required_threshold("effect", lambda found: thresholds.require_metric(found, metric))
            if found is None:
                return reading
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
