"""Inline SVG charts drawn from results.json: nothing fetched, nothing invented.

Honest by construction:

- every bar sits on a labelled axis with ticks and units; quality on 0 to 1, changes on an axis
  centred on zero, time on its own axis in milliseconds (logarithmic when the values span more
  than two decades, so a 12 ms bar and a 100 s bar are both readable and in the right order);
- a metric has one colour and one pattern in every chart (METRIC_STYLES, keyed by its name, not
  by where readout.yaml happens to list it), so it is told apart without colour too;
- the layout is in percentages of the width and the text in CSS pixels: at phone width a chart
  narrows instead of being cropped or scaled into unreadable type. What must not collide is laid
  out for the narrowest chart it can be drawn in (NARROW_PX, a 360 px phone; WIDE_PX, the
  narrowest desktop page) with text widths estimated from their length (`text_width`): tick labels
  keep a gap between them (ticks whose labels would touch keep their mark and gridline, their label
  shown only on a wide screen or not at all), and a change's value sits on one side of the zero
  line, never across it;
- a row that was not measured, or has no time, is a label saying so, never a bar; a time
  measured by shape says so on its row; the latency budget, when a decision reads one, is a line.

Every visible string goes through the renderer's door (`door.data` for values read from
results.json, `labels` for registered words), so the orphan scan accounts for chart text too.
Each chart is an `<svg role="img">` with a `<title>` and a `<desc>`, drawn with the pieces of
generator.render.svg (the styles, the layout and the axes every chart shares).
"""

from __future__ import annotations

import math
from typing import Any, Callable

from markupsafe import Markup

from generator.project.outputs import DeltasChart, QualityVsTimeChart, TableSpec
from generator.render.doors import Door
from generator.render.labels import Labels
from generator.render.svg import (BAR_GAP, BAR_H, LOG_SPAN, NARROW_PX, PLOT_END, PLOT_START, ROW_GAP, TIME_COLOUR,
                                  VALUE_GAP_PX, _axis, _fill, _gridlines, _legend, _pattern_defs, _pct, _px, _row_rule,
                                  _svg, _text, _x, text_width, visible_text)
from generator.render.values import as_number, format_number
from generator.core.results import MISSING, ResultsModel, cost_block, parse_path


# --- quality ---------------------------------------------------------------------------------


def _absent_note(metrics: tuple[str, ...], known: list[str] | None, door: Door, labels: Labels) -> str:
    """A chart metric the results do not hold, said under the chart: its bars read "not measured",
    and a reader learns why (the evaluation computed other metrics)."""
    absent = [metric for metric in metrics if known and metric not in known]
    if not absent:
        return ""
    return (f'<p class="figure-note">{labels.chart_metric_absent} '
            f'{door.join([door.data(metric) for metric in absent], ", ")}</p>')


def quality(rows: list[dict], chart: QualityVsTimeChart, name_key: str, column_labels: dict[str, str], door: Door,
            labels: Labels, chart_id: str = "chart-quality", sample: Any = None,
            known: list[str] | None = None) -> Markup:
    """Per row, one bar per metric on a 0 to 1 axis (`known`: the metrics the results hold; any
    other is said under the chart)."""
    metrics = chart.metrics
    ticks = [0.0, 0.25, 0.5, 0.75, 1.0]
    body: list[str] = []
    y = 8.0
    row_h = len(metrics) * (BAR_H + BAR_GAP) + ROW_GAP
    body += _gridlines(y, y + row_h * len(rows), ticks, lambda v: _x(v, 0, 1))
    for row in rows:
        name = str(row.get(name_key, "?"))
        measured = row.get("measured", True) is not False
        body.append(_text(0, y + BAR_H - 2, door.data(name), cls="row"))
        for index, metric in enumerate(metrics):
            top = y + index * (BAR_H + BAR_GAP)
            value = as_number(row.get(metric)) if measured else None
            if value is None:
                if index == 0:
                    body.append(_text(PLOT_START, top + BAR_H - 2, labels.not_measured, cls="missing", dx=4))
                continue
            width = max(0.0, min(1.0, value)) * (PLOT_END - PLOT_START)
            body.append(f'<rect x="{_pct(PLOT_START)}" y="{_px(top)}" width="{_pct(width)}" height="{BAR_H}" '
                        f'fill="{_fill(chart_id, metric)}"><title>{door.data(name)} {door.data(column_labels.get(metric, metric))}</title></rect>')
            body.append(_text(PLOT_START + width, top + BAR_H - 2, door.data(format_number(value, ".3f")), dx=4))
        y += row_h
        body.append(_row_rule(y - ROW_GAP / 2))
    body += _axis(y, [(t, format_number(t, ".2f")) for t in ticks], 0.0, 1.0, labels.axis_score, door)
    svg = _svg(chart_id, labels.chart_quality, labels.chart_quality_desc, y + 42, body,
               _pattern_defs(chart_id, metrics), sample)
    return Markup(svg + _legend(chart_id, metrics, column_labels, door) + _absent_note(metrics, known, door, labels))


# --- time ------------------------------------------------------------------------------------


def _nice_ticks(high: float) -> list[float]:
    """0 and about four round steps up to at least `high` (linear time axis)."""
    if high <= 0:
        return [0.0, 1.0]
    step = 10 ** math.floor(math.log10(high / 4))
    for factor in (1, 2, 2.5, 5, 10):
        if high / (step * factor) <= 4:
            step *= factor
            break
    count = math.ceil(high / step)
    return [step * i for i in range(count + 1)]


def _time_cost(results: ResultsModel, path: str) -> tuple[float | None, str]:
    """The time value and how it was measured ("measured", "measured by shape", "not measured")."""
    value = results.lookup(path)
    number = as_number(value) if value is not MISSING else None
    block = cost_block(results.data, results.canonical(parse_path(path))[0])
    if number is None or (block is not None and block.get("measured") is False):
        return None, "not measured"
    return number, block["cost"] if block is not None else "measured"


def time(rows: list[dict], results: ResultsModel, chart: QualityVsTimeChart, name_key: str, door: Door, labels: Labels,
         budget: float | None = None, chart_id: str = "chart-time", sample: Any = None) -> Markup:
    """The reranker's p95 time per query on a millisecond axis of its own (log above two decades),
    with the latency budget as a line when a decision reads one. Only the row that has a rerank
    step is drawn: a row without one has no time to show."""
    time_ms, how = _time_cost(results, chart.time)
    values = [v for v in (time_ms, budget) if v is not None and v > 0]
    use_log = len(values) >= 2 and max(values) / min(values) > LOG_SPAN
    if use_log:
        low_exp = math.floor(math.log10(min(values)))
        high_exp = math.ceil(math.log10(max(values)))
        high_exp = max(high_exp, low_exp + 1)
        ticks = [10.0 ** e for e in range(low_exp, high_exp + 1)]

        def position(value: float) -> float:
            return _x(math.log10(max(value, ticks[0])), low_exp, high_exp)
    else:
        ticks = _nice_ticks(max(values) if values else 1.0)

        def position(value: float) -> float:
            return _x(value, 0.0, ticks[-1])
    body: list[str] = []
    y = 24.0 if budget is not None and budget > 0 else 8.0   # room for the budget's label
    row_h = BAR_H + BAR_GAP + ROW_GAP
    drawn_rows = [row for row in rows if str(row.get(name_key, "?")) == chart.time_row]
    body += _gridlines(y, y + row_h * len(drawn_rows), ticks, position)
    for row in drawn_rows:
        name = str(row.get(name_key, "?"))
        body.append(_text(0, y + BAR_H - 2, door.data(name), cls="row"))
        if time_ms is None:
            body.append(_text(PLOT_START, y + BAR_H - 2, labels.not_measured, cls="missing", dx=4))
        else:
            end = position(time_ms)
            body.append(f'<rect x="{_pct(PLOT_START)}" y="{_px(y)}" width="{_pct(end - PLOT_START)}" '
                        f'height="{BAR_H}" fill="{TIME_COLOUR}" class="time"/>')
            shown = [door.data(format_number(time_ms, ",.0f" if time_ms >= 100 else ".1f"))]
            if how == "measured by shape":
                shown.append(labels.time_by_shape)
            body.append(_text(PLOT_START, y + BAR_H + 14, door.join(shown, " "), cls="value"))
            y += 16
        y += row_h
        body.append(_row_rule(y - ROW_GAP / 2))
    if budget is not None and budget > 0:
        x = position(budget)
        body.append(f'<line x1="{_pct(x)}" x2="{_pct(x)}" y1="18" y2="{_px(y)}" class="budget"/>')
        body.append(_text(x, 13, door.join([labels.budget_line, door.data(format_number(budget, ",.0f"))]),
                          anchor="middle", cls="budget"))
    tick_text = [(t, format_number(t, ",.0f") if t >= 1 else format_number(t, "g")) for t in ticks]
    axis_title = labels.axis_time_log if use_log else labels.axis_time
    body += _axis(y, tick_text, 0, 1, axis_title, door, scale=position)
    svg = _svg(chart_id, labels.chart_time, labels.chart_time_desc, y + 42, body, sample=sample)
    return Markup(svg)


# --- changes over the baseline ---------------------------------------------------------------


def _symmetric_ticks(extent: float) -> list[float]:
    top = _nice_ticks(extent)[-1]
    return [-top, -top / 2, 0.0, top / 2, top]


def _delta_values(rows: list[dict], chart: DeltasChart, table: TableSpec, results: ResultsModel) -> tuple[list, float]:
    """Each row but the baseline: (name, measured, [(metric, delta, low, high)]); and the largest
    magnitude drawn."""
    drawn = []
    extent = 0.0
    for row in rows:
        name = str(row.get(table.name, "?"))
        if name == chart.baseline:
            continue
        measured = row.get("measured", True) is not False
        values = []
        for metric in chart.metrics:
            delta = as_number(row.get(chart.delta.format(metric=metric))) if measured else None
            low = high = None
            if chart.interval and delta is not None:
                bounds = results.lookup(f"{table.rows}[{table.name}={name}].{chart.interval.format(metric=metric)}")
                if isinstance(bounds, dict):
                    low, high = as_number(bounds.get("ci95_low")), as_number(bounds.get("ci95_high"))
                    if low is None or high is None:
                        low = high = None
            values.append((metric, delta, low, high))
            extent = max([extent] + [abs(v) for v in (delta, low, high) if v is not None])
        drawn.append((name, measured, values))
    return drawn, extent


def _delta_bar(body: list[str], chart_id: str, metric: str, top: float, delta: float, low: float | None,
               high: float | None, position: Callable[[float], float], door: Door) -> list[str]:
    """One change's bar from zero and its interval's whiskers; returns the value texts to show."""
    x0, x1 = sorted((position(0.0), position(delta)))
    body.append(f'<rect x="{_pct(x0)}" y="{_px(top)}" width="{_pct(x1 - x0)}" height="{BAR_H}" '
                f'fill="{_fill(chart_id, metric)}"/>')
    shown = [door.data(format_number(delta, "+.3f"))]
    if low is not None and high is not None:
        lx, hx, mid = position(low), position(high), top + BAR_H / 2
        body.append(f'<line x1="{_pct(lx)}" x2="{_pct(hx)}" y1="{_px(mid)}" y2="{_px(mid)}" class="whisker"/>')
        for end in (lx, hx):
            body.append(f'<line x1="{_pct(end)}" x2="{_pct(end)}" y1="{_px(top + 1)}" y2="{_px(top + BAR_H - 1)}" '
                        f'class="whisker"/>')
        shown.append(door.interval(door.data(format_number(low, "+.3f")),
                                   door.data(format_number(high, "+.3f"))))
    return shown


def _value_lines(shown: list[Any], delta: float, zero: float, door: Door) -> list[tuple[Any, str, float]]:
    """Where a change's value (and its interval) is written, on the line under its bar: as
    (text, anchor, dx from the zero line), each line wholly on one side of the zero line. A gain
    reads right of zero and a loss left of it; what is too wide for its side at NARROW_PX goes on
    the wider left side, and on two lines (the value, then its interval) when one is too long."""
    right = (100 - zero) / 100 * NARROW_PX - VALUE_GAP_PX
    left = zero / 100 * NARROW_PX - VALUE_GAP_PX
    text = door.join(shown, " ")
    width = text_width(visible_text(text))
    if delta >= 0 and width <= right:
        return [(text, "start", VALUE_GAP_PX)]
    if width <= left or len(shown) == 1:
        return [(text, "end", -VALUE_GAP_PX)]
    return [(part, "end", -VALUE_GAP_PX) for part in shown]


def deltas(rows: list[dict], chart: DeltasChart, table: TableSpec, results: ResultsModel, column_labels: dict[str, str],
           door: Door, labels: Labels, method: str | None = None, chart_id: str = "chart-deltas",
           sample: Any = None, known: list[str] | None = None) -> Markup:
    """Signed change over the baseline per row and metric, on an axis centred on zero, with the
    paired interval as whiskers when the results hold one (its method named under the chart).
    Each value is written under its bar on one side of the zero line (`_value_lines`); a change
    not measured says so right of zero, clear of the row's name."""
    metrics = chart.metrics
    drawn, extent = _delta_values(rows, chart, table, results)
    ticks = _symmetric_ticks(extent or 0.01)
    top_tick = ticks[-1]

    def position(value: float) -> float:
        return _x(value, -top_tick, top_tick)
    zero = position(0.0)
    bars: list[str] = []
    y = 8.0
    line_h = BAR_H + BAR_GAP + 16    # the bar, then its value on a line of its own: never cropped
    first = y
    for name, measured, values in drawn:
        bars.append(_text(0, y + BAR_H - 2, door.data(name), cls="row"))
        if not measured:
            bars.append(_text(zero, y + BAR_H - 2, labels.not_measured, cls="missing", dx=VALUE_GAP_PX))
            y += BAR_H + BAR_GAP + ROW_GAP
            bars.append(_row_rule(y - ROW_GAP / 2))
            continue
        for metric, delta, low, high in values:
            if delta is None:
                bars.append(_text(zero, y + BAR_H - 2, labels.not_measured, cls="missing", dx=VALUE_GAP_PX))
                y += line_h
                continue
            shown = _delta_bar(bars, chart_id, metric, y, delta, low, high, position, door)
            lines = _value_lines(shown, delta, zero, door)
            for index, (text, anchor, dx) in enumerate(lines):
                bars.append(_text(zero, y + BAR_H + 14 + 16 * index, text, anchor=anchor, cls="value", dx=dx))
            y += line_h + 16 * (len(lines) - 1)
        y += ROW_GAP
        bars.append(_row_rule(y - ROW_GAP / 2))
    body = _gridlines(first, y, ticks, position) + bars
    body.append(f'<line x1="{_pct(zero)}" x2="{_pct(zero)}" y1="{_px(first - 4)}" y2="{_px(y)}" class="zero"/>')
    body += _axis(y, [(t, format_number(t, "+.2f") if t else "0") for t in ticks], 0, 1,
                  door.join([labels.change_over, door.data(chart.baseline)]), door, scale=position,
                  anchor=ticks.index(0.0))
    svg = _svg(chart_id, labels.chart_deltas, labels.chart_deltas_desc, y + 42, body,
               _pattern_defs(chart_id, metrics), sample)
    note = ""
    if chart.interval:
        parts = [labels.whiskers_ci95] + ([door.data(method)] if method else [])
        note = f'<p class="figure-note">{door.join(parts, ", ")}</p>'
    return Markup(svg + _legend(chart_id, metrics, column_labels, door) + note
                  + _absent_note(metrics, known, door, labels))


# --- the reranker frontier -------------------------------------------------------------------

FRONTIER_HEIGHT = 260.0
FRONTIER_TOP, FRONTIER_BOTTOM = 24.0, 200.0


def _frontier_points(results: ResultsModel) -> tuple[list[dict], list[tuple[str, float, float]], str]:
    """The priced configurations, the measured rerank rows as (row, p95, own mean of the
    frontier's metric), and the metric."""
    frontier = results.frontier or {}
    metric = str(frontier.get("metric", "nDCG@5"))
    configurations = [entry for entry in frontier.get("configurations", [])
                      if isinstance(entry, dict) and as_number(entry.get("p95_milliseconds")) is not None
                      and as_number(entry.get("ceiling")) is not None]
    measured = []
    for row, cost in results.rerank_costs.items():
        if cost.get("cost") != "measured":
            continue
        own = (results.row(row) or {}).get(metric)
        if as_number(own) is not None and as_number(cost.get("p95_milliseconds")) is not None:
            measured.append((row, float(cost["p95_milliseconds"]), float(own)))
    return configurations, measured, metric


def frontier(results: ResultsModel, door: Door, labels: Labels, budget: float | None,
             chart_id: str = "chart-frontier", sample: Any = None) -> Markup:
    """Every priced configuration as a point, its p95 time per query on a logarithmic axis and
    the ceiling of its depth's candidates upward; the measured rerank rows as squares at their
    own score (a measured quality, not a ceiling); the budget as a dashed line."""
    configurations, measured, metric = _frontier_points(results)
    times = [float(entry["p95_milliseconds"]) for entry in configurations] + [p for _, p, _ in measured]
    times += [budget] if budget else []
    times = [t for t in times if t > 0]
    if not times:
        return Markup("")
    low_exp = math.floor(math.log10(min(times)))
    high_exp = max(math.ceil(math.log10(max(times))), low_exp + 1)

    def x_of(value: float) -> float:
        return _x(math.log10(max(value, 10.0 ** low_exp)), low_exp, high_exp)

    def y_of(value: float) -> float:
        return FRONTIER_BOTTOM - max(0.0, min(1.0, value)) * (FRONTIER_BOTTOM - FRONTIER_TOP)

    body: list[str] = []
    ticks = [10.0 ** e for e in range(low_exp, high_exp + 1)]
    body += _gridlines(FRONTIER_TOP, FRONTIER_BOTTOM, ticks, x_of)
    for value in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = y_of(value)
        body.append(f'<line x1="{_pct(PLOT_START)}" x2="{_pct(PLOT_END)}" y1="{_px(y)}" y2="{_px(y)}" class="grid"/>')
        body.append(_text(PLOT_START, y + 4, door.data(format_number(value, ".2f")), anchor="end", cls="tick", dx=-4))
    body.append(_text(PLOT_START, FRONTIER_TOP - 8, door.join([labels.axis_ceiling, door.data(metric)], " "),
                      anchor="end", cls="note", dx=-4))
    for entry in configurations:
        x, y = x_of(float(entry["p95_milliseconds"])), y_of(float(entry["ceiling"]))
        hover = door.data(f"{entry.get('model')} top {entry.get('depth')}, {entry.get('max_length')} tokens, "
                          f"{entry.get('precision')}: p95 {format_number(entry['p95_milliseconds'], ',.0f')} ms, "
                          f"ceiling {format_number(entry['ceiling'], '.3f')}")
        body.append(f'<circle cx="{_pct(x)}" cy="{_px(y)}" r="4" class="by-shape"><title>{hover}</title></circle>')
    for row, p95_ms, own in measured:
        x, y = x_of(p95_ms), y_of(own)
        hover = door.data(f"{row}: p95 {format_number(p95_ms, ',.0f')} ms, {metric} {format_number(own, '.3f')}")
        body.append(f'<rect x="{_pct(x)}" y="{_px(y - 5)}" width="10" height="10" class="measured">'
                    f'<title>{hover}</title></rect>')
    if budget:
        x = x_of(budget)
        body.append(f'<line x1="{_pct(x)}" x2="{_pct(x)}" y1="{_px(FRONTIER_TOP - 6)}" y2="{_px(FRONTIER_BOTTOM)}" '
                    f'class="budget"/>')
        body.append(_text(x, FRONTIER_TOP - 10, door.join([labels.budget_line, door.data(format_number(budget, ",.0f"))]),
                          anchor="middle", cls="budget"))
    tick_text = [(t, format_number(t, ",.0f") if t >= 1 else format_number(t, "g")) for t in ticks]
    body += _axis(FRONTIER_BOTTOM, tick_text, 0, 1, labels.axis_time_log, door, scale=x_of)
    legend = (f'<p class="legend"><span class="key"><svg width="14" height="14" aria-hidden="true">'
              f'<circle cx="7" cy="7" r="4" class="by-shape"/></svg>{labels.frontier_by_shape}</span>'
              f'<span class="key"><svg width="14" height="14" aria-hidden="true"><rect x="2" y="2" width="10" '
              f'height="10" class="measured"/></svg>{labels.frontier_measured_row}</span></p>')
    return Markup(_svg(chart_id, labels.chart_frontier, labels.chart_frontier_desc, FRONTIER_HEIGHT, body,
                       sample=sample) + legend)
