"""The results tables templates receive: the rows table, each reranker's cost, the frontier, the
all-pairs matrices and the per-query table, each captioned with the query set it is measured on.
Every string in them has already passed a door, and a text value from results is checked like a
label before a table shows it as a word."""

from __future__ import annotations

import re
from typing import Any, Iterable

from generator.core.options import SHAPE_COST
from generator.storage.errors import InputError
from generator.project.outputs import TableSpec
from generator.core.text.wording import data_text_problem
from generator.render.doors import Door
from generator.render.labels import Labels
from generator.render.twins import twin_rows
from generator.render.values import format_number
from generator.core.results import MISSING, RESULTS_NAME, Results, ResultsModel


def _table_word(value: object, where: str, file: str = RESULTS_NAME) -> str:
    """A text value from results that a table shows as a word: checked like a label."""
    text = str(value)
    problem = data_text_problem(text)
    if problem:
        raise InputError(f"cannot show {text[:60]!r} in a table: {problem}", path=file, field=where)
    return text


_QUERY_SET_LABELS = {"sample": "query_set_sample", "all": "query_set_all"}


def sample_view(results: Results, door: Door, labels: Labels) -> Any:
    """Which queries a table or chart is measured on, and how many: "release sample, 20 queries"
    (the file's own name where its query set has no label). None when the file does not say."""
    count = results.model.queries
    if count is None:
        return None
    key = _QUERY_SET_LABELS.get(results.model.query_set or "")
    which = labels[key] if key else door.code(results.name)
    return door.join([which, door.join([door.data(f"{count:,}"), labels.queries_unit])], ", ")


def table_view(table: TableSpec, results: Results, door: Door, labels: Labels) -> dict:
    model = results.model
    rows_raw = model.lookup(table.rows)
    if not isinstance(rows_raw, list):
        raise InputError(f"no list of rows at {table.rows!r}", path=results.name, field=table.rows)
    rows = []
    for row in rows_raw:
        if not isinstance(row, dict):
            raise InputError("a row must be an object", path=results.name, field=table.rows)
        name = _table_word(row.get(table.name, "?"), f"{table.rows}[].{table.name}", results.name)
        measured = row.get("measured", True) is not False
        cells = []
        for column in table.columns:
            interval = None
            if column.only is not None and name not in column.only:
                cells.append({"value": labels[column.otherwise], "interval": None, "missing": True})
                continue
            if not measured:
                cells.append({"value": labels.not_measured, "interval": None, "missing": True})
                continue
            value = row.get(column.key, MISSING) if column.key else model.lookup(column.path)
            if value is MISSING or value is None:
                cells.append({"value": labels.not_measured if value is None else labels.missing,
                              "interval": None, "missing": True})
                continue
            if column.interval:
                bounds = model.lookup(f"{table.rows}[{table.name}={name}].{column.interval}")
                if isinstance(bounds, dict) and isinstance(bounds.get("ci95_low"), (int, float)) \
                        and isinstance(bounds.get("ci95_high"), (int, float)):
                    interval = door.interval(door.data(format_number(bounds["ci95_low"], column.format)),
                                             door.data(format_number(bounds["ci95_high"], column.format)))
            if isinstance(value, str):
                value = _table_word(value, f"{table.rows}[{table.name}={name}].{column.key or column.path}",
                                    results.name)
            cells.append({"value": door.data(format_number(value, column.format)), "interval": interval,
                          "missing": False, "text": isinstance(value, str)})
        reason = row.get("not_measured_reason") if not measured else None
        if reason:
            reason = _table_word(reason, f"{table.rows}[{table.name}={name}].not_measured_reason", results.name)
        rows.append({"name": door.data(name), "measured": measured, "cells": cells,
                     "reason": door.data(reason) if reason else None})
    has_intervals = any(cell["interval"] is not None for row in rows for cell in row["cells"])
    # Numbers align right; a column whose values are all text (a description) aligns left.
    text_columns = [all(row["cells"][index].get("text", True) for row in rows if not row["cells"][index]["missing"])
                    and any(not row["cells"][index]["missing"] for row in rows)
                    for index in range(len(table.columns))]
    gains = _graded_gains(model)
    return {"columns": [door.data(_column_label(column, gains, labels)) for column in table.columns], "rows": rows,
            "has_intervals": has_intervals, "text_columns": text_columns, "sample": sample_view(results, door, labels)}


def _graded_gains(model: ResultsModel) -> dict[str, str]:
    """{metric name: its nDCG gain} when the judgements are graded (more than one positive
    grade), where the gain changes the figure; empty on binary judgements such as SciFact's."""
    grades = model.positive_grades
    if not isinstance(grades, list) or len(grades) < 2:
        return {}
    return {name: entry["gain"] for name, entry in model.manifest_block("metrics").items()
            if isinstance(entry, dict) and entry.get("measure") == "ndcg" and entry.get("gain") in GAIN_LABELS}


GAIN_LABELS = {"linear": "gain_linear", "binary": "gain_binary", "exponential": "gain_exponential"}


def _column_label(column: Any, gains: dict[str, str], labels: Labels) -> str:
    """A column of an nDCG figure says its gain in the header wherever grades exist (`gains`,
    from _graded_gains): the same run scores differently under each, and a reader comparing
    with ranx or trec_eval must know."""
    field = str(column.key or column.path or "")
    found = sorted({gain for name, gain in gains.items()
                    if re.search(rf"(?<![A-Za-z0-9@:]){re.escape(name)}(?![A-Za-z0-9:])", field)})
    if not found:
        return column.label
    return f"{column.label} ({', '.join(labels.raw(GAIN_LABELS[gain]) for gain in found)})"


_STATUS_LABELS = {"measured": "status_measured", "measured by shape": "status_measured_by_shape",
                  "not measured": "status_not_measured"}


def _status_label(status: str, labels: Labels, door: Door, where: str) -> Any:
    """How a cost or a quality was measured, in the label registry's words; an extrapolated
    figure says from how many of the model's layers ("2 of 24") as data."""
    if status in _STATUS_LABELS:
        return labels[_STATUS_LABELS[status]]
    extrapolated = re.fullmatch(re.escape(SHAPE_COST) + r", extrapolated from (\d+(?: and \d+)?) of (\d+) layers",
                                status)
    if extrapolated is None:
        raise InputError(f"unknown status {status[:60]!r}", path=RESULTS_NAME, field=where)
    return door.join([labels.status_extrapolated, door.data(f"({extrapolated.group(1)} of "
                                                            f"{extrapolated.group(2)})")], " ")


def rerank_cost_view(results: Results, door: Door, labels: Labels, budget: float | None,
                     margin: float | None = None, metrics: tuple[str, ...] = ()) -> list[dict]:
    """Each reranker's cost with how it was measured, impossible to miss: measured, measured by
    shape (its architecture with random weights, every layer or extrapolated from a few), or not
    measured; and its quality's status. The reranker under decision first, then the others by name.
    An int8 reranker whose fp32 twin ran adds what it keeps of the twin's quality against the
    design's margin, and its speed ratio (generator.render.twins)."""
    sample = sample_view(results, door, labels)
    views = []
    for row, cost in results.model.rerank_costs.items():
        view = _cost_view(f"rerank_costs.{row}", row, cost, door, labels, budget)
        if view:
            view["rows"].extend(twin_rows(results, row, list(metrics), margin, door, labels))
            views.append({**view, "sample": sample})
    return views


def _cost_view(where: str, row: str | None, cost: Any, door: Door, labels: Labels,
               budget: float | None) -> dict | None:
    if not isinstance(cost, dict):
        return None
    status = str(cost.get("cost"))
    quality = str(cost.get("quality"))
    rows = [(labels.cost_model, door.code(_table_word(cost.get("model", "?"), f"{where}.model"))),
            (labels.cost_status, _status_label(status, labels, door, where)),
            (labels.quality_status, _status_label(quality, labels, door, where))]
    if row is not None:
        rows.insert(0, (labels.cost_row, door.code(_table_word(row, where))))
    if cost.get("measured") is not False:
        for label, key, spec in (("cost_p50", "p50_milliseconds", ",.0f"), ("cost_p95", "p95_milliseconds", ",.0f"),
                                 ("cost_pairs", "pairs", ","), ("cost_pairs_per_second", "pairs_per_second", ".2f")):
            if isinstance(cost.get(key), (int, float)):
                rows.append((labels[label], door.data(format_number(cost[key], spec))))
        setting = ", ".join(f"{key} {cost[key]}" for key in ("depth", "max_length", "batch_size", "dtype", "precision",
                                                             "device", "threads") if key in cost)
        rows.append((labels.cost_setting, door.code(setting)))
        tokenizer = cost.get("tokenizer")
        if isinstance(tokenizer, dict) and tokenizer.get("name"):
            rows.append((labels.cost_tokenizer, door.code(str(tokenizer["name"]))))
    elif cost.get("not_measured_reason"):
        rows.append((labels.not_measured_reason,
                     door.data(_table_word(cost["not_measured_reason"], f"{where}.not_measured_reason"))))
    if budget is not None:
        rows.append((labels.cost_budget, door.data(format_number(budget, ",.0f"))))
    short = status.split(",")[0]
    return {"status": short.replace(" ", "-"), "quality": quality.replace(" ", "-"), "rows": rows,
            "caption": door.join([labels.reranker_cost, door.code(row)], ": ") if row else labels.reranker_cost}


def frontier_view(results: Results, door: Door, labels: Labels, budget: float | None) -> dict | None:
    """The reranker frontier as a table, cheapest p95 first: each configuration's setting, its p95
    priced by shape, whether it fits the budget, and the ceiling and headroom of its depth."""
    frontier = results.model.frontier
    if frontier is None or not isinstance(frontier.get("configurations"), list):
        return None
    rows = []
    for entry in frontier["configurations"]:
        p95 = entry.get("p95_milliseconds")
        fits = None if budget is None or not isinstance(p95, (int, float)) else p95 <= budget
        rows.append({"model": door.code(_table_word(str(entry.get("model")), "frontier.model")),
                     "depth": door.data(str(entry.get("depth"))), "max_length": door.data(str(entry.get("max_length"))),
                     "precision": door.code(str(entry.get("precision"))),
                     "p95": door.data(format_number(p95, ",.0f" if p95 >= 100 else ".1f")),
                     "fits": labels.fits_budget if fits else labels.over_budget if fits is False else labels.no_budget,
                     "fits_class": "fits" if fits else "over" if fits is False else "",
                     "ceiling": door.data(format_number(entry.get("ceiling"), ".3f")),
                     "headroom": door.data(format_number(entry.get("headroom"), "+.3f")),
                     "how": _status_label(str(entry.get("cost")), labels, door, "frontier.cost")})
    return {"rows": rows, "metric": door.data(str(frontier.get("metric"))), "over": door.code(str(frontier.get("over"))),
            "over_mean": door.data(format_number(frontier.get("over_mean"), ".3f")),
            "sample": sample_view(results, door, labels)}


def _pair_cell(entry: dict, flipped: bool, door: Door, labels: Labels) -> dict:
    """One cell of a metric's matrix: the change of its row against its column with the paired
    interval, p and p after Holm, and whether the change is clear of zero after the correction."""
    sign = -1.0 if flipped else 1.0
    low, high = entry.get("ci95_low"), entry.get("ci95_high")
    if flipped and isinstance(low, (int, float)) and isinstance(high, (int, float)):
        low, high = -high, -low
    delta = entry.get("delta")
    clear = bool(entry.get("distinguishable_holm"))
    return {"delta": door.data(format_number(sign * delta if isinstance(delta, (int, float)) else delta, "+.3f")),
            "interval": door.interval(door.data(format_number(low, "+.3f")), door.data(format_number(high, "+.3f"))),
            "p": door.data(format_number(entry.get("p_value"), ".4f")),
            "p_holm": door.data(format_number(entry.get("p_holm"), ".4f")),
            "holm_clear": clear}


def all_pairs_view(results: Results, door: Door, labels: Labels) -> list[dict] | None:
    """One matrix per metric of the all_pairs block: each measured row (after the first) against
    each row before it, the cell holding the change with its own paired interval, p and p after
    Holm's correction, and whether it is clear of zero after the correction."""
    block = results.model.all_pairs
    if block is None or not isinstance(block.get("metrics"), dict):
        return None
    tables = []
    for metric, family in block["metrics"].items():
        pairs = family.get("pairs") if isinstance(family, dict) else None
        if not isinstance(pairs, dict) or not pairs:
            continue
        by_pair = {(str(entry.get("row")), str(entry.get("baseline"))): entry for entry in pairs.values()
                   if isinstance(entry, dict)}
        order = [str(name) for name in block.get("rows", []) if isinstance(name, str)]
        for row, baseline in by_pair:
            for name in (baseline, row):
                if name not in order:
                    order.append(name)
        for index, name in enumerate(order):
            _table_word(name, f"all_pairs.{metric}.rows[{index}]")
        matrix = []
        for position, row in enumerate(order[1:], start=1):
            cells = []
            for column in order[:-1]:
                entry = by_pair.get((row, column))
                flipped = entry is None and (column, row) in by_pair
                entry = entry if entry is not None else by_pair.get((column, row))
                cells.append(_pair_cell(entry, flipped, door, labels) if entry is not None and
                             order.index(column) < position else None)
            matrix.append({"row": door.code(row), "cells": cells})
        tables.append({"metric": door.data(str(metric)), "columns": [door.code(name) for name in order[:-1]],
                       "rows": matrix, "family": door.data(str(family.get("family", len(by_pair)))),
                       "sample": sample_view(results, door, labels)})
    return tables or None


def per_query_view(results: Results, door: Door, labels: Labels, preferred: Iterable[str] = ()) -> dict:
    """Every query of the results file with each measured row's value of up to three metrics (the
    change over the baseline beside them) and the candidate diagnosis, the queries with the largest
    change on any of them first. The metrics are those the output's table or charts show (`preferred`), in that
    order, else the file's own: any metric the evaluation computed. A file that holds no per-query
    values says so (`absent`), so the table never disappears without a word."""
    model = results.model
    query_ids = model.query_ids
    baseline = model.roles.baseline
    rows = [row for row in model.measured_rows if model.per_query(row)]
    values = {row: model.per_query(row) for row in rows}
    sample = sample_view(results, door, labels)
    if not rows or not query_ids:
        return {"absent": labels.per_query_absent_values, "sample": sample}
    computed = [name for name in model.metric_names] or sorted(
        {name for row in rows for entry in values[row].values() if isinstance(entry, dict) for name in entry})
    ordered = [name for name in preferred if name in computed] + [name for name in computed if name not in preferred]
    metrics = [name for name in ordered
               if all(isinstance(values[row].get(q, {}).get(name), (int, float)) for row in rows for q in query_ids)][:3]
    if not metrics:
        return {"absent": labels.per_query_absent_values, "sample": sample}
    texts = model.query_texts

    def change(row: str, query: str, metric: str) -> float:
        if row == baseline or baseline not in values:
            return 0.0
        return float(values[row][query][metric]) - float(values[baseline][query][metric])

    order = sorted(range(len(query_ids)),
                   key=lambda i: (-max(abs(change(r, query_ids[i], m)) for r in rows for m in metrics), i))
    view_rows = []
    for index in order:
        query = query_ids[index]
        cells = []
        for metric in metrics:
            for row in rows:
                value = format_number(values[row][query][metric], ".3f")
                delta = change(row, query, metric)
                sign = "win" if delta > 1e-12 else "loss" if delta < -1e-12 else "tie"
                if row != baseline and baseline in values:
                    value += f" ({format_number(delta, '+.3f')})"
                    cells.append({"value": door.data(value), "sign": sign})
                else:
                    cells.append({"value": door.data(value), "sign": "base"})
        verdicts = [f"{row}: {entry['diagnosis']}" for row in rows
                    if isinstance((entry := model.diagnosis(row).get(query, {})).get("diagnosis"), str)]
        text = texts.get(query, "")
        view_rows.append({"id": door.data(query), "text": door.data(text if len(text) <= 160 else text[:157] + "..."),
                          "cells": cells, "diagnosis": door.data("; ".join(verdicts))})
    columns = [door.data(f"{row} {metric}") for metric in metrics for row in rows]
    return {"columns": columns, "rows": view_rows, "sample": sample, "absent": None}
