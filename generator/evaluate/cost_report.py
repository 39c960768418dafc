"""`readout cost` for people: the measurement's figures one per line, the depth curve as a table.

Pure formatting of `CostMeasurement.as_dict()` / `CostCurve.as_dict()` (no torch), so the CLI
prints what the library measured and a reader sees how busy the machine was while it measured.
"""

from __future__ import annotations

from typing import Any

from generator.errors import InputError


def depths_from_text(text: str) -> list[int]:
    """`10,20,50` as depths; anything else is an input error naming --depth."""
    try:
        depths = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise InputError(f"expected comma-separated whole numbers, got {text!r}", field="--depth") from None
    if not depths or min(depths) < 1:
        raise InputError(f"expected positive depths, got {text!r}", field="--depth")
    return depths


def _header(figures: dict[str, Any]) -> list[str]:
    return [
        f"model: {figures['model']} ({figures['architecture']}, {figures['parameters']:,} parameters; config from "
        f"{figures['config_source']}, sha256 {figures['config_sha256'][:12]})",
        f"cost: {figures['cost']}; weights: {figures['weights']}; quality: {figures['quality']}",
        f"tokenizer: {figures['tokenizer']['name']} (token counts {figures['tokenizer']['tokens']})",
        f"settings: max_length {figures['max_length']}, batch size {figures['batch_size']}, {figures['dtype']}, "
        f"{figures['device']}, {figures['threads']} threads",
    ]


def format_measurement(figures: dict[str, Any]) -> str:
    """One line per figure."""
    lines = _header(figures) + [
        f"queries: {figures['queries']} ({figures['computed_queries']} measured now, {figures['resumed_queries']} "
        f"resumed from the cache)",
        f"pairs: {figures['pairs']}",
        f"p50 per query: {figures['p50_milliseconds']:.1f} ms",
        f"p95 per query: {figures['p95_milliseconds']:.1f} ms",
        f"pairs per second: {figures['pairs_per_second']:.2f}",
        f"tokens per pair: mean {figures['tokens_per_pair']['mean']:.1f}, max {figures['tokens_per_pair']['max']}",
    ]
    loads = [value["before"][0] for value in figures["per_query_load_average"].values() if value["before"]]
    if loads:
        lines.append(f"load average (1 min) before each query: {min(loads):.2f} to {max(loads):.2f}")
    if figures["cpu_seconds_per_wall_second"] is not None:
        lines.append(f"CPU seconds per wall second: {figures['cpu_seconds_per_wall_second']:.2f} "
                     f"({figures['threads']} threads; lower means the machine was busy)")
    return "\n".join(lines) + "\n"


def format_curve(curve: dict[str, Any]) -> str:
    """The shared header, then one table row per depth."""
    rows = curve["curve"]
    lines = _header(curve["measurements"][str(rows[-1]["depth"])])
    lines.append(f"{'depth':>5}  {'queries':>7}  {'pairs':>6}  {'p50 ms':>9}  {'p95 ms':>9}  {'pairs/s':>8}  resumed")
    lines += [f"{row['depth']:>5}  {row['queries']:>7}  {row['pairs']:>6}  {row['p50_milliseconds']:>9.1f}  "
              f"{row['p95_milliseconds']:>9.1f}  {row['pairs_per_second']:>8.2f}  {row['resumed_queries']}"
              for row in rows]
    return "\n".join(lines) + "\n"
