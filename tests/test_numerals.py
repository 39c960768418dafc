"""The numeral recogniser: every spelling of a number a reader sees, labels that are not numbers,
values, and the rule that a design quote accounts for a numeral only inside its quoted span."""

from __future__ import annotations

import pytest

from generator.core.text.numeral_values import numeral_value
from generator.core.text.numerals import KINDS, Numeral, find_numerals
from generator.core.text.quoted_numerals import inside_quoted_span

N, W, M, V, O, F = "number", "number word", "multiplier", "version", "ordinal", "fraction"

SPELLINGS = [
    # digits, signs, separators
    ("20", [("20", N)]),
    ("0.81", [("0.81", N)]),
    (".81", [(".81", N)]),
    ("a drop of -0.04 in recall", [("-0.04", N)]),
    ("a gain of +0.048.", [("+0.048", N)]),
    ("±0.5", [("±0.5", N)]),
    ("\u22120.04", [("\u22120.04", N)]),
    ("10,000 queries", [("10,000", N)]),
    ("by 2030.", [("2030", N)]),
    ("11.1 million", [("11.1", N), ("million", W)]),
    ("1e-3", [("1e-3", N)]),
    ("10^3", [("10^3", N)]),
    # units, percent, decades, ordinals
    ("81%", [("81%", N)]),
    ("95% of queries", [("95%", N)]),
    ("12ms", [("12ms", N)]),
    ("3GB", [("3GB", N)]),
    ("the 2030s", [("2030s", N)]),
    ("3rd", [("3rd", O)]),
    ("the 21st row", [("21st", O)]),
    # hyphens: a lowercase word before, a word after
    ("top-50", [("50", N)]),
    ("Top-50 recall", [("50", N)]),
    ("300-query", [("300", N)]),
    ("results-300.json", [("300", N)]),
    ("top_50", [("50", N)]),
    ("2026-09-18", [("2026", N), ("09", N), ("18", N)]),
    ("0.629/0.551", [("0.629", N), ("0.551", N)]),
    # Unicode spellings
    ("\u00b2", [("\u00b2", N)]),
    ("\u00bd", [("\u00bd", F)]),
    ("\u00be", [("\u00be", F)]),
    ("1\u00bd times", [("1\u00bd", F)]),
    ("\uff18\uff11", [("\uff18\uff11", N)]),
    ("\u2460 result", [("\u2460", N)]),
    ("10\u00b2", [("10\u00b2", N)]),
    ("10\u207b\u00b3", [("10\u207b\u00b3", N)]),
    ("top\u201150", [("50", N)]),
    # fractions
    ("1/2", [("1/2", F)]),
    ("3/4 of them", [("3/4", F)]),
    ("1\u20442", [("1\u20442", F)]),
    # number words
    ("eighty-one", [("eighty-one", W)]),
    ("Eighty One", [("Eighty One", W)]),
    ("twenty five queries", [("twenty five", W)]),
    ("five rows", [("five", W)]),
    ("one-hot", [("one", W)]),
    ("one hundred and five", [("one hundred and five", W)]),
    ("a thousand queries", [("thousand", W)]),
    ("a dozen", [("dozen", W)]),
    ("thousands of queries", [("thousands", W)]),
    ("seventeen", [("seventeen", W)]),
    ("\u0130stanbul saw Twenty five", [("Twenty five", W)]),
    # multipliers
    ("twice", [("twice", M)]),
    ("thrice", [("thrice", M)]),
    ("it doubled", [("doubled", M)]),
    ("double the depth", [("double", M)]),
    ("doubles", [("doubles", M)]),
    ("tripled", [("tripled", M)]),
    ("quadruple", [("quadruple", M)]),
    ("half", [("half", M)]),
    ("halved", [("halved", M)]),
    ("halves", [("halves", M)]),
    ("tenfold", [("tenfold", M)]),
    ("two-fold", [("two-fold", M)]),
    ("3-fold", [("3-fold", M)]),
    ("2x", [("2x", M)]),
    ("1.5x faster", [("1.5x", M)]),
    ("2\u00d7", [("2\u00d7", M)]),
    ("speed \u00d7 2", [("\u00d7 2", M)]),
    ("x2", [("x2", M)]),
    ("x1.5 faster", [("x1.5", M)]),
    ("a 5x5 grid", [("5", N), ("5", N)]),
    ("a 2\u00d73 grid", [("2", N), ("3", N)]),
    # versions and dotted numbers inside identifiers
    ("v6.0.0", [("v6.0.0", V)]),
    ("1.2.3", [("1.2.3", V)]),
    ("release 1.2.3.", [("1.2.3", V)]),
    ("lists 1,2 and 3", [("1", N), ("2", N), ("3", N)]),
    ("bge-small-en-v1.5", [("v1.5", V)]),
    ("python3.11", [("3.11", N)]),
    # placeholder marks separate like spaces
    ("\ue0100.629\ue011 against 0.551", [("0.629", N), ("0.551", N)]),
    ("\ue010twenty\ue011 five", [("twenty", W), ("five", W)]),
    ("n=\ue01012\ue011ms", [("12", N)]),
    # labels: not numerals
    ("nDCG@5", []),
    ("Recall@50", []),
    ("NDCG@3", []),
    ("BM25", []),
    ("BM25's", []),
    ("bm25s", []),
    ("p95", []),
    ("k1", []),
    ("sha256", []),
    ("CC0", []),
    ("MiniLM-L6-v2", []),
    ("T-03", []),
    ("D-010", []),
    ("S-012", []),
    ("IDX-L03-001", []),
    ("BAAI/bge-reranker-v2-m3", []),
    ("GPT-4", []),
    ("R\u00b2 and km\u00b2", []),
    # words that are not numerals
    ("first, second and third", []),
    ("once, a single pair of both", []),
    ("often tense behalf", []),
]


@pytest.mark.parametrize(("text", "expected"), SPELLINGS, ids=[text for text, _ in SPELLINGS])
def test_every_spelling_is_found_with_its_kind(text, expected):
    assert [(n.token, n.kind) for n in find_numerals(text)] == expected


@pytest.mark.parametrize("text", [text for text, _ in SPELLINGS], ids=[text for text, _ in SPELLINGS])
def test_offsets_point_at_the_token_as_written(text):
    for numeral in find_numerals(text):
        assert text[numeral.start:numeral.end] == numeral.token
        assert numeral.kind in KINDS


def test_offsets_survive_characters_that_normalise_longer():
    text = "\u00bd then \uff18\uff11 \u2014 then 0.5 and \u00b2 and eighty-one"
    found = find_numerals(text)
    assert [(n.start, n.end) for n in found] == [(0, 1), (7, 9), (17, 20), (25, 26), (31, 41)]
    assert [n.token for n in found] == ["\u00bd", "\uff18\uff11", "0.5", "\u00b2", "eighty-one"]


@pytest.mark.parametrize(("text", "normalized"), [
    ("\u00bd", "1\u20442"),
    ("\uff18\uff11", "81"),
    ("\u00b2", "2"),
    ("Eighty  One", "eighty one"),
    ("3GB", "3gb"),
    ("V2.1", "v2.1"),
    ("1\u00bd", "1 1\u20442"),
    ("10\u00b2", "10^2"),
    ("\u22120.04", "-0.04"),
    ("\u0130 Twenty five", "twenty five"),
])
def test_normalized_form(text, normalized):
    assert [n.normalized for n in find_numerals(text)] == [normalized]


@pytest.mark.parametrize(("text", "value"), [
    ("20", 20.0),
    ("0.81", 0.81),
    (".81", 0.81),
    ("-0.04", -0.04),
    ("+0.048", 0.048),
    ("11.1", 11.1),
    ("10,000", 10000.0),
    ("95%", 95.0),
    ("12ms", 12.0),
    ("1e-3", 0.001),
    ("10\u00b2", 100.0),
    ("3rd", 3.0),
    ("\u00bd", 0.5),
    ("3/4", 0.75),
    ("1\u00bd", 1.5),
    ("eighty-one", 81.0),
    ("Eighty One", 81.0),
    ("thousand", 1000.0),
    ("two thousand three hundred", 2300.0),
    ("one hundred and five", 105.0),
    ("two dozen", 24.0),
    ("zero", 0.0),
    ("twice", 2.0),
    ("double", 2.0),
    ("thrice", 3.0),
    ("half", 0.5),
    ("halved", 0.5),
    ("2x", 2.0),
    ("2\u00d7", 2.0),
    ("\u00d7 2", 2.0),
    ("tenfold", 10.0),
    ("two-fold", 2.0),
    ("1.5-fold", 1.5),
    ("v6.0.0", None),
    ("1.2.3", None),
    ("thousands", None),
    ("-1/2", -0.5),
    ("x1.5", 1.5),
    ("1/0", None),
])
def test_numeral_value(text, value):
    (numeral,) = find_numerals(text)
    if value is None:
        assert numeral_value(numeral) is None
    else:
        assert numeral_value(numeral) == pytest.approx(value)


WHO_QUOTE = "WHO on 18 September 2026 projected a global shortage of 11.1 million health workers by 2030"


@pytest.mark.parametrize(("claim", "token", "quote", "inside"), [
    ("a global shortage of 11.1 million health workers by 2030.", "11.1", WHO_QUOTE, True),
    ("a global shortage of 11.1 million health workers by 2030.", "2030", WHO_QUOTE, True),
    ("a global shortage of 11.1 million health workers by 2030.", "million", WHO_QUOTE, True),
    ("reranking costs 60 ms per query", "60", "RRF with constant 60 over both lists", False),
    ("RRF with constant 60, and", "60", "RRF with constant 60, ties broken by first appearance", False),
    ("RRF with constant 60 over both lists", "60", "RRF with constant 60 over both lists", True),
    ("by 2030.", "2030", "by 2030, which", True),
    ("in 2030.", "2030", "by 2030, which", False),
    ("2030", "2030", "by 2030, which", False),
    ("by 2030.", "2030", "2030", True),
    ("keep the top-50 results", "50", "keep the depth-50 results", False),
    ("keep the top-50 results", "50", "keep the top-50 results", True),
    ("RRF with constant 60 \u2014 and", "60", "RRF with constant 60 \u2014 ties", False),
    ("a shortage of 11.1 million", "11.1", "a shortage of 11 million", False),
    ("about \u00bd of the queries", "\u00bd", "about \u00bd of the queries", True),
    ("about \u00bd of the queries", "\u00bd", "about 1/2 of the queries", False),
    ("Eighty-one queries fail", "Eighty-one", "eighty-one queries fail", True),
    ("gains \ue0100.03\ue011 over 0.551 today", "0.551", "BM25 scores 0.551 today", False),
    ("gains \ue0100.03\ue011 over 0.551 today", "0.551", "gains over 0.551 today", True),
])
def test_inside_quoted_span(claim, token, quote, inside):
    (numeral,) = [n for n in find_numerals(claim) if n.token == token]
    assert inside_quoted_span(claim, numeral, quote) is inside


def test_numeral_is_a_frozen_record():
    numeral = Numeral(0, 2, "20", "20", "number")
    with pytest.raises(AttributeError):
        numeral.start = 1


# --- forms a reader reads as numbers that no digit spells (issue 20) ------------------------------

READ_AS_NUMBERS = [
    ("lOO% of queries", "lOO%"), ("l0 queries", "l0"), ("O.5 points", "O.5"), ("1OO% of them", "1OO%"),
    ("\u2776 query", "\u2776"), ("\u278a", "\u278a"), ("\u24eb", "\u24eb"),          # dingbat and circled digits
    ("\u4e09 queries", "\u4e09"), ("\u5341\u4e8c", "\u5341\u4e8c"),                   # CJK numerals
    ("zwei Anfragen", "zwei"), ("trois requêtes", "trois"), ("cuatro consultas", "cuatro"),
    ("vijf vragen", "vijf"), ("dieci domande", "dieci"),
    ("a quarter of the queries", "a quarter"), ("a third of the pairs", "a third"),
    ("two thirds of queries", "two thirds"), ("three quarters of them", "three quarters"),
    ("one fifth of the rows", "one fifth"),
]


@pytest.mark.parametrize("text, token", READ_AS_NUMBERS)
def test_forms_no_digit_spells_are_numerals(text, token):
    assert token in [numeral.token for numeral in find_numerals(text)]


NOT_NUMBERS = ["Hello world", "solo", "Oslo", "IO bound", "a third row", "sentence-transformers/all-MiniLM-L6-v2",
               "I/O", "cool tool", "LOL", "the pool"]


@pytest.mark.parametrize("text", NOT_NUMBERS)
def test_words_that_only_look_like_digits_are_not(text):
    assert find_numerals(text) == []


def test_an_identifier_is_a_name_only_when_it_names_something_known():
    assert find_numerals("Topic T-03 and P-629") == []                     # without ids: the old rule
    found = [n.token for n in find_numerals("Topic T-03 and P-629", frozenset({"T-03"}))]
    assert found == ["P-629"]
