"""The ledger loaded: a ledger file read with the safe composer and refused at its first violation
of the rules generator.claims.language.ledger gives, as `file:line: field: message`; each claim's
id, output, kind, section, language, text or frame and strike read, with its sources
(generator.claims.language.ledger_sources).
"""

from __future__ import annotations

import re
from pathlib import Path

from generator.claims.frames.spec import NO_FILE, Frame, parse_frame
from generator.claims.language.ledger import (CLAIM_FIELDS, ENGLISH, FRAME_FIELDS, ID_PATTERN, KINDS, LEDGER_VERSION,
                                              MAX_CLAIMS, MAX_ID_CHARS, MAX_REASON_CHARS, MAX_TEXT, OUTPUTS,
                                              REQUIRED_CLAIM_FIELDS, SECTION_PATTERN, STATUSES, STRIKE_DISPLAYS,
                                              STRIKE_REASON_MAX_WORDS, TOP_FIELDS, Claim, Ledger, Placeholder,
                                              parse_placeholders)
from generator.claims.language.ledger_fields import _choices, _mapping, _text, _valid_document_name
from generator.claims.language.ledger_sources import _check_value_names, _sources
from generator.core.results import clip, excerpt
from generator.storage.errors import InputError
from generator.storage.bounded_reads import read_input
from generator.storage.fileio import sha256_bytes
from generator.storage.paths import display_path, reading
from generator.storage.safe_yaml import Node, parse_yaml
from generator.core.text.verdicts import supported_languages
from generator.core.text.wording import label_problem

_STRIKE_MARKUP = re.compile(r"~|</?(?:del|s|strike)\b", re.IGNORECASE)


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
    """`languages: [de, fr]`: each one a language generator.core.text.verdicts has a lexicon for."""
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
