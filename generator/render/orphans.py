"""The orphan scan: every word and number a reader sees must have been emitted on purpose.

While rendering, every value that may reach the reader goes through one of three doors in
`generator.render.doors`: a ledger claim's rendered text, a label from the label registry
(`templates/labels.yaml`, plus section titles and column labels from readout.yaml), or a
data-bound value (a table cell, a chart label, a hash, a model name read from results.json or
the check report). Each door wraps what it emits between two private-use characters, OPEN and
CLOSE. Text a template writes literally carries no marks.

The scan walks the marked output before the marks are removed and reports every letter or
digit that a reader would see outside a marked span, with the output file and line:
- HTML: text nodes (including SVG text and the document title) and the visible attributes
  (title, alt, aria-label, placeholder, label); style sheets may not generate text (`content:`
  with a string or a counter) and numbered lists (`<ol>`) are refused because the browser
  would print numbers nobody emitted;
- Markdown: every character outside HTML comments (the build stamp) and outside marked spans.
Punctuation and whitespace between marked spans (Markdown syntax, table pipes, separators) pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser

OPEN = "\ue000"
CLOSE = "\ue001"
MARKS = {ord(OPEN): None, ord(CLOSE): None}

VISIBLE_ATTRIBUTES = frozenset({"title", "alt", "aria-label", "placeholder", "label"})
_GENERATED_CSS = re.compile(r"content\s*:\s*(?!\s*(?:\"\"|''|none|normal)\s*[;}])[^;}]+", re.IGNORECASE)
_EXCERPT_CHARS = 80


@dataclass(frozen=True)
class Orphan:
    """Text in an output that no claim, label or data value accounts for."""

    file: str
    line: int
    text: str

    def __str__(self) -> str:
        return (f"{self.file}:{self.line}: orphan text {self.text!r}: not a ledger claim, a registered "
                f"label or a data value (put the sentence in claims/ledger.yaml, or the label in "
                f"templates/labels.yaml)")


def strip_marks(text: str) -> str:
    return text.translate(MARKS)


def _excerpt(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _EXCERPT_CHARS else text[: _EXCERPT_CHARS - 1] + "…"


class _Runs:
    """Scans strings for unmarked letters and digits, keeping the nesting depth between calls."""

    def __init__(self) -> None:
        self.depth = 0

    def scan(self, text: str, first_line: int) -> list[tuple[int, str]]:
        """Return (line, run) for each unmarked run that holds a letter or a digit."""
        found: list[tuple[int, str]] = []
        line = first_line
        run: list[str] = []
        run_line: list[int] = []  # line of the run's first letter or digit

        def flush() -> None:
            if run_line:
                found.append((run_line[0], _excerpt("".join(run))))
            run.clear()
            run_line.clear()

        for ch in text:
            if ch == OPEN:
                if self.depth == 0:
                    flush()
                self.depth += 1
            elif ch == CLOSE:
                self.depth = max(0, self.depth - 1)
            elif self.depth == 0:
                run.append(ch)
                if ch.isalnum() and not run_line:
                    run_line.append(line)
            if ch == "\n":
                line += 1
        flush()
        return found


class _HtmlScanner(HTMLParser):
    def __init__(self, name: str) -> None:
        super().__init__(convert_charrefs=True)
        self.name = name
        self.runs = _Runs()
        self.orphans: list[Orphan] = []
        self.in_style = False

    def _add(self, line: int, text: str) -> None:
        self.orphans.append(Orphan(self.name, line, text))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        line = self.getpos()[0]
        if tag == "style":
            self.in_style = True
        if tag == "script":
            self._add(line, "<script> element")
        if tag == "ol":
            self._add(line, "<ol> numbers its items itself: use <ul> with data-bound numbers")
        if self.runs.depth == 0:
            for key, value in attrs:
                if key in VISIBLE_ATTRIBUTES and value:
                    for _, run in _Runs().scan(value, line):
                        self._add(line, f"{key}={run}")

    handle_startendtag = handle_starttag

    def handle_endtag(self, tag: str) -> None:
        if tag == "style":
            self.in_style = False

    def handle_data(self, data: str) -> None:
        line = self.getpos()[0]
        if self.in_style:
            for match in _GENERATED_CSS.finditer(data):
                self._add(line + data[: match.start()].count("\n"), f"CSS generates text: {match.group(0)}")
            return
        for run_line, run in self.runs.scan(data, line):
            self._add(run_line, run)


def scan_html(text: str, name: str) -> list[Orphan]:
    """Orphans in a marked HTML document (file name `name` for the messages)."""
    scanner = _HtmlScanner(name)
    scanner.feed(text)
    scanner.close()
    return scanner.orphans


def scan_markdown(text: str, name: str) -> list[Orphan]:
    """Orphans in a marked Markdown document; HTML comments are skipped."""
    runs = _Runs()
    orphans: list[Orphan] = []
    position = 0
    line = 1
    for match in re.finditer(r"<!--.*?-->", text, flags=re.DOTALL):
        chunk = text[position:match.start()]
        orphans.extend(Orphan(name, run_line, run) for run_line, run in runs.scan(chunk, line))
        line += text[position:match.end()].count("\n")
        position = match.end()
    orphans.extend(Orphan(name, run_line, run) for run_line, run in runs.scan(text[position:], line))
    return orphans


def scan(text: str, name: str) -> list[Orphan]:
    """Dispatch on the output's file name: `.html` is HTML, anything else Markdown."""
    return scan_html(text, name) if name.endswith((".html", ".htm")) else scan_markdown(text, name)
