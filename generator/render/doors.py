"""The doors: every value that may reach a reader leaves the renderer through one of them.

A door escapes the value for its format (HTML, where Jinja's autoescape is on; Markdown, where
data must not become syntax) and wraps it in the orphan scan's marks (generator.render.orphans),
so the scan can prove that every visible word came from a claim, a label or a results value.
Every value leaves on one line, with each character a reader cannot see (a bidi control such as
U+202E, a zero-width or control character) written out as its code point, `[U+202E]`.
`data` is a value read from results or the check report, `claim` a ledger claim's rendered
text (Markdown), `code` an identifier, `quote` a quoted design span.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Iterable, Protocol, Sequence

from markupsafe import Markup, escape

from generator.core.text.characters import hidden_character, hidden_pattern
from generator.render.orphans import CLOSE, OPEN, strip_marks
from generator.storage.memo import book

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token


def _clean(text: Any) -> str:
    return strip_marks(str(text))


def _shown(char: str) -> str:
    return f"[U+{ord(char):04X}]"


def _one_line(text: str) -> str:
    """A value on one line, every character a reader could not see written as its code point: a
    right-to-left override (or any bidi control, zero-width or control character) in a query text
    or a results string never reaches a page raw, where it would reorder or hide what follows."""
    line = " ".join(_clean(text).split())
    if hidden_character(line) is None:
        return line
    pattern = hidden_pattern() if not line.isascii() else None
    if pattern is None:
        return "".join(_shown(char) if hidden_character(char) else char for char in line)
    return pattern.sub(lambda match: _shown(match.group(0)), line)


_MD_DATA_SPECIALS = re.compile(r"([\\`*\[\]|<>~&])")
# Text that Markdown viewers turn into live links by themselves (GitHub's extended autolinks).
_AUTOLINKED = re.compile(r"(?<![`\w])((?:https?://|ftp://|www\.)[^\s`<>]*[^\s`<>.,;:!?)\]]"
                         r"|[\w.+-]+@[\w-]+\.[\w.-]*\w)")
_MD_BLOCK_START = re.compile(r"^(#|>|[-+*](?=\s)|=|(\d+)([.)])(?=\s))")


def markdown_inline() -> MarkdownIt:
    """Claim Markdown to inline HTML. Raw HTML is off (it comes out escaped). Links, autolinks
    and images render as their text followed by the address in parentheses, never as href or
    src: the readout makes no request, and a reader still sees every address."""
    from markdown_it import MarkdownIt   # only for a claim whose rendering is not remembered

    md = MarkdownIt("commonmark", {"html": False})

    def link_open(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
        env.setdefault("links", []).append(tokens[idx].attrGet("href") or "")
        return ""

    def link_close(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
        href = env["links"].pop()
        text = tokens[idx - 1].content if idx > 0 and tokens[idx - 1].type == "text" else None
        return "" if text == href or f"mailto:{text}" == href else f' (<span class="addr">{escape(href)}</span>)'

    def image(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
        token = tokens[idx]
        alt = "".join(child.content for child in token.children or [])
        return f'{escape(alt)} (<span class="addr">{escape(token.attrGet("src") or "")}</span>)'

    md.add_render_rule("link_open", link_open)
    md.add_render_rule("link_close", link_close)
    md.add_render_rule("image", image)
    return md


class Door(Protocol):
    """What every door does, for its own format: the renderer and the views hold one of these."""

    def data(self, value: Any) -> str: ...

    def code(self, value: Any) -> str: ...

    def claim(self, text: str) -> str: ...

    def join(self, parts: Iterable[Any], sep: str = " ") -> str: ...

    def quote(self, value: Any) -> str: ...

    def interval(self, low: Any, high: Any) -> str: ...


class HtmlDoor:
    """Marked, escaped values for HTML templates (Jinja autoescape is on for these)."""

    def __init__(self) -> None:
        self._md: MarkdownIt | None = None

    def data(self, value: Any) -> Markup:
        return Markup(OPEN + str(escape(_one_line(value))) + CLOSE)

    def code(self, value: Any) -> Markup:
        return Markup(OPEN + "<code>" + str(escape(_one_line(value))) + "</code>" + CLOSE)

    def claim(self, text: str) -> Markup:
        line = _one_line(text)
        # Remembered by the text (generator.storage.memo): a page whose claims were all rendered
        # before needs no Markdown parser.
        return Markup(OPEN + book("inline claim html").get(line, lambda: self._inline(line)) + CLOSE)

    def _inline(self, line: str) -> str:
        if self._md is None:
            self._md = markdown_inline()
        return self._md.renderInline(line, {}).strip()

    def join(self, parts: Iterable[Any], sep: str = " ") -> Markup:
        return Markup(escape(sep)).join(parts)

    def quote(self, value: Any) -> Markup:
        return Markup("<q>" + OPEN + str(escape(_one_line(value))) + CLOSE + "</q>")

    def interval(self, low: Any, high: Any) -> Markup:
        return Markup("[") + low + Markup(", ") + high + Markup("]")


class MarkdownDoor:
    """Marked values for Markdown templates: data escaped so it cannot become Markdown syntax."""

    def data(self, value: Any) -> str:
        return OPEN + _MD_DATA_SPECIALS.sub(r"\\\1", _one_line(value)) + CLOSE

    def code(self, value: Any) -> str:
        text = _one_line(value)
        fence = "``" if "`" in text else "`"
        return OPEN + f"{fence}{text}{fence}" + CLOSE

    def claim(self, text: str) -> str:
        # Claims are Markdown; raw HTML is neutralised and a leading block marker escaped, so a
        # claim can neither inject markup nor turn into a heading, quote or list item. An address
        # is shown as code, which no Markdown viewer turns into a live link.
        text = _AUTOLINKED.sub(lambda match: "`" + match.group(1) + "`", _one_line(text))
        text = text.replace("<", "&lt;").replace(">", "&gt;")
        match = _MD_BLOCK_START.match(text)
        if match:
            if match.group(2):
                text = match.group(2) + "\\" + text[len(match.group(2)):]
            else:
                text = "\\" + text
        return OPEN + text + CLOSE

    def join(self, parts: Iterable[Any], sep: str = " ") -> str:
        return sep.join(parts)

    def quote(self, value: Any) -> str:
        return "“" + self.data(value) + "”"

    def interval(self, low: Any, high: Any) -> str:
        return "[" + low + ", " + high + "]"
