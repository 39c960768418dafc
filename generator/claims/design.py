"""Design documents as evidence: finding a claim's quote in a frozen document of design/.

A design source holds when its document resolves inside design/ and the quote appears in it after
whitespace normalisation (runs of spaces, tabs and newlines count as one space). The line and
nearest Markdown heading of the first occurrence are reported; a missing quote is reported with
the closest passage, so the author sees what the document does say.
"""

from __future__ import annotations

import bisect
import difflib
import re
from dataclasses import dataclass
from pathlib import Path

from generator.claims.ledger import DesignSource
from generator.claims.report import Evidence
from generator.errors import InputError
from generator.fileio import display_path, reading

CLOSEST_MAX_CHARS = 160
CLOSEST_CANDIDATES = 40
_HEADING = re.compile(r"#{1,6}\s+(.*?)\s*#*\s*$")


class DesignDocument:
    """A design document indexed for whitespace-normalised search."""

    def __init__(self, name: str, path: Path):
        self.name = name
        self.path = path
        with reading(path):
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
                match = _HEADING.match(stripped)
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
        self._closest_cache: dict[str, tuple[int, str] | None] = {}

    def find(self, quote: str) -> tuple[int, str | None] | None:
        """(line, heading) of the quote's first occurrence, or None."""
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


def inside(path: Path, directory: Path) -> bool:
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
        if not inside(path, design_dir):
            raise InputError("resolves outside design/ (a link out); design documents must live inside design/",
                             path=display_path(path))
        if path.is_file():
            found[relative.as_posix()] = path
    return found


class DesignLibrary:
    """The design documents of one check, each read and indexed at most once."""

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


@dataclass
class DesignCheck:
    evidence: Evidence
    reason: str | None = None


def check_design_source(source: DesignSource, library: DesignLibrary, claim_id: str,
                        ledger_display: str) -> DesignCheck:
    """Whether the quote is in the document; the evidence shows where (or what is closest)."""
    quote = " ".join(source.quote.split())
    document = library.get(source.document, claim_id, ledger_display, source.line)
    shown = display_path(library.design_dir / source.document)
    if document is None:
        return DesignCheck(Evidence("design", ok=False, document=source.document, quote=quote),
                           f"document {shown} not found; design documents: {library.available()}")
    where = document.find(quote)
    if where is None:
        closest = document.closest(quote)
        hint = f'; closest (line {closest[0]}): "{closest[1]}"' if closest else "; the document is empty"
        return DesignCheck(Evidence("design", ok=False, document=source.document, quote=quote),
                           f"quote not found in {shown}{hint}")
    return DesignCheck(Evidence("design", document=source.document, line=where[0], heading=where[1], quote=quote))
