"""The first-draft trace history: `claims/trace-history.jsonl`, the record `check` keeps of every
ledger version it scored.

The history is append-only: one line per ledger version, the first time `readout check` sees its
sha256. Its first line is the first-draft score; in every line U counts active untraceable
claims plus struck claims (a struck claim was untraceable when it was written). The first check
also preserves the ledger it scored as `claims/ledger.first-draft.yaml`.

The history is tamper-evident. Each line carries `previous_sha256`, the sha256 of the line before
it (`genesis` on the first), so editing, removing or inserting a line breaks the chain. The first
line must score exactly `ledger.first-draft.yaml` (its sha256), and what can be re-counted from
that file is re-counted: its number of claims, of struck claims, and a floor under the untraceable
count (active claims with no source at all). In a git work tree, every committed version of the
history must be a prefix of today's and the first-draft ledger may never change
(generator.claims.record.anchoring says whether it was committed before the results). What this cannot
stop without git: someone who rewrites both files consistently before ever committing them.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import field
from datetime import datetime
from typing import Any

from generator.claims.record.git_questions import committed_versions
from generator.core.dataclass import dataclass
from generator.storage.memo import default_memo
from generator.claims.language.repeats import find_repeats
from generator.storage.errors import InputError
from generator.storage.bounded_reads import read_input, utf8_text
from generator.storage.fileio import atomic_write_bytes, atomic_write_text, sha256_bytes
from generator.storage.paths import display_path, reading
from generator.storage.locks import records_lock
from generator.project import FIRST_DRAFT_NAME, Project
from generator.core.results import strict_json
from generator.storage.safe_yaml import Node, parse_yaml

GENESIS = "genesis"




@dataclass
class History:
    """The trace history as read, with every way it fails to prove itself (`problems`)."""

    entries: list[dict[str, Any]] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def line_sha256(line: str) -> str:
    return hashlib.sha256(line.encode("utf-8")).hexdigest()


def read_history(project: Project) -> History:
    """Read claims/trace-history.jsonl and verify it: a hash chain whose first line is the
    first-draft ledger, re-countable from claims/ledger.first-draft.yaml."""
    history = History()
    path = project.history_path
    if not os.path.lexists(path):
        return history
    shown = display_path(path)
    with reading(path):
        for number, line in enumerate(utf8_text(path, shown, "trace history").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                entry = strict_json(line)
            except json.JSONDecodeError as error:
                raise InputError(f"not valid JSON: {error.msg}", path=shown, line=number) from None
            except ValueError as error:
                raise InputError(f"not valid JSON: {error}", path=shown, line=number) from None
            if not isinstance(entry, dict) or not isinstance(entry.get("ledger_sha256"), str) or not all(
                    isinstance(entry.get(key), int) and not isinstance(entry.get(key), bool)
                    for key in ("untraceable", "struck", "total")):
                raise InputError("expected an object with ledger_sha256, untraceable, struck, total", path=shown,
                                 line=number)
            expected = line_sha256(history.lines[-1]) if history.lines else GENESIS
            if entry.get("previous_sha256") != expected:
                history.problems.append(f"{shown}:{number}: the hash chain breaks here (previous_sha256 should be "
                                        f"{expected[:12]}): a history line was edited, removed or inserted")
            history.entries.append(entry)
            history.lines.append(line)
    if history.entries:
        history.problems.extend(_first_draft_problems(project, history.entries[0], shown))
        history.problems.extend(committed_history_problems(project))
    return history


def _first_draft_problems(project: Project, first: dict[str, Any], shown: str) -> list[str]:
    """Re-count what can be re-counted of the first draft from the preserved first-draft ledger."""
    draft_path = project.claims_dir / FIRST_DRAFT_NAME
    draft_shown = display_path(draft_path)
    if not os.path.lexists(draft_path):
        return [f"{draft_shown}: missing; the first history line scores a ledger that is no longer kept"]
    raw = read_input(draft_path, "ledger", draft_shown)
    if sha256_bytes(raw) != first["ledger_sha256"]:
        return [f"{draft_shown}: not the ledger the first history line scored (sha256 differs): the first draft "
                "was replaced"]
    with reading(draft_path):
        # The first draft never changes: its count is a signed memo by its sha256 (generator.storage.memo).
        total, struck, unsourced = default_memo().remembered("first-draft count", first["ledger_sha256"],
                                                     lambda: list(_count_draft(raw, draft_shown)))
    problems = []
    if first["total"] != total:
        problems.append(f"{shown}:1: total {first['total']} but {draft_shown} holds {total} claims")
    if first["struck"] != struck:
        problems.append(f"{shown}:1: struck {first['struck']} but {draft_shown} strikes {struck} claims")
    if not unsourced <= first["untraceable"] <= first["total"] - struck:
        problems.append(f"{shown}:1: untraceable {first['untraceable']} cannot be: {draft_shown} has {unsourced} "
                        f"active claims with no source at all and {first['total'] - struck} active claims")
    return problems


def _count_draft(raw: bytes, shown: str) -> tuple[int, int, int]:
    """(claims, struck, active with no source) of a first draft, read by shape only: a draft
    written under older rules must still be countable."""
    try:
        root = parse_yaml(raw.decode("utf-8"), shown)
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text (byte {error.start})", path=shown) from None
    claims = root.value.get("claims", (0, Node([], 0)))[1].value if root is not None and isinstance(root.value, dict) else []
    if not isinstance(claims, list):
        raise InputError("claims must be a list", path=shown)
    total = struck = unsourced = 0
    texts = []
    for number, node in enumerate(claims):
        fields = node.value if isinstance(node.value, dict) else {}
        texts.append((str(number), _scalar(fields, "output"), _scalar(fields, "text")))
    repeated = find_repeats(texts)
    for number, node in enumerate(claims):
        if str(number) in repeated:
            continue   # a sentence said twice in one output counts once (generator.claims.language.repeats)
        fields = node.value if isinstance(node.value, dict) else {}
        total += 1
        is_struck = "status" in fields and fields["status"][1].value == "struck"
        struck += is_struck
        sources = fields["sources"][1].value if "sources" in fields else None
        unsourced += (not is_struck) and not sources
    return total, struck, unsourced


def _scalar(fields: dict, key: str) -> str:
    value = fields[key][1].value if key in fields else None
    return value if isinstance(value, str) else ""


def committed_history_problems(project: Project) -> list[str]:
    """When the project is in a git work tree: every committed version of the history must be a
    prefix of today's (append-only), and the first-draft ledger must never have changed."""
    problems = []
    for path, rule, kind in ((project.history_path, "prefix", "trace history"),
                             (project.claims_dir / FIRST_DRAFT_NAME, "same", "ledger")):
        current = read_input(path, kind) if os.path.lexists(path) else b""
        for commit, committed in committed_versions(path):
            if rule == "prefix" and b"previous_sha256" not in committed.split(b"\n", 1)[0]:
                continue  # a history committed before it was chained; its lines were re-chained once
            ok = current.startswith(committed) if rule == "prefix" else current == committed
            if not ok:
                what = "is not an append-only continuation of" if rule == "prefix" else "differs from"
                problems.append(f"{display_path(path)}: {what} the version committed in {commit[:12]}: "
                                "the record was rewritten")
                break
    return problems


def first_draft_score(history: History) -> tuple[int, int] | None:
    """The first-draft score `U/T`, struck claims counting as untraceable; None before any check."""
    if not history.entries:
        return None
    first = history.entries[0]
    return first["untraceable"] + first["struck"], first["total"]


def history_entry(history: History, moment: datetime, ledger_sha256: str, untraceable: int, struck: int,
                  total: int) -> dict[str, Any]:
    return {"checked_at": moment.replace(microsecond=0).isoformat().replace("+00:00", "Z"),
            "ledger_sha256": ledger_sha256, "untraceable": untraceable, "struck": struck, "total": total,
            "previous_sha256": line_sha256(history.lines[-1]) if history.lines else GENESIS}


def append_history(project: Project, entry: dict[str, Any], history: History | None = None) -> bool:
    """Append `entry` unless the history already scores its ledger; the first line also preserves
    the ledger it scored as the first draft. Read and written under the project's records lock, so
    a check run at the same time as this one never loses a line: the entry is chained to the last
    line as it is now (what another check appended since `history` was read included). `history`,
    when given, is brought up to the file as written. Whether the entry was appended."""
    path = project.history_path
    with records_lock(project.claims_dir):
        existing = read_input(path, "trace history") if os.path.lexists(path) else b""
        lines = [line for line in existing.decode("utf-8").splitlines() if line.strip()]
        entries = [strict_json(line) for line in lines]
        appended = not any(isinstance(kept, dict) and kept.get("ledger_sha256") == entry["ledger_sha256"]
                           for kept in entries)
        if appended:
            if not lines:
                draft = read_input(project.ledger_path, "ledger")
                atomic_write_bytes(project.claims_dir / FIRST_DRAFT_NAME, draft)
            entry["previous_sha256"] = line_sha256(lines[-1]) if lines else GENESIS
            line = json.dumps(entry, sort_keys=True, ensure_ascii=False)
            if existing and not existing.endswith(b"\n"):
                existing += b"\n"
            atomic_write_text(path, existing.decode("utf-8") + line + "\n")
            lines.append(line)
            entries.append(entry)
    if history is not None:
        history.lines, history.entries = lines, entries
    return appended
