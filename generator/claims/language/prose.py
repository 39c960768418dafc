"""What the author's free prose may say beside a result entity: a closed vocabulary.

A free sentence (a claim's own `text`, as opposed to a frame the package writes) that names a
result entity (a row or its alias, a metric, a model, a query set, a decision) may not carry a
number, a comparison or a qualifier with it. "Comparison or qualifier" is not a list of words to
look for (any list can be paraphrased around): it is everything outside a closed vocabulary. Such a
sentence may use only

- the entity names themselves and the values the tool placed;
- the function words of its language (articles, pronouns, conjunctions, auxiliaries and the
  prepositions that do not compare: `function_words` in generator/core/text/lexicons/LANG.yaml);
- words of the frozen design documents, compared by their Snowball stem, since the design was
  written before the results and cannot have been tuned to them;
- words of the results schema's meaning of a value the sentence places (a hash is "the sha256 of
  the model's weights");

and never a word of the language's closed classes that compare, count or qualify (`never_neutral`:
comparatives and superlatives, quantifiers such as "most" or "every", degree adverbs, budget fit,
significance, equivalence), even when the design uses it. Whatever is not on the list is refused,
so a paraphrase ("head and shoulders above", "not insignificant", "hardly any different") is
refused for the word the design never used, and the finding names it as the fix's starting point,
not as an oracle: any other word outside the list is refused just the same.
"""

from __future__ import annotations

import functools
import re

from generator.core.text.characters import fold
from generator.core.text.lexicon import LEXICON_DIR
from generator.storage.safe_yaml import load_package_data

# Snowball's name of each ledger language's stemmer.
STEMMERS = {"en": "english", "de": "german", "fr": "french", "es": "spanish", "nl": "dutch"}
# A word: letters and digits, with an inner apostrophe; hyphenated parts are read one by one. A word
# that holds a digit (q01, p95, v1) is an identifier or a numeral, which generator.core.text.numerals reads.
WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)?", re.UNICODE)
METRIC = re.compile(r"(?<![\w@])(?:n?dcg|recall|precision|mrr|map|r-precision|success|hits?)(?:@\d+)?(?![\w@])",
                    re.IGNORECASE)


@functools.lru_cache(maxsize=None)
def _data(language: str) -> dict:
    path = LEXICON_DIR / f"{language}.yaml"
    data = load_package_data(path)
    for key in ("function_words", "never_neutral", "query_sets", "statistic_words"):
        odd = [word for word in data.get(key, ()) if not isinstance(word, str)]
        if odd:   # YAML 1.1 reads a bare `no` or `on` as a boolean: the file must quote it
            raise ValueError(f"{path.name}: {key} holds {odd[0]!r}, not a word: quote it")
    return data


@functools.lru_cache(maxsize=None)
def _stemmer(language: str):
    import snowballstemmer   # pure Python; only when a free sentence names a result entity

    return snowballstemmer.stemmer(STEMMERS.get(language, "english"))


def stem(word: str, language: str) -> str:
    return _stemmer(language).stemWord(fold(word).lower())


def words(text: str) -> list[tuple[int, int, str]]:
    """Each word of `text` (a token with a digit is a numeral or an identifier: generator.core.text.numerals)."""
    return [(match.start(), match.end(), match.group(0)) for match in WORD.finditer(text)
            if not any(char.isdigit() for char in match.group(0))]


@functools.lru_cache(maxsize=None)
def statistic_words(language: str) -> frozenset[str]:
    """The stems of the words that name a statistic (mean, change, interval, ceiling): free beside
    a placed value whose schema meaning uses them, never on their own."""
    return frozenset(stem(word, language) for word in _data(language).get("statistic_words", ()))


@functools.lru_cache(maxsize=None)
def function_words(language: str) -> frozenset[str]:
    """The words of a language that name, join and point without comparing or counting."""
    return frozenset(word.lower() for word in _data(language).get("function_words", ()))


@functools.lru_cache(maxsize=None)
def never_neutral(language: str) -> frozenset[str]:
    """The stems of the words that compare, count or qualify: never free beside a result entity."""
    return frozenset(stem(word, language) for word in _data(language).get("never_neutral", ()))


@functools.lru_cache(maxsize=None)
def query_set_words(language: str) -> tuple[str, ...]:
    """How the language names a query set ("release sample", "test queries"): result entities."""
    return tuple(_data(language).get("query_sets", ()))


def vocabulary(text: str, language: str) -> frozenset[str]:
    """The stems of every word of `text` (a design document, a schema meaning)."""
    return frozenset(stem(word, language) for _, _, word in words(text))


def entity_pattern(names: frozenset[str]) -> re.Pattern | None:
    """One pattern for every entity name, longest first, matched as whole words (case ignored)."""
    if not names:
        return None
    alternatives = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    return re.compile(r"(?<![\w@+./-])(?:" + alternatives + r")(?![\w@+]|[./-]\w)", re.IGNORECASE)
