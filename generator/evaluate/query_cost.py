"""One query's cost from its timings: each batch's fastest repeat at each layer count timed, and
its time at the model's full depth, measured or read off the line fitted through those counts.

Pure arithmetic over cache entries (no torch), so the fit a figure rests on can be checked by hand.
"""

from __future__ import annotations

import statistics
from dataclasses import replace
from typing import Mapping, Sequence

from generator.core.dataclass import dataclass

# Another process or the host can only add time to a batch, never take it away, so the fastest of
# the repeats is the closest to the batch's own cost. A spell that slows one repeat of a shallow cut
# would otherwise be multiplied by N/2 in the extrapolation: with the median (the mean of two), one
# slowed 2-layer repeat of one query moved its 12-layer figure by +21% on this machine
# (bench/bench_cost.py, 2026-12-02); the fastest leaves it out.
REPEAT_STATISTIC = "fastest"


def _fastest(times: Sequence[float]) -> float:
    return min(times)


def _line(points: Mapping[int, float]) -> tuple[float, float]:
    """Least-squares intercept and slope of milliseconds over layer counts."""
    mean_x = statistics.fmean(points)
    mean_y = statistics.fmean(points.values())
    slope = (sum((x - mean_x) * (y - mean_y) for x, y in points.items())
             / sum((x - mean_x) ** 2 for x in points))
    return mean_y - slope * mean_x, slope


@dataclass(frozen=True)
class QueryCost:
    """One query's priced batches: the positions of each batch's pairs, and per batch its fastest
    time over the repeats at each layer count timed, with the value at the full depth (measured,
    or the fitted line's)."""

    query_id: str
    pairs: int
    batches: tuple[tuple[int, ...], ...]
    layer_milliseconds: dict[int, tuple[float, ...]]   # layer count -> per batch, fastest repeat
    batch_milliseconds: tuple[float, ...]               # per batch, at the full depth
    intercepts: tuple[float, ...] | None                # per batch, extrapolated only
    slopes: tuple[float, ...] | None
    tokens: tuple[int, ...]
    entries: tuple[dict, ...]                           # the cache entries behind it (cpu, load)
    from_depth: int | None = None                       # derived from a deeper measurement's batches

    @property
    def milliseconds(self) -> float:
        return sum(self.batch_milliseconds)

    def prefix(self, batches: int, from_depth: int) -> "QueryCost":
        """The first `batches` batches alone: exactly what predict spends on their pairs."""
        cut = slice(0, batches)
        kept = self.batches[cut]
        count = sum(len(batch) for batch in kept)
        return replace(self, pairs=count, batches=kept,
                       layer_milliseconds={layers: values[cut] for layers, values in self.layer_milliseconds.items()},
                       batch_milliseconds=self.batch_milliseconds[cut],
                       intercepts=None if self.intercepts is None else self.intercepts[cut],
                       slopes=None if self.slopes is None else self.slopes[cut],
                       tokens=self.tokens[:count], from_depth=from_depth)


def _query_cost(query_id: str, entries: Mapping[int, dict], full_layers: int) -> QueryCost:
    first = entries[min(entries)]
    fastest = {layers: tuple(_fastest(times) for times in zip(*entry["batch_milliseconds"]))
               for layers, entry in sorted(entries.items())}
    intercepts = slopes = None
    if len(fastest) == 1:
        values = fastest[full_layers]
    else:
        lines = [_line({layers: fastest[layers][index] for layers in fastest})
                 for index in range(len(first["batches"]))]
        intercepts = tuple(intercept for intercept, _ in lines)
        slopes = tuple(slope for _, slope in lines)
        values = tuple(intercept + slope * full_layers for intercept, slope in lines)
    return QueryCost(query_id, int(first["pairs"]), tuple(tuple(batch) for batch in first["batches"]), fastest,
                     values, intercepts, slopes, tuple(first["tokens"]),
                     tuple(entries[layers] for layers in sorted(entries)))
