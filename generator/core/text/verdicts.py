"""Recognising a release verdict the way a reader would, in any text a reader sees.

A verdict says what to do with the reranker: ship it, hold it back, switch it on, drop it, or
that it pays for itself. Only a decision record's trigger computes one (generator.claims.record.triggers),
so `check` looks for verdicts in every claim, cited decision or not, and in every other text a
reader sees (strike reasons, labels, section titles; generator.core.text.wording). A sentence that cites a
decision may say that decision's current outcome, word for word, and no other verdict.

What counts (each a test table in tests/claims/test_verdicts.py):

- **Verbs of release**, in any inflection: ship, deploy, roll out, launch, go live,
  adopt, recommend, approve, green-light, sign off, put into production, productionise. They are
  verdicts whatever their object: "ship the hybrid" is a verdict as much as "ship the reranker".
- **Verbs of keeping or dropping**, when they act on the reranker (the reranker, the
  cross-encoder, the rerank row, hybrid+rerank, reranking): use, keep, release, enable, switch or turn on
  and off, drop, remove, reject, retire, disable, hold back, shelve, pull.
- **Judgements of worth** on the reranker: it pays (paid) for itself, it is (not) worth its cost
  or time, it earns its CPU cost.
- **Negations and their reversals** are verdicts too: "do not ship", "we would never deploy",
  "whoever says we should ship it is wrong" each hold a verb above, so each needs its decision.
- **Quotation marks change nothing** unless the quoted words are a unit the claim quotes from a
  design document (a quoted rule is the design's, not a verdict).
- **Languages**: claims in English and every language the ledger declares (`languages: [de]`),
  from the `verdict` class of each language's lexicon (generator/core/text/lexicons/*.yaml; a language
  without a lexicon is refused when the ledger loads); labels, titles and strike reasons in every
  language there is a lexicon for.

An undecided decision reads naturally: "whether to ship the reranker cannot be decided yet" says
the undecided outcome, and "whether to" followed by one of the trigger's own outcome phrases is
not a verdict.

Limits: a verdict paraphrased without any of these words ("the team will put it in front of
users") is not recognised; the lexicons are lists, not a parser, and grow when a case is found.
"""

from __future__ import annotations

import re

from generator.core.dataclass import dataclass
from generator.core.text import lexicon



def supported_languages() -> tuple[str, ...]:
    """The languages there is a lexicon for (generator/core/text/lexicons/)."""
    return lexicon.languages()


def _pattern(languages: tuple[str, ...]) -> re.Pattern:
    return lexicon.pattern("verdict", tuple(sorted(set(languages))))


@dataclass(frozen=True)
class Verdict:
    start: int
    end: int
    text: str


def find_verdicts(text: str, languages: tuple[str, ...] = ()) -> list[Verdict]:
    """Every verdict expression in `text` (plain text, as the reader sees it), in order."""
    normal = " ".join(text.replace("\u2019", "'").split())
    return [Verdict(match.start(), match.end(), match.group(0)) for match in _pattern(languages).finditer(normal)]


def normalise(text: str) -> str:
    """The form verdicts are found in: apostrophes straightened, white space collapsed."""
    return " ".join(text.replace("\u2019", "'").split())


def unlicensed(text: str, licensed: list[tuple[int, int]], languages: tuple[str, ...] = ()) -> list[Verdict]:
    """The verdicts of `text` (normalised) that no licensed span covers."""
    return [verdict for verdict in find_verdicts(text, languages)
            if not any(start <= verdict.start and verdict.end <= end for start, end in licensed)]


def whether_spans(text: str, phrases: list[str]) -> list[tuple[int, int]]:
    """The spans of "whether (or not) to PHRASE" in `text` (normalised): how a sentence names the
    question an undecided trigger leaves open, without answering it."""
    spans = []
    for phrase in phrases:
        pattern = r"(?<![\w-])whether(?:\s+or\s+not)?\s+to\s+" + re.escape(normalise(phrase)) + r"(?![\w])"
        spans += [(match.start(), match.end()) for match in re.finditer(pattern, text, re.IGNORECASE)]
    return spans


def phrase_spans(text: str, phrase: str) -> list[tuple[int, int]]:
    """Every occurrence of `phrase` in `text` (both normalised), case apart."""
    pattern = r"(?<![\w-])" + re.escape(normalise(phrase)) + r"(?![\w])"
    return [(match.start(), match.end()) for match in re.finditer(pattern, text, re.IGNORECASE)]
