"""Reading a format-1 results file, and a path written in format 1's spelling, as format 2.

What changed from format 1 (files without `format_version`) to format 2:

- one spelling of per-query values for every writer: the sandbox's `per_topic` is split into
  `per_query` (each query's metric values, as `readout evaluate` writes them) and `diagnosis`
  (the rest: the top k, the candidates, the misses, the verdict, the scores); its `topics` count
  is `queries` and its per-topic query details (`queries.<topic>...`) are `query_details`;
  `manifest.per_query_key` is gone;
- a row's comparison with the baseline is kept once, in `comparisons`: the table's copy
  `table[search=R].paired_vs_B` is gone (the path reads `comparisons.R_vs_B.metrics`);
- every rerank row's cost is under its row in `rerank_costs`: the decided reranker's
  `rerank_cost` is `rerank_costs.<row>` (the path `rerank_cost...` reads it);
- the comparison of the full query set with the release sample is `comparison_with_sample` and
  `comparison_with_sample_by_row` (format 1: `comparison_300`, `comparison_300_by_row`).

The seal covers a file as written, so it is checked before the upgrade; the upgrade only moves
values, never computes one, and every value it moves is then rebuilt by `check` like any other.
"""

from __future__ import annotations

from typing import Any, Mapping

from generator.core.results.paths import Step
from generator.core.results.rows import row_roles
from generator.core.results.schema import (COMPARISON_WITH_SAMPLE, COMPARISON_WITH_SAMPLE_BY_ROW, DIAGNOSIS, FORMAT,
                                           FORMAT_VERSION, MANIFEST, PER_QUERY, QUERIES, QUERY_DETAILS, RERANK_COSTS,
                                           COMPARISONS, TABLE)

_PER_QUERY_KEY = "per_query_key"
_SANDBOX_PER_QUERY = "per_topic"
_SANDBOX_COUNT = "topics"
_PAIRED_PREFIX = "paired_vs_"
_DECIDED_COST = "rerank_cost"
_RENAMED = {"comparison_300": COMPARISON_WITH_SAMPLE.name, "comparison_300_by_row": COMPARISON_WITH_SAMPLE_BY_ROW.name}


class FormatError(ValueError):
    """A results file of a format this version cannot read."""


def format_of(data: Any) -> int | None:
    """The format a document is written in: FORMAT_VERSION or older; None when it is not a
    results file (a side file such as stage_boundary.json, or a sandbox run marked invalid)."""
    if not isinstance(data, dict):
        return None
    version = data.get(FORMAT.name)
    if version is not None:
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise FormatError(f"format_version is {version!r}, not a format number")
        if version > FORMAT_VERSION:
            raise FormatError(f"written in results format {version}, newer than this readout reads "
                              f"(up to {FORMAT_VERSION}): upgrade traced-readout")
        return version
    manifest = data.get(MANIFEST.name)
    return 1 if isinstance(manifest, dict) and ("run_files" in manifest or "query_ids" in manifest) else None


def decided_rerank_row(data: Mapping[str, Any]) -> str | None:
    """The reranker under decision (generator.core.results.rows), when the file's table has it."""
    roles = row_roles(data)
    return roles.rerank if roles.rerank in roles.names or not roles.names else None


def upgrade(data: Any) -> Any:
    """`data` in the current format: the same object when it already is (or is not a results
    file), else a new document (the input is left as it is)."""
    version = format_of(data)
    if version is None or version == FORMAT_VERSION:
        return data
    upgraded = dict(data)
    manifest = dict(upgraded.get(MANIFEST.name) or {})
    if manifest.pop(_PER_QUERY_KEY, PER_QUERY.name) == _SANDBOX_PER_QUERY:
        _split_per_topic(upgraded, manifest)
    else:
        _one_copy_of_each(upgraded)
    upgraded[MANIFEST.name] = manifest
    upgraded[FORMAT.name] = FORMAT_VERSION
    return upgraded


def _split_per_topic(upgraded: dict[str, Any], manifest: dict[str, Any]) -> None:
    metrics = set(manifest.get("metrics") or ())
    per_topic = upgraded.pop(_SANDBOX_PER_QUERY, None)
    if isinstance(per_topic, dict):
        upgraded[PER_QUERY.name] = {row: {query: {key: value for key, value in entry.items() if key in metrics}
                                          for query, entry in by_query.items()}
                                    for row, by_query in per_topic.items()}
        upgraded[DIAGNOSIS.name] = {row: {query: {key: value for key, value in entry.items() if key not in metrics}
                                          for query, entry in by_query.items()}
                                    for row, by_query in per_topic.items()}
    if isinstance(upgraded.get(QUERIES.name), dict):
        upgraded[QUERY_DETAILS.name] = upgraded.pop(QUERIES.name)
    if _SANDBOX_COUNT in upgraded:
        upgraded[QUERIES.name] = upgraded.pop(_SANDBOX_COUNT)


def _one_copy_of_each(upgraded: dict[str, Any]) -> None:
    table = upgraded.get(TABLE.name)
    if isinstance(table, list):
        upgraded[TABLE.name] = [{key: value for key, value in row.items() if not key.startswith(_PAIRED_PREFIX)}
                                if isinstance(row, dict) else row for row in table]
    decided = decided_rerank_row(upgraded)
    cost = upgraded.pop(_DECIDED_COST, None)
    if decided is not None and cost is not None:
        further = upgraded.get(RERANK_COSTS.name)
        upgraded[RERANK_COSTS.name] = {decided: cost, **(further if isinstance(further, dict) else {})}
    for former, name in _RENAMED.items():
        if former in upgraded:
            upgraded[name] = upgraded.pop(former)


def upgrade_steps(steps: tuple[Step, ...], data: Mapping[str, Any]) -> tuple[tuple[Step, ...], str | None]:
    """A path as format 2 spells it: the same steps when they already are, or the format-2 steps
    of a format-1 spelling, or a reason when the value has no place in format 2 (the decided
    reranker's cost of a file with no rerank row)."""
    if not steps or steps[0].kind != "key":
        return steps, None
    head, rest = steps[0].key, steps[1:]
    if head == _SANDBOX_PER_QUERY:
        metrics = data.get(MANIFEST.name, {}).get("metrics") if isinstance(data.get(MANIFEST.name), Mapping) else None
        names = set(metrics or ())
        is_metric = len(rest) >= 3 and rest[2].kind == "key" and rest[2].key in names
        target = PER_QUERY.name if len(rest) < 3 or is_metric else DIAGNOSIS.name
        return (Step("key", key=target), *rest), None
    if head == _SANDBOX_COUNT and not rest and _SANDBOX_COUNT not in data:
        return (Step("key", key=QUERIES.name),), None
    if head == QUERIES.name and rest and QUERY_DETAILS.name in data:
        return (Step("key", key=QUERY_DETAILS.name), *rest), None
    if head == TABLE.name and len(rest) >= 2 and rest[0].kind == "select" and rest[1].kind == "key" \
            and rest[1].key.startswith(_PAIRED_PREFIX):
        pair = f"{rest[0].value}_vs_{rest[1].key[len(_PAIRED_PREFIX):]}"
        return (Step("key", key=COMPARISONS.name), Step("key", key=pair), Step("key", key="metrics"), *rest[2:]), None
    if head == _DECIDED_COST:
        decided = decided_rerank_row(data)
        if decided is None:
            return steps, "no rerank row is configured (evaluate.rows), so there is no reranker cost"
        return (Step("key", key=RERANK_COSTS.name), Step("key", key=decided), *rest), None
    if head in _RENAMED:
        return (Step("key", key=_RENAMED[head]), *rest), None
    return steps, None
