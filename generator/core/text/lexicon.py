"""The words a text asserts with, by class: one data file per language (generator/core/text/lexicons/*.yaml),
never a regular expression in a rule's code.

A class has a meaning, the kind of assertion that licenses it (`licensed_by`: a claim that uses a
word of an assertive class must carry an assertion of that kind that holds, generator.claims.
assertions), and its words: regular expressions matched with case ignored, as whole words (a
class's `bounds` may say otherwise), on text already folded (generator.core.text.characters.fold). English
is always read; a ledger adds the languages its claims are written in (`languages: [de]`), and
labels and titles are read in every language there is a file for.

`pattern(name, languages)` is a class's words in those languages as one compiled pattern (made
once); `classes(language)` every class of a language; `assertive()` the classes that need an
assertion.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from generator.core.dataclass import dataclass
from generator.storage.memo import book
from generator.storage.safe_yaml import load_package_data

LEXICON_DIR = Path(__file__).resolve().parent / "lexicons"
ENGLISH = "en"
# How a class's words are bounded: a whole word (the default), a verdict (a hyphen before it
# belongs to the word), a subject (not inside an address or a dotted name), or as written.
_BOUNDS = {"word": (r"(?<!\w)(?:", r")(?!\w)"),
           "verdict": (r"(?<![\w-])(?:", r")(?![\w])"),
           "subject": (r"(?<![\w@.-])(?:", r")(?![\w@]|\.\w)"),
           "none": (r"(?:", r")")}
# The reranker, however a sentence names it: a class other classes write as {reranker}.
_EMBEDDED = "reranker"


@dataclass(frozen=True)
class WordClass:
    name: str
    meaning: str
    words: tuple[str, ...]
    licensed_by: str | None = None
    bounds: str = "word"
    # Classes whose words, inside a match of this class, are not read on their own ("no
    # significant difference" is no_difference, not significance; "no worse than" is not "worse than").
    overrides: tuple[str, ...] = ()


def languages() -> tuple[str, ...]:
    """Every language there is a lexicon for."""
    return tuple(sorted(path.stem for path in LEXICON_DIR.glob("*.yaml")))


@functools.lru_cache(maxsize=None)
def classes(language: str) -> dict[str, WordClass]:
    """Every class of one language's lexicon, in file order."""
    path = LEXICON_DIR / f"{language}.yaml"
    if not path.is_file():
        raise ValueError(f"no lexicon for language {language!r}; there are: {', '.join(languages())}")
    data = load_package_data(path)
    found = {}
    for name, entry in data["classes"].items():
        bounds = entry.get("bounds", "word")
        if bounds not in _BOUNDS:
            raise ValueError(f"{path.name}: class {name}: unknown bounds {bounds!r}")
        found[name] = WordClass(name, entry["meaning"], tuple(str(word) for word in entry["words"]),
                                entry.get("licensed_by"), bounds, tuple(entry.get("overrides", ())))
    return found


@functools.lru_cache(maxsize=None)
def assertive(language: str = ENGLISH) -> dict[str, WordClass]:
    """The classes a claim may use only with an assertion that licenses them."""
    return {name: entry for name, entry in classes(language).items() if entry.licensed_by}


def _alternatives(word_class: WordClass, language: str) -> str:
    embedded = classes(language).get(_EMBEDDED) or classes(ENGLISH)[_EMBEDDED]
    reranker = "|".join(embedded.words)
    return "|".join(f"(?:{word.replace('{' + _EMBEDDED + '}', '(?:' + reranker + ')')})" for word in word_class.words)


@functools.lru_cache(maxsize=None)
def source(name: str, languages: tuple[str, ...] = (ENGLISH,)) -> str:
    """A class's words in `languages` (English always among them) as one regular expression."""
    wanted = sorted(set((ENGLISH, *languages)))
    parts, bounds = [], None
    for language in wanted:
        word_class = classes(language).get(name)
        if word_class is None:
            continue
        bounds = word_class.bounds
        parts.append(_alternatives(word_class, language))
    if bounds is None:
        raise ValueError(f"no lexicon class {name!r}")
    start, end = _BOUNDS[bounds]
    return start + "|".join(parts) + end


@functools.lru_cache(maxsize=None)
def compiled(name: str, languages: tuple[str, ...] = (ENGLISH,)) -> re.Pattern:
    return re.compile(source(name, languages), re.IGNORECASE)


@dataclass(frozen=True)
class Found:
    """Where a class's words matched (the part of re.Match a rule reads)."""

    text: str
    begin: int
    finish: int

    def start(self) -> int:
        return self.begin

    def end(self) -> int:
        return self.finish

    def group(self, index: int = 0) -> str:
        return self.text[self.begin:self.finish]


class Words:
    """A class's words as a rule reads them: `search`, `finditer` and `match` on a text, as a
    compiled pattern answers them. Where they match a text is remembered (generator.storage.memo, keyed by
    the class, the languages and the text, under the lexicons' and the code's fingerprint), so a
    check that has read a sentence before compiles none of the lexicon's large patterns."""

    def __init__(self, name: str, languages: tuple[str, ...]):
        self.name = name
        self.languages = languages

    @property
    def pattern(self) -> str:
        return source(self.name, self.languages)

    def _spans(self, text: str) -> list[list[int]]:
        return matches(text, self.languages).get(self.name, [])

    def finditer(self, text: str) -> list[Found]:
        return [Found(text, start, end) for start, end in self._spans(text)]

    def search(self, text: str) -> Found | None:
        spans = self._spans(text)
        return Found(text, *spans[0]) if spans else None

    def match(self, text: str, position: int = 0) -> Found | None:
        return next((Found(text, start, end) for start, end in self._spans(text) if start == position), None)


@functools.lru_cache(maxsize=4096)
def matches(text: str, languages: tuple[str, ...] = (ENGLISH,)) -> dict[str, list[list[int]]]:
    """Where every class of `languages` matches `text` ({class: [[start, end], ...]}, classes that
    match nowhere left out), remembered by the text (generator.storage.memo): one lookup per sentence,
    whichever classes its rules read."""
    def compute() -> dict[str, list[list[int]]]:
        found = {}
        for name in class_names(languages):
            spans = [[match.start(), match.end()] for match in compiled(name, languages).finditer(text)]
            if spans:
                found[name] = spans
        return found
    return book("lexicon matches").get(f"{','.join(languages)}\0{text}", compute)


@functools.lru_cache(maxsize=None)
def class_names(languages: tuple[str, ...]) -> tuple[str, ...]:
    """Every class any of `languages` has."""
    names: dict[str, None] = {}
    for language in languages:
        names.update(dict.fromkeys(classes(language)))
    return tuple(names)


@functools.lru_cache(maxsize=None)
def pattern(name: str, languages: tuple[str, ...] = (ENGLISH,)) -> Words:
    """A class's words in `languages` (English always among them), read as one pattern."""
    source(name, languages)     # an unknown class is refused now, not at its first use
    return Words(name, tuple(sorted(set((ENGLISH, *languages)))))


def every_language() -> tuple[str, ...]:
    """What labels and titles are read in: every language there is a lexicon for."""
    return languages()
