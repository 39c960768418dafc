"""The paired comparisons of a results file drawn again: each comparison's figures from its
per-query differences, its interval and p-value redrawn with the recorded seed, resamples and
sign-flip limits by the builder that drew them (generator.core.results.builders), and every pair of
measured rows with Holm's correction (`all_pairs`).

The intervals' endpoints are random draws, so they are compared only after being drawn again with
the same parameters; the verdicts that follow from them are checked from the recorded endpoints.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from generator.claims.tracing.mismatch import Mismatch, _expect, _field
from generator.core.signflip import SIGNIFICANCE, agreement, exact_p_value, wins_ties_losses
from generator.core.results.builders import all_pairs_block, draw_comparison, scores_of
from generator.core.results.model import comparison_name
from generator.core.results.schema import ALL_PAIRS, COMPARISONS


def _check_paired(where: str, stats: Mapping[str, Any], differences: list[float]) -> None:
    """The figures of one paired comparison that follow from its per-query differences, and the
    verdict that follows from its interval and p-value (the interval's endpoints are random draws)."""
    _expect(f"{where}.delta", stats.get("delta"), math.fsum(differences) / len(differences))
    wins, ties, losses = wins_ties_losses(differences)
    _expect(f"{where}.wins", stats.get("wins"), wins)
    _expect(f"{where}.ties", stats.get("ties"), ties)
    _expect(f"{where}.losses", stats.get("losses"), losses)
    _expect(f"{where}.queries", stats.get("queries", len(differences)), len(differences))
    if stats.get("p_value_method") == "exact":
        _expect(f"{where}.p_value", stats.get("p_value"), exact_p_value(differences))
    low, high, p_value = stats.get("ci95_low"), stats.get("ci95_high"), stats.get("p_value")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in (low, high, p_value)) \
            or not low <= high or not 0.0 <= p_value <= 1.0:
        raise Mismatch(f"{where} has no interval with ci95_low <= ci95_high and a p-value in [0, 1]")
    if len(set(differences)) == 1:
        _expect(f"{where}.ci95_low", low, differences[0])
        _expect(f"{where}.ci95_high", high, differences[0])
    excludes_zero = low > 0.0 or high < 0.0
    for name, derived in (("excludes_zero", excludes_zero), ("p_below_0_05", p_value < SIGNIFICANCE),
                          ("distinguishable", excludes_zero and p_value < SIGNIFICANCE),
                          ("agreement", agreement(low, high, p_value))):
        if name in stats:
            _expect(f"{where}.{name}", stats[name], derived)


def _uncertainty_method(manifest: Mapping[str, Any]) -> dict[str, Any] | None:
    """The recorded parameters every interval and p-value was drawn with, or None when the file
    records none (a sandbox run has no comparisons)."""
    method = manifest.get("uncertainty")
    if method is None:
        return None
    try:
        interval, p_value = method["interval"], method["p_value"]
        parameters = {"seed": interval["seed"], "resamples": interval["resamples"],
                      "confidence": interval["confidence"],
                      "exact_max_queries": p_value["exact_when_nonzero_differences_at_most"],
                      "permutation_resamples": p_value["monte_carlo_resamples"]}
    except (KeyError, TypeError):
        raise Mismatch("manifest.uncertainty does not record the seed, resamples, confidence and sign-flip "
                       "limits its intervals were drawn with") from None
    if not all(isinstance(value, (int, float)) and not isinstance(value, bool) for value in parameters.values()):
        raise Mismatch("manifest.uncertainty records a parameter that is not a number")
    return parameters


def recompute_comparison(row_scores: list[float], base_scores: list[float], name: str, metric: str,
                         method: Mapping[str, Any]) -> dict[str, Any]:
    """One comparison drawn again, bit for bit, by the builder that drew it: the same per-query
    values, the same seed for this comparison and metric, the same resamples."""
    try:
        return draw_comparison(row_scores, base_scores, name=name, metric=metric, seed=int(method["seed"]),
                               resamples=int(method["resamples"]), confidence=float(method["confidence"]),
                               exact_max_queries=int(method["exact_max_queries"]),
                               permutation_resamples=int(method["permutation_resamples"]))
    except ValueError as error:
        raise Mismatch(f"comparisons.{name}.metrics.{metric} cannot be drawn again: {error}") from None


class ComparisonChecks:
    """The comparison blocks of the derivation (generator.claims.tracing.rederive): it sets the
    results model, data, manifest and the per-query values these read."""

    def _check_comparisons(self, query_ids: list[str], measured: set[str]) -> None:
        """Every comparison of the block: a measured pair is drawn again by its builder from both
        rows' per-query values; a pair with an unmeasured side gives no figure."""
        if not self.model.has_comparisons:
            return
        block = self.data[COMPARISONS.name]
        if not isinstance(block, dict):
            raise Mismatch("comparisons is not an object")
        method = _uncertainty_method(self.manifest)
        for name, entry in sorted(block.items()):
            where = f"comparisons.{name}"
            row, baseline = _field(entry, "row", where), _field(entry, "baseline", where)
            if name != comparison_name(row, baseline):
                raise Mismatch(f"{where} compares {row} with {baseline}: its name says otherwise")
            sides_measured = row in measured and baseline in measured
            _expect(f"{where}.measured", entry.get("measured"), sides_measured)
            if not sides_measured:
                if "metrics" in entry:
                    raise Mismatch(f"{where} gives figures although {row} or {baseline} was not measured")
                continue
            for metric, stats in sorted(_field(entry, "metrics", where).items()):
                if not isinstance(stats, dict):
                    raise Mismatch(f"{where}.metrics.{metric} is not an object")
                try:
                    scores = (scores_of(self.per_query, row, query_ids, metric),
                              scores_of(self.per_query, baseline, query_ids, metric))
                except (KeyError, TypeError):
                    raise Mismatch(f"{where}.metrics.{metric} names a metric the rows were not scored on") from None
                _check_paired(f"{where}.metrics.{metric}", stats, [a - b for a, b in zip(*scores)])
                if method is not None:
                    drawn = recompute_comparison(*scores, name, metric, method)
                    for field in sorted(set(drawn) | set(stats)):
                        _expect(f"{where}.metrics.{metric}.{field}", stats.get(field), drawn.get(field))

    def _check_all_pairs(self, query_ids: list[str], measured: set[str]) -> None:
        """Every pair of measured rows and its Holm adjustment, rebuilt by the builder: a pair the
        comparisons block holds (already re-derived) is read from it, the others are drawn again."""
        block = self.model.all_pairs
        if ALL_PAIRS.name not in self.data:
            return
        method = _uncertainty_method(self.manifest)
        rows = self.model.row_names
        metrics = sorted(self.model.metric_names)

        def draw(row: str, baseline: str, name: str, metric: str) -> Mapping[str, Any]:
            if method is None:
                raise Mismatch("all_pairs holds figures, but manifest.uncertainty records no method to draw them")
            try:
                scores = (scores_of(self.per_query, row, query_ids, metric),
                          scores_of(self.per_query, baseline, query_ids, metric))
            except (KeyError, TypeError):
                raise Mismatch(f"all_pairs.metrics.{metric} names a metric the rows were not scored on") from None
            return recompute_comparison(*scores, name, metric, method)

        derived = all_pairs_block(rows, {row: row in measured for row in rows}, metrics, self.model.comparisons, draw)
        written = block.get("metrics") if block is not None and isinstance(block.get("metrics"), dict) else {}
        for metric, family in derived["metrics"].items():
            pairs = written.get(metric, {}).get("pairs") if isinstance(written.get(metric), dict) else None
            for name, entry in family["pairs"].items():
                recorded = pairs.get(name) if isinstance(pairs, dict) else None
                for field in ("delta", "ci95_low", "ci95_high", "p_value", "p_holm", "distinguishable_holm"):
                    _expect(f"all_pairs.metrics.{metric}.pairs.{name}.{field}",
                            recorded.get(field) if isinstance(recorded, dict) else None, entry[field])
        _expect(ALL_PAIRS.name, self.data[ALL_PAIRS.name], derived)
