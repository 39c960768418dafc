"""Sources for people: what a claim rests on, said as a sentence first and as the raw path second.

`table[search=hybrid].nDCG@5` in results.json becomes "hybrid nDCG@5 on 20 queries = 0.6285";
the path follows for an auditor who wants to look it up. The words come from the path itself
(row names, metric names, a few spelled-out keys), never from a model of what the claim means.
"""

from __future__ import annotations

import math
import re
from typing import Any

from generator.claims.record.quotable_units import reduce_markdown
from generator.claims.evidence import Evidence
from generator.core.results import PathSyntaxError, Step, parse_path
from generator.core.results.schema import (BY_NAME, CANDIDATE_DEPTH, COMPARISONS, DIAGNOSIS, FORMER_NAMES, MANIFEST, P95_RERANK,
                                           PER_QUERY, QUERY_SET, RERANK_COSTS, RERANK_MILLISECONDS,
                                           SAME_CANDIDATES, TABLE, FIGURE_KINDS, Block)
from generator.core.results.location import locate

# Keys spelled out for a reader; any other key is shown with its underscores as spaces.
_WORDS = {
    "ci95_low": "interval low end", "ci95_high": "interval high end", "p_value": "sign-flip p-value",
    "p95_milliseconds": "p95 ms per query", "p50_milliseconds": "p50 ms per query",
    P95_RERANK.name: "p95 rerank ms per query", "pairs_per_second": "pairs per second",
    "not_measured_reason": "reason it was not measured", SAME_CANDIDATES.name: "same candidates after reranking",
    RERANK_COSTS.name: "reranker cost", CANDIDATE_DEPTH.name: "candidate depth", QUERY_SET.name: "query set",
    "row": "own mean", "delta": "change",
}
# What no file holds the evidence for: a time, a load, a clock. `check` holds such figures to each
# other (p50 <= p95, one entry per query, totals that agree) but cannot recompute them, and the
# reader is told so.
RECORDED_ONLY = {"p95_milliseconds", "p50_milliseconds", "max_milliseconds", "mean_milliseconds", "pairs_per_second",
                 "per_query_milliseconds", "per_query_cpu_seconds", "per_query_load_average",
                 "cpu_seconds_per_wall_second", P95_RERANK.name, RERANK_MILLISECONDS.name, "started_at",
                 "finished_at", "dense_encode_seconds", "total_seconds"}
# Keys that only group what follows: dropped from the sentence.
_SILENT = {TABLE.name, COMPARISONS.name, MANIFEST.name, "metrics", "rows"}


def _block(steps: tuple) -> Block | None:
    """The block a path is in, in either format's spelling."""
    if not steps or steps[0].kind != "key":
        return None
    return BY_NAME.get(steps[0].key) or BY_NAME.get(FORMER_NAMES.get(steps[0].key, ""))


def _key_words(key: str) -> str:
    if key in _WORDS:
        return _WORDS[key]
    change = re.fullmatch(r"delta_(.+)_vs_(.+)", key)
    if change:
        return f"change in {change.group(1)} over {change.group(2)}"
    versus = re.fullmatch(r"(.+)_vs_(.+)", key)
    if versus:
        head = "paired comparison" if versus.group(1) == "paired" else versus.group(1)
        return f"{head} against {versus.group(2)}"
    return key.replace("_", " ")


def describe_path(path: str) -> str:
    """`table[search=hybrid].paired_vs_dense.nDCG@5.ci95_low` → "hybrid paired comparison against
    dense nDCG@5 interval low end"."""
    try:
        steps = parse_path(path)
    except PathSyntaxError:
        return path
    words = []
    for step in steps:
        if step.kind == "select":
            words.append(str(step.value))
        elif step.kind == "index":
            words.append(f"item {step.index + 1}")
        elif step.key not in _SILENT:
            words.append(_key_words(step.key))
    block = _block(steps)
    if block in (PER_QUERY, DIAGNOSIS) and len(steps) > 3 and all(step.kind == "key" for step in steps[:3]):
        # <block>.<row>.<query>.<rest> reads better as "<row> <rest> on query <query>"
        words = [words[1], *words[3:], f"on query {words[2]}"]
    return " ".join(word for word in words if word) or path


def short_value(value: Any) -> str:
    """A raw value as a reader wants it: 4 significant digits, not a float dump."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        if value != 0 and (abs(value) >= 1e6 or abs(value) < 1e-3):
            return f"{value:.3e}"
        return f"{value:,.4g}" if abs(value) < 1e4 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, str):
        return value if len(value) <= 200 else value[:197] + "..."
    text = str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def measured_sentence(evidence: Evidence, queries: Any) -> str:
    """"hybrid nDCG@5 on 20 queries = 0.6285" (the count when the file says how many queries and the
    value's block is measured over them, as the schema declares)."""
    path = evidence.path or ""
    described = describe_path(path)
    try:
        steps = parse_path(path)
    except PathSyntaxError:
        steps = ()
    block = _block(steps)
    location = locate((Step("key", key=block.name), *steps[1:])) if block is not None else None
    over_queries = (location is not None and location.query is None and location.block.over_queries
                    and location.kind in FIGURE_KINDS)
    if isinstance(queries, int) and not isinstance(queries, bool) and over_queries and "on query" not in described \
            and not isinstance(evidence.value, (str, bool)):
        described += f" on {queries:,} queries"
    recorded = " (recorded, not re-derivable)" if _recorded_only(path) else ""
    return f"{described} = {short_value(evidence.value)}{recorded}"


def _recorded_only(path: str) -> bool:
    try:
        return any(step.kind == "key" and step.key in RECORDED_ONLY for step in parse_path(path))
    except PathSyntaxError:
        return False


def design_quote(evidence: Evidence) -> str:
    """The quote as a reader sees it in the document: Markdown emphasis and code marks removed."""
    return reduce_markdown(evidence.quote or "")
