"""`readout import-draft`: turn an existing Markdown draft into unsourced ledger claims.

One claim per sentence (no sources, status active, kind guessed from cue words or `factual`,
section from the nearest heading matched to the sections readout.yaml declares for that output,
id `<output>-<first six words>` made unique with `-2`, `-3`). Sentences already in the ledger for
that output are skipped, so a re-import adds only new sentences. The ledger text is appended to,
never re-serialised, so the author's comments and layout survive. The ledger is read and written
under the project's records lock (generator.storage.locks.records_lock), so imports run at once all keep
what they report.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from generator.claims.language.ledger import OUTPUTS, Claim, literal_text
from generator.claims.language.ledger_loader import parse_ledger
from generator.storage.errors import InputError
from generator.storage.bounded_reads import read_input
from generator.storage.fileio import atomic_write_text
from generator.storage.paths import display_path
from generator.storage.locks import records_lock


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


def _yaml_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def import_draft(draft_path: Path, output: str, ledger_path: Path, sections: list[str] | None = None
                 ) -> tuple[list[Claim], int]:
    """Append one unsourced claim per new sentence of `draft_path`; returns (added claims, skipped)."""
    if output not in OUTPUTS:
        raise InputError(f"unknown output {output!r}; choose one of {', '.join(OUTPUTS)}", field="--output")
    draft_display = display_path(draft_path)
    try:
        markdown = read_input(draft_path, "draft", draft_display).decode("utf-8")
    except FileNotFoundError:
        raise InputError("draft not found", path=draft_display) from None
    except UnicodeDecodeError as error:
        raise InputError(f"cannot read draft: not UTF-8 text (byte {error.start:,})", path=draft_display) from None
    # Read, appended to and written under the records lock: a concurrent import appends to what
    # this one wrote, never to the ledger as it was before.
    with records_lock(ledger_path.parent):
        return _append_sentences(markdown, output, ledger_path, sections)


def _append_sentences(markdown: str, output: str, ledger_path: Path, sections: list[str] | None
                      ) -> tuple[list[Claim], int]:
    if os.path.lexists(ledger_path):
        existing_bytes = read_input(ledger_path, "ledger")
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
