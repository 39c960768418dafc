"""What a reader sees of a claim: its Markdown rendered to plain text, entities decoded, with the
characters that came from placeholders marked, and every link or image it would show.

The checker scans this text, not the ledger's source, for numbers: `&#56;1` is `81` to a reader,
and `**8**1` is `81` too. Placeholder values are wrapped in two private-use characters
(PLACED_OPEN, PLACED_CLOSE) before rendering, so the scan knows which characters were filled
from results, and their Markdown is escaped so a value cannot become syntax.
"""

from __future__ import annotations

import re
import string
from dataclasses import field
from functools import lru_cache
from typing import TYPE_CHECKING, Mapping

from generator.core.dataclass import dataclass
from generator.storage.memo import book

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

PLACED_OPEN = "\ue010"
PLACED_CLOSE = "\ue011"
UNFILLED_PLACEHOLDER = "[no value]"
# One filled value, marks included (re.split with it keeps each value as a piece of its own).
PLACED_VALUE = re.compile(f"({PLACED_OPEN}[^{PLACED_CLOSE}]*{PLACED_CLOSE})")
_MARKDOWN_SPECIALS = re.compile(r"([\\`*_\[\]<>&~#!|])")
_NEEDS_MARKDOWN = re.compile(r"[\\`*_\[\]<>&~!]|https?:|www\.")


@dataclass
class Visible:
    text: str                                     # plain text with PLACED_OPEN/CLOSE around filled values
    links: list[str] = field(default_factory=list)     # every link target and image source shown
    images: list[str] = field(default_factory=list)

    @property
    def plain(self) -> str:
        return self.text.replace(PLACED_OPEN, "").replace(PLACED_CLOSE, "")

    def placed_spans(self) -> list[tuple[int, int]]:
        """Offsets (into `text`) of every character that came from a placeholder."""
        spans, start = [], None
        for index, char in enumerate(self.text):
            if char == PLACED_OPEN:
                start = index
            elif char == PLACED_CLOSE and start is not None:
                spans.append((start, index + 1))
                start = None
        return spans


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    # Imported here: a check finds most sentences in its book (generator.storage.memo.MemoBook).
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False})


def source_with_values(text: str, formatted: Mapping[str, str]) -> str:
    """The claim's Markdown with each placeholder replaced by its marked, escaped value."""
    parts = []
    for literal, name, _spec, _conversion in string.Formatter().parse(text):
        parts.append(literal)
        if name is not None:
            value = formatted.get(name)
            parts.append(UNFILLED_PLACEHOLDER if value is None
                         else PLACED_OPEN + _MARKDOWN_SPECIALS.sub(r"\\\1", value) + PLACED_CLOSE)
    return "".join(parts)


def render_visible(source: str) -> Visible:
    """Render claim Markdown (already holding its values) to what a reader sees."""
    if not _NEEDS_MARKDOWN.search(source):
        return Visible(" ".join(source.split()))
    return _render(source)


@lru_cache(maxsize=16384)
def _render_cached(source: str) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    text, links, images = book("visible markdown").get(source, lambda: list(_parsed(source)))
    return text, tuple(links), tuple(images)


def _parsed(source: str) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    visible = Visible("")
    pieces: list[str] = []
    open_links: list[tuple[str, int]] = []
    for token in _markdown().parseInline(source):
        for child in token.children or []:
            if child.type in ("text", "code_inline"):
                pieces.append(child.content)
            elif child.type in ("softbreak", "hardbreak"):
                pieces.append(" ")
            elif child.type == "link_open":
                href = child.attrGet("href") or ""
                visible.links.append(href)
                open_links.append((href, len(pieces)))
            elif child.type == "link_close" and open_links:
                # The reports show a link as its text and then its address: the address is seen.
                href, start = open_links.pop()
                if "".join(pieces[start:]) != href:
                    pieces.append(f" ({href})")
            elif child.type == "image":
                visible.images.append(child.attrGet("src") or "")
                pieces.append("".join(grandchild.content for grandchild in child.children or []))
    return " ".join("".join(pieces).split()), tuple(visible.links), tuple(visible.images)


def _render(source: str) -> Visible:
    text, links, images = _render_cached(source)
    return Visible(text, list(links), list(images))


def remote_references(visible: Visible) -> list[str]:
    """Links and images a report would fetch or send the reader away to: anything but `#anchor`."""
    found = [f"image {src!r}" for src in visible.images]
    found += [f"link {href!r}" for href in visible.links if not href.startswith("#")]
    return found
