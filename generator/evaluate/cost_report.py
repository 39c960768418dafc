"""`readout cost` for people: the measurement's figures one per line, the depth curve and the
sweep of configurations as tables.

Pure formatting of `CostMeasurement.as_dict()` / `CostCurve.as_dict()` / `rerank_sweep(...)` (no
torch), so the CLI prints what the library measured and a reader sees how busy the machine was
while it measured, and, for an extrapolated cost, the fit it rests on.
"""

from __future__ import annotations

from typing import Any

from generator.storage.errors import InputError


def _numbers_from_text(text: str, option: str) -> list[int]:
    try:
        numbers = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise InputError(f"expected comma-separated whole numbers, got {text!r}", field=option) from None
    if not numbers or min(numbers) < 1:
        raise InputError(f"expected positive numbers, got {text!r}", field=option)
    return numbers


def depths_from_text(text: str) -> list[int]:
    """`10,20,50` as depths; anything else is an input error naming --depth."""
    return _numbers_from_text(text, "--depth")


def max_lengths_from_text(text: str) -> list[int]:
    """`256,512` as max lengths; anything else is an input error naming --max-length."""
    return _numbers_from_text(text, "--max-length")


def precisions_from_text(text: str, known: tuple[str, ...]) -> list[str]:
    """`fp32,int8` as precisions, each one of `known`; anything else names --precision."""
    chosen = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [part for part in chosen if part not in known]
    if not chosen or unknown:
        raise InputError(f"expected a comma-separated list of {', '.join(known)}, got {text!r}", field="--precision")
    return chosen


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
    if figures.get("per_query_fit"):
        fits = list(figures["per_query_fit"].values())
        lines.append(f"fit: layers {', '.join(map(str, figures['layers_timed']))} timed, {figures['repeats']} repeats "
                     f"each (each batch's {figures['repeat_statistic']}); per query {_median([fit['intercept_milliseconds'] for fit in fits]):.1f} ms + "
                     f"{_median([fit['per_layer_milliseconds'] for fit in fits]):.1f} ms per layer (medians) "
                     f"x {figures['full_layers']} layers")
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


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def format_sweep(rows: list[dict[str, Any]]) -> str:
    """One table row per configuration; the cost label of each method once, above the table."""
    labels = sorted({row["cost"] for row in rows})
    lines = [f"cost: {label}" for label in labels] + ["quality: not measured"]
    lines.append(f"{'model':<40}  {'depth':>5}  {'max_len':>7}  {'prec':>4}  {'queries':>7}  {'p50 ms':>9}  "
                 f"{'p95 ms':>9}  {'pairs/s':>8}  timings")
    for row in rows:
        source = "timed" if row["timings_from_depth"] is None else (
            f"{row['reused_queries']} of {row['queries']} from depth {row['timings_from_depth']}")
        lines.append(f"{row['model']:<40}  {row['depth']:>5}  {row['max_length']:>7}  {row['precision']:>4}  "
                     f"{row['queries']:>7}  {row['p50_milliseconds']:>9.1f}  {row['p95_milliseconds']:>9.1f}  "
                     f"{row['pairs_per_second']:>8.2f}  {source}")
    return "\n".join(lines) + "\n"
