"""Build stamps and staleness: what each output was rendered from, and `render --check`.

Each output records the sha256 of everything it was built from (ledger, results, design
freeze, readout.yaml and every template file): a meta tag in the HTML, a comment at the end of
Markdown. `render --check` renders afresh in memory and names every output on disk that differs,
saying which input changed when the stamp tells, the way `cog --check` works.

It also names every file under outputs/ the tool did not write (`unwritten_files`): a report,
a results file the project declares and every file a results file's manifest lists (its run files,
its judgements, the sandbox's outputs) are the tool's; a hand-written summary page beside them, or
the old report a renamed `outputs.<output>.file` left behind, is not, and the gate refuses it.
"""

from __future__ import annotations

import html
import json
import os
import re
from dataclasses import field
from pathlib import Path
from typing import Any, Iterable

from generator.core.dataclass import dataclass
from generator.storage.fileio import sha256_file
from generator.storage.paths import display_path
from generator.render.orphans import strip_marks

STAMP_NAME = "readout-built-from"


@dataclass
class Rendered:
    """One output rendered in memory."""

    name: str
    path: Path
    marked: str
    stamp: dict[str, Any]
    # Why the page is not verified: it was drawn from a template or stylesheet of the project's own.
    unverified: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return strip_marks(self.marked)


def stamp_text(stamp: dict[str, Any]) -> str:
    return json.dumps(stamp, sort_keys=True, separators=(",", ":"))


def template_hashes(templates_dir: Path) -> dict[str, str]:
    return {path.relative_to(templates_dir).as_posix(): sha256_file(path)
            for path in sorted(templates_dir.rglob("*")) if path.is_file() and "__pycache__" not in path.parts}


_STAMP_HTML = re.compile(r'<meta name="' + STAMP_NAME + r'" content="([^"]*)">')
_STAMP_MD = re.compile(r"<!-- " + STAMP_NAME + r" (\{.*?\}) -->")


def read_stamp(text: str) -> dict[str, Any] | None:
    match = _STAMP_HTML.search(text)
    raw = html.unescape(match.group(1)) if match else None
    if raw is None:
        match = _STAMP_MD.search(text)
        raw = match.group(1) if match else None
    try:
        return json.loads(raw) if raw else None
    except (json.JSONDecodeError, RecursionError):
        return None


def why_stale(old: dict[str, Any] | None, new: dict[str, Any]) -> str:
    if old is None:
        return "no build stamp (not rendered by readout render, or edited)"
    changed = []
    names = {"ledger_sha256": "claims/ledger.yaml", "design_freeze_sha256": "design freeze",
             "config_sha256": "readout.yaml", "draft": "draft mode"}
    for key, name in names.items():
        if old.get(key) != new.get(key):
            changed.append(name)
    for group, prefix in (("results_sha256", "outputs/"), ("templates_sha256", "templates/")):
        before, after = old.get(group) or {}, new.get(group) or {}
        changed.extend(prefix + name for name in sorted(set(before) | set(after)) if before.get(name) != after.get(name))
    if changed:
        return "built from an older " + ", ".join(changed)
    return ("differs from a fresh render (edited by hand, the renderer changed, or git now shows another order: "
            "once the design freeze is committed, render again)")


def stale_outputs(rendered: Iterable[Rendered]) -> list[str]:
    """One line per output on disk that differs from its fresh render."""
    lines = []
    for output in rendered:
        name = display_path(output.path)
        if not output.path.is_file():
            lines.append(f"{name}: missing")
            continue
        on_disk = output.path.read_text(encoding="utf-8")
        if on_disk != output.text:
            lines.append(f"{name}: stale: {why_stale(read_stamp(on_disk), output.stamp)}")
    return lines


# A writing command's lock file (generator.storage.locks.LOCK_NAME), there while it runs.
LOCK_FILE = ".readout.lock"


def manifest_files(results: Any) -> set[str]:
    """Every file a results file's manifest says its writer wrote beside it, relative to its
    folder: the run files, the judgements' copy, the sandbox's outputs."""
    model = results.model
    listed: set[str] = set()
    for entry in model.manifest_block("run_files").values():
        if isinstance(entry, dict) and isinstance(entry.get("path"), str):
            listed.add(entry["path"])
    qrels = model.manifest_block("qrels_copy").get("path")
    if isinstance(qrels, str):
        listed.add(qrels)
    listed.update(name for name in model.manifest_block("files") if isinstance(name, str))
    return {os.path.normpath(name) for name in listed}


def unwritten_files(outputs_dir: Path, written: Iterable[str]) -> list[str]:
    """One line per file under outputs/ that is not one the tool writes (`written`: paths relative
    to outputs/), links included; nothing is followed."""
    allowed = {os.path.normpath(name) for name in written} | {LOCK_FILE}
    found = []
    if not outputs_dir.is_dir():
        return found
    for folder, directories, files in os.walk(outputs_dir):
        directories.sort()
        for name in sorted(files + [d for d in directories if os.path.islink(os.path.join(folder, d))]):
            relative = os.path.normpath(os.path.relpath(os.path.join(folder, name), outputs_dir))
            if relative not in allowed:
                found.append(f"{display_path(outputs_dir / relative)}: not a file readout wrote for this project (not "
                             "a report readout.yaml declares, a results file, or a file a results file's manifest "
                             "lists): delete it, or move it out of outputs/")
    return found
