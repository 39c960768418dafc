"""The SVG pieces every chart is drawn with: one colour and pattern per metric, the layout in
percent of the width with text in CSS pixels, text widths estimated from their length, and axes
whose tick labels are thinned out where they would touch on a phone or a wide screen.

The charts themselves (generator.render.charts) say what is drawn; this module only how, so each
chart lays out, colours and labels its axes the same way.
"""

from __future__ import annotations

import hashlib
import html
import re
from typing import Any

from markupsafe import Markup

from generator.render.doors import Door
from generator.render.orphans import strip_marks


# One colour and one pattern per metric, wherever it is drawn. Others get a stable one by name.
METRIC_STYLES: dict[str, tuple[str, str]] = {
    "nDCG@5": ("#1f5fa8", "solid"), "recall@5": ("#b35900", "hatch"), "recall@50": ("#2e7d32", "dots"),
    "nDCG@3": ("#1f5fa8", "solid"), "recall@3": ("#b35900", "hatch"), "recall@10": ("#2e7d32", "dots"),
}
_FALLBACK_COLOURS = ("#7b3fa0", "#8a6d00", "#00707a", "#a0325a")
_FALLBACK_PATTERNS = ("cross", "hatch", "dots", "solid")
TIME_COLOUR = "#57606a"
# Horizontal layout, in percent of the chart's width.
LABEL_END = 30.0        # row names left of this
PLOT_START, PLOT_END = 32.0, 84.0
ROW_GAP, BAR_H, BAR_GAP = 10, 14, 4
LOG_SPAN = 100.0        # more than two decades between the smallest and largest time: log scale
# Text is in CSS pixels while the layout is in percent, so collisions are checked at the narrowest
# chart a screen gives: a 360 px phone less the page's padding (NARROW_PX), and, for what a wide
# screen alone shows (templates/readout.css hides `text.minor` below 40rem), the narrowest chart
# above that width (WIDE_PX).
FONT_PX = 13.0          # svg.chart's font size (templates/readout.css)
CHAR_EM = 0.62          # a character's width in em, estimated on the generous side for digits and signs
NARROW_PX, WIDE_PX = 336.0, 608.0
TICK_GAP_PX = 8.0       # the least room between two tick labels
VALUE_GAP_PX = 6.0      # between the zero line and a change's value


def metric_style(metric: str) -> tuple[str, str]:
    """(colour, pattern) of a metric in every chart."""
    if metric in METRIC_STYLES:
        return METRIC_STYLES[metric]
    index = int(hashlib.sha256(metric.encode("utf-8")).hexdigest(), 16)
    return _FALLBACK_COLOURS[index % len(_FALLBACK_COLOURS)], _FALLBACK_PATTERNS[index % len(_FALLBACK_PATTERNS)]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "m"


def text_width(text: str, font_px: float = FONT_PX) -> float:
    """A text's estimated width in CSS pixels: its characters times an average width."""
    return len(text) * CHAR_EM * font_px


def visible_text(markup: Any) -> str:
    """What a reader sees of a chart text: without its tags, the doors' marks or entities."""
    return html.unescape(strip_marks(re.sub(r"<[^>]+>", "", str(markup))))


def _pct(x: float) -> str:
    text = f"{x:.2f}"
    return ("0.00" if text == "-0.00" else text) + "%"


def _px(y: float) -> str:
    return f"{y:.1f}"


def _text(x: float, y: float, content: Any, *, anchor: str = "start", cls: str = "", dx: float = 0) -> str:
    klass = f' class="{cls}"' if cls else ""
    shift = f' dx="{dx:g}"' if dx else ""
    return f'<text x="{_pct(x)}" y="{_px(y)}"{shift} text-anchor="{anchor}"{klass}>{content}</text>'


def _pattern_defs(chart_id: str, metrics: tuple[str, ...]) -> str:
    defs = []
    for metric in metrics:
        colour, pattern = metric_style(metric)
        pid = f"{chart_id}-{_slug(metric)}"
        marks = {"solid": "",
                 "hatch": '<path d="M-1 1L1 -1M0 6L6 0M5 7L7 5" stroke="#ffffff" stroke-width="1.6"/>',
                 "dots": '<circle cx="3" cy="3" r="1.3" fill="#ffffff"/>',
                 "cross": '<path d="M0 3H6M3 0V6" stroke="#ffffff" stroke-width="1.2"/>'}[pattern]
        defs.append(f'<pattern id="{pid}" patternUnits="userSpaceOnUse" width="6" height="6">'
                    f'<rect width="6" height="6" fill="{colour}"/>{marks}</pattern>')
    return "<defs>" + "".join(defs) + "</defs>"


def _fill(chart_id: str, metric: str) -> str:
    return f"url(#{chart_id}-{_slug(metric)})"


def _legend(chart_id: str, metrics: tuple[str, ...], column_labels: dict[str, str], door: Door) -> str:
    """The key, as HTML under the chart: wraps at any width, each swatch with its pattern."""
    items = []
    for metric in metrics:
        swatch = (f'<svg class="swatch" width="14" height="14" aria-hidden="true">{_pattern_defs(chart_id + "-key", (metric,))}'
                  f'<rect width="14" height="14" fill="{_fill(chart_id + "-key", metric)}"/></svg>')
        items.append(f'<span class="key">{swatch}{door.data(column_labels.get(metric, metric))}</span>')
    return '<p class="legend">' + "".join(items) + "</p>"


def _svg(chart_id: str, title: Any, description: Any, height: float, body: list[str], defs: str = "",
         sample: Any = None) -> str:
    """The chart, its title above it (with the queries it is measured on, when known) and the same
    title and a description for a screen reader."""
    if sample is not None:
        title = f'{title} <span class="sample">({sample})</span>'
    return (f'<p class="chart-title" aria-hidden="true">{title}</p>'
            f'<svg class="chart" width="100%" height="{_px(height)}" role="img" '
            f'aria-labelledby="{chart_id}-title {chart_id}-desc">'
            f'<title id="{chart_id}-title">{Markup(title).striptags()}</title><desc id="{chart_id}-desc">{description}</desc>'
            f'{defs}{"".join(body)}</svg>')


def _x(value: float, low: float, high: float) -> float:
    """A value's position on the plot, in percent."""
    share = 0.0 if high == low else (value - low) / (high - low)
    return PLOT_START + max(0.0, min(1.0, share)) * (PLOT_END - PLOT_START)


def _labels_fit(indices: list[int], xs: list[float], widths: list[float], chart_px: float) -> bool:
    """Whether these tick labels, centred on their ticks, keep TICK_GAP_PX between each other and
    stay inside a chart chart_px wide."""
    at = [(xs[i] / 100 * chart_px, widths[i]) for i in indices]
    if at and (at[0][0] - at[0][1] / 2 < 0 or at[-1][0] + at[-1][1] / 2 > chart_px):
        return False
    return all(right - left - (left_width + right_width) / 2 >= TICK_GAP_PX
               for (left, left_width), (right, right_width) in zip(at, at[1:]))


def tick_tiers(xs: list[float], texts: list[str], anchor: int = 0) -> list[str | None]:
    """Per tick (x in percent, its label), where its label is drawn: "major" at every width,
    "minor" on a wide screen only, None nowhere (the tick keeps its mark and gridline). The labelled
    ticks are every n-th counted from `anchor` (zero, on an axis centred on it), the fewest steps
    that keep the labels apart; a phone's labels are a subset of a wide screen's."""
    widths = [text_width(text) for text in texts]
    count = len(xs)

    def every(stride: int) -> list[int]:
        return [i for i in range(count) if (i - anchor) % stride == 0]

    def stride_at(chart_px: float, step: int) -> int | None:
        for stride in range(step, count * step + 1, step):
            if _labels_fit(every(stride), xs, widths, chart_px):
                return stride
        return None

    wide = stride_at(WIDE_PX, 1)
    narrow = stride_at(NARROW_PX, wide) if wide else None
    return ["major" if narrow and i in every(narrow) else "minor" if wide and i in every(wide) else None
            for i in range(count)]


def _axis(y: float, ticks: list[tuple[float, str]], low: float, high: float, title: Any, door: Door,
          *, scale=None, anchor: int = 0) -> list[str]:
    """A horizontal axis at y: its line, ticks with labels (those that would touch thinned out, see
    `tick_tiers`) and its title."""
    position = scale or (lambda value: _x(value, low, high))
    parts = [f'<line x1="{_pct(PLOT_START)}" x2="{_pct(PLOT_END)}" y1="{_px(y)}" y2="{_px(y)}" class="axis"/>']
    tiers = tick_tiers([position(value) for value, _ in ticks], [text for _, text in ticks], anchor)
    for (value, text), tier in zip(ticks, tiers):
        x = position(value)
        parts.append(f'<line x1="{_pct(x)}" x2="{_pct(x)}" y1="{_px(y)}" y2="{_px(y + 4)}" class="axis"/>')
        if tier:
            klass = "tick" if tier == "major" else "tick minor"
            parts.append(_text(x, y + 17, door.data(text), anchor="middle", cls=klass))
    parts.append(_text((PLOT_START + PLOT_END) / 2, y + 34, title, anchor="middle", cls="note"))
    return parts


def _gridlines(top: float, bottom: float, ticks: list[float], position) -> list[str]:
    return [f'<line x1="{_pct(position(value))}" x2="{_pct(position(value))}" y1="{_px(top)}" y2="{_px(bottom)}" '
            f'class="grid"/>' for value in ticks]


def _row_rule(y: float) -> str:
    return f'<line x1="0%" x2="100%" y1="{_px(y)}" y2="{_px(y)}" class="rule"/>'
