"""Design documents as evidence: a claim's quote must be whole units of a frozen document of design/.

Each document is parsed once with markdown-it-py (CommonMark plus tables) and reduced to the text a
reader sees: emphasis markers dropped, code spans keep their content, links their text, images
their alt text, entities decoded, line breaks become spaces, whitespace collapsed. The reduced text
is cut into units:

- a paragraph (also inside a list item or a block quote): each of its sentences;
- a list item: its own text (its paragraphs, nested lists excluded) and each of its sentences;
  a nested item is a unit of its own;
- a table cell (header or body): the cell;
- a heading: its text, a unit of its own that joins nothing before or after it.

Code blocks (fenced or indented, Mermaid included) and HTML blocks hold no units, and a quote never
crosses them, a thematic break or a heading. A quote holds when, reduced the same way (with or
without its Markdown syntax), it equals one unit or several consecutive units of one section joined
by single spaces; it may omit the final full stop of its last unit and nothing else. The line where
the first unit starts and the section's heading are reported. A quote that is not whole units is
answered with the smallest run of whole units holding it, or else the most similar run, so the
author sees what the document does say.

Sentences end after `.`, `!` or `?` (and any closing quotes or brackets) followed by a space and an
uppercase letter, a digit, a quote or a bracket, never after a common abbreviation (e.g., i.e.,
etc., vs., cf., et al., Fig., No. before a number, approx., Dr.) and never inside a number or a
version (0.81, v6.0.0).
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from generator.claims.language.ledger import DesignSource
from generator.text.characters import describe, hidden_character
from generator.claims.evidence import Evidence
from generator.storage.memo import book, default_memo
from generator.storage.errors import InputError
from generator.storage.bounded_reads import input_problem, read_input
from generator.storage.fileio import sha256_text
from generator.storage.paths import display_path, reading, resolved

if TYPE_CHECKING:
    from markdown_it import MarkdownIt


CLOSEST_MAX_CHARS = 160
CLOSEST_CANDIDATES = 40
CLOSEST_BY_CHARACTERS = 200       # longer quotes are compared word by word
# The similarity search compares each candidate run word by word: quadratic in the quote's words
# (a 1,000-word quote of short words took about 2 s against a 1 MB document). Above this many
# words it is skipped, and the reason says so.
CLOSEST_MAX_WORDS = 300
MAX_DOCUMENT_BYTES = 1_000_000
MAX_QUOTE_CHARS = 2_000

UNIT_HINT = "quote whole sentences, list items or table cells"



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


class DesignDocument:
    """A design document cut into quotable units (see the module docstring)."""

    def __init__(self, name: str, path: Path):
        self.name = name
        self.path = path
        with reading(path):
            raw = read_input(path, "design document")
            if len(raw) > MAX_DOCUMENT_BYTES:
                raise InputError(f"design document is {len(raw):,} bytes, larger than 1 MB "
                                 f"({MAX_DOCUMENT_BYTES:,} bytes); split it", path=display_path(path))
            source = raw.decode("utf-8", errors="replace")
            self._parse(source)
        self._closest_cache: dict[str, tuple[int, str] | None] = {}

    # ------------------------------------------------------------------ parsing

    def _parse(self, source: str) -> None:
        self.text, laid_out, segment_starts, self.blocks = _layout_of(source)
        self.units = sorted(laid_out, key=lambda unit: (unit.start, -unit.end, unit.kind != "item"))
        self._segment_starts = list(segment_starts)
        self._starts = sorted({unit.start for unit in self.units})
        self._ends = sorted({unit.end for unit in self.units})
        self._start_set = set(self._starts)
        self._end_set = set(self._ends)
        # a quote may leave out the full stop that ends its last unit
        self._end_set |= {unit.end - 1 for unit in self.units if self.text[unit.end - 1] == "."}
        self._line_at: dict[int, int] = {}
        self._heading_at: dict[int, str | None] = {}
        for unit in self.units:
            self._line_at.setdefault(unit.start, unit.line)
            self._heading_at.setdefault(unit.start, unit.heading)
        self._leaves = [unit for unit in laid_out if unit.kind != "item"]

    def prose_units(self) -> list[tuple[str, int]]:
        """(text, line) of every sentence, table cell and heading: the prose a reader reads."""
        return [(self.text[unit.start:unit.end], unit.line) for unit in self._leaves]

    # ------------------------------------------------------------------ matching

    @staticmethod
    def needles(quote: str) -> list[str]:
        """The quote as a reader sees it: its Markdown reduced, and as written (whitespace collapsed)."""
        return list(_needles(quote))

    def _occurrences(self, needle: str):
        index = self.text.find(needle)
        while index >= 0:
            yield index
            index = self.text.find(needle, index + 1)

    def find(self, quote: str) -> tuple[int, str | None] | None:
        """(line, heading) of the first run of whole units the quote equals, or None."""
        for needle in self.needles(quote):
            for index in self._occurrences(needle):
                if index in self._start_set and index + len(needle) in self._end_set:
                    return self._line_at[index], self._heading_at[index]
        return None

    def whole_unit(self, quote: str) -> tuple[int, str] | None:
        """The smallest run of whole units that holds the quote as a part: (line, passage), or None."""
        best: tuple[int, int] | None = None
        for needle in self.needles(quote):
            for index in self._occurrences(needle):
                start = self._starts[bisect.bisect_right(self._starts, index) - 1]
                end = self._ends[bisect.bisect_left(self._ends, index + len(needle))]
                if best is None or end - start < best[1] - best[0]:
                    best = (start, end)
        if best is None:
            return None
        return self._line_at[best[0]], _shorten(self.text[best[0]:best[1]])

    def code_line(self, quote: str) -> int | None:
        """The line of the quote's first occurrence in a code, diagram or HTML block, or None."""
        for needle in self.needles(quote):
            for block in self.blocks:
                index = block.text.find(needle)
                if index >= 0:
                    return block.lines[max(bisect.bisect_right(block.offsets, index) - 1, 0)]
        return None

    def closest(self, quote: str) -> tuple[int, str] | None:
        """What the author should quote instead: the smallest run of whole units holding the quote,
        or else the run of units most like it (difflib ratio), with its first line.

        Candidate runs (one per unit: it and the units after it up to the quote's length) are first
        ranked by how many of the quote's words they hold, and only the best few are compared
        character by character.
        """
        if quote in self._closest_cache:
            return self._closest_cache[quote]
        found = self.whole_unit(quote)
        if found is None:
            found = self._most_similar(quote)
        self._closest_cache[quote] = found
        return found

    def _most_similar(self, quote: str) -> tuple[int, str] | None:
        needles = self.needles(quote)
        leaves = self._leaves
        if not needles or not leaves or similarity_skipped(needles[0]):
            return None
        needle = needles[0]
        wanted = {word.lower() for word in needle.split()}
        hits = [0]                                   # running count of the quote's words, leaf by leaf
        for unit in leaves:
            hits.append(hits[-1] + sum(1 for word in self.text[unit.start:unit.end].split()
                                       if word.lower() in wanted))
        leaf_ends = [unit.end for unit in leaves]
        segment_of = [bisect.bisect_right(self._segment_starts, unit.start) - 1 for unit in leaves]
        last_leaf = {segment: position for position, segment in enumerate(segment_of)}
        windows: list[tuple[int, int, int]] = []    # (-overlap, first leaf, last leaf)
        for position, unit in enumerate(leaves):
            last = min(bisect.bisect_left(leaf_ends, unit.start + len(needle)), last_leaf[segment_of[position]])
            windows.append((-(hits[last + 1] - hits[position]), position, last))
        candidates = sorted(windows)[:CLOSEST_CANDIDATES]
        # characters for a short quote (a typo shows), words for a long one (bounded work)
        by_words = len(needle) > CLOSEST_BY_CHARACTERS
        import difflib   # only when a close match or a diff is shown

        matcher = difflib.SequenceMatcher(autojunk=False)
        matcher.set_seq2(needle.split() if by_words else needle)
        best = (-1.0, 0, 0)
        for _, first, last in sorted(candidates, key=lambda window: window[1]):
            passage = self.text[leaves[first].start:leaves[last].end]
            matcher.set_seq1(passage.split() if by_words else passage)
            if matcher.real_quick_ratio() <= best[0] or matcher.quick_ratio() <= best[0]:
                continue
            ratio = matcher.ratio()
            if ratio > best[0]:
                best = (ratio, first, last)
        start, end = leaves[best[1]].start, leaves[best[2]].end
        return self._line_at[start], _shorten(self.text[start:end])


def similarity_skipped(quote: str) -> bool:
    """Whether a quote is too long for the closest-match search (CLOSEST_MAX_WORDS)."""
    return len(quote) > MAX_QUOTE_CHARS or len(quote.split()) > CLOSEST_MAX_WORDS


def _shorten(passage: str) -> str:
    if len(passage) > CLOSEST_MAX_CHARS:
        return passage[:CLOSEST_MAX_CHARS - 3] + "..."
    return passage


@functools.lru_cache(maxsize=4096)
def _needles(quote: str) -> tuple[str, ...]:
    # Many claims quote the same unit: its Markdown is reduced once per check process.
    if len(quote) > MAX_QUOTE_CHARS:
        return ()
    reduced = reduce_markdown(quote)
    written = " ".join(quote.split())
    return tuple(needle for needle in dict.fromkeys((reduced, written)) if needle)


def inside(path: Path, directory: Path) -> bool:
    try:
        resolved(path).relative_to(resolved(directory))
        return True
    except ValueError:
        return False


def design_files(design_dir: Path) -> dict[str, Path]:
    """Every file under design/ (recursive), by name relative to design/: each is frozen and citable.

    A hidden file or directory (its name starts with '.') is refused rather than skipped, and so is
    a link that resolves outside design/.
    """
    found: dict[str, Path] = {}
    if not design_dir.is_dir():
        return found
    for path in sorted(design_dir.rglob("*")):
        relative = path.relative_to(design_dir)
        if any(part.startswith(".") for part in relative.parts):
            raise InputError("hidden file in design/: every design document is frozen and citable; remove or rename it",
                             path=display_path(path))
        if path.is_dir() and not path.is_symlink():
            continue
        if not inside(path, design_dir):
            raise InputError("resolves outside design/ (a link out); design documents must live inside design/",
                             path=display_path(path))
        if path.is_dir() or not path.exists():
            continue   # a link to a directory of design/ (its files are listed), or to nothing
        if problem := input_problem(path):   # a FIFO or a device is refused, never skipped or read
            raise InputError(f"{problem}; every file under design/ is a design document", path=display_path(path))
        found[relative.as_posix()] = path
    return found


class DesignLibrary:
    """The design documents of one check, each read and parsed at most once."""

    def __init__(self, design_dir: Path):
        self.design_dir = design_dir
        self.documents: dict[str, DesignDocument | None] = {
            name: DesignDocument(name, path) for name, path in design_files(design_dir).items()}

    def get(self, name: str, claim_id: str, ledger_display: str, line: int) -> DesignDocument | None:
        if name not in self.documents:
            path = self.design_dir / name
            if path.exists() and not inside(path, self.design_dir):
                raise InputError(f"claim {claim_id}: document {name!r} resolves outside design/",
                                 path=ledger_display, line=line, field="document")
            self.documents[name] = DesignDocument(name, path) if path.is_file() else None
        return self.documents[name]

    def available(self) -> str:
        return ", ".join(sorted(name for name, document in self.documents.items() if document)) or "(none)"

    def all_text(self) -> str:
        """Every document's text as a reader sees it, one after another (in name order)."""
        return "\n".join(document.text for _, document in sorted(self.documents.items()) if document is not None)


@dataclass
class DesignCheck:
    evidence: Evidence
    reason: str | None = None


def check_design_source(source: DesignSource, library: DesignLibrary, claim_id: str,
                        ledger_display: str) -> DesignCheck:
    """Whether the quote is whole units of the document; the evidence shows where (or what to quote)."""
    quote = " ".join(source.quote.split())
    document = library.get(source.document, claim_id, ledger_display, source.line)
    shown = display_path(library.design_dir / source.document)
    failed = Evidence("design", ok=False, document=source.document, quote=quote)
    if document is None:
        return DesignCheck(failed, f"document {shown} not found; design documents: {library.available()}")
    if len(source.quote) > MAX_QUOTE_CHARS:
        return DesignCheck(failed, f"quote is {len(source.quote):,} characters, longer than "
                                   f"{MAX_QUOTE_CHARS:,}; {UNIT_HINT}")
    if not document.needles(source.quote):
        return DesignCheck(failed, f"quote is empty once its Markdown is reduced to text; {UNIT_HINT}")
    where = document.find(source.quote)
    if where is not None:
        return DesignCheck(Evidence("design", document=source.document, line=where[0], heading=where[1],
                                    quote=quote))
    whole = document.whole_unit(source.quote)
    if whole is not None:
        return DesignCheck(failed, f'quote is part of a unit: {UNIT_HINT}; the whole unit (line {whole[0]}): '
                                   f'"{whole[1]}"')
    code = document.code_line(source.quote)
    if code is not None:
        return DesignCheck(failed, f"quote is inside a code or diagram block (line {code}); quote prose")
    if similarity_skipped(quote):
        return DesignCheck(failed, f"quote not found in {shown}; no closest match is searched for a quote of "
                                   f"{len(quote.split()):,} words (more than {CLOSEST_MAX_WORDS}); {UNIT_HINT}")
    closest = document.closest(source.quote)
    hint = f'; closest (line {closest[0]}): "{closest[1]}"' if closest else "; the document is empty"
    hidden = hidden_character(closest[1]) if closest else None
    if hidden is not None:
        # The closest line looks like the quote to a reader and is not: say what hides in it.
        hint = (f"; the closest line ({closest[0]}) holds {describe(hidden)}, which a reader cannot see: delete it "
                "from the document, then freeze the design again")
    return DesignCheck(failed, f"quote not found in {shown}{hint}")
