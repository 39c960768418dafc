"""The quotable units of a design document: the text a reader sees of its Markdown, cut into
sentences, list items, table cells and headings, with its code blocks kept apart.

A quote is checked against these units (generator.claims.record.design), so the cut is what a
reader would call a whole sentence or item, never a line of the source; the layout of a frozen
document is remembered by its sha256.

Sentences end after `.`, `!` or `?` (and any closing quotes or brackets) followed by a space and an
uppercase letter, a digit, a quote or a bracket, never after a common abbreviation (e.g., i.e.,
etc., vs., cf., et al., Fig., No. before a number, approx., Dr.) and never inside a number or a
version (0.81, v6.0.0).
"""

from __future__ import annotations

import bisect
import functools
import re
from typing import TYPE_CHECKING

from generator.core.dataclass import dataclass
from generator.storage.memo import book, default_memo
from generator.storage.fileio import sha256_text

if TYPE_CHECKING:
    from markdown_it import MarkdownIt


@functools.lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    # Imported here: a warm check finds every layout and quote remembered (generator.storage.memo).
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")

_WORD = re.compile(r"\S+")
_SENTENCE_END = re.compile(r"[.!?][\"'\u201d\u2019)\]]*(\s+)")
_OPENERS = "\"'\u201c\u2018(["
_ABBREVIATIONS = frozenset({"e.g", "i.e", "etc", "vs", "cf", "al", "fig", "figs", "approx", "dr", "mr", "mrs",
                            "prof", "eq", "eqs", "vol", "pp"})
_BEFORE_NUMBER = frozenset({"no", "nos"})      # "No. 5", not "the answer is no. Then"
_SEGMENT_BREAKS = frozenset({"fence", "code_block", "html_block", "hr"})
_CODE_BLOCKS = frozenset({"fence", "code_block", "html_block"})


@dataclass(frozen=True)
class Unit:
    """A quotable unit: `text[start:end]` of its document, starting on `line` under `heading`."""

    kind: str              # "sentence" | "item" | "cell" | "heading"
    start: int
    end: int
    line: int
    heading: str | None


@dataclass(frozen=True)
class _Block:
    """Code, diagram or HTML: searched only to tell the author why a quote from it cannot hold."""

    text: str
    offsets: list[int]     # word start offsets in text
    lines: list[int]       # the line of each word


def _inline_pieces(children, line: int) -> list[tuple[str, int]]:
    """The reader's text of inline tokens as (piece, line) pieces."""
    pieces: list[tuple[str, int]] = []
    for token in children or ():
        if token.type in ("text", "text_special", "code_inline"):
            pieces.append((token.content, line))
        elif token.type in ("softbreak", "hardbreak"):
            pieces.append((" ", line))
            line += 1
        elif token.type == "image":
            pieces.extend(_inline_pieces(token.children, line))
        # link, emphasis and strong markers and inline HTML show no text of their own
    return pieces


def _words(pieces: list[tuple[str, int]]) -> tuple[str, list[int], list[int]]:
    """Collapse pieces to single-spaced text: (text, word start offsets, word lines)."""
    raw = "".join(piece for piece, _ in pieces)
    piece_starts: list[int] = []
    position = 0
    for piece, _ in pieces:
        piece_starts.append(position)
        position += len(piece)
    words: list[str] = []
    offsets: list[int] = []
    lines: list[int] = []
    position = 0
    for match in _WORD.finditer(raw):
        words.append(match.group())
        offsets.append(position)
        lines.append(pieces[bisect.bisect_right(piece_starts, match.start()) - 1][1])
        position += len(match.group()) + 1
    return " ".join(words), offsets, lines


def reduce_markdown(text: str) -> str:
    """The text a reader sees of inline Markdown `text`, whitespace collapsed."""
    return book("reduced markdown").get(text, lambda: _reduced(text))


def _reduced(text: str) -> str:
    tokens = _markdown().parseInline(text)
    return _words(_inline_pieces(tokens[0].children if tokens else (), 1))[0]


def _abbreviation(text: str, dot: int, following: str) -> bool:
    start = dot
    while start > 0 and (text[start - 1].isalpha() or text[start - 1] == "."):
        start -= 1
    word = text[start:dot].lower()
    if word in _BEFORE_NUMBER:
        return following.isdigit()
    return word in _ABBREVIATIONS


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of single-spaced `text`; each keeps its terminal punctuation."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        following_at = match.end()
        if following_at >= len(text):
            continue
        following = text[following_at]
        if not (following.isupper() or following.isdigit() or following in _OPENERS):
            continue
        if text[match.start()] == "." and _abbreviation(text, match.start(), following):
            continue
        spans.append((start, match.start(1)))
        start = following_at
    if start < len(text):
        spans.append((start, len(text)))
    return spans


class _Builder:
    """Lays the units of one document into one text: units of a segment joined by a space, segments
    (a heading, a run of prose between headings and code blocks) by a newline a quote never holds."""

    def __init__(self):
        self.parts: list[str] = []
        self.length = 0
        self.units: list[Unit] = []
        self.segment_starts: list[int] = []
        self.new_segment = True
        self.heading: str | None = None

    def leaf(self, kind: str, text: str, line: int) -> Unit:
        if self.new_segment:
            if self.length:
                self.parts.append("\n")
                self.length += 1
            self.segment_starts.append(self.length)
            self.new_segment = False
        else:
            self.parts.append(" ")
            self.length += 1
        unit = Unit(kind, self.length, self.length + len(text), line, self.heading)
        self.parts.append(text)
        self.length += len(text)
        self.units.append(unit)
        return unit


def _lay_out(tokens: list) -> tuple[_Builder, list[_Block]]:
    """Walk a document's Markdown tokens into quotable units, and keep its code blocks apart."""
    builder = _Builder()
    blocks: list[_Block] = []
    containers: list[dict] = []        # open list items and block quotes, innermost last
    index = 0
    while index < len(tokens):
        token = tokens[index]
        kind = token.type
        if kind == "heading_open":
            _heading(builder, containers, tokens[index + 1], token.map[0] + 1)
            index += 3
            continue
        if kind == "paragraph_open":
            _paragraph(builder, containers, tokens[index + 1])
            index += 3
            continue
        if kind in ("list_item_open", "blockquote_open"):
            if containers and containers[-1]["kind"] == "item":
                containers[-1]["open"] = False       # the item's own text stops at a nested block
            containers.append({"kind": "item" if kind == "list_item_open" else "quote", "open": True,
                               "start": None, "end": None, "line": None, "heading": builder.heading})
        elif kind in ("list_item_close", "blockquote_close"):
            container = containers.pop()
            if container["kind"] == "item" and container["start"] is not None:
                builder.units.append(Unit("item", container["start"], container["end"], container["line"],
                                          container["heading"]))
        elif kind in ("th_open", "td_open"):
            inline = tokens[index + 1]
            text, _, _ = _words(_inline_pieces(inline.children, inline.map[0] + 1))
            if text:
                builder.leaf("cell", text, inline.map[0] + 1)
        elif kind in _SEGMENT_BREAKS:
            builder.new_segment = True
            if containers and containers[-1]["kind"] == "item":
                containers[-1]["open"] = False
            if kind in _CODE_BLOCKS and (block := _code_block(token)) is not None:
                blocks.append(block)
        index += 1
    return builder, blocks


def _heading(builder: _Builder, containers: list[dict], inline, line: int) -> None:
    text, _, _ = _words(_inline_pieces(inline.children, inline.map[0] + 1))
    builder.new_segment = True
    builder.heading = text
    for container in containers:                 # a heading inside a list item ends its text
        container["open"] = False
    if text:
        builder.leaf("heading", text, line)
    builder.new_segment = True


def _paragraph(builder: _Builder, containers: list[dict], inline) -> None:
    """A paragraph's sentences; inside a list item they also make up the item's own text."""
    text, offsets, lines = _words(_inline_pieces(inline.children, inline.map[0] + 1))
    owner = containers[-1] if containers and containers[-1]["kind"] == "item" else None
    for start, end in sentence_spans(text):
        unit = builder.leaf("sentence", text[start:end], lines[bisect.bisect_right(offsets, start) - 1])
        if owner is not None and owner["open"]:
            if owner["start"] is None:
                owner["start"], owner["line"] = unit.start, unit.line
            owner["end"] = unit.end


def _code_block(token) -> _Block | None:
    """A code, diagram or HTML block's words: never quotable, kept to say why a quote from one fails."""
    first = token.map[0] + (2 if token.type == "fence" else 1)
    pieces = [(line + "\n", first + number) for number, line in enumerate(token.content.split("\n"))]
    text, offsets, lines = _words(pieces)
    return _Block(text, offsets, lines) if text else None


@functools.lru_cache(maxsize=64)
def _layout_of(source: str) -> tuple[str, tuple[Unit, ...], tuple[int, ...], list[_Block]]:
    """(text, units in document order, segment starts, code blocks) of a document's source: one
    check reads each design document for the quotes, the freeze and the budgets, and parses it
    once; a frozen document's layout is a signed memo by its sha256 (generator.storage.memo)."""
    laid_out = default_memo().remembered("design layout", sha256_text(source),
                                 lambda: _layout_record(source))
    text, units, segment_starts, blocks = laid_out
    return (text, tuple(Unit(*unit) for unit in units), tuple(segment_starts),
            [_Block(*block) for block in blocks])


def _layout_record(source: str) -> list:
    """The layout of `_layout_of` as JSON-ready lists."""
    builder, blocks = _lay_out(_markdown().parse(source))
    return ["".join(builder.parts),
            [[unit.kind, unit.start, unit.end, unit.line, unit.heading] for unit in builder.units],
            list(builder.segment_starts), [[block.text, block.offsets, block.lines] for block in blocks]]
