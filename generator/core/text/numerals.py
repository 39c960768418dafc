"""The numeral recogniser: every number a reader sees in a claim's rendered text, however spelled.

A claim traces only when each number a reader sees in it comes from a placeholder filled from
measured results or lies inside a quoted span of a design document. This module finds the numbers
(`find_numerals`); generator.core.text.numeral_values gives their value where one is well defined
(`numeral_value`), and generator.core.text.quoted_numerals decides whether one lies inside a design
quote (`inside_quoted_span`). It reads plain text (Markdown already rendered, so `&#56;1` has
become `81`); it imports only the standard library, the memo and the number words
(generator.core.text.number_words).

Normalisation. The text is read through Unicode NFKC, character by character, so that every
spelling a reader sees as digits is digits here: superscripts (`²` is 2), full-width digits
(`８１` is 81), circled digits (`①`), vulgar fractions (`½` is 1⁄2, with the fraction slash
U+2044). Also: the minus sign U+2212 and the hyphens U+2010/U+2011 are read as `-`. Two marks
keep values readable: a vulgar fraction glued to a digit is a mixed number (`1½` is 1 1⁄2, not
11⁄2) and superscript digits glued to a letter or digit are an exponent (`10²` is 10^2, not 102;
`10^2` typed with a caret reads the same). Every numeral keeps offsets into the text as passed in
(`text[n.start:n.end] == n.token`, the whole token as written: `½`, `²`, `eighty-one`), and a
`normalized` form: NFKC, lowercased, whitespace runs made one space, with the two marks above
written as a space and `^` (`½` is `1⁄2`, `1½` is `1 1⁄2`, `10²` is `10^2`, `Eighty  One` is
`eighty one`).
The characters U+E010 and U+E011 (the caller's marks around placeholder output) separate tokens
like a space does: they never glue a number to its neighbour or hide one.

Tokens. A token is a run of letters, digits and `_`, with the inner joiners `. - + / @ ' ’ ^ ⁄ ×`
kept where they join two such runs, and `,` kept between two digits; a token may open with a
sign (`-`, `+`, `±` or `.` directly before a digit, not after a letter or digit: `-0.04`, `.81`)
or with `×` (`× 2`), and may close with `%`, `‰` or `×`. Inside a token each run of digits (with
its `,ddd` thousands groups, `.d` decimals and an exponent `e-3`) is judged on its own:

- A run that opens its token is a number: `20`, `0.81`, `.81`, `-0.04`, `+0.048`, `10,000`,
  `1e-3`, `300-query` (the numeral is `300`: the word after the hyphen is another word). Why: a
  reader takes a token that starts with a digit as a quantity whatever follows it.
- Letters glued after the digits stay in the numeral, as units (`12ms`, `3GB`, `2030s`), and so
  does a closing `%` or `‰` (`95%`); `st nd rd th` make an *ordinal* (`3rd`, `21st`, `4th`), `x`
  or `×` a *multiplier* (`2x`, `1.5×`), `fold` or `-fold` a multiplier (`3-fold`). Why: `12ms` is
  twelve milliseconds to a reader, not a label.
- A run with a decimal point is always a numeral, even inside an identifier: `python3.11` holds
  `3.11`, `bge-small-en-v1.5` holds `v1.5`. Why: a dotted number is a version or a measurement and
  either way a fact the reader can check. It is a *version* when it has two or more dots (`1.2.3`)
  or opens with a `v` that opens its word part (`v6.0.0`, `v1.5`); versions have no value.
- Integer/integer is a *fraction*: `1/2`, `3/4`, `½` (1⁄2), `1½`. Why: a reader sees one value,
  one half, not the numbers 1 and 2. (So a date written `9/18` reads as a fraction too.)
- Otherwise a run inside a token is a *label*, not a numeral, when it directly follows a letter
  (`BM25`, `BM25's`, `bm25s`, `p95`, `k1`, `sha256`, `CC0`, `MiniLM-L6-v2`,
  `BAAI/bge-reranker-v2-m3`), an `@` (`nDCG@5`, `Recall@50`, `NDCG@3`), or a hyphen that follows a
  capital letter, itself followed by at most three digits (`T-03`, `D-010`, `S-012`, the `001` of
  `IDX-L03-001`, `GPT-4`). Why: these name a metric, a model or an identifier; they are not a
  quantity. The same holds after a superscript mark glued to a letter (`R²`, `km²`).
- Every other run inside a token is a number, reported as just its digits: after a lowercase word
  and a hyphen (`top-50` holds `50`, `results-300.json` holds `300`), after `_`, `/`, `+`, `.` or
  `'`. Why: `top-50` is fifty results; only the capital-letter-hyphen form is an identifier.
- Dimensions: a run after `x` or `×` that follows a digit is a number (`5x5`, `2×3`: both 5s, the
  2 and the 3); a lone lowercase `x` before a number is a multiplier (`x2`, `x1.5`), as is `×`
  (`×2`, `× 2`). Why: `x2` and `× 2` read as "times two".
- An exponent after a number stays in it (`10^3`, `10²`, `10⁻³`).

Words (whole words, any case):

- *Number words*: zero to nineteen, twenty to ninety, hundred, thousand, million, billion,
  trillion, dozen, and the plurals tens, dozens, hundreds, thousands, millions, billions,
  trillions (which have no value). Adjacent number words, joined by a hyphen or whitespace, form
  one numeral (`eighty-one`, `Eighty One`, `twenty five`), as does `and` after a scale word (`one
  hundred and five`). Why: `five rows` states a count as plainly as `5 rows`. `one` is a number
  word like any other (`one-hot` holds one); the caller decides what is accounted for.
- *Multipliers*: twice, thrice, double, triple, quadruple and their -d/-s/-ing forms (doubled,
  doubles, doubling), half, halved, halves, halving, and number word + `fold` (`tenfold`,
  `two-fold`, `hundredfold`). Why: "twice as fast" is the number 2. (`double` in `double-check`
  counts too: the rule cannot tell the senses apart, and rephrasing is cheap.)

What a reader reads as a number though no digit spells it (`_extra_spans`):

- *Letters for digits*: a token of digits and the look-alikes `l I O o` that holds a digit, a
  decimal point or a closing `%` (`lOO%`, `l0`, `O.5`, `1OO`); its value reads the letters as
  digits. Words stay words (`solo`, `Oslo`, `IO`).
- *Digits NFKC does not make digits*: any character with a numeric value (dingbat digits `❶ ➊ ⓫`,
  CJK numerals `三 十二`).
- *Number words of other languages*: German, French, Spanish, Italian and Dutch counts (`zwei`,
  `trois`, `cuatro`, `dieci`, `vijf`), without the words English prose uses otherwise (`un`,
  `ein`, `six`, `once`, `cent`).
- *Fractions in words*: `a quarter of`, `a third of`, `one fifth of`, `two thirds`, `three
  quarters` (a lone `a third` is an ordinal: `a third row`).
- *Identifiers that identify nothing*: given the ids the caller knows (`find_numerals(text,
  ids)`: the dataset's, the ledger's and the results'), a digit-bearing identifier of the shape
  above (`T-03`, `IDX-L03-001`) is a name only when it is one of them; `P-629` otherwise is a
  numeral of kind `identifier`.

Not numerals, by decision: ordinal words (`first`, `second`, `third`: too common in prose, and
`second` is also a unit of time); vague or idiomatic counts (`once`, `single`, `pair`, `couple`,
`both`, `several`, `few`); Roman numerals (`Phase II`, and `Ⅻ`, which NFKC makes letters). A unit
suffix never scales a value (`300k` is 300, `5M` is 5).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Container

from generator.core.dataclass import dataclass
from generator.storage.memo import book
from generator.core.text.number_words import _DENOMINATORS, _FOREIGN_WORDS, _TENS, _UNITS, _WORDS_PATTERN

KINDS = ("number", "number word", "multiplier", "version", "ordinal", "fraction", "identifier")


class _Lazy:
    """A pattern compiled at its first use: a check that finds a sentence's numerals in its memo
    (generator.storage.memo) compiles none of the scanner's large patterns."""

    def __init__(self, source: str, flags: int = 0):
        self._source, self._flags, self._compiled = source, flags, None

    @property
    def pattern(self) -> str:
        return self._source

    def __getattr__(self, name: str):
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        return getattr(self._compiled, name)

PLACEHOLDER_OPEN = "\ue010"
PLACEHOLDER_CLOSE = "\ue011"


_MIXED = "\u2064"  # INVISIBLE PLUS: marks a vulgar fraction glued to a digit (1½ -> 1 1⁄2)
_POWER = "^"       # marks superscript digits glued to a letter or digit (10² -> 10^2)
_FRACTION_SLASH = "\u2044"

_EXTRA = str.maketrans({"\u2212": "-", "\u2010": "-", "\u2011": "-"})
_CHARS: dict[str, tuple[str, bool, bool]] = {}
_UNCHANGED = {PLACEHOLDER_OPEN, PLACEHOLDER_CLOSE}  # characters NFKC leaves alone (seen so far)

_DIGIT = _Lazy(r"\d")
_NON_ASCII = _Lazy(r"[^\x00-\x7f]")

_LEAD = r"(?:(?<![\w.,])[-+±.](?=\d)|(?<!\w)×[^\S\n]*(?=\d))"
_JOIN = rf"(?:[.\-+/@'’{_FRACTION_SLASH}×{_MIXED}]|\^[-+]?|(?<=\d),(?=\d))"
_TOKEN = _Lazy(rf"(?P<lead>{_LEAD})?(?<!\w)(?P<body>(?:\w+{_JOIN})*?\w*?\d\w*(?:{_JOIN}\w+)*)[%‰×]?")
_CHUNK = _Lazy(rf"[\w.\-+/@'’{_FRACTION_SLASH}×{_MIXED}^,±%‰]*")  # a superset of token characters
_TIMES_BEFORE = _Lazy(r"[^\S\n]+×")  # on the reversed text: `× ` before a chunk opens `× 2`
_PLAIN = _Lazy(r"(\d+(?:,\d{3}(?!\d))*(?:\.\d+)*)[.,]?")  # a chunk that is a plain number
_RUN = _Lazy(r"\d+(?:,\d{3}(?!\d))*(?:\.\d+)*(?:[eE][-+]?\d+(?![^\W\d_]))?")
_EXPONENT = _Lazy(r"\^[-+]?\d+")
_DENOMINATOR = _Lazy(rf"[/{_FRACTION_SLASH}](\d+)(?![.,]\d)")
_MIXED_FRACTION = _Lazy(rf"{_MIXED}\d+{_FRACTION_SLASH}\d+")
_FOLD_SUFFIX = _Lazy(r"-?fold(?![^\W\d_])", re.IGNORECASE)
_LETTERS = _Lazy(r"[^\W\d_]+")
_CAPITAL_HYPHEN = _Lazy(r"(?:(?<=[A-Z])|(?<=[A-Z]\d)|(?<=[A-Z]\d\d)|(?<=[A-Z]\d\d\d))-")
_ORDINAL_SUFFIXES = frozenset({"st", "nd", "rd", "th"})


_WORDS = _Lazy(_WORDS_PATTERN)  # on lowercased text: re.IGNORECASE makes the scan slow
_WORDS_ANY_CASE = _Lazy(_WORDS_PATTERN, re.IGNORECASE)  # when lowercasing changes the length


@dataclass(frozen=True, slots=True)
class Numeral:
    """One numeral: `text[start:end] == token` in the text given to `find_numerals`."""

    start: int
    end: int
    token: str
    normalized: str
    kind: str


# --- what a reader reads as a number without the shapes above -----------------------------------

# Letters that stand for digits to a reader: `lOO%` is 100 %, `l0` is 10, `O.5` is 0.5.
_LOOKALIKE_DIGITS = str.maketrans({"l": "1", "I": "1", "O": "0", "o": "0"})
_LOOKALIKE = _Lazy(r"(?<![\w.\-/@])[-+]?[lIOo0-9][lIOo0-9.,]*[%‰]?(?![\w\-/@])")
# A look-alike token needs a look-alike letter beside a digit, a point or a per-cent sign.
_LOOKALIKE_HINT = _Lazy(r"[lIOo][\d.,%‰]|[\d.][lIOo]")
_FOREIGN = _Lazy(r"(?<![\w-])(?:" + "|".join(sorted((word for word in _FOREIGN_WORDS if word != "million"),
                                                         key=len, reverse=True)) + r")(?![\w-])",
                      re.IGNORECASE)
# `a quarter of`, `a third of`, `two thirds`, `three quarters`: fractions said in words.
_FRACTION_WORDS = _Lazy(
    r"(?<![\w-])(?:(?P<article>an?|one)\s+(?P<single>" + "|".join(_DENOMINATORS) + r")(?=\s+of\b|-)"
    r"|(?P<count>" + "|".join(_UNITS[2:] + _TENS) + r")[\s-]+(?P<plural>" + "|".join(
        word for word in _DENOMINATORS if word.endswith("s") or word == "half") + r"))(?![\w])", re.IGNORECASE)
# A digit-bearing identifier (`T-03`, `P-629`, `IDX-L03-001`): a name only when it names something.
IDENTIFIER = _Lazy(r"(?<![\w.-])(?:[A-Za-z0-9]+-)*[A-Z][A-Za-z0-9]*-\d+(?:-[A-Za-z0-9]+)*(?![\w-])")


def _extra_spans(text: str, ids: Container[str] | None) -> list[tuple[int, int, str]]:
    """The numerals the token scanner cannot see: look-alike letters, digits NFKC leaves as they are
    (dingbat and CJK numerals), number words of other languages, fractions in words, and
    identifiers that identify nothing the caller knows (`ids`)."""
    spans = []
    words = set(_LETTERS.findall(text.lower()))
    for match in _LOOKALIKE.finditer(text) if _LOOKALIKE_HINT.search(text) else ():
        token = match.group()
        core = token.strip("+-%‰")
        if any(char in "lIOo" for char in core) and len(core) >= 2 and (
                any(char.isdigit() for char in core) or token[-1] in "%‰" or "." in core.strip(".")):
            spans.append((match.start(), match.end(), "number"))
    if not text.isascii():
        index = 0
        while index < len(text):
            char = text[index]
            if not char.isascii() and not _DIGIT.match(char) and unicodedata.numeric(char, None) is not None \
                    and not unicodedata.normalize("NFKC", char).isascii():
                end = index + 1
                while end < len(text) and not text[end].isascii() and unicodedata.numeric(text[end], None) is not None:
                    end += 1
                spans.append((index, end, "number"))
                index = end
            else:
                index += 1
    if not words.isdisjoint(_FOREIGN_WORDS):
        spans += [(match.start(), match.end(), "number word") for match in _FOREIGN.finditer(text)]
    if not words.isdisjoint(_DENOMINATORS):
        spans += [(match.start(), match.end(), "fraction") for match in _FRACTION_WORDS.finditer(text)]
    if ids is not None and "-" in text:
        spans += [(match.start(), match.end(), "identifier") for match in IDENTIFIER.finditer(text)
                  if match.group() not in ids]
    return spans


def _merge(numerals: list[Numeral], extra: list[tuple[int, int, str]], text: str) -> list[Numeral]:
    """The scanner's numerals with the extra spans; an extra span inside one already found is
    dropped, and one that covers found numerals replaces them (`two thirds` is one fraction)."""
    if not extra:
        return numerals
    merged = list(numerals)
    for start, end, kind in sorted(extra, key=lambda span: (span[0], span[0] - span[1])):
        if any(n.start <= start and end <= n.end for n in merged):
            continue
        merged = [n for n in merged if not (start <= n.start and n.end <= end)]
        if any(n.start < end and start < n.end for n in merged):
            continue
        token = text[start:end]
        merged.append(Numeral(start, end, token, " ".join(unicodedata.normalize("NFKC", token).lower().split()), kind))
    return sorted(merged, key=lambda n: n.start)


def find_numerals(text: str, ids: Container[str] | None = None) -> list[Numeral]:
    """Every numeral in `text` (plain text), in order, by the rules in this module's docstring.
    With `ids` (the identifiers of the dataset, the ledger and the results), a digit-bearing
    identifier that is none of them is a numeral too (`P-629`)."""
    return list(_numerals(text, ids))


@functools.lru_cache(maxsize=16384)
def _numerals(text: str, ids: Container[str] | None) -> tuple[Numeral, ...]:
    # A check reads the same words many times (a model name placed in several claims, labels on
    # every render): numerals are immutable, so each text is scanned once per process, and the
    # scanner's outcome is remembered across checks by the text (generator.storage.memo).
    scanned = book("numerals").get(text, lambda: [[numeral.start, numeral.end, numeral.token, numeral.normalized,
                                                   numeral.kind] for numeral in _find_numerals(text)])
    return tuple(_merge([Numeral(*entry) for entry in scanned], _extra_spans(text, ids), text))


def _find_numerals(text: str) -> list[Numeral]:
    normal, starts, ends = _normalise(text)
    spans: list[tuple[int, int, str]] = []
    if _DIGIT.search(normal):
        _scan_digits(normal, spans)
    lowered = normal.lower()
    if len(lowered) != len(normal):
        lowered = normal
        words = _WORDS_ANY_CASE.finditer(normal)
    else:
        words = _WORDS.finditer(lowered)
    for word in words:
        spans.append((word.start(), word.end(),
                      "multiplier" if word.group("multiplier") or word.group("fold") else "number word"))
    if not spans:
        return []
    spans.sort()
    numerals = []
    for start, end, kind in spans:
        normalized = lowered[start:end]
        if not normalized.isascii() or " " in normalized or lowered is normal:
            normalized = " ".join(normalized.lower().replace(_MIXED, " ").split())
        if starts is not None:
            start, end = starts[start], ends[end - 1]
        numerals.append(Numeral(start, end, text[start:end], normalized, kind))
    return numerals


def _normalise(text: str) -> tuple[str, list[int] | None, list[int] | None]:
    """NFKC by character, with the source span of every character of the result (None: same)."""
    if text.isascii() or _UNCHANGED.issuperset(_NON_ASCII.findall(text)):
        return text, None, None
    parts: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    position = 0
    last = ""
    previous_superscript = False
    for match in _NON_ASCII.finditer(text):
        index = match.start()
        if index > position:
            parts.append(text[position:index])
            starts.extend(range(position, index))
            ends.extend(range(position + 1, index + 1))
            last = text[index - 1]
            previous_superscript = False
        normal, superscript, fraction = _character(text[index])
        if superscript and not previous_superscript and (last.isalnum() or last == "_"):
            normal = _POWER + normal
        elif fraction and last.isdigit():
            normal = _MIXED + normal
        parts.append(normal)
        starts.extend([index] * len(normal))
        ends.extend([index + 1] * len(normal))
        if normal:
            last = normal[-1]
        previous_superscript = superscript
        position = index + 1
    if position < len(text):
        parts.append(text[position:])
        starts.extend(range(position, len(text)))
        ends.extend(range(position + 1, len(text) + 1))
    return "".join(parts), starts, ends


def _character(char: str) -> tuple[str, bool, bool]:
    """A character's NFKC form, whether it is a superscript digit or sign, whether a vulgar fraction."""
    known = _CHARS.get(char)
    if known is None:
        normal = unicodedata.normalize("NFKC", char).translate(_EXTRA)
        superscript = (unicodedata.decomposition(char).startswith("<super>")
                       and normal[:1] in set("0123456789+-"))
        fraction = _FRACTION_SLASH in normal and char != _FRACTION_SLASH
        known = _CHARS[char] = (normal, superscript, fraction)
        if normal == char and len(_UNCHANGED) < 4096:
            _UNCHANGED.add(char)
    return known


def _scan_digits(text: str, spans: list[tuple[int, int, str]]) -> None:
    """Append the numerals of every token holding a digit. Only the run of token characters
    around each digit is tokenised (scanning the whole text with `_TOKEN` is several times slower),
    and a run that is a plain number, perhaps closing a sentence (`0.81`, `2030.`), skips `_TOKEN`."""
    reverse = text[::-1]
    length = len(text)
    has_times = "×" in text
    digit = _DIGIT.search(text)
    while digit is not None:
        left = digit.start()
        if left and not text[left - 1].isspace():
            left = length - _CHUNK.match(reverse, length - left).end()
        right = _CHUNK.match(text, digit.end()).end()
        times = has_times and _TIMES_BEFORE.match(reverse, length - left)
        plain = None if times else _PLAIN.fullmatch(text, left, right)
        if plain:
            number = plain.group(1)
            spans.append((left, left + len(number), "version" if number.count(".") >= 2 else "number"))
        else:
            for token in _TOKEN.finditer(text, length - times.end() if times else left, right):
                _scan_token(text, token, spans)
        digit = _DIGIT.search(text, right)


def _scan_token(text: str, token: re.Match, spans: list[tuple[int, int, str]]) -> None:
    """Append the numerals of one token (a match of `_TOKEN`) as (start, end, kind)."""
    body = token.start("body")
    end = token.end()
    consumed = body
    for run in _RUN.finditer(text, body, token.end("body")):
        start, stop = run.span()
        if start < consumed:
            continue
        digits = run.group()
        kind = "number"
        if start == body:
            lead = token.group("lead")
            if lead:
                start = token.start()
                kind = "multiplier" if lead[0] == "×" else "number"
            if digits.count(".") + (lead == ".") >= 2:
                kind = "version"
        elif text[start - 1] == "x" and start - 1 == body and stop == token.end("body"):
            start -= 1
            kind = "multiplier"
        elif "." in digits:
            leading_v = text[start - 1] in "vV" and (start - 1 == body or not text[start - 2].isalpha())
            if leading_v:
                start -= 1
            kind = "version" if leading_v or digits.count(".") >= 2 else "number"
        else:
            kind = _inner_kind(text, body, start)
            if kind is None:
                continue
        stop, kind = _extend(text, digits, stop, end, kind)
        spans.append((start, stop, kind))
        consumed = stop


def _inner_kind(text: str, body: int, start: int) -> str | None:
    """The kind of an undotted digit run that does not open its token; None for a label."""
    before = text[start - 1]
    if before == "@":
        return None
    if before == "-":
        return None if _CAPITAL_HYPHEN.match(text, start - 1) else "number"
    if before == _POWER:
        return None if text[start - 2].isalpha() else "number"
    if before in "x×" and start - 2 >= body and text[start - 2].isdigit():
        return "number"
    if before.isalpha():
        return None
    return "number"


def _extend(text: str, digits: str, stop: int, end: int, kind: str) -> tuple[int, str]:
    """What follows a numeral's digits inside its token: exponent, fraction, fold, unit, %, ×."""
    integer = digits.isdigit()
    if stop < end and text[stop] == _POWER and (power := _EXPONENT.match(text, stop, end)):
        stop = power.end()
    elif integer and stop < end and (fraction := _DENOMINATOR.match(text, stop, end)):
        return fraction.end(), "fraction"
    elif integer and stop < end and (mixed := _MIXED_FRACTION.match(text, stop, end)):
        return mixed.end(), "fraction"
    if stop < end and (fold := _FOLD_SUFFIX.match(text, stop, end)):
        return fold.end(), "multiplier"
    if stop < end and (letters := _LETTERS.match(text, stop, end)):
        suffix = letters.group().lower()
        if suffix in _ORDINAL_SUFFIXES and integer:
            return letters.end(), "ordinal"
        if suffix == "x":
            if letters.end() < end and text[letters.end()].isdigit():
                return stop, kind
            return letters.end(), "multiplier"
        stop = letters.end()
    if stop < end and text[stop] in "%‰":
        stop += 1
    elif stop < end and text[stop] == "×" and not (stop + 1 < end and text[stop + 1].isdigit()):
        return stop + 1, "multiplier"
    return stop, kind
