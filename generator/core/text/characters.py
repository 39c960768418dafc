"""What a reader cannot see, and letters that look like other letters: one list each, read from
the Unicode data, never kept by hand.

- **Hidden characters**: every default-ignorable code point (Unicode's Default_Ignorable_Code_Point
  property: soft hyphens, zero-width characters, bidi isolates and marks, tag characters, variation
  selectors, Hangul fillers, ...) and every format (Cf), control (Cc), surrogate (Cs), private-use
  (Co) or unassigned (Cn) character, as the `regex` module's Unicode tables hold them. A text a
  reader sees (a claim, a label, a title, a reason, an id) may hold none of them: what the checker
  reads and what a browser shows must be the same characters.
- **Look-alikes**: before a text is matched against words (verdicts, comparisons, row and model
  names), it is folded: NFKC (fullwidth and mathematical letters become plain ones), then every
  character outside ASCII whose prototype in Unicode's confusables.txt (UTS #39, the skeleton
  mapping, as the `confusable-homoglyphs` package ships it) is ASCII is replaced by that
  prototype. "Ѕhір the reranker", written with Cyrillic letters, folds to "Ship the reranker".
  ASCII is left as it is, so a word list written in ASCII still reads the folded text.

Limits: the fold is UTS #39's mapping restricted to ASCII prototypes; a look-alike whose prototype
is not ASCII (two scripts that resemble each other but not Latin) is left as it is.
"""

from __future__ import annotations

import bisect
import functools
import json
import sys
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

import re

from generator.storage.memo import default_memo

if TYPE_CHECKING:
    import regex

_LINE_ENDS = "\n\t"
# In ASCII, what a reader cannot see is a control character: the one case a check meets almost
# always, read without the Unicode tables.
_ASCII_HIDDEN = re.compile(r"[\x00-\x1f\x7f]")


_HIDDEN_CLASS = r"\p{Default_Ignorable_Code_Point}\p{Cf}\p{Cc}\p{Cs}\p{Co}\p{Cn}"
# Every character but the printable ASCII ones: the only ones the Unicode tables are asked about.
_OUTSIDE_PRINTABLE_ASCII = re.compile(r"[^\x20-\x7e]")


class HiddenCharacters:
    """Every character a reader cannot see, as the code point ranges of the `regex` module's
    Unicode tables: `finditer` and `sub` as a compiled pattern of them would give. Importing
    `regex` and compiling its Unicode classes costs a gate run more than reading the 746 ranges,
    so they are drawn from the tables once per version of the package and of `regex` (a signed
    memo, generator.storage.memo) and the tables are imported only where no memo can be kept."""

    def __init__(self, ranges: list[list[int]]):
        self._starts = [start for start, _ in ranges]
        self._ends = [end for _, end in ranges]

    def hides(self, char: str) -> bool:
        point = ord(char)
        index = bisect.bisect_right(self._starts, point) - 1
        return index >= 0 and point <= self._ends[index]

    def finditer(self, text: str) -> Iterator[re.Match]:
        return (match for match in _OUTSIDE_PRINTABLE_ASCII.finditer(text) if self.hides(match.group(0)))

    def sub(self, replacement: Callable[[re.Match], str], text: str) -> str:
        return _OUTSIDE_PRINTABLE_ASCII.sub(
            lambda match: replacement(match) if self.hides(match.group(0)) else match.group(0), text)


@functools.lru_cache(maxsize=1)
def hidden_pattern() -> HiddenCharacters | "regex.Pattern":
    """Every character a reader cannot see (or that is not a character at all): `finditer` and `sub`.
    Without memos (READOUT_NO_MEMO) the `regex` pattern itself: drawing the ranges costs more."""
    memo = default_memo()
    if not memo.enabled():
        return regex_hidden_pattern()
    return HiddenCharacters(memo.remembered("hidden characters", _HIDDEN_CLASS, hidden_ranges))


def regex_hidden_pattern() -> "regex.Pattern":
    """The same characters as one `regex` pattern, from the module's own tables."""
    import regex

    return regex.compile(f"[{_HIDDEN_CLASS}]")


def hidden_ranges() -> list[list[int]]:
    """[[first, last], ...]: the code points of _HIDDEN_CLASS in the `regex` module's tables, in order."""
    import regex

    # Matching the visible runs takes a few hundred matches where the hidden points are 941,741.
    visible = regex.compile(f"[^{_HIDDEN_CLASS}]+")
    ranges, after_last_visible = [], 0
    for match in visible.finditer("".join(map(chr, range(sys.maxunicode + 1)))):
        if match.start() > after_last_visible:
            ranges.append([after_last_visible, match.start() - 1])
        after_last_visible = match.end()
    if after_last_visible <= sys.maxunicode:
        ranges.append([after_last_visible, sys.maxunicode])
    return ranges


def _hidden(text: str):
    return (_ASCII_HIDDEN if text.isascii() else hidden_pattern()).finditer(text)


def hidden_character(text: str, *, allow: str = "") -> str | None:
    """The first character of `text` a reader cannot see, or None. `allow` names characters the
    caller accepts (a tab, a line end in a multi-line text)."""
    if text.isascii() and text.isprintable():
        return None   # ASCII hides only its control characters, and isprintable is C (a 10k-claim ledger asks 95k times)
    for match in _hidden(text):
        if match.group(0) not in allow:
            return match.group(0)
    return None


def describe(char: str) -> str:
    """`U+00AD SOFT HYPHEN`: how a message names a character nobody can see."""
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X}" + (f" {name}" if name else "")


@functools.lru_cache(maxsize=1)
def ascii_prototypes() -> dict[str, str]:
    """{character: its UTS #39 prototype}, for every single character outside ASCII whose
    prototype is ASCII. The package keeps confusables.txt's pairs in both directions; a character
    outside ASCII has at most one ASCII partner, its prototype. Drawn from the package's whole
    table once and remembered (the memo's fingerprint names the package's version): reading the
    table is a twentieth of a check."""
    return default_memo().remembered("ascii prototypes", "confusables", _ascii_prototypes_from_table)


def _ascii_prototypes_from_table() -> dict[str, str]:
    import confusable_homoglyphs

    path = Path(confusable_homoglyphs.__file__).resolve().parent / "confusables.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    mapping: dict[str, str] = {}
    for char, partners in data.items():
        if len(char) == 1 and not char.isascii():
            prototypes = [partner["c"] for partner in partners if partner["c"].isascii()]
            if len(prototypes) == 1:
                mapping[char] = prototypes[0]
    return mapping


def fold(text: str) -> str:
    """`text` as words are matched against it: NFKC, hidden characters removed, and each look-alike
    outside ASCII replaced by its ASCII prototype (see the module docstring)."""
    if text.isascii() and not _ASCII_HIDDEN.search(text.replace("\n", " ").replace("\t", " ")):
        return text
    normal = unicodedata.normalize("NFKC", text)
    normal = (_ASCII_HIDDEN if normal.isascii() else hidden_pattern()).sub(
        lambda match: match.group(0) if match.group(0) in _LINE_ENDS else "", normal)
    if normal.isascii():
        return normal
    prototypes = ascii_prototypes()
    return "".join(prototypes.get(char, char) for char in normal)
