"""The design freeze: `claims/design-freeze.json`, a log of every time the design was frozen, each
entry saying what results existed when it was made.

A verdict is only worth something if its rule was fixed before the results were seen. So each
`readout freeze` appends an entry holding:

- `documents`: the sha256 of every design document, and `rules`: every budget and every decision
  record's trigger as parsed (generator.claims.record.design_rules);
- `results`: each results file in `outputs/` with its sha256 and `finished_at`, or `none yet`;
- `changes`: per changed document, its sha256 before and after and a unified diff, and `amended`:
  per decision, what moved (`added`, `trigger`, `outcome`, `budget`, `removed`);
- `reason`, required when results existed (a change then is an **amendment**), and `post_hoc`:
  the decisions whose rule an amendment set or moved after the results existed, which the author
  must name (`--post-hoc D5`) to freeze at all;
- `previous_sha256`, the sha256 of the entry before it (`genesis` on the first), so an edited,
  removed or inserted entry breaks the chain.

The file also keeps the frozen text of each document (`texts`), so the next amendment can show its
diff. `check` holds the log to itself: the chain, the texts against their hashes, the last entry's
rules against the design as it reads today, each entry's `amended` against the rules of the entry
before it, and every post hoc decision to its acknowledgement. A decision amended after results
existed is **post hoc**: its verdict is still computed and rendered, but labelled so. What git can
add (which commit each entry was first committed in, against the first results commit) is
generator.claims.record.anchoring's.

A version 1 freeze (documents only) cannot say what results existed; `check` asks for it to be
renewed.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

from generator.claims.record.design import design_files
from generator.core.dataclass import dataclass
from generator.core.text.characters import describe, hidden_character
from generator.claims.record.design_rules import read_design_rules
from generator.claims.record.regression_block import REGRESSION_INFO
from generator.claims.record.triggers import DesignRules, budget_read_by, effect_budget
from generator.storage.errors import InputError
from generator.storage.bounded_reads import utf8_text
from generator.storage.fileio import atomic_write_json, remove_stale_temporaries, sha256_file
from generator.storage.paths import display_path, reading
from generator.storage.locks import records_lock
from generator.project import Project
from generator.core.results import read_results, strict_json

FREEZE_VERSION = 2
GENESIS = "genesis"
# What an entry made before the regression block was kept in its rules snapshot holds of it.
LEGACY = object()
NONE_YET = "none yet"
ADDED, REMOVED = "added", "removed"
# What of a decision's rule can move: the predicate and what it reads, the outcome words, a budget.
RULE_PARTS = ("trigger", "outcome", "budget")
MAX_REASON_CHARS = 300
_ENTRY_KEYS = ("frozen_at", "documents", "rules", "results", "changes", "amended", "reason", "post_hoc",
               "previous_sha256")




def entry_sha256(entry: dict[str, Any]) -> str:
    """The hash the next entry chains to: of the entry's canonical JSON."""
    return hashlib.sha256(json.dumps(entry, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
                          .encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class FreezeEntry:
    number: int                 # 1-based position in the log
    data: dict[str, Any]        # as stored

    @property
    def sha256(self) -> str:
        return entry_sha256(self.data)

    @property
    def documents(self) -> dict[str, str]:
        return self.data["documents"]

    @property
    def rules(self) -> dict[str, Any]:
        return self.data["rules"]

    @property
    def results_existed(self) -> bool:
        return self.data["results"] != NONE_YET

    @property
    def amended(self) -> dict[str, list[str]]:
        return self.data["amended"]

    @property
    def post_hoc(self) -> list[str]:
        return self.data["post_hoc"]

    @property
    def reason(self) -> str | None:
        return self.data["reason"]

    @property
    def frozen_at(self) -> str:
        return self.data["frozen_at"]


@dataclass
class FreezeLog:
    version: int
    entries: list[FreezeEntry] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)
    legacy_documents: dict[str, str] = field(default_factory=dict)   # a version 1 freeze's hashes

    @property
    def documents(self) -> dict[str, str]:
        return self.entries[-1].documents if self.entries else dict(self.legacy_documents)


def _shape_problem(entry: Any) -> str | None:
    if not isinstance(entry, dict) or set(entry) != set(_ENTRY_KEYS):
        return f"an entry holds exactly {', '.join(_ENTRY_KEYS)}"
    if not isinstance(entry["documents"], dict) or not all(isinstance(v, str) for v in entry["documents"].values()):
        return "documents is {name: sha256}"
    rules = entry["rules"]
    if not isinstance(rules, dict) or not isinstance(rules.get("budgets"), dict) or not isinstance(
            rules.get("triggers"), dict):
        return "rules is {budgets: {...}, triggers: {...}}"
    if not isinstance(rules.get(REGRESSION_INFO, {}), (dict, type(None))):
        return "rules.regression is the regression block's snapshot or null"
    if entry["results"] != NONE_YET and not isinstance(entry["results"], dict):
        return f"results is {NONE_YET!r} or {{file: {{sha256, finished_at}}}}"
    if not isinstance(entry["amended"], dict) or not isinstance(entry["post_hoc"], list):
        return "amended is {decision: [what moved]} and post_hoc a list of decisions"
    if entry["reason"] is not None and not isinstance(entry["reason"], str):
        return "reason is text or null"
    if entry["reason"] is not None and (hidden := hidden_character(entry["reason"])):
        return (f"reason holds the invisible, private-use or control character {describe(hidden)}: the readout "
                "shows the reason, and a reader would not see it")
    return None


def read_freeze_log(project: Project) -> FreezeLog | None:
    """The freeze log as stored (None when there is none); a malformed file is an input error."""
    path = project.freeze_path
    if not os.path.lexists(path):
        return None
    shown = display_path(path)
    with reading(path):
        text = utf8_text(path, shown, "design freeze log")
        try:
            record = strict_json(text)
        except json.JSONDecodeError as error:
            raise InputError(f"not valid JSON: {error.msg}", path=shown, line=error.lineno) from None
        except ValueError as error:
            raise InputError(f"not valid JSON: {error}", path=shown) from None
    if not isinstance(record, dict):
        raise InputError("expected {\"version\": 2, \"freezes\": [...], \"texts\": {...}}", path=shown)
    if record.get("version") in (None, 1) and "freezes" not in record:
        documents = record.get("documents")
        if not isinstance(documents, dict) or not all(isinstance(value, str) for value in documents.values()):
            raise InputError("expected {\"version\": 1, \"documents\": {name: sha256}}", path=shown, field="documents")
        return FreezeLog(version=1, legacy_documents=documents)
    entries, texts = record.get("freezes"), record.get("texts")
    if record.get("version") != FREEZE_VERSION or not isinstance(entries, list) or not entries \
            or not isinstance(texts, dict) or not all(isinstance(value, str) for value in texts.values()):
        raise InputError(f"expected {{\"version\": {FREEZE_VERSION}, \"freezes\": [entry, ...], \"texts\": "
                         "{name: text}}", path=shown, field="freezes")
    for number, entry in enumerate(entries, start=1):
        if problem := _shape_problem(entry):
            raise InputError(f"freeze {number}: {problem}", path=shown, field=f"freezes[{number - 1}]")
    if record.get("documents") != entries[-1]["documents"]:
        raise InputError(f"documents is not the last freeze's ({len(entries)})", path=shown, field="documents")
    return FreezeLog(FREEZE_VERSION, [FreezeEntry(number, entry) for number, entry in enumerate(entries, start=1)],
                     texts)


def freeze_record(entries: list[dict[str, Any]], texts: dict[str, str]) -> dict[str, Any]:
    """The file: the documents in force (the last entry's, for a reader), every entry, the texts."""
    return {"version": FREEZE_VERSION, "documents": entries[-1]["documents"], "freezes": entries, "texts": texts}


def current_hashes(project: Project) -> dict[str, str]:
    return {name: sha256_file(path) for name, path in design_files(project.design_dir).items()}


def current_texts(project: Project) -> dict[str, str]:
    texts = {}
    for name, path in design_files(project.design_dir).items():
        with reading(path):
            texts[name] = utf8_text(path, display_path(path), "design document")
    return texts


def rules_snapshot(rules: DesignRules) -> dict[str, Any]:
    """What a freeze keeps of the budgets, the triggers and the regression block (null when the
    design has none): enough to say later what moved. A freeze made before the regression block
    was kept holds no `regression` key at all (`LEGACY`)."""
    return {"budgets": {name: budget.value for name, budget in sorted(rules.budgets.items())},
            REGRESSION_INFO: rules.regression.snapshot() if rules.regression is not None else None,
            "triggers": {trigger.decision: {"when": trigger.predicate.source, "values": dict(trigger.values),
                                            "file": trigger.file, "fires": trigger.fires,
                                            "otherwise": trigger.otherwise, "document": trigger.document,
                                            # only when stated: a freeze made before effects existed still matches
                                            **({"effect": dict(trigger.effect)} if trigger.effect else {})}
                         for trigger in rules.triggers}}


def _budgets_read(trigger: dict[str, Any]) -> set[str]:
    read = {name for path in trigger.get("values", {}).values() if (name := budget_read_by(path)) is not None}
    return read | ({name} if (name := effect_budget(trigger.get("effect"))) is not None else set())


def amended_decisions(old: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, list[str]]:
    """Per decision, what moved between two rules snapshots (`old` None: the first freeze)."""
    old = old or {"budgets": {}, "triggers": {}}
    moved: dict[str, list[str]] = {}
    for decision in sorted(set(old["triggers"]) | set(new["triggers"])):
        before, after = old["triggers"].get(decision), new["triggers"].get(decision)
        if before is None:
            moved[decision] = [ADDED]
            continue
        if after is None:
            moved[decision] = [REMOVED]
            continue
        parts = []
        if (before["when"], before["values"], before["file"], before.get("effect")) != (
                after["when"], after["values"], after["file"], after.get("effect")):
            parts.append("trigger")
        if (before["fires"], before["otherwise"]) != (after["fires"], after["otherwise"]):
            parts.append("outcome")
        if any(old["budgets"].get(name) != new["budgets"].get(name)
               for name in _budgets_read(before) | _budgets_read(after)):
            parts.append("budget")
        if parts:
            moved[decision] = parts
    return moved


def regression_moved(previous: dict[str, Any] | None, rules: dict[str, Any], documents: dict[str, str]) -> list[str]:
    """What a freeze holding `rules` and `documents` moved of the regression block since the entry
    `previous` (its data; None: the first freeze). An entry made before the block was kept in the
    snapshot (no `regression` key) is read through the hash of the document that holds the block
    now: a change of that document may have moved it."""
    new = rules.get(REGRESSION_INFO)
    old = previous["rules"].get(REGRESSION_INFO, LEGACY) if previous is not None else None
    if old is LEGACY:
        if new is None:
            return []
        name = new.get("document")
        return [ADDED] if previous["documents"].get(name) != documents.get(name) else []
    if old == new:
        return []
    if old is None:
        return [ADDED]
    if new is None:
        return [REMOVED]
    return sorted(key for key in set(old) | set(new) if old.get(key) != new.get(key))


def amendments(previous: dict[str, Any] | None, rules: dict[str, Any], documents: dict[str, str]
               ) -> dict[str, list[str]]:
    """Per decision, and for the regression block (`regression`, never a decision's id), what an
    entry holding `rules` and `documents` moved since the entry `previous` (its data, or None).
    An entry made before the regression block was kept says nothing of it."""
    moved = amended_decisions(previous["rules"] if previous is not None else None, rules)
    if REGRESSION_INFO in rules and (parts := regression_moved(previous, rules, documents)):
        moved[REGRESSION_INFO] = parts
    return moved


def post_hoc_decisions(results_existed: bool, amended: dict[str, list[str]]) -> list[str]:
    """The decisions an entry makes post hoc: every rule it sets or moves once results exist."""
    return sorted(decision for decision, parts in amended.items() if results_existed and parts != [REMOVED])


def existing_results(project: Project) -> dict[str, dict[str, Any]] | str:
    """Every results file in outputs/ (results*.json) with its sha256 and `finished_at`, or
    `none yet`: what a freeze made now has seen, or could have."""
    found: dict[str, dict[str, Any]] = {}
    outputs = project.outputs_dir
    for path in sorted(outputs.glob("results*.json")) if outputs.is_dir() else []:
        if not path.is_file():
            continue
        finished_at = _manifest_of(path).get("finished_at")
        found[path.name] = {"sha256": sha256_file(path),
                            "finished_at": finished_at if isinstance(finished_at, str) else None}
    return found or NONE_YET


def _manifest_of(path: Path) -> dict[str, Any]:
    """A results file's manifest, or {} when it cannot be read as one."""
    try:
        return read_results(path).model.manifest
    except (InputError, OSError):
        return {}


def _diff(name: str, old: str | None, new: str | None) -> str:
    import difflib   # only when a close match or a diff is shown

    lines = difflib.unified_diff((old or "").splitlines(keepends=True), (new or "").splitlines(keepends=True),
                                 fromfile=f"a/design/{name}" if old is not None else "/dev/null",
                                 tofile=f"b/design/{name}" if new is not None else "/dev/null", n=1)
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def document_changes(old_hashes: dict[str, str], old_texts: dict[str, str], new_hashes: dict[str, str],
                     new_texts: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Per document whose sha256 moved: from, to and the diff (none when the old text was not kept)."""
    changes = {}
    for name in sorted(set(old_hashes) | set(new_hashes)):
        if old_hashes.get(name) == new_hashes.get(name):
            continue
        if name in old_hashes and name not in old_texts:
            diff = "(no diff: the frozen text was not kept)"
        else:
            diff = _diff(name, old_texts.get(name), new_texts.get(name))
        changes[name] = {"from": old_hashes.get(name), "to": new_hashes.get(name), "diff": diff}
    return changes


@dataclass
class FreezeOutcome:
    previous: dict[str, str]
    current: dict[str, str]
    entry: FreezeEntry | None = None       # None: unchanged


def freeze_project(project: Project, *, reason: str | None = None, post_hoc: Sequence[str] = (),
                   now: datetime | None = None) -> FreezeOutcome:
    """Append a freeze entry for the design as it is now (nothing when it is unchanged).

    Once results exist, a change is an amendment: it needs a `reason`, and every decision whose
    rule it sets or moves must be named in `post_hoc`, or nothing is written. The log is read and
    written under the project's records lock: a concurrent freeze chains to the entry this one
    wrote (or finds the design already frozen), and no entry either reports is lost.
    """
    with records_lock(project.freeze_path.parent):
        return _append_freeze(project, reason, post_hoc, now)


def _append_freeze(project: Project, reason: str | None, post_hoc: Sequence[str], now: datetime | None
                   ) -> FreezeOutcome:
    # A killed freeze's temporary sits in claims/, where git would list it: gone even when nothing changed.
    remove_stale_temporaries([project.freeze_path.parent])
    texts = current_texts(project)
    if not texts:
        raise InputError("no design documents to freeze", path=display_path(project.design_dir))
    hashes = current_hashes(project)
    log = read_freeze_log(project) or FreezeLog(FREEZE_VERSION)
    previous = log.documents
    if log.version == FREEZE_VERSION and log.entries and previous == hashes:
        return FreezeOutcome(previous, hashes)
    rules, results, amended, need_ack = _plan(project, log)
    _check_amendment(project, results, reason, post_hoc, need_ack)
    entry = {"frozen_at": (now or datetime.now(timezone.utc)).replace(microsecond=0).isoformat().replace("+00:00", "Z"),
             "documents": hashes, "rules": rules, "results": results,
             "changes": document_changes(previous, log.texts, hashes, texts), "amended": amended,
             "reason": reason.strip() if reason else None, "post_hoc": need_ack,
             "previous_sha256": log.entries[-1].sha256 if log.entries else GENESIS}
    stored = [item.data for item in log.entries] + [entry]
    atomic_write_json(project.freeze_path, freeze_record(stored, texts))
    return FreezeOutcome(previous, hashes, FreezeEntry(len(stored), entry))


def _plan(project: Project, log: FreezeLog) -> tuple[dict[str, Any], Any, dict[str, list[str]], list[str]]:
    """What a freeze made now would record: the rules, the results it has seen, what moved, and
    which decisions that makes post hoc."""
    rules = rules_snapshot(read_design_rules(project.design_dir))
    results = existing_results(project)
    amended = amendments(log.entries[-1].data if log.entries else None, rules, current_hashes(project))
    return rules, results, amended, post_hoc_decisions(results != NONE_YET, amended)


def pending_post_hoc(project: Project) -> list[str]:
    """The decisions a freeze made now would make post hoc: what `--post-hoc` must name."""
    log = read_freeze_log(project) or FreezeLog(FREEZE_VERSION)
    if log.version == FREEZE_VERSION and log.entries and log.documents == current_hashes(project):
        return []
    return _plan(project, log)[3]


def _check_amendment(project: Project, results: Any, reason: str | None, post_hoc: Sequence[str],
                     need_ack: list[str]) -> None:
    shown = display_path(project.freeze_path)
    if reason is not None and (not reason.strip() or len(reason) > MAX_REASON_CHARS or "\n" in reason):
        raise InputError(f"--reason is one line of at most {MAX_REASON_CHARS} characters", path=shown,
                         field="reason")
    if reason is not None and (hidden := hidden_character(reason)):
        raise InputError(f"--reason holds the invisible, private-use or control character {describe(hidden)}: "
                         "remove it (the readout shows the reason, a reader would not see it)", path=shown,
                         field="reason")
    if results == NONE_YET:
        unknown = sorted(set(post_hoc))
        if unknown:
            raise InputError(f"no results exist yet, so no decision is post hoc: drop --post-hoc {unknown[0]}",
                             path=shown, field="post_hoc")
        return
    seen = ", ".join(f"outputs/{name}" for name in results)
    if not reason or not reason.strip():
        raise InputError(f"results exist ({seen}): a design change now is an amendment the readout shows next "
                         "to the verdict; say why with --reason", path=shown, field="reason")
    missing = [decision for decision in need_ack if decision not in post_hoc]
    if missing:
        raise InputError(f"this amendment sets or moves the rule of {', '.join(missing)} after the results "
                         f"existed ({seen}), so its verdict will be post hoc: acknowledge it with "
                         + " ".join(f"--post-hoc {decision}" for decision in missing) + ", or restore the rule",
                         path=shown, field="post_hoc")
    extra = sorted(set(post_hoc) - set(need_ack))
    if extra:
        raise InputError(f"--post-hoc {extra[0]}: this freeze does not move that decision's rule", path=shown,
                         field="post_hoc")
