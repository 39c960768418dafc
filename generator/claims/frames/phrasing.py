"""The sentence of a computed frame, in a language: templates are data, one file per language
(generator/claims/frames/phrasings/LANG.yaml), the way easystats' `report` writes a test's
sentence from the test object.

A phrasing file holds, per frame kind, a sentence per case (`mean`, `share`, `undecidable`, ...)
in each of the package's phrasings (`standard`, `brief`, ...), and the words each computed fact
chooses (direction: higher / lower / same; significance; size; fit; when a threshold was fixed).
A template names two things in braces:

- a figure of the reading (`{change}`, `{interval}`, `{n}`): placed by the tool, shown by
  generator.claims.frames.present in the language's number style, with its unit;
- a fact (`{direction}`, `{significance_clause}`): replaced by the words the file gives for the
  fact's computed value, which may name figures in turn. A slot written with a capital
  (`{Scope}`) starts the sentence: its first letter is capitalised.

A team chooses among the phrasings (`phrasing:` in the frame); it cannot edit the words that
carry the result. Translating is writing a phrasing file: every kind, case and phrasing of the
English file, each naming the same figures (a test holds every language to it).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

from generator.claims.frames import present
from generator.claims.frames.figures import Figure, Reading
from generator.storage.safe_yaml import load_package_data

PHRASINGS_DIR = Path(__file__).with_name("phrasings")
ENGLISH = "en"
STANDARD = "standard"
_SLOT = re.compile(r"\{(\w+)\}")
MAX_DEPTH = 4


class PhrasingError(ValueError):
    """A phrasing file that cannot write a reading's sentence (a test keeps the package's own whole)."""


@functools.lru_cache(maxsize=8)
def phrasebook(language: str) -> dict[str, Any]:
    """A language's phrasing file, parsed once per process."""
    return load_package_data(PHRASINGS_DIR / f"{language}.yaml")


def languages() -> tuple[str, ...]:
    return tuple(sorted(path.stem for path in PHRASINGS_DIR.glob("*.yaml")))


def phrasings(kind: str, language: str = ENGLISH) -> tuple[str, ...]:
    """The phrasings the package offers for a kind, in a language (`standard` first)."""
    cases = phrasebook(language)["kinds"][kind]["sentences"]
    names = {name for case in cases.values() for name in case}
    return tuple(sorted(names, key=lambda name: (name != STANDARD, name)))


def style(language: str) -> present.NumberStyle:
    numbers = phrasebook(language).get("numbers", {})
    return present.NumberStyle(decimal=numbers.get("decimal", "."), thousands=numbers.get("thousands", ","))


def _noun(book: dict[str, Any], noun: str, count: int) -> str:
    forms = book["nouns"].get(noun)
    if forms is None:
        raise PhrasingError(f"no noun {noun!r} in the {book['language']} phrasing file")
    return forms[0] if count == 1 else forms[1]


def show(figure: Figure, book: dict[str, Any]) -> str:
    """A figure as the sentence places it, in the book's language."""
    number_style = present.NumberStyle(**{key: value for key, value in book.get("numbers", {}).items()})
    kind, value = figure.kind, figure.value
    if kind == "text":
        return str(value)
    if kind == "score":
        return present.score(value, number_style, figure.thresholds)
    if kind == "pair score":
        return present.score(value[0], number_style, decimals=present.decimals_that_order(*value))
    if kind == "change":
        return present.change(value, number_style, figure.thresholds or (0.0,))
    if kind == "interval":
        low, high = present.interval_ends(value[0], value[1], number_style, figure.thresholds or (0.0,))
        return book["interval"].format(low=low, high=high)
    if kind == "p":
        return present.p_value(value, number_style)
    if kind == "ms":
        return book["milliseconds"].format(value=present.milliseconds(value, number_style, figure.thresholds))
    if kind == "count":
        number = present.integer(int(value), number_style)
        return f"{number} {_noun(book, figure.noun, int(value))}" if figure.noun else number
    if kind == "number":
        return present.plain(value, number_style)
    if kind == "percent":
        return present.percent(value, number_style)
    if kind == "relative":
        return present.percent(value, number_style, signed=True)
    if kind == "documents":
        return ", ".join(value) if value else book["none"]
    if kind == "records":
        return book["list"]["separator"].join(
            book["record"].format(path=path, value=_recorded(value, book)) for path, value in value)
    if kind == "pairs":
        items = [book["list"]["pair"].format(value=present.score(score, number_style), row=row) for row, score in value]
        return items[0] if len(items) == 1 else book["list"]["separator"].join(items[:-1]) + book["list"]["last"] + \
            items[-1]
    raise PhrasingError(f"no way to show a figure of kind {kind!r}")


def _recorded(value: Any, book: dict[str, Any]) -> str:
    """A recorded value as it is: a flag in words, a number in the language's style, text as written."""
    if isinstance(value, bool):
        return book["flag"][value]
    if isinstance(value, int):
        return present.integer(value, present.NumberStyle(**book.get("numbers", {})))
    if isinstance(value, float):
        return present.plain(value, present.NumberStyle(**book.get("numbers", {})))
    return str(value)


def _words(book: dict[str, Any], kind: str, fact: str) -> dict[str, str] | None:
    own = book["kinds"][kind].get("words", {})
    if fact in own:
        return own[fact]
    shared = book.get("words", {})
    if fact in shared:
        return shared[fact]
    if fact.endswith("_fixed"):
        return shared.get("fixed")
    return None


def _fact_name(slot: str, table: dict[str, str], facts: dict[str, str]) -> str:
    """The fact a words table reads: its `of:`, else the slot's own name when it is a fact, else
    the slot's first word (`verdict_words` reads `verdict`, `scope_of` reads `scope`)."""
    return table.get("of") or (slot if slot in facts else slot.split("_", 1)[0])


def _capitalised(text: str) -> str:
    for index, char in enumerate(text):
        if char == "{":
            return text   # it starts with a figure: the figure is shown as it is
        if char.isalpha():
            return text[:index] + char.upper() + text[index + 1:]
    return text


def _expand(template: str, reading: Reading, book: dict[str, Any], kind: str, depth: int = 0) -> str:
    if depth > MAX_DEPTH:
        raise PhrasingError(f"{book['language']}: {kind}: words nested more than {MAX_DEPTH} deep")

    def replace(match: re.Match) -> str:
        slot = match.group(1)
        capital = slot[0].isupper()
        name = slot[0].lower() + slot[1:]
        if name in reading.figures:
            return "{" + name + "}"
        table = _words(book, kind, name)
        if table is None:
            raise PhrasingError(f"{book['language']}: {kind}: the slot {{{slot}}} is neither a figure nor a fact "
                                f"with words")
        fact = reading.facts.get(_fact_name(name, table, reading.facts))
        if fact not in table or fact == "of":
            raise PhrasingError(f"{book['language']}: {kind}: no words for {name} = {fact!r}")
        expanded = _expand(table[fact], reading, book, kind, depth + 1)
        return _capitalised(expanded) if capital else expanded
    return _SLOT.sub(replace, template)


def sentence(reading: Reading, language: str = ENGLISH, phrasing: str | None = None) -> tuple[str, dict[str, str]]:
    """The sentence of a computed reading: a template whose `{name}` fields are its figures, and
    each figure as it is shown. Raises PhrasingError when the book cannot write it (a package
    defect a test catches, or a phrasing the kind does not have)."""
    book = phrasebook(language)
    kind = reading.frame.kind
    cases = book["kinds"][kind]["sentences"]
    if reading.case not in cases:
        raise PhrasingError(f"{language}: {kind} has no sentence for the case {reading.case!r}")
    chosen = phrasing or STANDARD
    templates = cases[reading.case]
    if chosen not in templates:
        raise PhrasingError(f"{kind} has no phrasing {chosen!r}; choose one of {', '.join(phrasings(kind, language))}")
    template = _capitalised(_expand(templates[chosen], reading, book, kind))
    used = set(_SLOT.findall(template))
    return template, {name: show(reading.figures[name], book) for name in sorted(used)}
