"""What `check` holds the design freeze to: the design documents against the last freeze, and the
log against itself (the chain, the kept texts, what each entry says moved, the acknowledgements,
the clocks of the results it says did not exist yet, the last entry's rules against today's).

The log is only evidence if an edit of it shows: each problem names the file first, so `check`
can annotate the line a reader opens.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from generator.claims.record.design_rules import read_design_rules
from generator.claims.record.freeze import (FREEZE_VERSION, GENESIS, FreezeEntry, FreezeLog, _manifest_of, amendments,
                                            current_hashes, existing_results, post_hoc_decisions, read_freeze_log,
                                            rules_snapshot)
from generator.claims.record.regression_block import REGRESSION_INFO
from generator.storage.paths import display_path
from generator.project import Project


def freeze_problems(project: Project, log: FreezeLog | None = None) -> tuple[list[str], dict[str, str]]:
    """(problems, current hashes); a problem names the file first."""
    current = current_hashes(project)
    log = log if log is not None else read_freeze_log(project)
    renew = "renew the freeze with `readout freeze` if the change is deliberate"
    shown_freeze = display_path(project.freeze_path)
    if log is None:
        return [f"{display_path(project.design_dir)}/: design documents are not frozen "
                f"({shown_freeze} is missing); run `readout freeze` once the design is committed"], current
    problems = []
    if log.version != FREEZE_VERSION:
        problems.append(f"{shown_freeze}: a version {log.version} freeze does not record what results existed when "
                        "it was made; renew it with `readout freeze --reason ...` (the readout then shows "
                        "every decision frozen after results as post hoc)")
    frozen = log.documents
    for name in sorted(set(frozen) | set(current)):
        shown = display_path(project.design_dir / name)
        if name not in current:
            problems.append(f"{shown}: removed after the freeze; {renew}")
        elif name not in frozen:
            problems.append(f"{shown}: added after the freeze; {renew}")
        elif frozen[name] != current[name]:
            problems.append(f"{shown}: changed since the freeze (sha256 {frozen[name][:12]} frozen, "
                            f"{current[name][:12]} now); {renew}")
    if log.version == FREEZE_VERSION:
        problems.extend(log_problems(project, log, design_matches=frozen == current))
    return problems, current


def log_problems(project: Project, log: FreezeLog, *, design_matches: bool) -> list[str]:
    """Every way the log fails to prove itself: the chain, the kept texts, what each entry says moved,
    the acknowledgements, and (when the design is unchanged) the last entry's rules against today's."""
    shown = display_path(project.freeze_path)
    problems = []
    previous: FreezeEntry | None = None
    for entry in log.entries:
        where = f"{shown}: freeze {entry.number}"
        expected = previous.sha256 if previous else GENESIS
        if entry.data["previous_sha256"] != expected:
            problems.append(f"{where}: the chain breaks here (previous_sha256 should be {expected[:12]}): an entry "
                            "was edited, removed or inserted")
        recomputed = amendments(previous.data if previous else None, entry.rules, entry.documents)
        if entry.amended != recomputed:
            problems.append(f"{where}: amended says {_moved_text(entry.amended)} but the rules moved "
                            f"{_moved_text(recomputed)}")
        need_ack = post_hoc_decisions(entry.results_existed, recomputed)
        unacknowledged = [decision for decision in need_ack if decision not in entry.post_hoc]
        if unacknowledged:
            problems.append(f"{where}: {', '.join(unacknowledged)} became post hoc (its rule moved after results "
                            "existed) without being acknowledged; renew the freeze with --post-hoc and a reason")
        if entry.results_existed and (entry.amended or entry.data["changes"]) and not entry.reason:
            problems.append(f"{where}: an amendment after results without a reason")
        if not entry.results_existed:
            problems.extend(f"{where} says no results existed, but {started}" for started in
                            _results_started_before(project, entry.frozen_at))
            seen = next((earlier for earlier in log.entries[:entry.number - 1] if earlier.results_existed), None)
            if seen is not None:
                problems.append(f"{where} says no results existed, but freeze {seen.number} had seen results: "
                                "results deleted before a freeze were still seen")
        previous = entry
    last = log.entries[-1]
    kept = {name: hashlib.sha256(text.encode("utf-8")).hexdigest() for name, text in log.texts.items()}
    if kept != last.documents:
        problems.append(f"{shown}: the kept texts are not the documents of freeze {last.number}")
    if design_matches and not problems:
        today = rules_snapshot(read_design_rules(project.design_dir))
        if REGRESSION_INFO not in last.rules:
            today.pop(REGRESSION_INFO)   # frozen before the regression block was kept: said nothing of it
        if today != last.rules:
            problems.append(f"{shown}: freeze {last.number} records rules the design documents do not hold "
                            "(the log was edited)")
    return problems


def _results_started_before(project: Project, frozen_at: str) -> list[str]:
    """The results files whose run started before `frozen_at`: they existed, or were being made,
    when a freeze of that time says none did (both clocks are recorded, so this catches an edit of
    one, not a forger who edits both)."""
    moment = _moment(frozen_at)
    results = existing_results(project)
    found = []
    for name in (results if isinstance(results, dict) and moment else ()):
        started = _started_at(project.outputs_dir / name)
        if started is not None and started < moment:
            found.append(f"outputs/{name} was started at {started.isoformat().replace('+00:00', 'Z')}, before the "
                         "freeze: freeze again with --reason, acknowledging what is post hoc")
    return found


def _moment(text: Any) -> datetime | None:
    try:
        moment = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _started_at(path: Path) -> datetime | None:
    return _moment(_manifest_of(path).get("started_at"))


def _moved_text(amended: dict[str, list[str]]) -> str:
    return "; ".join(f"{decision} {', '.join(parts)}" for decision, parts in sorted(amended.items())) or "nothing"
