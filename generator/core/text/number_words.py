"""The number words a reader reads as numbers: English counts and scales, the multiplier words,
the fractions said in words, and the counts of the other languages a ledger may be written in.

Kept apart from the scanner (generator.core.text.numerals) so the words can be read and extended in one
place; the scanner builds its patterns from them and generator.core.text.numeral_values their values.
"""

from __future__ import annotations

import re

_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
          "fifteen sixteen seventeen eighteen nineteen").split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_SCALES = {"hundred": 100, "thousand": 10**3, "million": 10**6, "billion": 10**9,
           "trillion": 10**12, "dozen": 12}
_PLURALS = "tens dozens hundreds thousands millions billions trillions".split()
_WORD_VALUES = {**{w: i for i, w in enumerate(_UNITS)}, **{w: 20 + 10 * i for i, w in enumerate(_TENS)}}


def _trie(words) -> str:
    """One regular expression for `words`, branching a letter at a time (much faster to scan)."""
    tree: dict = {}
    for word in words:
        node = tree
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def branch(node: dict) -> str:
        arms = [re.escape(char) + branch(child) for char, child in sorted(node.items()) if char]
        if not arms:
            return ""
        body = arms[0] if len(arms) == 1 else "(?:" + "|".join(arms) + ")"
        return f"(?:{body})?" if "" in node else body

    return branch(tree)


_MULTIPLIER_WORDS = ["twice", "thrice", "half", "halved", "halves", "halving",
                     *(stem + ending for stem in ("doubl", "tripl", "quadrupl") for ending in ("e", "ed", "es", "ing"))]
_NUMBER_WORD = _trie([*_UNITS, *_TENS, *_SCALES, *_PLURALS])
_AFTER_SCALE = "|".join(f"(?<={scale})" for scale in _SCALES)
_WORDS_PATTERN = (rf"\b(?:(?P<multiplier>{_trie(_MULTIPLIER_WORDS)})"
                  rf"|{_NUMBER_WORD}(?:(?:-|\s+|(?:{_AFTER_SCALE})\s+and\s+){_NUMBER_WORD})*(?P<fold>-?fold)?)\b")

# Number words of the languages a ledger may be written in (generator.core.text.verdicts), kept to words no
# English sentence uses otherwise (`un`, `ein`, `dos`, `six`, `once`, `cent` are left out).
_FOREIGN_WORDS = {
    "zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "sechs": 6, "sieben": 7, "acht": 8, "neun": 9, "zehn": 10,
    "zwölf": 12, "zwanzig": 20, "dreißig": 30, "hundert": 100, "tausend": 1000, "million": None,
    "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "huit": 8, "neuf": 9, "dix": 10, "douze": 12, "vingt": 20,
    "trente": 30, "mille": 1000,
    "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6, "siete": 7, "ocho": 8, "nueve": 9, "diez": 10,
    "veinte": 20, "cien": 100, "ciento": 100,
    "quattro": 4, "cinque": 5, "sette": 7, "dieci": 10, "venti": 20, "cento": 100,
    "twee": 2, "drie": 3, "vijf": 5, "zeven": 7, "negen": 9, "tien": 10, "twintig": 20, "honderd": 100,
    "duizend": 1000,
}
# The denominators of a fraction said in words (`a quarter of`, `two thirds`), and their values.
_DENOMINATORS = {"half": 2, "halves": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4, "fifth": 5,
                 "fifths": 5, "sixth": 6, "sixths": 6, "seventh": 7, "sevenths": 7, "eighth": 8, "eighths": 8,
                 "ninth": 9, "ninths": 9, "tenth": 10, "tenths": 10, "hundredth": 100, "hundredths": 100,
                 "thousandth": 1000, "thousandths": 1000}
