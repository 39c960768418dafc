"""`readout check` and `readout freeze`: prove every ledger claim against design documents and results.

A claim **traces** when it has at least one source and every source holds:

* design source: the document resolves inside design/ and the quote appears in it after
  whitespace normalisation (runs of spaces, tabs and newlines count as one space); the line and
  nearest Markdown heading of the first occurrence are reported;
* measured source: the results file is in outputs/, every declared path resolves (see
  `generator.paths`) to a value that is not null and not inside a row with `"measured": false`
  (except that row's `search`, `measured` and `not_measured_reason`), and the predicate, if any,
  evaluates to true (see `generator.predicates`);
* an evaluative or causal claim that cites a measured source states its comparison as a predicate;
* every placeholder fills with its format spec;
* every number written in the text is accounted for (the number rule below).

The number rule: after removing placeholders and URLs, a *number* is a
run of digits with optional inner `.` or `,` groups (`20`, `0.81`, `2030`, `11.1`, `10,000`) that
touches no letter, digit, `_`, `@` or `.` before it and no letter, digit, `_`, `@` or `.x` after
it. Digits inside a label are not numbers: `nDCG@5`, `Recall@50`, `BM25`, `p95`, `v6.0.0`,
`MiniLM-L6-v2`, `results-300.json`, and identifiers whose digits follow a capital letter and a
hyphen (`T-03`, `D-010`, `IDX-L03-001`). Code spans are prose here: a number in backticks is still
a number. Spelled-out numbers (`four rows`) are not detected. A number
is accounted for when the same value occurs as a number in the quote of one of the claim's design
sources or in one of its predicates (a threshold the checker verifies); otherwise it was typed by
hand and the claim does not trace.

Scores (`U/T`): T counts every claim in the ledger, struck or not. The current score's U counts
active claims that do not trace; struck claims stay in T but not in U. The first-draft score is
the first entry of `claims/trace-history.jsonl`; in every history entry U counts active
untraceable claims plus struck claims (a struck claim was untraceable when it was written).
`readout check` appends an entry only when the ledger's sha256 is new, so re-checking an unchanged
ledger writes nothing. Exit codes: 0 every active claim traces and the design freeze holds;
1 untraceable claims or a broken freeze; 2 an unusable ledger, results file, freeze record or
document name. The checker writes nothing but the history file.
"""

from __future__ import annotations

import bisect
import difflib
import json
import re
import string
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from generator.errors import InputError
from generator.fileio import atomic_write_json, atomic_write_text, dumps_json, sha256_bytes, sha256_file
from generator.ledger import (KINDS, OUTPUTS, Claim, DesignSource, Ledger, MeasuredSource, declared_sections,
                              display_path, literal_text, load_ledger)
from generator.paths import resolve
from generator.predicates import PredicateEvaluationError

FREEZE_NAME = "design-freeze.json"
HISTORY_NAME = "trace-history.jsonl"
FREEZE_VERSION = 1
CLOSEST_MAX_CHARS = 160
CLOSEST_CANDIDATES = 40

NUMBER = re.compile(r"(?<![A-Za-z0-9_@.])(?<![A-Z]-)(?<![A-Z][0-9]-)(?<![A-Z][0-9][0-9]-)\d+(?:[.,]\d+)*(?![A-Za-z0-9_@]|\.[A-Za-z0-9])")
_NOT_PROSE = re.compile(r"<https?://[^>]*>|https?://[^\s)\]>]+")


# --- public data model -------------------------------------------------------------------------



UNFILLED_PLACEHOLDER = "[no value]"

@dataclass
class Evidence:
    kind: str                                # "design" | "measured"
    ok: bool = True                          # this source holds
    # design
    document: str | None = None              # as written in the ledger (relative to design/)
    line: int | None = None                  # document line where the quote starts
    heading: str | None = None               # nearest Markdown heading above it
    quote: str | None = None                 # the quote, whitespace-normalised
    # measured
    file: str | None = None                  # as written (relative to outputs/)
    path: str | None = None
    name: str | None = None                  # the value name in the claim
    value: Any = None                        # raw JSON value
    formatted: str | None = None             # as placed in the text (None when not placed)
    predicate: str | None = None             # the source's predicate (on each of its values)
    predicate_holds: bool | None = None


@dataclass
class ClaimResult:
    claim: Claim
    traceable: bool
    reasons: list[str]
    rendered_text: str
    evidence: list[Evidence] = field(default_factory=list)

    @property
    def counts_untraceable(self) -> bool:
        """Counts in the current score's U: active and not traceable."""
        return not self.traceable and not self.claim.struck


@dataclass
class CheckReport:
    results: list[ClaimResult]
    untraceable: int
    total: int
    struck: int
    by_output: dict[str, tuple[int, int]]
    by_kind: dict[str, tuple[int, int]]
    first_draft: tuple[int, int] | None
    freeze_ok: bool
    freeze_problems: list[str]
    ledger_sha256: str
    design_freeze_sha256: str | None
    inputs_sha256: dict[str, str]
    ledger_path: Path
    history_recorded: bool = False
    freeze_documents: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.untraceable == 0 and self.freeze_ok

    def result(self, claim_id: str) -> ClaimResult:
        for result in self.results:
            if result.claim.id == claim_id:
                return result
        raise KeyError(claim_id)


# --- design documents --------------------------------------------------------------------------


class DesignDocument:
    """A design document indexed for whitespace-normalised search."""

    def __init__(self, name: str, path: Path):
        self.name = name
        self.path = path
        text = path.read_bytes().decode("utf-8", errors="replace")
        self.words: list[str] = []
        self.word_lines: list[int] = []
        self.headings: list[str | None] = []      # per line (1-based index - 1)
        heading = None
        in_fence = False
        for number, line in enumerate(text.splitlines(), start=1):
            stripped = line.strip()
            if stripped.startswith(("```", "~~~")):
                in_fence = not in_fence
            elif not in_fence:
                match = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", stripped)
                if match:
                    heading = match.group(1)
            self.headings.append(heading)
            for word in line.split():
                self.words.append(word)
                self.word_lines.append(number)
        self.offsets: list[int] = []
        position = 0
        for word in self.words:
            self.offsets.append(position)
            position += len(word) + 1
        self.normalized = " ".join(self.words)
        self._closest_cache: dict[str, tuple[int, str]] = {}

    def find(self, quote: str) -> tuple[int, str | None] | None:
        needle = " ".join(quote.split())
        index = self.normalized.find(needle)
        if index < 0:
            return None
        word = bisect.bisect_right(self.offsets, index) - 1
        line = self.word_lines[word]
        return line, self.headings[line - 1]

    def closest(self, quote: str) -> tuple[int, str] | None:
        """The passage of the quote's length most like it (difflib ratio), and its first line.

        Windows are first ranked by how many of the quote's words they hold (one linear pass),
        and only the best few are compared character by character.
        """
        if quote in self._closest_cache:
            return self._closest_cache[quote]
        needle_words = quote.split()
        if not self.words or not needle_words:
            return None
        size = min(len(needle_words), len(self.words))
        wanted = {word.lower() for word in needle_words}
        hits = [1 if word.lower() in wanted else 0 for word in self.words]
        running = sum(hits[:size])
        overlap = [running]
        for start in range(1, len(self.words) - size + 1):
            running += hits[start + size - 1] - hits[start - 1]
            overlap.append(running)
        candidates = sorted(range(len(overlap)), key=lambda start: (-overlap[start], start))[:CLOSEST_CANDIDATES]
        needle = " ".join(needle_words)
        matcher = difflib.SequenceMatcher(autojunk=False)
        matcher.set_seq2(needle)
        best = (-1.0, 0)
        for start in sorted(candidates):
            matcher.set_seq1(" ".join(self.words[start:start + size]))
            if matcher.real_quick_ratio() <= best[0] or matcher.quick_ratio() <= best[0]:
                continue
            ratio = matcher.ratio()
            if ratio > best[0]:
                best = (ratio, start)
        start = best[1]
        passage = " ".join(self.words[start:start + size])
        if len(passage) > CLOSEST_MAX_CHARS:
            passage = passage[:CLOSEST_MAX_CHARS - 3] + "..."
        self._closest_cache[quote] = (self.word_lines[start], passage)
        return self._closest_cache[quote]


def _inside(path: Path, directory: Path) -> bool:
    try:
        path.resolve().relative_to(directory.resolve())
        return True
    except ValueError:
        return False


def design_files(design_dir: Path) -> dict[str, Path]:
    """Every non-hidden file under design/ (recursive), by name relative to design/; refuses links out."""
    found: dict[str, Path] = {}
    if not design_dir.is_dir():
        return found
    for path in sorted(design_dir.rglob("*")):
        relative = path.relative_to(design_dir)
        if any(part.startswith(".") for part in relative.parts):
            continue
        if path.is_dir() and not path.is_symlink():
            continue
        if not _inside(path, design_dir):
            raise InputError("resolves outside design/ (a link out); design documents must live inside design/",
                             path=display_path(path))
        if path.is_file():
            found[relative.as_posix()] = path
    return found


# --- numbers -----------------------------------------------------------------------------------


def number_tokens(text: str) -> list[str]:
    """Numbers written in prose, by the number rule in this module's docstring."""
    return NUMBER.findall(_NOT_PROSE.sub(" ", text))


def _number_value(token: str) -> float:
    return float(token.replace(",", ""))


# --- results files -----------------------------------------------------------------------------


class _Results:
    def __init__(self, outputs_dir: Path):
        self.outputs_dir = outputs_dir
        self.data: dict[str, Any] = {}
        self.sha256: dict[str, str] = {}

    def get(self, name: str, claim: Claim, line: int, ledger_display: str) -> Any:
        if name in self.data:
            return self.data[name]
        path = self.outputs_dir / name
        shown = display_path(path)
        if not _inside(path, self.outputs_dir):
            raise InputError(f"claim {claim.id}: results file {name!r} resolves outside outputs/",
                             path=ledger_display, line=line, field="file")
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise InputError(f"results file not found (cited by claim {claim.id} at {ledger_display}:{line}); "
                             "run `readout evaluate` to write it", path=shown) from None
        except OSError as error:
            raise InputError(f"cannot read results file: {error.strerror}", path=shown) from None
        try:
            data = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as error:
            raise InputError(f"results file is not UTF-8 (byte {error.start})", path=shown) from None
        except json.JSONDecodeError as error:
            raise InputError(f"not valid JSON: {error.msg} (column {error.colno})", path=shown,
                             line=error.lineno) from None
        self.data[name] = data
        self.sha256[name] = sha256_bytes(raw)
        return data


# --- checking one claim ------------------------------------------------------------------------


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_claim(claim: Claim, documents: dict[str, DesignDocument | None], results: _Results,
                design_dir: Path, ledger_display: str) -> ClaimResult:
    reasons: list[str] = []
    evidence: list[Evidence] = []
    if not claim.sources:
        reasons.append("no source: attach a design quote or a measured path, or strike it with a reason")
    accounted: set[float] = set()
    values: dict[str, Any] = {}
    value_evidence: dict[str, Evidence] = {}
    has_predicate = False
    for source in claim.sources:
        if isinstance(source, DesignSource):
            for token in number_tokens(source.quote):
                accounted.add(_number_value(token))
            document = documents.get(source.document, False)
            if document is False:
                path = design_dir / source.document
                if path.exists() and not _inside(path, design_dir):
                    raise InputError(f"claim {claim.id}: document {source.document!r} resolves outside design/",
                                     path=ledger_display, line=source.line, field="document")
                document = DesignDocument(source.document, path) if path.is_file() else None
                documents[source.document] = document
            quote = " ".join(source.quote.split())
            if document is None:
                shown = display_path(design_dir / source.document)
                available = ", ".join(sorted(name for name, doc in documents.items() if doc)) or "(none)"
                reasons.append(f"document {shown} not found; design documents: {available}")
                evidence.append(Evidence("design", ok=False, document=source.document, quote=quote))
                continue
            where = document.find(quote)
            if where is None:
                shown = display_path(design_dir / source.document)
                closest = document.closest(quote)
                hint = f'; closest (line {closest[0]}): "{closest[1]}"' if closest else "; the document is empty"
                reasons.append(f"quote not found in {shown}{hint}")
                evidence.append(Evidence("design", ok=False, document=source.document, quote=quote))
            else:
                evidence.append(Evidence("design", document=source.document, line=where[0], heading=where[1],
                                         quote=quote))
        else:
            assert isinstance(source, MeasuredSource)
            data = results.get(source.file, claim, source.line, ledger_display)
            source_ok = True
            for name, steps in source.steps.items():
                resolution = resolve(data, steps)
                item = Evidence("measured", ok=resolution.ok, file=source.file, path=source.values[name], name=name,
                                value=resolution.value, predicate=source.predicate)
                evidence.append(item)
                value_evidence[name] = item
                if resolution.ok:
                    values[name] = resolution.value
                else:
                    source_ok = False
                    if resolution.unmeasured:
                        reasons.append(f"{name} = {source.values[name]}: {resolution.reason}")
                    else:
                        reasons.append(f"path {source.values[name]} not found in "
                                       f"{display_path(results.outputs_dir / source.file)}: {resolution.reason}")
            if source.compiled is not None:
                has_predicate = True
                for token in number_tokens(source.predicate):
                    accounted.add(_number_value(token))
                if source_ok and source.compiled.names <= set(values):
                    holds: bool | None
                    try:
                        outcome = source.compiled.evaluate(values)
                    except PredicateEvaluationError as error:
                        reasons.append(f"predicate {source.predicate!r} cannot be evaluated: {error}")
                        holds = None
                    else:
                        if not isinstance(outcome, bool):
                            reasons.append(f"predicate {source.predicate!r} must give true or false, "
                                           f"gave {_short(outcome)}")
                            holds = None
                        else:
                            holds = outcome
                            if not outcome:
                                found = ", ".join(f"{name}={_short(values[name])}"
                                                  for name in sorted(source.compiled.names))
                                reasons.append(f"predicate false: expected {source.predicate}, found {found}")
                    for name in source.steps:
                        value_evidence[name].predicate_holds = holds
    if claim.kind in ("evaluative", "causal") and claim.measured_sources and not has_predicate:
        reasons.append(f"{claim.kind} claim cites measured values without a predicate: state the comparison "
                       "(for example `hybrid > dense`) so the checker can hold it")
    # placeholders
    formatted: dict[str, str] = {}
    for placeholder in claim.placeholders:
        if placeholder.name not in values:
            continue    # its path already failed
        value = values[placeholder.name]
        if isinstance(value, (dict, list)):
            reasons.append(f"placeholder {{{placeholder.name}}}: {value_evidence[placeholder.name].path} is "
                           f"{'an object' if isinstance(value, dict) else 'a list'}; only numbers and text "
                           "can be placed in a sentence")
            continue
        try:
            formatted[placeholder.name] = format(value, placeholder.spec)
        except (ValueError, TypeError) as error:
            reasons.append(f"placeholder {{{placeholder.name}:{placeholder.spec}}} cannot format "
                           f"{_short(value)}: {error}")
            continue
        value_evidence[placeholder.name].formatted = formatted[placeholder.name]
    # A placeholder that cannot be filled is shown as a visible gap, never as a made-up value or
    # as raw `{name:.3f}` markup (struck and draft claims are still rendered for the reader).
    parts = []
    for literal, name, _spec, _conversion in string.Formatter().parse(claim.text):
        parts.append(literal)
        if name is not None:
            parts.append(formatted.get(name, UNFILLED_PLACEHOLDER))
    rendered = "".join(parts)
    # hand-typed numbers
    for token in number_tokens(literal_text(claim.text)):
        if _number_value(token) in accounted:
            continue
        hint = ""
        for name, value in values.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                decimals = len(token.split(".")[1]) if "." in token else 0
                if f"{value:.{decimals}f}" == token.replace(",", ""):
                    hint = f"; it matches {name} = {_short(value)}: write {{{name}:.{decimals}f}}"
                    break
        reasons.append(f"number {token} is typed by hand: no placeholder or quoted design span accounts for "
                       f"it{hint}")
    return ClaimResult(claim=claim, traceable=not reasons, reasons=reasons, rendered_text=rendered,
                       evidence=evidence)


# --- freeze ------------------------------------------------------------------------------------


def freeze_path(project) -> Path:
    return project.claims_dir / FREEZE_NAME


def history_path(project) -> Path:
    return project.claims_dir / HISTORY_NAME


def read_freeze(project) -> dict[str, str] | None:
    path = freeze_path(project)
    if not path.exists():
        return None
    shown = display_path(path)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise InputError(f"not valid JSON: {error.msg}", path=shown, line=error.lineno) from None
    documents = record.get("documents") if isinstance(record, dict) else None
    if not isinstance(documents, dict) or not all(isinstance(value, str) for value in documents.values()):
        raise InputError("expected {\"version\": 1, \"documents\": {name: sha256}}", path=shown, field="documents")
    return documents


def freeze_problems(project) -> tuple[list[str], dict[str, str]]:
    """(problems, current hashes); a problem names the document first."""
    current = {name: sha256_file(path) for name, path in design_files(project.design_dir).items()}
    frozen = read_freeze(project)
    design_shown = display_path(project.design_dir)
    renew = "renew the freeze with `readout freeze` if the change is deliberate"
    if frozen is None:
        return [f"{design_shown}/: design documents are not frozen ({display_path(freeze_path(project))} is "
                "missing); run `readout freeze` once the design is committed"], current
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


def freeze_project(project) -> tuple[bool, dict[str, str]]:
    """Write claims/design-freeze.json; returns (changed, hashes). Unchanged hashes rewrite nothing."""
    current = {name: sha256_file(path) for name, path in design_files(project.design_dir).items()}
    if not current:
        raise InputError("no design documents to freeze", path=display_path(project.design_dir))
    existing = read_freeze(project)
    if existing == current:
        return False, current
    atomic_write_json(freeze_path(project), {"version": FREEZE_VERSION, "documents": current})
    return True, current


def freeze_command(args) -> int:
    from generator.project import load_project

    project = load_project(args.project)
    previous = read_freeze(project) or {}
    changed, current = freeze_project(project)
    shown = display_path(freeze_path(project))
    for name in sorted(set(previous) | set(current)):
        doc = display_path(project.design_dir / name)
        if name not in current:
            print(f"{doc}: removed from the freeze")
        elif name not in previous:
            print(f"{doc}: frozen at sha256 {current[name][:12]}")
        elif previous[name] != current[name]:
            print(f"{doc}: re-frozen at sha256 {current[name][:12]} (was {previous[name][:12]})")
    if changed:
        print(f"Froze {len(current)} design document{'s' if len(current) != 1 else ''} in {shown}.")
    else:
        print(f"Design freeze unchanged: {len(current)} documents match {shown}.")
    return 0


# --- history -----------------------------------------------------------------------------------


def read_history(project) -> list[dict[str, Any]]:
    path = history_path(project)
    if not path.exists():
        return []
    entries = []
    shown = display_path(path)
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


def _append_history(project, entry: dict[str, Any]) -> None:
    path = history_path(project)
    existing = path.read_bytes() if path.exists() else b""
    if existing and not existing.endswith(b"\n"):
        existing += b"\n"
    line = json.dumps(entry, sort_keys=True, ensure_ascii=False) + "\n"
    atomic_write_text(path, existing.decode("utf-8") + line)


# --- whole project -----------------------------------------------------------------------------


def _score(results: Iterable[ClaimResult], key) -> dict[str, tuple[int, int]]:
    scores: dict[str, list[int]] = {}
    for result in results:
        bucket = scores.setdefault(key(result.claim), [0, 0])
        bucket[0] += result.counts_untraceable
        bucket[1] += 1
    return {name: (u, t) for name, (u, t) in scores.items()}


def check_ledger(ledger: Ledger, project) -> tuple[list[ClaimResult], dict[str, str]]:
    """Check every claim; returns the results (ledger order) and the sha256 of each results file read."""
    ledger_display = display_path(ledger.path)
    config = getattr(project, "config", {}) or {}
    for claim in ledger.claims:
        sections = declared_sections(config, claim.output)
        if sections and claim.section not in sections:
            raise InputError(f"claim {claim.id}: section {claim.section!r} is not declared for output "
                             f"{claim.output} in readout.yaml; choose one of {', '.join(sections)}",
                             path=ledger_display, line=claim.field_lines.get("section", claim.line), field="section")
    documents: dict[str, DesignDocument | None] = {}
    for name, path in design_files(project.design_dir).items():
        documents[name] = DesignDocument(name, path)
    results = _Results(project.outputs_dir)
    checked = [check_claim(claim, documents, results, project.design_dir, ledger_display) for claim in ledger.claims]
    return checked, dict(sorted(results.sha256.items()))


def check_project(project, *, record_history: bool = False, now: datetime | None = None) -> CheckReport:
    """Check the project's ledger and design freeze. Writes nothing unless `record_history` is set,
    and then only a new line in the history when the ledger's sha256 has never been checked."""
    ledger = load_ledger(project.ledger_path)
    checked, inputs = check_ledger(ledger, project)
    problems, current = freeze_problems(project)
    untraceable = sum(result.counts_untraceable for result in checked)
    struck = sum(result.claim.struck for result in checked)
    by_output = {name: score for name, score in sorted(_score(checked, lambda c: c.output).items(),
                                                        key=lambda item: OUTPUTS.index(item[0]))}
    by_kind = {name: score for name, score in sorted(_score(checked, lambda c: c.kind).items(),
                                                      key=lambda item: KINDS.index(item[0]))}
    history = read_history(project)
    recorded = False
    if record_history and not any(entry["ledger_sha256"] == ledger.sha256 for entry in history):
        moment = (now or datetime.now(timezone.utc)).replace(microsecond=0)
        entry = {"checked_at": moment.isoformat().replace("+00:00", "Z"), "ledger_sha256": ledger.sha256,
                 "untraceable": untraceable, "struck": struck, "total": len(checked)}
        _append_history(project, entry)
        history.append(entry)
        recorded = True
    freeze_file = freeze_path(project)
    return CheckReport(
        results=checked, untraceable=untraceable, total=len(checked), struck=struck, by_output=by_output,
        by_kind=by_kind, first_draft=draft_score(history[0]) if history else None, freeze_ok=not problems,
        freeze_problems=problems, ledger_sha256=ledger.sha256,
        design_freeze_sha256=sha256_file(freeze_file) if freeze_file.exists() else None,
        inputs_sha256=inputs, ledger_path=ledger.path, history_recorded=recorded, freeze_documents=current)


# --- reporting ---------------------------------------------------------------------------------


def _summary(report: CheckReport) -> list[str]:
    lines = [f"Trace score: untraceable claims / total claims = {report.untraceable}/{report.total}"
             + (f" ({report.struck} struck)" if report.struck else "")
             + (f"; first draft {report.first_draft[0]}/{report.first_draft[1]}." if report.first_draft
                else "; no first-draft score recorded yet.")]
    lines.append("By output: " + ", ".join(f"{name} {u}/{t}" for name, (u, t) in report.by_output.items())
                 + "; by kind: " + ", ".join(f"{name} {u}/{t}" for name, (u, t) in report.by_kind.items()) + ".")
    failures = []
    if report.untraceable:
        failures.append(f"{report.untraceable} of {report.total} claims")
    if not report.freeze_ok:
        failures.append(f"design freeze broken ({len(report.freeze_problems)} "
                        f"problem{'s' if len(report.freeze_problems) != 1 else ''})")
    if failures:
        lines.append("Check failed: " + "; ".join(failures))
    elif report.struck:
        lines.append(f"All {report.total - report.struck} active claims trace ({report.struck} of "
                     f"{report.total} struck).")
    else:
        lines.append(f"All {report.total} claims trace.")
    return lines


def claim_location(ledger_display: str, claim: Claim) -> str:
    """`claims/ledger.yaml:14: claim dense-ndcg5 (evaluative)`: how every report names a claim."""
    return f"{ledger_display}:{claim.line}: claim {claim.id} ({claim.kind})"


def failing_results(report: CheckReport) -> list[ClaimResult]:
    """The active claims that do not trace, in ledger order (what every format reports)."""
    return [result for result in report.results if result.counts_untraceable]


def format_text(report: CheckReport) -> str:
    ledger_display = display_path(report.ledger_path)
    lines = []
    for result in failing_results(report):
        for reason in result.reasons:
            lines.append(f"{claim_location(ledger_display, result.claim)}: {reason}")
    lines.extend(report.freeze_problems)
    lines.extend(_summary(report))
    return "\n".join(lines) + "\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def format_github(report: CheckReport) -> str:
    ledger_display = display_path(report.ledger_path)
    lines = []
    for result in failing_results(report):
        title = _escape_property(f"claim {result.claim.id} ({result.claim.kind})")
        for reason in result.reasons:
            lines.append(f"::error file={_escape_property(ledger_display)},line={result.claim.line},"
                         f"title={title}::{_escape_data(reason)}")
    for problem in report.freeze_problems:
        name, _, message = problem.partition(": ")
        lines.append(f"::error file={_escape_property(name.rstrip('/'))},title=design freeze::{_escape_data(message)}")
    summary = _summary(report)
    lines.append(f"::notice title=trace score::{_escape_data(summary[0] + ' ' + summary[1])}")
    lines.extend(summary)
    return "\n".join(lines) + "\n"


def report_dict(report: CheckReport) -> dict[str, Any]:
    claims = []
    for result in report.results:
        claim = result.claim
        item: dict[str, Any] = {
            "id": claim.id, "line": claim.line, "output": claim.output, "section": claim.section,
            "kind": claim.kind, "status": claim.status, "traceable": result.traceable,
            "reasons": result.reasons, "text": claim.text, "rendered_text": result.rendered_text,
            "evidence": [_evidence_dict(item) for item in result.evidence]}
        if claim.struck:
            item["strike_reason"] = claim.strike_reason
            item["strike_display"] = claim.strike_display
        claims.append(item)
    return {
        "ok": report.ok, "ledger": display_path(report.ledger_path), "ledger_sha256": report.ledger_sha256,
        "untraceable": report.untraceable, "total": report.total, "struck": report.struck,
        "first_draft": ({"untraceable": report.first_draft[0], "total": report.first_draft[1]}
                        if report.first_draft else None),
        "by_output": {name: {"untraceable": u, "total": t} for name, (u, t) in report.by_output.items()},
        "by_kind": {name: {"untraceable": u, "total": t} for name, (u, t) in report.by_kind.items()},
        "freeze": {"ok": report.freeze_ok, "problems": report.freeze_problems,
                   "sha256": report.design_freeze_sha256},
        "inputs_sha256": report.inputs_sha256, "history_recorded": report.history_recorded, "claims": claims}


def _evidence_dict(evidence: Evidence) -> dict[str, Any]:
    if evidence.kind == "design":
        return {"kind": "design", "ok": evidence.ok, "document": evidence.document, "line": evidence.line,
                "heading": evidence.heading, "quote": evidence.quote}
    return {"kind": "measured", "ok": evidence.ok, "file": evidence.file, "path": evidence.path,
            "name": evidence.name, "value": evidence.value, "formatted": evidence.formatted,
            "predicate": evidence.predicate, "predicate_holds": evidence.predicate_holds}


def check_command(args) -> int:
    from generator.project import load_project

    project = load_project(args.project)
    report = check_project(project, record_history=not getattr(args, "no_record", False))
    style = getattr(args, "format", "text")
    if style == "json":
        sys.stdout.write(dumps_json(report_dict(report)))
    elif style == "github":
        sys.stdout.write(format_github(report))
    else:
        sys.stdout.write(format_text(report))
    return 0 if report.ok else 1
