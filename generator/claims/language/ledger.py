"""The claim ledger: every sentence the reports say, with the evidence that must support it.

File format (`claims/ledger.yaml`; JSON Schema in `claims/ledger.schema.json`)::

    version: 1
    languages: [de]                      # optional: languages besides English (generator.text.verdicts)
    claims:
      - id: hybrid-beats-dense-ndcg5     # unique; letters, digits, '-', '_', '.'; starts alphanumeric
        output: readout                  # teachback | aar | readout
        section: results                 # a section of that output (readout.yaml `outputs:`)
        kind: evaluative                 # factual | causal | evaluative | performance | recommendation
        text: "Hybrid reaches nDCG@5 {hybrid:.3f} against dense {dense:.3f}."
        status: active                   # active (default) | struck
        # strike_reason: "..."           # required when struck, refused otherwise
        # strike_display: withdrawn      # when struck: withdrawn (listed last with its reason, default) |
        #                                # strike (struck through in place, never in the verdict) | omit
        sources:
          - design:
              document: decisions.md     # a file inside design/; no '..', no absolute path
              quote: "RRF with constant 60"
          - measured:
              file: results.json         # a JSON file in outputs/ (default results.json)
              values:                    # name -> path into that file (grammar: generator/results/paths.py)
                hybrid: "table[search=hybrid].nDCG@5"
                dense: "table[search=dense].nDCG@5"
              predicate: "hybrid > dense"   # optional; grammar: generator/claims/language/predicates.py
          - decision:                    # a verdict computed by a decision record's trigger
              trigger: D5                # a fenced trigger block in design/ (generator/claims/record/triggers.py)
              state: does not fire       # fires | does not fire | cannot be decided
        asserts:                         # what the sentence asserts, computed by the checker
          - {higher: hybrid, than: dense, metric: nDCG@5}   # (generator/claims/language/assertions.py)

Rules the loader enforces (a violation makes the ledger unusable: exit 2, `file:line: field:
message`): YAML read with the safe composer only; every scalar is kept as the text written
(so `quote: 2030` is the string "2030", and `status: yes` is refused, not turned into true);
no unknown field anywhere; no duplicate key; `version` is 1; ids unique and at most MAX_ID_CHARS
characters (so are value names), value paths at most MAX_PATH_CHARS; `kind`, `output`,
`status`, `strike_display` from their fixed lists; each source has exactly one of `design`,
`measured` or `decision`; value names are plain identifiers, unique within a claim; every `{placeholder}` in
`text` is a plain declared value name with an optional format spec (`{name}` or `{name:.3f}`;
`{{` and `}}` are literal braces; no `{a.b}`, `{a[0]}` or `{a!r}`); every name in a predicate is
declared; a design document name stays inside design/.

Whether each claim *traces* is decided by `generator.claims.tracing.checker`, not here (its docstring
gives the rules and the scores). Beside the ledger in `claims/`:
`design-freeze.json` (`readout freeze`: sha256 of every file in design/),
`trace-history.jsonl` (append-only; one line per ledger version the first time `readout check`
sees its sha256; the first line is the first-draft score) and `ledger.first-draft.yaml` (the
ledger as first written, whose sha256 is that first line's).
A draft in Markdown becomes unsourced claims through `generator.claims.language.draft`.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Union

from generator.claims.frames.spec import COMMON as FRAME_COMMON, KINDS as FRAME_KINDS, NO_FILE, Frame, parse_frame
from generator.claims.language.formats import spec_problem
from generator.claims.language.predicates import CONSTANT_NAMES, FUNCTIONS, Predicate, PredicateSyntaxError, compile_predicate
from generator.text.characters import describe, hidden_character
from generator.text.verdicts import supported_languages
from generator.text.wording import label_problem
from generator.storage.safe_yaml import Node, parse_yaml
from generator.storage.errors import InputError
from generator.storage.bounded_reads import read_input
from generator.storage.fileio import sha256_bytes
from generator.storage.paths import display_path, reading
from generator.project.outputs import OUTPUT_NAMES
from generator.results import RESULTS_NAME, PathSyntaxError, Step, clip, excerpt, parse_path

LEDGER_VERSION = "1"
ENGLISH = "en"
OUTPUTS = OUTPUT_NAMES
KINDS = ("factual", "causal", "evaluative", "performance", "recommendation")
STATUSES = ("active", "struck")
STRIKE_DISPLAYS = ("withdrawn", "strike", "omit")

TOP_FIELDS = ("version", "languages", "claims")
CLAIM_FIELDS = ("id", "output", "section", "kind", "text", "frame", "language", "status", "strike_reason",
                "strike_display", "sources")
# Every key a frame may hold (generator.claims.frames.spec says which go with which kind).
FRAME_FIELDS = (*FRAME_KINDS, *sorted({key for _subject, required, optional in FRAME_KINDS.values()
                                       for key in (*required, *optional)}), *FRAME_COMMON)
REQUIRED_CLAIM_FIELDS = ("id", "output", "section", "kind")
# The ledger form before frames: what it asserted is now a frame the tool writes.
RETIRED_FIELDS = {"asserts": "a claim no longer asserts beside its own words: write what it asserts as a `frame:` "
                             "(the package writes the sentence from the computed result; docs/claims.md, "
                             "'Frames'); `readout upgrade-ledger` converts a ledger"}
SOURCE_KINDS = ("design", "measured", "decision")
DESIGN_FIELDS = ("document", "quote")
DECISION_FIELDS = ("trigger", "state")
# What a decision record's trigger computed (generator.claims.record.triggers).
DECISION_STATES = ("fires", "does not fire", "cannot be decided")
MEASURED_FIELDS = ("file", "values", "predicate")
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")
# Bounds: a ledger beyond them is refused with one line, never a crash.
MAX_CLAIMS = 20_000
MAX_TEXT = 2_000
MAX_VALUES = 32
# An id is repeated in every message about its claim, and a path in every finding about its value.
MAX_ID_CHARS = 80
MAX_PATH_CHARS = 500
# The longest message from the path, predicate and placeholder parsers a ledger error repeats.
MAX_REASON_CHARS = 200
STRIKE_REASON_MAX_WORDS = 12
_STRIKE_MARKUP = re.compile(r"~|</?(?:del|s|strike)\b", re.IGNORECASE)
SECTION_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")


# --- data model ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Placeholder:
    """One `{name:spec}` in a claim's text."""

    name: str
    spec: str


@dataclass(frozen=True)
class DesignSource:
    document: str          # relative to design/, as written
    quote: str
    line: int              # ledger line of the `design:` entry
    kind: str = "design"


@dataclass(frozen=True)
class MeasuredSource:
    file: str              # relative to outputs/, as written
    values: dict[str, str]           # name -> path text
    steps: dict[str, tuple[Step, ...]]
    predicate: str | None
    compiled: Predicate | None
    line: int
    value_lines: dict[str, int] = field(default_factory=dict)
    kind: str = "measured"


@dataclass(frozen=True)
class DecisionSource:
    """A verdict computed by a decision record's reversal trigger: the claim holds when `check`
    computes the same state and the sentence says the decision that state gives."""

    trigger: str           # the decision id, e.g. D5
    state: str             # one of DECISION_STATES
    line: int
    kind: str = "decision"


Source = Union[DesignSource, MeasuredSource, DecisionSource]


@dataclass(frozen=True)
class Claim:
    id: str
    line: int
    output: str
    section: str
    kind: str
    text: str
    status: str = "active"
    strike_reason: str | None = None
    strike_display: str | None = None
    sources: tuple[Source, ...] = ()
    placeholders: tuple[Placeholder, ...] = ()
    field_lines: dict[str, int] = field(default_factory=dict)
    # The sentence the package writes from a computed result (generator.claims.frames); the claim
    # then has no `text` of its own.
    frame: Frame | None = None
    # The language the claim is written in (English, or one the ledger declares): its frame's
    # sentence, and the lexicon its free prose is read with.
    language: str = "en"

    @property
    def framed(self) -> bool:
        return self.frame is not None

    @property
    def struck(self) -> bool:
        return self.status == "struck"

    @property
    def design_sources(self) -> list[DesignSource]:
        return [source for source in self.sources if isinstance(source, DesignSource)]

    @property
    def measured_sources(self) -> list[MeasuredSource]:
        return [source for source in self.sources if isinstance(source, MeasuredSource)]

    @property
    def decision_sources(self) -> list[DecisionSource]:
        return [source for source in self.sources if isinstance(source, DecisionSource)]


@dataclass(frozen=True)
class Ledger:
    path: Path
    sha256: str
    claims: tuple[Claim, ...]
    version: str = LEDGER_VERSION
    # The languages its claims are written in besides English: verdicts are recognised in each.
    languages: tuple[str, ...] = ()

    def by_id(self) -> dict[str, Claim]:
        return {claim.id: claim for claim in self.claims}


# --- validation ------------------------------------------------------------------------------


def _choices(values) -> str:
    return ", ".join(values)


def _mapping(node: Node, path: str, what: str, allowed: tuple[str, ...], line: int | None = None,
             field_name: str | None = None) -> dict[str, tuple[int, Node]]:
    if not isinstance(node.value, dict):
        raise InputError(f"{what} must be a mapping", path=path, line=line or node.line, field=field_name)
    for key, (key_line, _) in node.value.items():
        if key in RETIRED_FIELDS and what == "a claim":
            raise InputError(RETIRED_FIELDS[key], path=path, line=key_line, field=key)
        if key not in allowed:
            raise InputError(f"unknown field in {what}; allowed: {_choices(allowed)}", path=path,
                             line=key_line, field=clip(key))
    return node.value


def _text(entry: tuple[int, Node] | None, path: str, field_name: str, *, required: bool = True,
          claim_id: str | None = None) -> str | None:
    prefix = f"claim {claim_id}: " if claim_id else ""
    if entry is None:
        return None
    line, node = entry
    if node.value is None:
        if required:
            raise InputError(f"{prefix}missing value", path=path, line=line, field=field_name)
        return None
    if not isinstance(node.value, str):
        raise InputError(f"{prefix}must be text, not a {'list' if isinstance(node.value, list) else 'mapping'}",
                         path=path, line=line, field=field_name)
    if required and not node.value.strip():
        raise InputError(f"{prefix}empty value", path=path, line=line, field=field_name)
    # Whatever the checker reads, a reader sees: no text of the ledger holds a character nobody can
    # see (every default-ignorable, format, control or private-use character, generator.text.characters).
    hidden = hidden_character(node.value, allow="\n\t")
    if hidden:
        raise InputError(f"{prefix}{field_name} holds the invisible, private-use or control character "
                         f"{describe(hidden)}: remove it (a reader would not see it, the checker would)",
                         path=path, line=line, field=field_name)
    return node.value


@lru_cache(maxsize=8192)
def _parse_path_cached(text: str) -> tuple[Step, ...]:
    return parse_path(text)


def parse_placeholders(text: str) -> tuple[Placeholder, ...]:
    """The `{name:spec}` fields of a claim text; raises ValueError for anything but plain names."""
    found: list[Placeholder] = []
    for _literal, name, spec, conversion in string.Formatter().parse(text):
        if name is None:
            continue
        if conversion:
            raise ValueError(f"placeholder {{{name}!{conversion}}}: conversions are not allowed")
        if not name.isidentifier():
            raise ValueError(f"placeholder {{{name}}}: only a plain value name is allowed "
                             "(no attribute, index or positional field)")
        if "{" in (spec or ""):
            raise ValueError(f"placeholder {{{name}}}: nested fields in a format spec are not allowed")
        problem = spec_problem(spec or "")
        if problem:
            raise ValueError(f"placeholder {{{name}}}: {problem}")
        found.append(Placeholder(name=name, spec=spec or ""))
    return tuple(found)


def literal_text(text: str, marker: str = "\x00") -> str:
    """The claim text with each placeholder replaced by `marker` and `{{`/`}}` unescaped."""
    parts: list[str] = []
    for literal, name, _spec, _conversion in string.Formatter().parse(text):
        parts.append(literal)
        if name is not None:
            parts.append(marker)
    return "".join(parts)


@lru_cache(maxsize=4096)
def _valid_document_name(name: str) -> bool:
    if not name or "\\" in name or name.startswith(("/", "~")) or re.match(r"[A-Za-z]:", name):
        return False
    parts = PurePosixPath(name).parts
    # No hidden names: every design document is frozen and citable, or refused; never a dotfile.
    return (bool(parts) and ".." not in parts and not PurePosixPath(name).is_absolute()
            and not any(part.startswith(".") for part in parts))


def _design_source(node: Node, path: str, line: int, claim_id: str) -> DesignSource:
    fields = _mapping(node, path, "a design source", DESIGN_FIELDS, line=line, field_name="design")
    for required in DESIGN_FIELDS:
        if required not in fields:
            raise InputError(f"claim {claim_id}: a design source needs {required}", path=path, line=line,
                             field="design")
    document = _text(fields["document"], path, "document", claim_id=claim_id)
    quote = _text(fields["quote"], path, "quote", claim_id=claim_id)
    if not _valid_document_name(document):
        raise InputError(f"claim {claim_id}: document {excerpt(document)} must be a relative name inside design/ "
                         "(no '..', no absolute path, no hidden name)", path=path, line=fields["document"][0],
                         field="document")
    return DesignSource(document=document, quote=quote, line=line)


def _decision_source(node: Node, path: str, line: int, claim_id: str) -> DecisionSource:
    fields = _mapping(node, path, "a decision source", DECISION_FIELDS, line=line, field_name="decision")
    for required in DECISION_FIELDS:
        if required not in fields:
            raise InputError(f"claim {claim_id}: a decision source needs {required} (the decision id, and "
                             f"{' | '.join(DECISION_STATES)})", path=path, line=line, field="decision")
    trigger = _text(fields["trigger"], path, "trigger", claim_id=claim_id)
    state = _text(fields["state"], path, "state", claim_id=claim_id)
    if state not in DECISION_STATES:
        raise InputError(f"claim {claim_id}: state {excerpt(state, 40)}; choose one of {_choices(DECISION_STATES)}",
                         path=path, line=fields["state"][0], field="state")
    return DecisionSource(trigger=trigger, state=state, line=line)


def _measured_source(node: Node, path: str, line: int, claim_id: str) -> MeasuredSource:
    fields = _mapping(node, path, "a measured source", MEASURED_FIELDS, line=line, field_name="measured")
    file_name = RESULTS_NAME
    if "file" in fields:
        file_name = _text(fields["file"], path, "file", claim_id=claim_id)
        if not _valid_document_name(file_name):
            raise InputError(f"claim {claim_id}: file {excerpt(file_name)} must be a relative name inside outputs/",
                             path=path, line=fields["file"][0], field="file")
    if "values" not in fields:
        raise InputError(f"claim {claim_id}: a measured source needs values (name: path)", path=path, line=line,
                         field="measured")
    values_line, values_node = fields["values"]
    if not isinstance(values_node.value, dict) or not values_node.value:
        raise InputError(f"claim {claim_id}: values must be a non-empty mapping of name: path", path=path,
                         line=values_line, field="values")
    values: dict[str, str] = {}
    steps: dict[str, tuple[Step, ...]] = {}
    value_lines: dict[str, int] = {}
    for name, (name_line, path_node) in values_node.value.items():
        if len(name) > MAX_ID_CHARS or not name.isidentifier() or name in CONSTANT_NAMES or name in FUNCTIONS:
            raise InputError(f"claim {claim_id}: value name {excerpt(name)} must be a plain identifier "
                             f"of at most {MAX_ID_CHARS} characters "
                             f"(not {', '.join(sorted(set(CONSTANT_NAMES) | set(FUNCTIONS)))})",
                             path=path, line=name_line, field="values")
        path_text = _text((name_line, path_node), path, f"values.{name}", claim_id=claim_id)
        if len(path_text) > MAX_PATH_CHARS:
            raise InputError(f"claim {claim_id}: path longer than {MAX_PATH_CHARS} characters", path=path,
                             line=name_line, field=f"values.{name}")
        try:
            steps[name] = _parse_path_cached(path_text)
        except PathSyntaxError as error:
            raise InputError(f"claim {claim_id}: {clip(str(error), MAX_REASON_CHARS)}", path=path, line=name_line,
                             field=f"values.{name}") from None
        values[name] = path_text
        value_lines[name] = name_line
    predicate_text = None
    compiled = None
    if "predicate" in fields:
        predicate_text = _text(fields["predicate"], path, "predicate", claim_id=claim_id)
        try:
            compiled = compile_predicate(predicate_text)
        except PredicateSyntaxError as error:
            raise InputError(f"claim {claim_id}: {clip(str(error), MAX_REASON_CHARS)}", path=path,
                             line=fields["predicate"][0], field="predicate") from None
    return MeasuredSource(file=file_name, values=values, steps=steps, predicate=predicate_text, compiled=compiled,
                          line=line, value_lines=value_lines)


def _claim(node: Node, path: str, seen: dict[str, int], languages: tuple[str, ...] = ()) -> Claim:
    fields = _mapping(node, path, "a claim", CLAIM_FIELDS)
    for required in REQUIRED_CLAIM_FIELDS:
        if required not in fields or fields[required][1].value is None:
            where = fields[required][0] if required in fields else node.line
            raise InputError("missing required field", path=path, line=where, field=required)
    claim_id = _claim_id(fields, path, seen, node.line)
    output = _choice(fields, "output", OUTPUTS, path, claim_id)
    kind = _choice(fields, "kind", KINDS, path, claim_id)
    section = _text(fields["section"], path, "section", claim_id=claim_id)
    if not SECTION_PATTERN.match(section):
        raise InputError(f"claim {claim_id}: section {excerpt(section)} must be an id (letters, digits, '-', '_', '.')",
                         path=path, line=fields["section"][0], field="section")
    language = _claim_language(fields, path, claim_id, languages)
    frame = None
    has_text, has_frame = _present(fields, "text"), _present(fields, "frame")
    if has_text == has_frame:
        raise InputError(f"claim {claim_id}: a claim has either its own `text` or a `frame` the package writes, "
                         f"{'not both' if has_text else 'and has neither'}", path=path,
                         line=fields["frame"][0] if has_frame else node.line, field="frame" if has_frame else "text")
    if has_frame:
        frame = _frame(fields["frame"], path, claim_id)
        text, placeholders = "", ()
        if _present(fields, "sources"):
            raise InputError(f"claim {claim_id}: a frame takes no sources: it reads its own results and design "
                             "(each shown to the reader as its source)", path=path, line=fields["sources"][0],
                             field="sources")
    else:
        text, placeholders = _claim_text(fields, path, claim_id)
    status = _text(fields.get("status"), path, "status", required=False, claim_id=claim_id) or "active"
    if status not in STATUSES:
        raise InputError(f"claim {claim_id}: unknown status {excerpt(status)}; choose one of {_choices(STATUSES)}",
                         path=path, line=fields["status"][0], field="status")
    strike_reason, strike_display = _strike(fields, status, path, claim_id)
    sources = _sources(fields, path, claim_id)
    _check_value_names(sources, placeholders, path, claim_id, node.line, fields["text"][0] if has_text else node.line)
    return Claim(id=claim_id, line=node.line, output=output, section=section, kind=kind, text=text,
                 status=status, strike_reason=strike_reason, strike_display=strike_display, sources=tuple(sources),
                 placeholders=placeholders, field_lines={key: line for key, (line, _) in fields.items()},
                 frame=frame, language=language)


def _present(fields: dict[str, tuple[int, Node]], key: str) -> bool:
    return key in fields and fields[key][1].value is not None


def _claim_language(fields: dict[str, tuple[int, Node]], path: str, claim_id: str,
                    languages: tuple[str, ...]) -> str:
    """The claim's `language:`: English or one the ledger declares."""
    if not _present(fields, "language"):
        return ENGLISH
    language = _text(fields["language"], path, "language", claim_id=claim_id)
    if language != ENGLISH and language not in languages:
        raise InputError(f"claim {claim_id}: language {excerpt(language, 20)} is not declared; the ledger's "
                         f"languages are {', '.join((ENGLISH, *languages))} (declare more with `languages:`)",
                         path=path, line=fields["language"][0], field="language")
    return language


def _frame(entry: tuple[int, Node], path: str, claim_id: str) -> Frame:
    """A claim's `frame:` mapping (generator.claims.frames.spec), each key checked for its form."""
    line, node = entry
    fields = _mapping(node, path, "a frame", FRAME_FIELDS, line=line, field_name="frame")
    values: dict[str, object] = {}
    for key, (key_line, value_node) in fields.items():
        if isinstance(value_node.value, list):
            items = []
            for item in value_node.value:
                if not isinstance(item.value, str):
                    raise InputError(f"claim {claim_id}: frame.{key} is a list of row names", path=path,
                                     line=item.line, field=f"frame.{key}")
                items.append(_text((item.line, item), path, f"frame.{key}", claim_id=claim_id))
            values[key] = items
        else:
            values[key] = _text((key_line, value_node), path, f"frame.{key}", claim_id=claim_id)
    frame, problem = parse_frame(values, line)
    if problem:
        raise InputError(f"claim {claim_id}: frame: {clip(problem, MAX_REASON_CHARS)}", path=path, line=line,
                         field="frame")
    if frame.kind not in NO_FILE and not _valid_document_name(frame.file):
        raise InputError(f"claim {claim_id}: frame: file {excerpt(frame.file)} must be a relative name inside outputs/",
                         path=path, line=line, field="frame")
    if frame.kind == "quote" and not _valid_document_name(frame.row):
        raise InputError(f"claim {claim_id}: frame: document {excerpt(frame.row)} must be a relative name inside "
                         "design/ (no '..', no absolute path, no hidden name)", path=path, line=line, field="frame")
    return frame


def _claim_id(fields: dict[str, tuple[int, Node]], path: str, seen: dict[str, int], claim_line: int) -> str:
    claim_id = _text(fields["id"], path, "id")
    id_line = fields["id"][0]
    if len(claim_id) > MAX_ID_CHARS:
        raise InputError(f"claim id {excerpt(claim_id, 40)} is longer than {MAX_ID_CHARS} characters",
                         path=path, line=id_line, field="id")
    if not ID_PATTERN.match(claim_id):
        raise InputError(f"claim id {excerpt(claim_id)} may hold only letters, digits, '-', '_' and '.', "
                         "starting with a letter or digit", path=path, line=id_line, field="id")
    if claim_id in seen:
        raise InputError(f"duplicate claim id {claim_id!r} (first at line {seen[claim_id]})", path=path,
                         line=id_line, field="id")
    seen[claim_id] = claim_line
    return claim_id


def _choice(fields: dict[str, tuple[int, Node]], key: str, choices: tuple[str, ...], path: str,
            claim_id: str) -> str:
    value = _text(fields[key], path, key, claim_id=claim_id)
    if value not in choices:
        raise InputError(f"claim {claim_id}: unknown {key} {excerpt(value)}; choose one of {_choices(choices)}",
                         path=path, line=fields[key][0], field=key)
    return value


def _claim_text(fields: dict[str, tuple[int, Node]], path: str, claim_id: str) -> tuple[str, tuple[Placeholder, ...]]:
    """The sentence, refused when it is too long, strikes itself or hides a character; and its placeholders."""
    text = _text(fields["text"], path, "text", claim_id=claim_id)
    text_line = fields["text"][0]
    if len(text) > MAX_TEXT:
        raise InputError(f"claim {claim_id}: text longer than {MAX_TEXT} characters: one claim is one sentence",
                         path=path, line=text_line, field="text")
    if _STRIKE_MARKUP.search(text):
        raise InputError(f"claim {claim_id}: strike markup in the text (`~`, `~~` or a del/s tag); strike a claim "
                         "with `status: struck`, never inside its text", path=path, line=text_line, field="text")
    try:
        return text, parse_placeholders(text)
    except ValueError as error:
        raise InputError(f"claim {claim_id}: {clip(str(error), MAX_REASON_CHARS)}", path=path, line=text_line,
                         field="text") from None


def _strike(fields: dict[str, tuple[int, Node]], status: str, path: str,
            claim_id: str) -> tuple[str | None, str | None]:
    """A struck claim's reason (a label) and display; an active claim has neither."""
    strike_reason = _text(fields.get("strike_reason"), path, "strike_reason", required=False, claim_id=claim_id)
    strike_display = _text(fields.get("strike_display"), path, "strike_display", required=False,
                           claim_id=claim_id)
    if status != "struck":
        for only_struck in ("strike_reason", "strike_display"):
            if fields.get(only_struck) is not None and fields[only_struck][1].value is not None:
                raise InputError(f"claim {claim_id}: {only_struck} is only for struck claims (status: struck)",
                                 path=path, line=fields[only_struck][0], field=only_struck)
        return None, None
    if not strike_reason or not strike_reason.strip():
        raise InputError(f"claim {claim_id}: a struck claim needs a strike_reason", path=path,
                         line=fields["status"][0], field="strike_reason")
    problem = label_problem(strike_reason, STRIKE_REASON_MAX_WORDS)
    if problem:
        raise InputError(f"claim {claim_id}: strike_reason is shown to readers as a label: {problem}",
                         path=path, line=fields["strike_reason"][0], field="strike_reason")
    strike_display = strike_display or "withdrawn"
    if strike_display not in STRIKE_DISPLAYS:
        raise InputError(f"claim {claim_id}: unknown strike_display {excerpt(strike_display)}; choose one of "
                         f"{_choices(STRIKE_DISPLAYS)}", path=path, line=fields["strike_display"][0],
                         field="strike_display")
    return strike_reason, strike_display


_SOURCE_PARSERS = {"design": _design_source, "decision": _decision_source, "measured": _measured_source}


def _sources(fields: dict[str, tuple[int, Node]], path: str, claim_id: str) -> list[Source]:
    if "sources" not in fields or fields["sources"][1].value is None:
        return []
    sources_line, sources_node = fields["sources"]
    if not isinstance(sources_node.value, list):
        raise InputError(f"claim {claim_id}: sources must be a list", path=path, line=sources_line,
                         field="sources")
    sources: list[Source] = []
    for source_node in sources_node.value:
        entry = _mapping(source_node, path, "a source", SOURCE_KINDS, field_name="sources")
        if len(entry) != 1:
            raise InputError(f"claim {claim_id}: each source has exactly one of design, measured or decision",
                             path=path, line=source_node.line, field="sources")
        (source_kind, (source_line, body)), = entry.items()
        sources.append(_SOURCE_PARSERS[source_kind](body, path, source_line, claim_id))
    return sources


def _check_value_names(sources: list[Source], placeholders: tuple[Placeholder, ...], path: str, claim_id: str,
                       claim_line: int, text_line: int) -> None:
    """Every value name declared once; every placeholder and predicate name declared."""
    declared: dict[str, int] = {}
    if sum(len(source.values) for source in sources if isinstance(source, MeasuredSource)) > MAX_VALUES:
        raise InputError(f"claim {claim_id}: more than {MAX_VALUES} values", path=path, line=claim_line,
                         field="values")
    for source in sources:
        if isinstance(source, MeasuredSource):
            for name, name_line in source.value_lines.items():
                if name in declared:
                    raise InputError(f"claim {claim_id}: value name {excerpt(name)} declared twice "
                                     f"(first at line {declared[name]})", path=path, line=name_line,
                                     field="values")
                declared[name] = name_line
    for placeholder in placeholders:
        if placeholder.name not in declared:
            raise InputError(f"claim {claim_id}: placeholder {{{clip(placeholder.name)}}} has no value; declare it "
                             "under a measured source's values", path=path, line=text_line, field="text")
    for source in sources:
        if isinstance(source, MeasuredSource) and source.compiled is not None:
            unknown = sorted(source.compiled.names - set(declared))
            if unknown:
                raise InputError(f"claim {claim_id}: predicate uses undeclared name(s) {clip(', '.join(unknown))}; "
                                 f"declared: {clip(', '.join(sorted(declared))) or '(none)'}", path=path,
                                 line=source.line, field="predicate")


def parse_ledger(data: bytes, path: Path | str, display: str | None = None) -> Ledger:
    """Parse ledger bytes; `display` is the file name used in messages."""
    display = display or str(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text (byte {error.start})", path=display) from None
    root = parse_yaml(text, display)
    if root is None:
        raise InputError("empty ledger: expected `version: 1` and `claims:`", path=display, line=1)
    top = _mapping(root, display, "the ledger", TOP_FIELDS)
    version = _text(top.get("version"), display, "version", required=False)
    if version is None:
        raise InputError("missing `version: 1`", path=display, line=1, field="version")
    if version != LEDGER_VERSION:
        raise InputError(f"unsupported ledger version {excerpt(version)}; this readout reads version {LEDGER_VERSION}",
                         path=display, line=top["version"][0], field="version")
    languages = _languages(top.get("languages"), display)
    claims: list[Claim] = []
    if "claims" in top and top["claims"][1].value is not None:
        claims_line, claims_node = top["claims"]
        if not isinstance(claims_node.value, list):
            raise InputError("claims must be a list", path=display, line=claims_line, field="claims")
        if len(claims_node.value) > MAX_CLAIMS:
            raise InputError(f"more than {MAX_CLAIMS} claims", path=display, line=claims_line, field="claims")
        seen: dict[str, int] = {}
        claims = [_claim(node, display, seen, languages) for node in claims_node.value]
    return Ledger(path=Path(path), sha256=sha256_bytes(data), claims=tuple(claims), version=version,
                  languages=languages)


def _languages(entry: tuple[int, Node] | None, display: str) -> tuple[str, ...]:
    """`languages: [de, fr]`: each one a language generator.text.verdicts has a lexicon for."""
    if entry is None or entry[1].value is None:
        return ()
    line, node = entry
    if not isinstance(node.value, list):
        raise InputError("languages is a list of language codes, e.g. [de]", path=display, line=line,
                         field="languages")
    codes = []
    for item in node.value:
        code = item.value if isinstance(item.value, str) else None
        if code not in supported_languages():
            raise InputError(f"no verdict lexicon for language {excerpt(str(code), 20)}; the languages are "
                             f"{', '.join(supported_languages())}", path=display, line=item.line, field="languages")
        codes.append(code)
    return tuple(dict.fromkeys(codes))


def load_ledger(path: Path | str) -> Ledger:
    ledger_path = Path(path)
    display = display_path(ledger_path)
    try:
        data = read_input(ledger_path, "ledger", display)
    except FileNotFoundError:
        raise InputError("ledger not found; write one (see docs/claims.md, 'The claim ledger') or start with "
                         "`readout import-draft`", path=display) from None
    except OSError as error:
        raise InputError(f"cannot read ledger: {error.strerror}", path=display) from None
    with reading(ledger_path):
        return parse_ledger(data, ledger_path, display)


