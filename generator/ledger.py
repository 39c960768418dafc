"""The claim ledger: every sentence the reports say, with the evidence that must support it.

File format (`claims/ledger.yaml`; JSON Schema in `claims/ledger.schema.json`)::

    version: 1
    claims:
      - id: hybrid-beats-dense-ndcg5     # unique; letters, digits, '-', '_', '.'; starts alphanumeric
        output: readout                  # teachback | aar | readout
        section: results                 # a section of that output (readout.yaml `outputs:`)
        kind: evaluative                 # factual | causal | evaluative | performance | recommendation
        text: "Hybrid reaches nDCG@5 {hybrid:.3f} against dense {dense:.3f}."
        status: active                   # active (default) | struck
        # strike_reason: "..."           # required when struck, refused otherwise
        # strike_display: strike         # when struck: strike (shown struck through, default) | omit
        sources:
          - design:
              document: decisions.md     # a file inside design/; no '..', no absolute path
              quote: "RRF with constant 60"
          - measured:
              file: results.json         # a JSON file in outputs/ (default results.json)
              values:                    # name -> path into that file (grammar: generator/paths.py)
                hybrid: "table[search=hybrid].nDCG@5"
                dense: "table[search=dense].nDCG@5"
              predicate: "hybrid > dense"   # optional; grammar: generator/predicates.py

Rules the loader enforces (a violation makes the ledger unusable: exit 2, `file:line: field:
message`): YAML read with the safe composer only; every scalar is kept as the text written
(so `quote: 2030` is the string "2030", and `status: yes` is refused, not turned into true);
no unknown field anywhere; no duplicate key; `version` is 1; ids unique; `kind`, `output`,
`status`, `strike_display` from their fixed lists; each source has exactly one of `design` or
`measured`; value names are plain identifiers, unique within a claim; every `{placeholder}` in
`text` is a plain declared value name with an optional format spec (`{name}` or `{name:.3f}`;
`{{` and `}}` are literal braces; no `{a.b}`, `{a[0]}` or `{a!r}`); every name in a predicate is
declared; a design document name stays inside design/.

Whether each claim *traces* is decided by `generator.checker`, not here (its docstring gives
the number rule, the scores and the exit codes). Beside the ledger in `claims/`:
`design-freeze.json` (`readout freeze`: sha256 of every file in design/),
`trace-history.jsonl` (append-only; one line per ledger version the first time `readout check`
sees its sha256; the first line is the first-draft score) and `ledger.first-draft.yaml` (the
ledger as first written, whose sha256 is that first line's).

`readout import-draft DRAFT.md --output aar` appends one claim per sentence of a Markdown draft
(no sources, status active, kind guessed from cue words or `factual`, section from the nearest
heading matched to the sections readout.yaml declares, id `<output>-<first six words>` made
unique with `-2`, `-3`); sentences already in the ledger for that output are skipped, so a
re-import adds only new sentences.
"""

from __future__ import annotations

import re
import string
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Any, Union

from generator.errors import InputError
from generator.fileio import atomic_write_text, display_path, sha256_bytes
from generator.paths import PathSyntaxError, Step, parse_path
from generator.predicates import CONSTANT_NAMES, FUNCTIONS, Predicate, PredicateSyntaxError, compile_predicate

LEDGER_VERSION = "1"
OUTPUTS = ("teachback", "aar", "readout")
KINDS = ("factual", "causal", "evaluative", "performance", "recommendation")
STATUSES = ("active", "struck")
STRIKE_DISPLAYS = ("strike", "omit")
RESULTS_FILES_DEFAULT = "results.json"

TOP_FIELDS = ("version", "claims")
CLAIM_FIELDS = ("id", "output", "section", "kind", "text", "status", "strike_reason", "strike_display",
                "sources")
REQUIRED_CLAIM_FIELDS = ("id", "output", "section", "kind", "text")
SOURCE_KINDS = ("design", "measured")
DESIGN_FIELDS = ("document", "quote")
MEASURED_FIELDS = ("file", "values", "predicate")
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")
SECTION_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")


_NULL_SCALARS = frozenset({"", "~", "null", "Null", "NULL"})
_LOADER = None


def _yaml_loader():
    """The safe loader (libyaml's when present) with a resolver that only tells null from text.

    Every scalar is kept as the text written, so the full implicit-type resolver (ints, floats,
    booleans, timestamps) would be wasted work; composing never constructs objects either way.
    """
    global _LOADER
    if _LOADER is None:
        import yaml

        base = getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader

        class LedgerLoader(base):   # type: ignore[misc, valid-type]
            def resolve(self, kind, value, implicit):
                if kind is yaml.ScalarNode:
                    if implicit[0] and value in _NULL_SCALARS:
                        return "tag:yaml.org,2002:null"
                    return "tag:yaml.org,2002:str"
                return super().resolve(kind, value, implicit)

        _LOADER = LedgerLoader
    return _LOADER


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


Source = Union[DesignSource, MeasuredSource]


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

    @property
    def struck(self) -> bool:
        return self.status == "struck"

    @property
    def design_sources(self) -> list[DesignSource]:
        return [source for source in self.sources if isinstance(source, DesignSource)]

    @property
    def measured_sources(self) -> list[MeasuredSource]:
        return [source for source in self.sources if isinstance(source, MeasuredSource)]


@dataclass(frozen=True)
class Ledger:
    path: Path
    sha256: str
    claims: tuple[Claim, ...]
    version: str = LEDGER_VERSION

    def by_id(self) -> dict[str, Claim]:
        return {claim.id: claim for claim in self.claims}


# --- YAML node tree -> plain values with lines ----------------------------------------------


@dataclass
class _Node:
    value: Any             # str | None | list[_Node] | dict[str, tuple[int, _Node]]
    line: int


def _convert(node, path: str) -> _Node:
    import yaml

    line = node.start_mark.line + 1
    if isinstance(node, yaml.ScalarNode):
        if node.tag == "tag:yaml.org,2002:null":
            return _Node(None, line)
        return _Node(node.value, line)
    if isinstance(node, yaml.SequenceNode):
        return _Node([_convert(item, path) for item in node.value], line)
    mapping: dict[str, tuple[int, _Node]] = {}
    for key_node, value_node in node.value:
        key_line = key_node.start_mark.line + 1
        if not isinstance(key_node, yaml.ScalarNode):
            raise InputError("a mapping key must be plain text", path=path, line=key_line)
        key = key_node.value
        if key in mapping:
            raise InputError(f"duplicate key (first at line {mapping[key][0]})", path=path, line=key_line,
                             field=key)
        mapping[key] = (key_line, _convert(value_node, path))
    return _Node(mapping, line)


def _parse_yaml(text: str, path: str) -> _Node | None:
    import yaml

    loader = _yaml_loader()(text)
    try:
        root = loader.get_single_node()
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise InputError(f"not valid YAML: {problem}", path=path,
                         line=mark.line + 1 if mark is not None else None) from None
    finally:
        loader.dispose()
    return None if root is None else _convert(root, path)


# --- validation ------------------------------------------------------------------------------


def _choices(values) -> str:
    return ", ".join(values)


def _mapping(node: _Node, path: str, what: str, allowed: tuple[str, ...], line: int | None = None,
             field_name: str | None = None) -> dict[str, tuple[int, _Node]]:
    if not isinstance(node.value, dict):
        raise InputError(f"{what} must be a mapping", path=path, line=line or node.line, field=field_name)
    for key, (key_line, _) in node.value.items():
        if key not in allowed:
            raise InputError(f"unknown field in {what}; allowed: {_choices(allowed)}", path=path,
                             line=key_line, field=key)
    return node.value


def _text(entry: tuple[int, _Node] | None, path: str, field_name: str, *, required: bool = True,
          claim_id: str | None = None) -> str | None:
    prefix = f"claim {claim_id}: " if claim_id else ""
    if entry is None:
        if required:
            return None
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
    return bool(parts) and ".." not in parts and not PurePosixPath(name).is_absolute()


def _design_source(node: _Node, path: str, line: int, claim_id: str) -> DesignSource:
    fields = _mapping(node, path, "a design source", DESIGN_FIELDS, line=line, field_name="design")
    for required in DESIGN_FIELDS:
        if required not in fields:
            raise InputError(f"claim {claim_id}: a design source needs {required}", path=path, line=line,
                             field="design")
    document = _text(fields["document"], path, "document", claim_id=claim_id)
    quote = _text(fields["quote"], path, "quote", claim_id=claim_id)
    if not _valid_document_name(document):
        raise InputError(f"claim {claim_id}: document {document!r} must be a relative name inside design/ "
                         "(no '..', no absolute path)", path=path, line=fields["document"][0], field="document")
    return DesignSource(document=document, quote=quote, line=line)


def _measured_source(node: _Node, path: str, line: int, claim_id: str) -> MeasuredSource:
    fields = _mapping(node, path, "a measured source", MEASURED_FIELDS, line=line, field_name="measured")
    file_name = RESULTS_FILES_DEFAULT
    if "file" in fields:
        file_name = _text(fields["file"], path, "file", claim_id=claim_id)
        if not _valid_document_name(file_name):
            raise InputError(f"claim {claim_id}: file {file_name!r} must be a relative name inside outputs/",
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
        if not name.isidentifier() or name in CONSTANT_NAMES or name in FUNCTIONS:
            raise InputError(f"claim {claim_id}: value name {name!r} must be a plain identifier "
                             f"(not {', '.join(sorted(set(CONSTANT_NAMES) | set(FUNCTIONS)))})",
                             path=path, line=name_line, field="values")
        path_text = _text((name_line, path_node), path, f"values.{name}", claim_id=claim_id)
        try:
            steps[name] = _parse_path_cached(path_text)
        except PathSyntaxError as error:
            raise InputError(f"claim {claim_id}: {error}", path=path, line=name_line, field=f"values.{name}") from None
        values[name] = path_text
        value_lines[name] = name_line
    predicate_text = None
    compiled = None
    if "predicate" in fields:
        predicate_text = _text(fields["predicate"], path, "predicate", claim_id=claim_id)
        try:
            compiled = compile_predicate(predicate_text)
        except PredicateSyntaxError as error:
            raise InputError(f"claim {claim_id}: {error}", path=path, line=fields["predicate"][0],
                             field="predicate") from None
    return MeasuredSource(file=file_name, values=values, steps=steps, predicate=predicate_text, compiled=compiled,
                          line=line, value_lines=value_lines)


def _claim(node: _Node, path: str, seen: dict[str, int]) -> Claim:
    fields = _mapping(node, path, "a claim", CLAIM_FIELDS)
    for required in REQUIRED_CLAIM_FIELDS:
        if required not in fields or fields[required][1].value is None:
            where = fields[required][0] if required in fields else node.line
            raise InputError("missing required field", path=path, line=where, field=required)
    claim_id = _text(fields["id"], path, "id")
    id_line = fields["id"][0]
    if not ID_PATTERN.match(claim_id):
        raise InputError(f"claim id {claim_id!r} may hold only letters, digits, '-', '_' and '.', "
                         "starting with a letter or digit", path=path, line=id_line, field="id")
    if claim_id in seen:
        raise InputError(f"duplicate claim id {claim_id!r} (first at line {seen[claim_id]})", path=path,
                         line=id_line, field="id")
    seen[claim_id] = node.line
    output = _text(fields["output"], path, "output", claim_id=claim_id)
    if output not in OUTPUTS:
        raise InputError(f"claim {claim_id}: unknown output {output!r}; choose one of {_choices(OUTPUTS)}",
                         path=path, line=fields["output"][0], field="output")
    kind = _text(fields["kind"], path, "kind", claim_id=claim_id)
    if kind not in KINDS:
        raise InputError(f"claim {claim_id}: unknown kind {kind!r}; choose one of {_choices(KINDS)}",
                         path=path, line=fields["kind"][0], field="kind")
    section = _text(fields["section"], path, "section", claim_id=claim_id)
    if not SECTION_PATTERN.match(section):
        raise InputError(f"claim {claim_id}: section {section!r} must be an id (letters, digits, '-', '_', '.')",
                         path=path, line=fields["section"][0], field="section")
    text = _text(fields["text"], path, "text", claim_id=claim_id)
    try:
        placeholders = parse_placeholders(text)
    except ValueError as error:
        raise InputError(f"claim {claim_id}: {error}", path=path, line=fields["text"][0], field="text") from None
    status = _text(fields.get("status"), path, "status", required=False, claim_id=claim_id) or "active"
    if status not in STATUSES:
        raise InputError(f"claim {claim_id}: unknown status {status!r}; choose one of {_choices(STATUSES)}",
                         path=path, line=fields["status"][0], field="status")
    strike_reason = _text(fields.get("strike_reason"), path, "strike_reason", required=False, claim_id=claim_id)
    strike_display = _text(fields.get("strike_display"), path, "strike_display", required=False,
                           claim_id=claim_id)
    if status == "struck":
        if not strike_reason or not strike_reason.strip():
            raise InputError(f"claim {claim_id}: a struck claim needs a strike_reason", path=path,
                             line=fields["status"][0], field="strike_reason")
        strike_display = strike_display or "strike"
        if strike_display not in STRIKE_DISPLAYS:
            raise InputError(f"claim {claim_id}: unknown strike_display {strike_display!r}; choose one of "
                             f"{_choices(STRIKE_DISPLAYS)}", path=path, line=fields["strike_display"][0],
                             field="strike_display")
    else:
        for only_struck in ("strike_reason", "strike_display"):
            if fields.get(only_struck) is not None and fields[only_struck][1].value is not None:
                raise InputError(f"claim {claim_id}: {only_struck} is only for struck claims (status: struck)",
                                 path=path, line=fields[only_struck][0], field=only_struck)
    sources: list[Source] = []
    if "sources" in fields and fields["sources"][1].value is not None:
        sources_line, sources_node = fields["sources"]
        if not isinstance(sources_node.value, list):
            raise InputError(f"claim {claim_id}: sources must be a list", path=path, line=sources_line,
                             field="sources")
        for source_node in sources_node.value:
            entry = _mapping(source_node, path, "a source", SOURCE_KINDS, field_name="sources")
            if len(entry) != 1:
                raise InputError(f"claim {claim_id}: each source has exactly one of design or measured",
                                 path=path, line=source_node.line, field="sources")
            (source_kind, (source_line, body)), = entry.items()
            if source_kind == "design":
                sources.append(_design_source(body, path, source_line, claim_id))
            else:
                sources.append(_measured_source(body, path, source_line, claim_id))
    declared: dict[str, int] = {}
    for source in sources:
        if isinstance(source, MeasuredSource):
            for name, name_line in source.value_lines.items():
                if name in declared:
                    raise InputError(f"claim {claim_id}: value name {name!r} declared twice "
                                     f"(first at line {declared[name]})", path=path, line=name_line,
                                     field="values")
                declared[name] = name_line
    for placeholder in placeholders:
        if placeholder.name not in declared:
            raise InputError(f"claim {claim_id}: placeholder {{{placeholder.name}}} has no value; declare it "
                             "under a measured source's values", path=path, line=fields["text"][0], field="text")
    for source in sources:
        if isinstance(source, MeasuredSource) and source.compiled is not None:
            unknown = sorted(source.compiled.names - set(declared))
            if unknown:
                raise InputError(f"claim {claim_id}: predicate uses undeclared name(s) {', '.join(unknown)}; "
                                 f"declared: {', '.join(sorted(declared)) or '(none)'}", path=path,
                                 line=source.line, field="predicate")
    return Claim(id=claim_id, line=node.line, output=output, section=section, kind=kind, text=text,
                 status=status, strike_reason=strike_reason if status == "struck" else None,
                 strike_display=strike_display if status == "struck" else None, sources=tuple(sources),
                 placeholders=placeholders, field_lines={key: line for key, (line, _) in fields.items()})


def parse_ledger(data: bytes, path: Path | str, display: str | None = None) -> Ledger:
    """Parse ledger bytes; `display` is the file name used in messages."""
    display = display or str(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text (byte {error.start})", path=display) from None
    root = _parse_yaml(text, display)
    if root is None:
        raise InputError("empty ledger: expected `version: 1` and `claims:`", path=display, line=1)
    top = _mapping(root, display, "the ledger", TOP_FIELDS)
    version = _text(top.get("version"), display, "version", required=False)
    if version is None:
        raise InputError("missing `version: 1`", path=display, line=1, field="version")
    if version != LEDGER_VERSION:
        raise InputError(f"unsupported ledger version {version!r}; this readout reads version {LEDGER_VERSION}",
                         path=display, line=top["version"][0], field="version")
    claims: list[Claim] = []
    if "claims" in top and top["claims"][1].value is not None:
        claims_line, claims_node = top["claims"]
        if not isinstance(claims_node.value, list):
            raise InputError("claims must be a list", path=display, line=claims_line, field="claims")
        seen: dict[str, int] = {}
        claims = [_claim(node, display, seen) for node in claims_node.value]
    return Ledger(path=Path(path), sha256=sha256_bytes(data), claims=tuple(claims), version=version)


def load_ledger(path: Path | str) -> Ledger:
    ledger_path = Path(path)
    display = display_path(ledger_path)
    try:
        data = ledger_path.read_bytes()
    except FileNotFoundError:
        raise InputError("ledger not found; write one (see README, 'The claim ledger') or start with "
                         "`readout import-draft`", path=display) from None
    except OSError as error:
        raise InputError(f"cannot read ledger: {error.strerror}", path=display) from None
    return parse_ledger(data, ledger_path, display)


# --- import-draft ----------------------------------------------------------------------------

_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.", "et al.", "Fig.", "No.", "approx.")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[*_`]*[A-Z0-9])")
_KIND_HINTS = (
    ("recommendation", re.compile(r"\b(should|recommend\w*|must|next time|we will|adopt|do not ship|ship)\b", re.I)),
    ("causal", re.compile(r"\b(because|so that|therefore|caus\w+|due to|since|hence|which is why|cannot)\b", re.I)),
    ("performance", re.compile(r"\b(ms|milliseconds?|seconds?|latency|p95|throughput|cpu time|time)\b", re.I)),
    ("evaluative", re.compile(r"\b(better|worse|beat\w*|improv\w*|lift\w*|win\w*|higher|lower|gain\w*|"
                              r"outperform\w*|surpris\w*)\b", re.I)),
)


def guess_kind(sentence: str) -> str:
    for kind, pattern in _KIND_HINTS:
        if pattern.search(sentence):
            return kind
    return "factual"


def slugify(text: str, words: int = 6) -> str:
    tokens = re.findall(r"[a-z0-9]+", text.lower())
    return "-".join(tokens[:words]) or "claim"


def split_sentences(paragraph: str) -> list[str]:
    protected = paragraph
    for number, abbreviation in enumerate(_ABBREVIATIONS):
        protected = protected.replace(abbreviation, f"\x01{number}\x01")
    pieces = _SENTENCE_END.split(protected)
    sentences = []
    for piece in pieces:
        for number, abbreviation in enumerate(_ABBREVIATIONS):
            piece = piece.replace(f"\x01{number}\x01", abbreviation)
        piece = piece.strip()
        if piece:
            sentences.append(piece)
    return sentences


def draft_sentences(markdown: str) -> list[tuple[str | None, str]]:
    """(nearest heading, sentence) pairs of a Markdown draft, in order.

    Headings, fenced code, tables, HTML comments and horizontal rules are skipped; list items and
    block quotes lose their markers; a paragraph's lines are joined before splitting.
    """
    pairs: list[tuple[str | None, str]] = []
    heading: str | None = None
    paragraph: list[str] = []
    in_fence = False
    in_comment = False

    def flush() -> None:
        if paragraph:
            for sentence in split_sentences(" ".join(paragraph)):
                pairs.append((heading, sentence))
            paragraph.clear()

    for raw in markdown.splitlines():
        line = raw.strip()
        if in_comment:
            if "-->" in line:
                in_comment = False
            continue
        if line.startswith(("```", "~~~")):
            flush()
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if line.startswith("<!--"):
            flush()
            in_comment = "-->" not in line
            continue
        heading_match = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading_match:
            flush()
            heading = heading_match.group(1)
            continue
        if not line or line.startswith("|") or re.fullmatch(r"([-*_]\s*){3,}", line):
            flush()
            continue
        item = re.match(r"(?:[-*+]|\d+[.)])\s+(.*)", line)
        if item:
            flush()
            line = item.group(1)
        line = re.sub(r"^(>\s*)+", "", line)
        paragraph.append(line)
    flush()
    return pairs


def _section_for(heading: str | None, sections: list[str]) -> str:
    slug = slugify(heading or "", words=4) if heading else ""
    if sections:
        words = set(slug.split("-"))
        for section in sections:
            if section == slug or section in words:
                return section
        for section in sections:
            if any(word.startswith(section) or section.startswith(word) for word in words if len(word) > 2):
                return section
        return sections[0] if not slug else slug
    return slug or "draft"


def declared_sections(config: dict, output: str) -> list[str]:
    """Section ids declared for `output` under readout.yaml `outputs:` (several shapes accepted)."""
    outputs = config.get("outputs") if isinstance(config, dict) else None
    if not isinstance(outputs, dict):
        return []
    entry = outputs.get(output)
    if isinstance(entry, dict):
        entry = entry.get("sections", entry)
    if isinstance(entry, dict):
        return [str(key) for key in entry]
    if isinstance(entry, list):
        ids = []
        for item in entry:
            if isinstance(item, str):
                ids.append(item)
            elif isinstance(item, dict) and "id" in item:
                ids.append(str(item["id"]))
            elif isinstance(item, dict) and len(item) == 1:
                ids.append(str(next(iter(item))))
        return ids
    return []


def _yaml_string(text: str) -> str:
    import json

    return json.dumps(text, ensure_ascii=False)


def import_draft(draft_path: Path, output: str, ledger_path: Path, sections: list[str] | None = None
                 ) -> tuple[list[Claim], int]:
    """Append one unsourced claim per new sentence of `draft_path`; returns (added claims, skipped)."""
    if output not in OUTPUTS:
        raise InputError(f"unknown output {output!r}; choose one of {_choices(OUTPUTS)}", field="--output")
    draft_display = display_path(draft_path)
    try:
        markdown = draft_path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("draft not found", path=draft_display) from None
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read draft: {error}", path=draft_display) from None
    if ledger_path.exists():
        existing_bytes = ledger_path.read_bytes()
        ledger = parse_ledger(existing_bytes, ledger_path, display_path(ledger_path))
        existing_text = existing_bytes.decode("utf-8")
    else:
        ledger = None
        existing_text = ""
    claims = list(ledger.claims) if ledger else []
    taken = {claim.id for claim in claims}
    present = {(claim.output, literal_text(claim.text, "")) for claim in claims}
    added_text: list[str] = []
    added: list[str] = []
    skipped = 0
    for heading, sentence in draft_sentences(markdown):
        if (output, sentence) in present:
            skipped += 1
            continue
        present.add((output, sentence))
        section = _section_for(heading, sections or [])
        base = f"{output}-{slugify(sentence)}"
        claim_id, suffix = base, 2
        while claim_id in taken:
            claim_id, suffix = f"{base}-{suffix}", suffix + 1
        taken.add(claim_id)
        added.append(claim_id)
        escaped = sentence.replace("{", "{{").replace("}", "}}")
        added_text.append(
            f"  - id: {claim_id}\n"
            f"    output: {output}\n"
            f"    section: {section}\n"
            f"    kind: {guess_kind(sentence)}\n"
            f"    text: {_yaml_string(escaped)}\n"
            f"    status: active\n"
            f"    sources: []\n")
    if not added:
        return [], skipped
    if ledger is None:
        new_text = "version: 1\nclaims:\n" + "".join(added_text)
    else:
        new_text = _append_claims(existing_text, "".join(added_text), ledger_path)
    new_ledger = parse_ledger(new_text.encode("utf-8"), ledger_path, display_path(ledger_path))
    atomic_write_text(ledger_path, new_text)
    by_id = new_ledger.by_id()
    return [by_id[claim_id] for claim_id in added], skipped


def _append_claims(existing: str, block: str, ledger_path: Path) -> str:
    """Append claim items at the end of the ledger's `claims:` list (which must come last)."""
    lines = existing.splitlines()
    claims_line = None
    for number, line in enumerate(lines):
        if re.match(r"claims\s*:", line):
            claims_line = number
        elif claims_line is not None and re.match(r"[A-Za-z_]", line):
            raise InputError("cannot append: `claims:` must be the last top-level key of the ledger",
                             path=display_path(ledger_path), line=number + 1)
    if claims_line is None:
        return existing.rstrip("\n") + "\nclaims:\n" + block
    header = lines[claims_line]
    if re.match(r"claims\s*:\s*(\[\s*\]|~|null)?\s*(#.*)?$", header) and not re.search(r":\s*$", header.split("#")[0]):
        lines[claims_line] = "claims:"
        return "\n".join(lines[:claims_line + 1]) + "\n" + block
    indent = None
    for line in lines[claims_line + 1:]:
        match = re.match(r"(\s*)-\s", line)
        if match:
            indent = match.group(1)
            break
    text = existing if existing.endswith("\n") else existing + "\n"
    if indent is not None and indent != "  ":
        block = "\n".join((indent + line[2:]) if line.startswith("  ") else line
                          for line in block.splitlines()) + "\n"
    return text + block


def import_draft_command(args) -> int:
    draft = Path(args.draft)
    ledger_path = Path(args.ledger)
    output = args.output_name
    sections: list[str] = []
    config_path = ledger_path.resolve().parent.parent / "readout.yaml"
    if config_path.is_file():
        try:
            from generator.project import load_project

            sections = declared_sections(load_project(config_path.parent).config, output)
        except InputError:
            sections = []
    added, skipped = import_draft(draft, output, ledger_path, sections)
    shown = display_path(ledger_path)
    for claim in added:
        print(f"{shown}:{claim.line}: claim {claim.id} ({claim.kind}, section {claim.section}): added with no "
              "source")
    note = f"; {skipped} already in the ledger" if skipped else ""
    print(f"Imported {len(added)} claims into {shown}{note}. Each has no source yet: attach design or measured "
          "sources, then run `readout check`.", file=sys.stdout)
    return 0
