"""What a query or document id may hold, for every reader of a dataset (the BEIR loader and the
ir_datasets export refuse the same ids).

An id is one field of a TREC run line (`qid Q0 docid rank score tag`), and trec_eval, ir_measures
and this project's own run reader split that line on whitespace. So an id is printable text with
no space of any kind, from 1 to MAX_ID_CHARS characters: Python's `str.isprintable()` (no
character of Unicode's categories Z*, the separators, or C*: control, format, surrogate, private
use and unassigned; so no NUL, tab, U+00A0, U+200B, U+2028 or U+FEFF) and no ASCII space.
`MED-10`, `4983`, `a/b:c#d` and `Zürich` are ids; `<svg onload=x>` is not.

Two ids of one file may not be the same text in two Unicode normalisations (`é` as U+00E9 and as
`e` + U+0301): they look alike, compare unequal, and a tool that normalises (an editor, a judge's
spreadsheet) would merge them. `id_form` is the form they are compared in (NFC).
"""

from __future__ import annotations

import unicodedata

from generator.storage.errors import clip, excerpt

# Real ids are short (SciFact's are numbers; FEVER's and DBpedia's Wikipedia titles stay under
# 300 characters): an id of thousands is a wrong column, and a run file repeats it on every line.
MAX_ID_CHARS = 1000

_KINDS = {"Cc": "a control character", "Cf": "an invisible format character", "Cs": "a lone surrogate",
          "Co": "a private-use character", "Cn": "an unassigned code point"}


def id_form(value: str) -> str:
    """The form in which two ids of one file may not coincide: Unicode NFC."""
    return unicodedata.normalize("NFC", value)


def code_points(text: str, limit: int = 6) -> str:
    """`U+0065 U+0301`: how an id is spelled, for a message about two spellings."""
    shown = " ".join(f"U+{ord(char):04X}" for char in text[:limit])
    return shown + (" ..." if len(text) > limit else "") if text else "nothing"


def id_problem(value: str) -> str | None:
    """Why `value` cannot be an id, as an error message says it, or None when it can."""
    if value.isprintable() and " " not in value and 0 < len(value) <= MAX_ID_CHARS:
        return None
    if not value.strip():
        return "empty id"
    if len(value) > MAX_ID_CHARS:
        return f"id {excerpt(value, 30)} is longer than {MAX_ID_CHARS:,} characters"
    char = next(char for char in value if char == " " or not char.isprintable())
    category = unicodedata.category(char)
    kind = "whitespace" if char.isspace() or category.startswith("Z") else _KINDS.get(category, "a character")
    name = unicodedata.name(char, "")
    # An escaped id can be ten times its length (`\U0001f600`): the echo is cut after escaping too.
    shown = clip(excerpt(value, 30), 70)
    return (f"id {shown} holds {kind} (U+{ord(char):04X}{' ' + name if name else ''}); "
            "ids are printable text without spaces, as TREC run files need")
