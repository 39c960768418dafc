"""The roles a results file's rows play, as `manifest.rows` records them: which row is the
baseline, which one is the reranker under decision and whose candidates it reorders, and every
further rerank row. A file written before rows were configurable (or by the sandbox) records none
and has the SciFact review's roles."""

from __future__ import annotations

from typing import Any, Mapping

from generator.core.rows import DEFAULT_BASELINE, DEFAULT_RERANK_OVER, DEFAULT_RERANK_ROW, RowRoles

_MANIFEST, _TABLE, _ROWS = "manifest", "table", "rows"


def row_roles(data: Mapping[str, Any]) -> RowRoles:
    """The roles `manifest.rows` records, else the SciFact review's."""
    manifest = data.get(_MANIFEST) if isinstance(data.get(_MANIFEST), Mapping) else {}
    recorded = manifest.get(_ROWS)
    table = data.get(_TABLE) if isinstance(data.get(_TABLE), list) else []
    table_names = tuple(entry.get("search") for entry in table
                        if isinstance(entry, Mapping) and isinstance(entry.get("search"), str))
    if not isinstance(recorded, list) or not recorded or not all(
            isinstance(entry, Mapping) and isinstance(entry.get("name"), str) for entry in recorded):
        return RowRoles(DEFAULT_BASELINE, DEFAULT_RERANK_ROW, DEFAULT_RERANK_OVER, table_names)
    reranks = tuple((entry["name"], entry["over"]) for entry in recorded
                    if entry.get("kind") == "rerank" and isinstance(entry.get("over"), str))
    rerank = next((entry for entry in recorded if entry.get("kind") == "rerank"), None)
    over = rerank.get("over") if rerank else None
    return RowRoles(recorded[0]["name"], rerank["name"] if rerank else None,
                    over if isinstance(over, str) else None, tuple(entry["name"] for entry in recorded), reranks)
