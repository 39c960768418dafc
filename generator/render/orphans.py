"""The orphan scan: every word and number a reader sees must have been emitted on purpose.

While rendering, every value that may reach the reader goes through one of three doors in
`generator.render.doors`: a ledger claim's rendered text, a label from the label registry
(`templates/labels.yaml`, plus section titles and column labels from readout.yaml), or a
data-bound value (a table cell, a chart label, a hash, a model name read from results.json or
the check report). Each door wraps what it emits between two private-use characters, OPEN and
CLOSE. Text a template writes literally carries no marks.

The scan reads the marked output the way its reader's software does, before the marks are
removed, and reports every letter or digit a reader would see, hear or get as a tooltip outside a
marked span, with the output file and the line where it stands:
- HTML is parsed by an HTML5-conformant parser (html5lib), so a comment ends where a browser ends
  it (`<!-->` and `--!>` close one) and text after it is text. Scanned: every text node outside
  `head`, `script`, `style`, `template` and `noscript` (the document title included, and SVG
  text), and every attribute a browser shows or speaks (VISIBLE_ATTRIBUTES: title, alt,
  aria-label, placeholder, value, label, ...). Refused outright: `<script>`, `<ol>` (the browser
  numbers its items), style sheets and `style=` attributes that generate text (`content`,
  `quotes`, string or numbering list markers, counter styles), and `data:` URLs with a payload
  (an SVG or HTML document can hold any text), but for a PNG an `<img>` shows (the theme's logo).
- Markdown is parsed by CommonMark (markdown-it, with tables and strikethrough as GitHub reads
  them), rendered to HTML and scanned like HTML: link titles become tooltips, raw HTML is HTML,
  and the build stamp's comment stays a comment.
Punctuation and whitespace between marked spans (Markdown syntax, table pipes, separators) pass.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

from generator.core.dataclass import dataclass

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

OPEN = "\ue000"
CLOSE = "\ue001"

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
    """`text` without the marks around emitted values. Two `replace`s, not `translate` with a
    table: a render strips thousands of short texts (8,000 on the SciFact review), and looking up
    every character in a table took a twentieth of `render --check`."""
    return text.replace(OPEN, "").replace(CLOSE, "")


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


# Where a browser shows, speaks or tooltips an attribute's value.
VISIBLE_ATTRIBUTES = frozenset({"title", "alt", "aria-label", "aria-description", "aria-roledescription",
                                "aria-valuetext", "aria-placeholder", "placeholder", "label", "value", "summary",
                                "abbr", "download"})
# Elements whose text a browser does not render as text.
_SILENT_ELEMENTS = frozenset({"script", "style", "template", "noscript", "head", "meta", "link"})
# List markers that print no character nobody emitted (`decimal` would number the items).
_QUIET_MARKERS = frozenset({"none", "disc", "circle", "square", "disclosure-open", "disclosure-closed", "inherit",
                            "initial", "unset", "revert", "outside", "inside"})
_URL_ATTRIBUTES = frozenset({"src", "href", "srcset", "poster", "data", "xlink:href", "action", "formaction",
                             "background", "cite", "icon", "manifest"})
_DATA_URL = re.compile(r"data:(?![,\s\"')]|$)", re.IGNORECASE)
# A PNG (the theme's logo, generator.render.theme): pixels, never a document with text of its own.
_RASTER = re.compile(r"data:image/png;base64,[A-Za-z0-9+/]+={0,2}")
_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_DECLARATION = re.compile(r"(?<![\w-])(content|quotes|list-style-type|list-style|counter-reset|counter-set|"
                          r"counter-increment|symbols|additive-symbols)\s*:\s*([^;}]*)", re.IGNORECASE)


def css_problems(css: str) -> list[str]:
    """Every way a style sheet or a style attribute makes a browser print text: generated
    `content`, `quotes` strings, list markers that are strings or counters (`decimal` numbers the
    items), counter styles, and `data:` URLs (an SVG or HTML document can hold any text)."""
    css = _CSS_COMMENT.sub(" ", css)
    found = []
    if "@counter-style" in css.lower():
        found.append("CSS generates text: @counter-style")
    for match in _DECLARATION.finditer(css):
        prop, value = match.group(1).lower(), " ".join(match.group(2).split()).strip()
        words = {word for word in re.split(r"\s+", value.lower()) if word}
        if prop == "content" and value.lower() not in ("", "none", "normal", '""', "''"):
            found.append(f"CSS generates text: {match.group(0).strip()}")
        elif prop == "quotes" and value.lower() not in ("none", "auto", "initial", "inherit", "unset"):
            found.append(f"CSS generates text: {match.group(0).strip()}")
        elif prop.startswith("list-style") and (('"' in value or "'" in value) or (
                prop == "list-style-type" and not words <= _QUIET_MARKERS) or (
                prop == "list-style" and not words <= _QUIET_MARKERS | {"url(", "inside", "outside"}
                and not any(word.startswith("url(") for word in words))):
            found.append(f"CSS list markers print text: {match.group(0).strip()}")
        elif prop in ("symbols", "additive-symbols"):
            found.append(f"CSS generates text: {match.group(0).strip()}")
    if _DATA_URL.search(css):
        found.append("a data: URL in CSS can carry text nobody emitted")
    return found


class _DocumentScanner:
    """Walks the document as an HTML5 browser parses it (html5lib): comments are what the HTML5
    comment grammar says they are (`<!-->` and `--!>` included), text nodes are scanned in
    document order with one mark depth, and attributes and styles one by one."""

    def __init__(self, name: str, source: str) -> None:
        self.name = name
        self.source = source
        self.cursor = 0
        self.runs = _Runs()
        self.orphans: list[Orphan] = []

    def line_of(self, text: str) -> int:
        """Where `text` stands in the source, searched from the last place found (a DOM keeps no lines)."""
        needle = text.strip()[:40]
        index = self.source.find(needle, self.cursor) if needle else -1
        if index < 0:
            index = self.source.find(needle) if needle else -1
        if index < 0:
            return self.source.count("\n", 0, self.cursor) + 1
        self.cursor = index
        return self.source.count("\n", 0, index) + 1

    def add(self, text: str, near: str | None = None) -> None:
        self.orphans.append(Orphan(self.name, self.line_of(near or text), text))

    def text(self, data: str | None, silent: bool) -> None:
        if not data or silent:
            return
        for _, run in self.runs.scan(data, 1):
            self.add(run, strip_marks(run))

    def element(self, node: Any, silent: bool = False) -> None:
        tag = node.tag if isinstance(node.tag, str) else None
        if tag is None:              # a comment: invisible, but the text after it is not
            self.text(node.tail, silent)
            return
        tag = tag.rsplit("}", 1)[-1].lower()
        if tag == "script":
            self.add("<script> element", "<script")
        if tag == "ol":
            self.add("<ol> numbers its items itself: use <ul> with data-bound numbers", "<ol")
        if tag == "style":
            for problem in css_problems(node.text or ""):
                self.add(problem, "<style")
        self.attributes(tag, node)
        inner_silent = silent or (tag in _SILENT_ELEMENTS and tag != "head")
        if tag == "head":
            inner_silent = True
        if tag == "title":
            inner_silent = False
        self.text(node.text, inner_silent)
        for child in node:
            self.element(child, inner_silent)
        self.text(node.tail, silent)

    def attributes(self, tag: str, node: Any) -> None:
        for key, value in node.attrib.items():
            key = key.rsplit("}", 1)[-1].lower() if isinstance(key, str) else str(key)
            if not isinstance(value, str) or not value:
                continue
            if key == "style":
                for problem in css_problems(value):
                    self.add(f"style={problem}", value)
            if key in _URL_ATTRIBUTES and _DATA_URL.search(value) and not (
                    tag == "img" and key == "src" and _RASTER.fullmatch(value)):
                self.add(f"{key}=a data: URL can carry text nobody emitted", value[:40])
            if key == "value" and tag in ("meta", "param", "data"):
                continue
            if key in VISIBLE_ATTRIBUTES:
                for _, run in _Runs().scan(value, 1):
                    self.add(f"{key}={run}", strip_marks(run))


def _html5_parse(text: str) -> Any:
    # Imported here: `render --check` finds most scans remembered (generator.storage.memo) and then
    # never needs the parser, the slowest import of the renderer.
    import html5lib

    return html5lib.parse(text, treebuilder="etree", namespaceHTMLElements=False)


def scan_html(text: str, name: str) -> list[Orphan]:
    """Orphans in a marked HTML document (file name `name` for the messages), read as an HTML5
    browser reads it."""
    scanner = _DocumentScanner(name, text)
    scanner.element(_html5_parse(text))
    return scanner.orphans


@functools.cache
def _commonmark() -> MarkdownIt:
    from markdown_it import MarkdownIt   # only when a scan is not remembered

    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


def scan_markdown(text: str, name: str) -> list[Orphan]:
    """Orphans in a marked Markdown document, read the way a Markdown viewer shows it: CommonMark's
    own parse (with tables and strikethrough, as GitHub reads them) rendered to HTML and scanned
    like HTML, so link titles, reference definitions and raw HTML are what a viewer makes of them
    and the build stamp's comment is a comment."""
    scanner = _DocumentScanner(name, text)
    rendered = _commonmark().render(text)
    scanner.element(_html5_parse(rendered))
    return scanner.orphans



def scan(text: str, name: str) -> list[Orphan]:
    """Dispatch on the output's file name: `.html` is HTML, anything else Markdown."""
    return scan_html(text, name) if name.endswith((".html", ".htm")) else scan_markdown(text, name)
