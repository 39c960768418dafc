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

How a document is cut into units, and where a sentence ends, is
generator.claims.record.quotable_units'.
"""

from __future__ import annotations

import bisect
import functools
from pathlib import Path

from generator.claims.language.ledger import DesignSource
from generator.core.dataclass import dataclass
from generator.core.text.characters import describe, hidden_character
from generator.claims.evidence import Evidence
from generator.claims.record.quotable_units import _layout_of, reduce_markdown
from generator.storage.errors import InputError
from generator.storage.bounded_reads import input_problem, read_input
from generator.storage.paths import display_path, reading, resolved

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
