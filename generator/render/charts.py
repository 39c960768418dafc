"""Inline SVG charts drawn from results.json: nothing fetched, nothing invented.

Every visible string goes through the renderer's door (`door.data` for values read from
results.json, `labels` for registered words), so the orphan scan accounts for chart text too.
A row that was not measured, or has no time, is drawn as a label saying so, never as a bar.

Chart options live in readout.yaml under `outputs.<name>.charts` and arrive here validated
(generator.project.outputs: QualityVsTimeChart, DeltasChart).
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from generator.project.outputs import DeltasChart, QualityVsTimeChart
from generator.render.values import as_number, format_number
from generator.results import MISSING, lookup

PALETTE = ("#1f5fa8", "#c75c00", "#2e7d32", "#7b3fa0")
WIDTH = 640
ROW_LABEL_X = 4
FONT = 12


def _fmt(x: float) -> str:
    """Coordinates: fixed precision so the SVG is byte-identical between runs."""
    text = f"{x:.1f}"
    return "0.0" if text == "-0.0" else text


def _text(x: float, y: float, content: Any, *, anchor: str = "start", cls: str = "") -> str:
    klass = f' class="{cls}"' if cls else ""
    return f'<text x="{_fmt(x)}" y="{_fmt(y)}" text-anchor="{anchor}"{klass}>{content}</text>'


def _legend(metrics: tuple[str, ...], column_labels: dict[str, str], door, y: float, x: float = 150) -> list[str]:
    parts = []
    for index, metric in enumerate(metrics):
        colour = PALETTE[index % len(PALETTE)]
        parts.append(f'<rect x="{_fmt(x)}" y="{_fmt(y - 10)}" width="10" height="10" fill="{colour}"/>')
        parts.append(_text(x + 14, y, door.data(column_labels.get(metric, metric))))
        x += 110
    return parts


def _svg(title_id: str, title: Any, height: float, body: list[str]) -> Markup:
    head = (f'<svg class="chart" viewBox="0 0 {WIDTH} {_fmt(height)}" '
            f'role="img" aria-labelledby="{title_id}"><title id="{title_id}">{title}</title>')
    return Markup(head + "".join(body) + "</svg>")


def quality_vs_time(rows: list[dict], results: dict, chart: QualityVsTimeChart, name_key: str,
                    column_labels: dict[str, str], door, labels) -> Markup:
    """Per row: quality bars (0 to 1) beside the row's p95 rerank time, or why it has none."""
    metrics = chart.metrics
    time_row = chart.time_row
    time_value = lookup(results, chart.time)
    time_ms = as_number(time_value) if time_value is not MISSING else None
    bar_x, bar_w = 150.0, 250.0
    time_x, time_w = 470.0, 110.0
    row_h = 18.0 * len(metrics) + 16
    body = _legend(metrics, column_labels, door, 16)
    body.append(_text(time_x, 16, labels.p95_rerank_time_ms))
    y = 34.0
    for row in rows:
        name = str(row.get(name_key, "?"))
        measured = row.get("measured", True) is not False
        body.append(f'<line x1="0" x2="{WIDTH}" y1="{_fmt(y - 4)}" y2="{_fmt(y - 4)}" class="rule"/>')
        body.append(_text(ROW_LABEL_X, y + 14, door.data(name), cls="row"))
        body.append(f'<line x1="{_fmt(bar_x)}" x2="{_fmt(bar_x)}" y1="{_fmt(y)}" y2="{_fmt(y + row_h - 8)}" '
                    f'class="axis"/>')
        if not measured:
            body.append(_text(bar_x + 6, y + 14, labels.not_measured, cls="missing"))
        else:
            for index, metric in enumerate(metrics):
                value = as_number(row.get(metric))
                top = y + 18.0 * index + 2
                if value is None:
                    body.append(_text(bar_x + 6, top + 11, labels.not_measured, cls="missing"))
                    continue
                width = max(0.0, min(1.0, value)) * bar_w
                colour = PALETTE[index % len(PALETTE)]
                body.append(f'<rect x="{_fmt(bar_x)}" y="{_fmt(top)}" width="{_fmt(width)}" height="13" '
                            f'fill="{colour}"/>')
                body.append(_text(bar_x + width + 4, top + 11, door.data(format_number(value, ".3f"))))
        if name != time_row:
            body.append(_text(time_x, y + 14, labels.no_rerank_step, cls="missing"))
        elif not measured or time_ms is None:
            body.append(_text(time_x, y + 14, labels.not_measured, cls="missing"))
        else:
            body.append(f'<rect x="{_fmt(time_x)}" y="{_fmt(y + 2)}" width="{_fmt(time_w * 0.8)}" height="13" '
                        f'class="time"/>')
            body.append(_text(time_x + time_w * 0.8 + 4, y + 13, door.data(format_number(time_ms, ".1f"))))
        y += row_h
    return _svg("chart-quality-vs-time", labels.chart_quality_vs_time, y + 4, body)


def deltas(rows: list[dict], chart: DeltasChart, name_key: str, column_labels: dict[str, str], door,
           labels) -> Markup:
    """Signed change over the baseline per row and metric, with 95% interval whiskers if present."""
    metrics = chart.metrics
    baseline = chart.baseline
    delta_key = chart.delta
    interval_key = chart.interval
    drawn = []
    extent = 0.0
    for row in rows:
        name = str(row.get(name_key, "?"))
        if name == baseline:
            continue
        measured = row.get("measured", True) is not False
        values = []
        for metric in metrics:
            delta = as_number(row.get(delta_key.format(metric=metric))) if measured else None
            low = high = None
            if interval_key and delta is not None:
                bounds = lookup(row, interval_key.format(metric=metric))
                if isinstance(bounds, dict) and bounds is not MISSING:
                    low, high = as_number(bounds.get("ci95_low")), as_number(bounds.get("ci95_high"))
                    if low is None or high is None:
                        low = high = None
            values.append((metric, delta, low, high))
            extent = max([extent] + [abs(v) for v in (delta, low, high) if v is not None])
        drawn.append((name, measured, values))
    extent = extent or 0.01
    centre, half = 275.0, 135.0
    scale = half / extent
    value_x = 425.0
    row_h = 18.0 * len(metrics) + 16
    body = _legend(metrics, column_labels, door, 16)
    body.append(_text(value_x, 16, door.join([labels.change_over, door.data(baseline)])))
    y = 34.0
    top_y = y
    for name, measured, values in drawn:
        body.append(f'<line x1="0" x2="{WIDTH}" y1="{_fmt(y - 4)}" y2="{_fmt(y - 4)}" class="rule"/>')
        body.append(_text(ROW_LABEL_X, y + 14, door.data(name), cls="row"))
        if not measured:
            body.append(_text(centre + 6, y + 14, labels.not_measured, cls="missing"))
            y += row_h
            continue
        for index, (_metric, delta, low, high) in enumerate(values):
            top = y + 18.0 * index + 2
            if delta is None:
                body.append(_text(centre + 6, top + 11, labels.not_measured, cls="missing"))
                continue
            colour = PALETTE[index % len(PALETTE)]
            x0, x1 = sorted((centre, centre + delta * scale))
            body.append(f'<rect x="{_fmt(x0)}" y="{_fmt(top)}" width="{_fmt(x1 - x0)}" height="13" '
                        f'fill="{colour}"/>')
            shown = [door.data(format_number(delta, "+.3f"))]
            if low is not None and high is not None:
                lx, hx = centre + low * scale, centre + high * scale
                mid = top + 6.5
                body.append(f'<path d="M{_fmt(lx)} {_fmt(mid)}H{_fmt(hx)}M{_fmt(lx)} {_fmt(top + 1)}V{_fmt(top + 12)}'
                            f'M{_fmt(hx)} {_fmt(top + 1)}V{_fmt(top + 12)}" class="whisker"/>')
                shown.append(door.interval(door.data(format_number(low, "+.3f")),
                                           door.data(format_number(high, "+.3f"))))
            body.append(_text(value_x, top + 11, door.join(shown, " ")))
        y += row_h
    body.append(f'<line x1="{_fmt(centre)}" x2="{_fmt(centre)}" y1="{_fmt(top_y - 4)}" y2="{_fmt(y - 4)}" '
                f'class="zero"/>')
    if interval_key:
        body.append(_text(ROW_LABEL_X, y + 12, labels.whiskers_ci95, cls="note"))
        y += 16
    return _svg("chart-deltas", labels.chart_deltas, y + 4, body)
