"""Honest charts: one colour and pattern per metric in every chart, time on an axis that orders
bars by their values (log above two decades), ticks and titles, and text that never scales."""

from __future__ import annotations

import math
import re

import pytest

from generator.project.outputs import DeltasChart, QualityVsTimeChart, TableSpec
from generator.render import charts
from generator.render.svg import metric_style, tick_tiers
from generator.render.doors import HtmlDoor
from generator.core.results import ResultsModel


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
    assert metric_style("recall@5")[1] != metric_style("nDCG@5")[1], "told apart without colour too"
    # An unknown metric gets the same style every time.
    assert metric_style("MAP@10") == metric_style("MAP@10")


def _time_svg(cost, budget=None):
    rows = [{"search": "dense"}, {"search": "hybrid+rerank"}]
    chart = QualityVsTimeChart(("nDCG@5",), "rerank_cost.p95_milliseconds", "hybrid+rerank")
    return str(charts.time(rows, _cost(cost), chart, "search", HtmlDoor(), _Labels(), budget))


def _bar_end(svg: str) -> float:
    match = re.search(r'<rect x="([0-9.]+)%" y="[0-9.]+" width="([0-9.]+)%"[^>]*class="time"', svg)
    return float(match.group(1)) + float(match.group(2))


def _ticks(svg: str) -> list[tuple[float, float]]:
    """(value, x in percent) of every labelled tick on the chart's axis (a phone's and a wide screen's)."""
    found = re.findall(r'<text x="([0-9.]+)%" y="[0-9.]+" text-anchor="middle" class="tick(?: minor)?">'
                       r'\ue000([0-9,.]+)\ue001', svg)
    marks = {round(float(x), 2) for x in re.findall(r'<line x1="([0-9.]+)%" x2="[0-9.]+%" y1="[0-9.]+" y2="[0-9.]+" '
                                                    r'class="axis"/>', svg)[1:]}
    assert len(found) >= 2 and {round(float(x), 2) for x, _ in found} <= marks, "each label stands at a tick mark"
    return [(float(value.replace(",", "")), float(x)) for x, value in found]


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
    ticks = re.findall(r'class="tick(?: minor)?">[^0-9]*([0-9,]+)', svg)
    assert ticks == ["100", "1,000", "10,000", "100,000", "1,000,000"]
    # A phone keeps every other one: the others' labels would touch in its narrower chart.
    assert re.findall(r'class="tick">[^0-9]*([0-9,]+)', svg) == ["100", "10,000", "1,000,000"]
    assert "time_by_shape" in svg, "a time measured by shape says so on its bar"
    assert 'class="budget"' in svg and "budget_line" in svg
    linear = _time_svg({"cost": "measured", "p95_milliseconds": 300.0}, budget=500)
    assert "axis_time<" in linear and "axis_time_log" not in linear


def test_a_time_that_was_not_measured_is_a_label_not_a_bar_and_rows_without_a_rerank_step_are_not_drawn():
    svg = _time_svg({"measured": False, "cost": "not measured"})
    assert 'class="time"' not in svg and "not_measured" in svg
    assert "no_rerank_step" not in svg and "\ue000dense\ue001" not in svg and "\ue000hybrid+rerank\ue001" in svg


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


# --- nothing collides, at a phone's width or a desktop's ---------------------------------------
# The charts lay out in percent of their width and write text in CSS pixels, so whether two texts
# touch depends on the width they are drawn at: from a 360 px phone's (336 px, the page's padding
# off) and a 390 px phone's to the narrowest and a usual desktop page's. A text's width is
# estimated here on its own (characters times 0.62 em at the charts' 13 px); the browser test
# measures the real glyphs of the SciFact readout.

PHONE_WIDTHS = (336.0, 366.0)
DESKTOP_WIDTHS = (608.0, 894.0)
_TEXT = re.compile(r'<text x="(-?[0-9.]+)%" y="([0-9.]+)"(?: dx="(-?[0-9.]+)")? text-anchor="(start|middle|end)"'
                   r'(?: class="([^"]*)")?>(.*?)</text>')


def _texts(svg: str) -> list[dict]:
    """Every text of a chart: its class, line, anchor, x in percent, dx in pixels, and what it shows."""
    return [{"x": float(x), "y": float(y), "dx": float(dx or 0), "anchor": anchor, "class": cls,
             "text": re.sub(r"<[^>]+>", "", shown).replace("\ue000", "").replace("\ue001", "")}
            for x, y, dx, anchor, cls, shown in _TEXT.findall(svg)]


def _extent(text: dict, width: float) -> tuple[float, float]:
    """Left and right edge of a text, in pixels, in a chart `width` pixels wide."""
    at = text["x"] / 100 * width + text["dx"]
    size = len(text["text"]) * 0.62 * 13
    return {"start": (at, at + size), "end": (at - size, at), "middle": (at - size / 2, at + size / 2)}[text["anchor"]]


def _zero(svg: str) -> float:
    return float(re.search(r'<line x1="([0-9.]+)%" x2="[0-9.]+%" y1="[0-9.]+" y2="[0-9.]+" class="zero"/>', svg).group(1))


def _comparison(row: str, **metrics: tuple[float, float]) -> dict:
    return {"row": row, "baseline": "dense", "measured": True,
            "metrics": {metric.replace("_", "@"): {"ci95_low": low, "ci95_high": high}
                        for metric, (low, high) in metrics.items()}}


# The SciFact review's changes (long intervals, bars both ways, a row not measured), one in
# milliseconds too long for one line, and one far under the axis's first step.
SCIFACT_ROWS = [
    {"search": "dense", "delta_nDCG@5_vs_dense": 0.0, "delta_recall@5_vs_dense": 0.0},
    {"search": "sparse", "delta_nDCG@5_vs_dense": 0.071, "delta_recall@5_vs_dense": -0.042},
    {"search": "hybrid", "delta_nDCG@5_vs_dense": 0.048, "delta_recall@5_vs_dense": 0.0},
    {"search": "hybrid+rerank-int8", "delta_nDCG@5_vs_dense": -0.276, "delta_recall@5_vs_dense": -0.358},
    {"search": "slow", "delta_nDCG@5_vs_dense": 120.5, "delta_recall@5_vs_dense": None},
    {"search": "tiny", "delta_nDCG@5_vs_dense": 0.0004, "delta_recall@5_vs_dense": -0.0001},
    {"search": "hybrid+bge-v2-m3", "measured": False},
]
SCIFACT_RESULTS = ResultsModel({"table": SCIFACT_ROWS, "comparisons": {
    "sparse_vs_dense": _comparison("sparse", nDCG_5=(-0.099, 0.232), recall_5=(-0.225, 0.125)),
    "hybrid_vs_dense": _comparison("hybrid", nDCG_5=(-0.062, 0.144), recall_5=(-0.15, 0.15)),
    "hybrid+rerank-int8_vs_dense": _comparison("hybrid+rerank-int8", nDCG_5=(-0.452, -0.092),
                                               recall_5=(-0.6, -0.15)),
    "slow_vs_dense": _comparison("slow", nDCG_5=(-99.0, 340.25)),
    "tiny_vs_dense": _comparison("tiny", nDCG_5=(-0.0002, 0.0011), recall_5=(-0.0003, 0.0001))}})


def _deltas_of(rows: list[dict], results: ResultsModel, interval: bool = True) -> str:
    chart = DeltasChart("dense", ("recall@5", "nDCG@5"), "delta_{metric}_vs_dense",
                        "paired_vs_dense.{metric}" if interval else None)
    return str(charts.deltas(rows, chart, TableSpec(), results, {}, HtmlDoor(), _Labels()))


DELTAS = {
    "fixture": lambda: _deltas_of(ROWS, RESULTS),
    "fixture-without-intervals": lambda: _deltas_of(ROWS, RESULTS, interval=False),
    "scifact-and-long": lambda: _deltas_of(SCIFACT_ROWS[:4] + SCIFACT_ROWS[6:], SCIFACT_RESULTS),
    "milliseconds": lambda: _deltas_of(SCIFACT_ROWS, SCIFACT_RESULTS),
    "without-intervals": lambda: _deltas_of(SCIFACT_ROWS, SCIFACT_RESULTS, interval=False),
    "tiny": lambda: _deltas_of(SCIFACT_ROWS[:1] + SCIFACT_ROWS[5:6], SCIFACT_RESULTS),
}


@pytest.mark.parametrize("case", sorted(DELTAS))
@pytest.mark.parametrize("width", PHONE_WIDTHS + DESKTOP_WIDTHS)
def test_no_value_of_a_change_is_crossed_by_the_zero_line(case, width):
    svg = DELTAS[case]()
    zero = _zero(svg) / 100 * width
    written = [text for text in _texts(svg) if text["class"] in ("value", "missing")]
    assert any(text["class"] == "value" for text in written)
    for text in written:
        left, right = _extent(text, width)
        assert right <= zero - 2 or left >= zero + 2, (case, width, text["text"], left, right, zero)
        assert 0 <= left and right <= width, (case, width, text["text"], "inside the chart")
    # Every value is written once, on its own line under its bar (two when it is too long for one).
    values = [text for text in written if text["class"] == "value"]
    assert len({text["y"] for text in values}) == len(values)


def test_a_gain_reads_right_of_zero_a_loss_left_and_a_long_value_goes_on_two_lines():
    svg = _deltas_of(SCIFACT_ROWS, SCIFACT_RESULTS, interval=False)
    sides = {text["text"]: text["anchor"] for text in _texts(svg) if text["class"] == "value"}
    assert sides["+0.071"] == "start" and sides["-0.358"] == "end"
    long = _texts(_deltas_of(SCIFACT_ROWS, SCIFACT_RESULTS))
    lines = [text["text"] for text in long if text["class"] == "value" and text["text"].startswith(("+120", "[-99"))]
    assert lines == ["+120.500", "[-99.000, +340.250]"], lines
    assert ">+0.071 [-0.099, +0.232]<" in _deltas_of(SCIFACT_ROWS[:2], SCIFACT_RESULTS).replace("\ue000", "").replace("\ue001", "")


def _time_chart(value: float, budget: float | None) -> str:
    return _time_svg({"cost": "measured", "p95_milliseconds": value}, budget=budget)


def _frontier_chart(times: list[float], budget: float | None) -> str:
    results = ResultsModel({"frontier": {"metric": "nDCG@5", "configurations": [
        {"model": "m", "depth": 10, "max_length": 256, "precision": "fp32", "p95_milliseconds": t, "ceiling": 0.8}
        for t in times]}})
    return str(charts.frontier(results, HtmlDoor(), _Labels(), budget))


CHARTS = {
    **{f"deltas-{name}": make for name, make in DELTAS.items()},
    "quality": lambda: str(charts.quality(ROWS, QualityVsTimeChart(("nDCG@5", "recall@5"), "p95", "hybrid+rerank"),
                                          "search", {}, HtmlDoor(), _Labels())),
    **{f"time-{value:g}-{budget}": (lambda value=value, budget=budget: _time_chart(value, budget))
       for value, budget in [(12.5, 500), (4800.0, 500), (800.0, None), (106046.0, 500), (3.0, 5000),
                             (3535.4, 500), (1234567.0, None), (0.05, 20000)]},
    "frontier": lambda: _frontier_chart([180.0, 2200.0, 106046.0, 1.5e6], 500),
    "frontier-narrow": lambda: _frontier_chart([900.0, 4000.0], None),
}


@pytest.mark.parametrize("case", sorted(CHARTS))
@pytest.mark.parametrize("width", PHONE_WIDTHS + DESKTOP_WIDTHS)
def test_tick_labels_keep_apart_and_inside_the_chart(case, width):
    """A phone shows the major labels (class "tick"); a wider screen the minor ones too
    (readout.css hides `text.minor` below 40rem, where a chart is at most 616 px wide)."""
    svg = CHARTS[case]()
    axis = [text for text in _texts(svg) if text["class"] in ("tick", "tick minor") and text["anchor"] == "middle"]
    assert len({text["y"] for text in axis}) == 1, "one horizontal axis"   # (a frontier's score ticks stand left)
    shown = [text for text in axis if text["class"] == "tick" or width >= DESKTOP_WIDTHS[0]]
    assert len(shown) >= 2 or (case.startswith("deltas") and [t["text"] for t in shown] == ["0"]), (case, shown)
    boxes = sorted(_extent(text, width) for text in shown)
    for (left, right), (next_left, _) in zip(boxes, boxes[1:]):
        assert next_left - right >= 4, (case, width, boxes)
    assert boxes[0][0] >= 0 and boxes[-1][1] <= width, (case, width, boxes)
    if case.startswith("deltas"):
        assert "0" in [text["text"] for text in shown], "an axis centred on zero labels its zero"


def test_ticks_are_thinned_only_where_they_would_touch():
    # Five ticks of an axis centred on zero: a desktop labels all five, a phone every other one.
    tiers = tick_tiers([32.0, 45.0, 58.0, 71.0, 84.0], ["-0.60", "-0.30", "0", "+0.30", "+0.60"], anchor=2)
    assert tiers == ["major", "minor", "major", "minor", "major"]
    # Short labels far apart stay on every screen.
    assert tick_tiers([32.0, 58.0, 84.0], ["0", "1", "2"]) == ["major"] * 3
    # A label that cannot fit beside its neighbours even on a desktop is not drawn; its tick stays.
    crowded = tick_tiers([32.0, 33.0, 34.0], ["1,000,000", "2,000,000", "3,000,000"])
    assert crowded == ["major", None, None]
    svg = _time_chart(106046.0, 500)
    assert svg.count('class="axis"/>') - 1 == 5, "every tick keeps its mark"
