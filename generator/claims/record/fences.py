"""Fenced blocks of the design documents: found in the Markdown (remembered by the text's sha256),
and one block's YAML mapping read with the design line of each key.

The `budget`, `trigger` and `regression` blocks (generator.claims.record.design_rules and
generator.claims.record.regression_block) are all read through here, so an error points at the
line of the design document a reader opens, never at a line of the block.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from generator.claims.record.design import design_files
from generator.storage.memo import default_memo
from generator.storage.errors import InputError
from generator.storage.bounded_reads import read_input
from generator.storage.fileio import sha256_text
from generator.storage.paths import display_path, reading
from generator.storage.safe_yaml import load_config_with_lines

if TYPE_CHECKING:
    from markdown_it import MarkdownIt


@functools.lru_cache(maxsize=1)
def _commonmark() -> MarkdownIt:
    from markdown_it import MarkdownIt   # only when a design document's fences are not remembered

    return MarkdownIt("commonmark")


@functools.lru_cache(maxsize=32)
def _fences(text: str) -> tuple[tuple[str, str, int, str | None], ...]:
    """(info, content, first content line, heading above) of every fenced block of a Markdown text
    (remembered: one check reads the design rules for the freeze and for the decisions; across
    checks, a signed memo by the text's sha256, generator.storage.memo)."""
    found = default_memo().remembered("design fences", sha256_text(text),
                              lambda: _fence_record(text))
    return tuple((info, content, line, heading) for info, content, line, heading in found)


def _fence_record(text: str) -> list[list]:
    found: list[list] = []
    heading = None
    tokens = _commonmark().parse(text)
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and index + 1 < len(tokens):
            heading = tokens[index + 1].content.strip()
        if token.type == "fence" and token.map:
            found.append([token.info.strip(), token.content, token.map[0] + 2, heading])
    return found


def design_fences(design_dir: Path, kinds: tuple[str, ...]) -> list[tuple[str, str, int, str | None, str, str]]:
    """(info, content, first content line, heading above, document name, shown path) of every
    fenced block of the Markdown design documents whose info is one of `kinds`, in name order."""
    blocks = []
    for name, path in sorted(design_files(design_dir).items()):
        if path.suffix.lower() not in (".md", ".markdown"):
            continue
        shown = display_path(path)
        try:
            with reading(path):
                text = read_input(path, "design document", shown).decode("utf-8")
        except UnicodeDecodeError as error:
            raise InputError(f"not UTF-8 text (byte {error.start})", path=shown) from None
        blocks += [(info, content, line, heading, name, shown) for info, content, line, heading in _fences(text)
                   if info in kinds]
    return blocks


def _block(content: str, line: int, shown: str,
           what: str = "a fenced block holds a YAML mapping") -> tuple[dict[str, Any], Callable[[str], int]]:
    try:
        data, lines = load_config_with_lines(content, shown)
    except InputError as error:
        raise InputError(error.reason, path=shown, line=line + (error.line or 1) - 1) from None
    if not isinstance(data, dict):
        raise InputError(what, path=shown, line=line)
    return data, lambda key: line + (lines.line(key) or 1) - 1
