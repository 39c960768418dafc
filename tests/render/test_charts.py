"""Honest charts: one colour and pattern per metric in every chart, time on an axis that orders
bars by their values (log above two decades), ticks and titles, and text that never scales."""

from __future__ import annotations

import math
import re

import pytest

from generator.project.outputs import DeltasChart, QualityVsTimeChart, TableSpec
from generator.render import charts
from generator.render.doors import HtmlDoor
from generator.results import ResultsModel


class _Labels:
    """Every label key returns its own name, so a test can see which label was placed."""

    def __getattr__(self, key):
        return key

    def __getitem__(self, key):
        return key


ROWS = [
    {"search": "dense", "nDCG@5": 0.58, "recall@5": 0.8, "recall@50": 0.95,
     "delta_nDCG@5_vs_dense": 0.0, "delta_recall@5_vs_dense": 0.0},
    {"search": "sparse", "nDCG@5": 0.65, "recall@5": 0.76, "recall@50": 0.8,
     "delta_nDCG@5_vs_dense": 0.07, "delta_recall@5_vs_dense": -0.04},
    {"search": "hybrid+rerank", "measured": False},
]
# The rows' file: each change's paired interval is in its comparison with the baseline.
RESULTS = ResultsModel({"table": ROWS, "comparisons": {"sparse_vs_dense": {
    "row": "sparse", "baseline": "dense", "measured": True,
    "metrics": {"nDCG@5": {"ci95_low": -0.1, "ci95_high": 0.23}, "recall@5": {"ci95_low": -0.22, "ci95_high": 0.12}}}}})


def _deltas(chart: DeltasChart, door=None, labels=None, **options) -> str:
    return str(charts.deltas(ROWS, chart, TableSpec(), RESULTS, {}, door or HtmlDoor(), labels or _Labels(), **options))


def _cost(cost: dict) -> ResultsModel:
    """A results file whose decided reranker has this cost."""
    return ResultsModel({"rerank_costs": {"hybrid+rerank": cost}})


def _fills(svg: str) -> dict[str, str]:
    """metric slug -> its colour, for every metric pattern a chart defines (legend swatches too)."""
    found = re.findall(r'<pattern id="chart-[a-z]+(?:-key)?-([a-z0-9-]+)"[^>]*><rect width="6" height="6" '
                       r'fill="(#[0-9a-f]{6})"', svg)
    colours: dict[str, set[str]] = {}
    for slug, colour in found:
        colours.setdefault(slug, set()).add(colour)
    assert all(len(seen) == 1 for seen in colours.values()), colours
    return {slug: seen.pop() for slug, seen in colours.items()}


def test_one_metric_has_one_colour_and_pattern_whatever_order_the_charts_list_it():
    quality = str(charts.quality(ROWS, QualityVsTimeChart(("recall@5", "nDCG@5"), "p95", "hybrid+rerank"),
                                 "search", {}, HtmlDoor(), _Labels()))
    deltas = _deltas(DeltasChart("dense", ("nDCG@5", "recall@5"), "delta_{metric}_vs_dense",
                                 "paired_vs_dense.{metric}"))
    first, second = _fills(quality), _fills(deltas)
    assert set(first) == set(second) == {"recall-5", "ndcg-5"}
    assert first == second, "a metric keeps its colour from chart to chart"
    assert first["recall-5"] != first["ndcg-5"]
    assert charts.metric_style("recall@5")[1] != charts.metric_style("nDCG@5")[1], "told apart without colour too"
    # An unknown metric gets the same style every time.
    assert charts.metric_style("MAP@10") == charts.metric_style("MAP@10")


def _time_svg(cost, budget=None):
    rows = [{"search": "dense"}, {"search": "hybrid+rerank"}]
    chart = QualityVsTimeChart(("nDCG@5",), "rerank_cost.p95_milliseconds", "hybrid+rerank")
    return str(charts.time(rows, _cost(cost), chart, "search", HtmlDoor(), _Labels(), budget))


def _bar_end(svg: str) -> float:
    match = re.search(r'<rect x="([0-9.]+)%" y="[0-9.]+" width="([0-9.]+)%"[^>]*class="time"', svg)
    return float(match.group(1)) + float(match.group(2))


def _ticks(svg: str) -> list[tuple[float, float]]:
    """(value, x in percent) of every tick on the chart's axis."""
    xs = [float(x) for x in re.findall(r'<line x1="([0-9.]+)%" x2="[0-9.]+%" y1="[0-9.]+" y2="[0-9.]+" class="axis"/>', svg)[1:]]
    values = [float(t.replace(",", "")) for t in re.findall(r'class="tick">\ue000([0-9,.]+)\ue001', svg)]
    assert len(xs) == len(values) >= 2
    return list(zip(values, xs))


@pytest.mark.parametrize("value, budget", [(12.5, 500), (4800.0, 500), (800.0, None), (106046.0, 500), (3.0, 5000)])
def test_the_time_bar_ends_where_its_value_lies_on_the_labelled_axis(value, budget):
    svg = _time_svg({"cost": "measured", "p95_milliseconds": value}, budget=budget)
    ticks = _ticks(svg)
    end = _bar_end(svg)
    logarithmic = "axis_time_log" in svg
    transform = math.log10 if logarithmic else float
    (v0, x0), (v1, x1) = ticks[0], ticks[-1]
    expected = x0 + (transform(value) - transform(v0)) / (transform(v1) - transform(v0)) * (x1 - x0)
    assert end == pytest.approx(expected, abs=0.02)
    assert ticks == sorted(ticks), "ticks increase left to right"


def test_two_times_on_one_axis_are_ordered_by_value():
    position_small = _bar_end(_time_svg({"cost": "measured", "p95_milliseconds": 12.5}, budget=4800))
    position_large = _bar_end(_time_svg({"cost": "measured", "p95_milliseconds": 4800}, budget=12.5))
    # Both charts span 12.5 to 4,800 ms on a log axis: the same scale, so the bars compare.
    assert position_small < position_large


def test_time_spanning_more_than_two_decades_uses_a_log_axis_with_labelled_ticks():
    svg = _time_svg({"cost": "measured by shape", "p95_milliseconds": 106046.0}, budget=500)
    assert "axis_time_log" in svg and "axis_time<" not in svg
    ticks = re.findall(r'class="tick">[^0-9]*([0-9,]+)', svg)
    assert ticks == ["100", "1,000", "10,000", "100,000", "1,000,000"]
    assert "time_by_shape" in svg, "a time measured by shape says so on its bar"
    assert 'class="budget"' in svg and "budget_line" in svg
    linear = _time_svg({"cost": "measured", "p95_milliseconds": 300.0}, budget=500)
    assert "axis_time<" in linear and "axis_time_log" not in linear


def test_a_time_that_was_not_measured_is_a_label_not_a_bar():
    svg = _time_svg({"measured": False, "cost": "not measured"})
    assert 'class="time"' not in svg and "not_measured" in svg and "no_rerank_step" in svg


def test_every_chart_has_a_title_a_description_and_text_that_does_not_scale():
    door, labels = HtmlDoor(), _Labels()
    drawn = [charts.quality(ROWS, QualityVsTimeChart(("nDCG@5",), "p95", "hybrid+rerank"), "search", {}, door, labels),
             _time_svg({"cost": "measured", "p95_milliseconds": 20.0}),
             _deltas(DeltasChart("dense", ("nDCG@5",), "delta_{metric}_vs_dense"), door, labels)]
    for svg in map(str, drawn):
        assert re.search(r'<svg class="chart"[^>]*role="img"', svg)
        assert "<title id=" in svg and "<desc id=" in svg
        assert "viewBox" not in svg, "no viewBox: text stays at its CSS size at every width"
        assert re.search(r'class="axis"', svg) and re.search(r'class="tick"', svg)


def test_deltas_ticks_are_symmetric_around_zero_and_whiskers_name_their_method():
    svg = _deltas(DeltasChart("dense", ("nDCG@5",), "delta_{metric}_vs_dense", "paired_vs_dense.{metric}"),
                  method="BCa bootstrap")
    ticks = re.findall(r'class="tick">\ue000?([^<\ue001]+)', svg)
    numbers = [0.0 if t == "0" else float(t) for t in ticks]
    assert numbers == sorted(numbers) and numbers[0] == -numbers[-1] and 0.0 in numbers
    assert "whiskers_ci95" in svg and "BCa bootstrap" in svg
    assert 'class="whisker"' in svg
