"""The design freeze and the trace history: the two records `check` keeps beside the ledger.

- `claims/design-freeze.json` holds the sha256 of every design document, written by
  `readout freeze` once the design is committed. A later change, addition or removal of a
  document breaks the check until the freeze is deliberately renewed.
- `claims/trace-history.jsonl` is append-only: one line per ledger version, the first time
  `readout check` sees its sha256. Its first line is the first-draft score; in every line U
  counts active untraceable claims plus struck claims (a struck claim was untraceable when it
  was written).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from generator.claims.design import design_files
from generator.errors import InputError
from generator.fileio import atomic_write_json, atomic_write_text, display_path, reading, sha256_file
from generator.project import Project

FREEZE_VERSION = 1


def read_freeze(project: Project) -> dict[str, str] | None:
    path = project.freeze_path
    if not path.exists():
        return None
    shown = display_path(path)
    with reading(path):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise InputError(f"not valid JSON: {error.msg}", path=shown, line=error.lineno) from None
    documents = record.get("documents") if isinstance(record, dict) else None
    if not isinstance(documents, dict) or not all(isinstance(value, str) for value in documents.values()):
        raise InputError("expected {\"version\": 1, \"documents\": {name: sha256}}", path=shown, field="documents")
    return documents


def current_hashes(project: Project) -> dict[str, str]:
    return {name: sha256_file(path) for name, path in design_files(project.design_dir).items()}


def freeze_problems(project: Project) -> tuple[list[str], dict[str, str]]:
    """(problems, current hashes); a problem names the document first."""
    current = current_hashes(project)
    frozen = read_freeze(project)
    renew = "renew the freeze with `readout freeze` if the change is deliberate"
    if frozen is None:
        return [f"{display_path(project.design_dir)}/: design documents are not frozen "
                f"({display_path(project.freeze_path)} is missing); run `readout freeze` once the design is "
                "committed"], current
    problems = []
    for name in sorted(set(frozen) | set(current)):
        shown = display_path(project.design_dir / name)
        if name not in current:
            problems.append(f"{shown}: removed after the freeze; {renew}")
        elif name not in frozen:
            problems.append(f"{shown}: added after the freeze; {renew}")
        elif frozen[name] != current[name]:
            problems.append(f"{shown}: changed since the freeze (sha256 {frozen[name][:12]} frozen, "
                            f"{current[name][:12]} now); {renew}")
    return problems, current


def freeze_project(project: Project) -> tuple[dict[str, str], dict[str, str]]:
    """Write claims/design-freeze.json; returns (previous hashes, current hashes).

    Unchanged hashes rewrite nothing.
    """
    current = current_hashes(project)
    if not current:
        raise InputError("no design documents to freeze", path=display_path(project.design_dir))
    previous = read_freeze(project) or {}
    if previous != current:
        atomic_write_json(project.freeze_path, {"version": FREEZE_VERSION, "documents": current})
    return previous, current


def read_history(project: Project) -> list[dict[str, Any]]:
    path = project.history_path
    if not path.exists():
        return []
    entries = []
    shown = display_path(path)
    with reading(path):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except json.JSONDecodeError as error:
                raise InputError(f"not valid JSON: {error.msg}", path=shown, line=number) from None
            if not isinstance(entry, dict) or not isinstance(entry.get("ledger_sha256"), str) or not all(
                    isinstance(entry.get(key), int) for key in ("untraceable", "struck", "total")):
                raise InputError("expected an object with ledger_sha256, untraceable, struck, total", path=shown,
                                 line=number)
            entries.append(entry)
    return entries


def draft_score(entry: dict[str, Any]) -> tuple[int, int]:
    """A history entry's score, struck claims counting as untraceable."""
    return entry["untraceable"] + entry["struck"], entry["total"]


def history_entry(moment: datetime, ledger_sha256: str, untraceable: int, struck: int, total: int) -> dict[str, Any]:
    return {"checked_at": moment.replace(microsecond=0).isoformat().replace("+00:00", "Z"),
            "ledger_sha256": ledger_sha256, "untraceable": untraceable, "struck": struck, "total": total}


def append_history(project: Project, entry: dict[str, Any]) -> None:
    path = project.history_path
    existing = path.read_bytes() if path.exists() else b""
    if existing and not existing.endswith(b"\n"):
        existing += b"\n"
    line = json.dumps(entry, sort_keys=True, ensure_ascii=False) + "\n"
    atomic_write_text(path, existing.decode("utf-8") + line)
