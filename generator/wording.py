"""Fixed wording outside the ledger: labels, the title, section titles, column labels and strike
reasons. They are headings and table words, never sentences, so they cannot carry a claim past
the checker:

- at most `max_words` words (10 for labels and titles);
- no sentence punctuation (`.`, `!`, `?`, `;`) and no Markdown or HTML markup (`*`, `_`, `` ` ``,
  `<`, `>`, `[`, `]`, `~`, `#`, `|`, `&`);
- no numerals in any spelling (generator.numerals: digits, number words, multipliers, versions);
  the digits of a name are not numerals (`nDCG@5`, `Recall@50`, `p95`, `sha256`, `BM25`), so
  names stay; a number shown to a reader comes from results or a quoted design span, through a
  claim;
- no private-use or control characters (the render marks its own output with private-use
  characters; a label must not be able to forge them);
- no comparison and no verdict (generator.verdicts), unless the label is a question heading
  ("Was the measured lift a surprise"): "Hybrid is better than dense" or "Ship the reranker" as
  a title is a claim nobody traces.

Any prose belongs in the claim ledger, where the checker traces it.
"""

from __future__ import annotations

import re
import unicodedata

from generator.numerals import find_numerals
from generator.verdicts import find_verdicts, supported_languages

LABEL_MAX_WORDS = 10
# Ten long words make a heading; a 20 MB title would make a 40 MB page (it is shown twice).
LABEL_MAX_CHARS = 200
_PUNCTUATION = re.compile(r"[.!?;*_`<>\[\]~#|&]")
# Wording that compares (also the checker's trigger for requiring a predicate).
COMPARATIVE = re.compile(
    r"\b(better|worse|best|worst|higher|highest|lower|lowest|more|most|less|least|fewer|greater|smaller|"
    r"larger|bigger|than|beats?|beaten|beating|outperform\w*|exceed\w*|surpass\w*|above|below|improv\w*|"
    r"lift\w*|gain\w*|lose|loses|lost|losing|drops?|dropped|increas\w*|decreas\w*|rais\w*|reduc\w*|faster|"
    r"slower|cheaper|costlier|ahead|behind|trail\w*|wins?|won|ties?|tied|equals?|equal(?:led|ly)?|same as|"
    r"unchanged|differ\w*|matches|exactly|rather than)\b", re.IGNORECASE)
# Words about ranking quality: beside a cost measured without the model's weights they claim
# what was not measured (generator.claims.checker).
QUALITY = re.compile(
    r"(\bn?DCG\w*|\brecall\w*|\bprecision\w*|\bMRR\w*|\bMAP\b|\bP@|\bquality\b|\brelevan\w*|\baccura\w*|"
    r"\blift\w*|\bgain\w*|\bimprov\w*|\bbetter\b|\bworse\b|\beffective\w*|\bhelps?\b|\bhelped\b|"
    r"\bwins?\b|\bbeats?\b|\boutperform\w*|\bscores?\b|\branks? (?:higher|better)\b)", re.IGNORECASE)
# A release verdict: computed by a decision record's trigger, never written by hand.
VERDICT = re.compile(r"\b(ship|ships|shipped|shipping|deploy|deploys|deployed|deploying|roll(?:s|ed|ing)? out|"
                     r"recommend|recommends|recommended|recommending|adopt|adopts|adopted|adopting|go live|"
                     r"goes live|launch|launches|launched)\b", re.IGNORECASE)
_QUESTION = re.compile(r"(what|why|how|when|where|which|who|was|were|is|are|do|does|did|can|could|should|will)\b",
                       re.IGNORECASE)


def label_problem(text: object, max_words: int = LABEL_MAX_WORDS, *, verdict: bool = False) -> str | None:
    """Why `text` is not a label (None when it is one). `verdict`: the label is a decision's outcome
    (a trigger's `fires` or `otherwise`), the one place a verdict is written."""
    if not isinstance(text, str) or not text.strip():
        return "a label must be a non-empty string"
    if len(text) > LABEL_MAX_CHARS:
        return f"a label is at most {LABEL_MAX_CHARS} characters (this one has {len(text):,}): put prose in the claim ledger"
    for char in text:
        category = unicodedata.category(char)
        if category in ("Co", "Cc", "Cf", "Cs", "Cn") and char not in "\t":
            return f"a label may not hold the private-use or control character U+{ord(char):04X}"
    if len(text.split()) > max_words:
        return f"a label is a heading or a table word, not a sentence (at most {max_words} words): put prose in the claim ledger"
    punctuation = _PUNCTUATION.search(text)
    if punctuation:
        return (f"a label holds no sentence punctuation or markup ({punctuation.group(0)!r}): put prose in the "
                "claim ledger")
    for numeral in find_numerals(text):
        return _NUMBER_IN_LABEL.format(numeral.token)
    comparative = COMPARATIVE.search(text)
    if comparative and not _QUESTION.match(text.strip()):
        return (f"a label that compares ({comparative.group(0)!r}) is a claim: make it a question heading or put the "
                "sentence in the claim ledger")
    verdicts = [] if verdict else find_verdicts(text, supported_languages())
    if verdicts and not _QUESTION.match(text.strip()):
        return (f"a label that gives a verdict ({verdicts[0].text!r}) is a claim only a decision record can make: "
                "put it in the claim ledger with its decision")
    return None


_NUMBER_IN_LABEL = ("a label holds no numbers ({0!r}); a number a reader sees comes from results or a quoted design "
                    "span, through a claim")


DATA_TEXT_MAX_WORDS = 20


def data_text_problem(text: str) -> str | None:
    """Why a text value from results cannot be shown as a table word (a row name, a description,
    a not-measured reason): it may name things (`BM25`, `hybrid+rerank`) but may not be a
    sentence, hold a number or hide characters."""
    for char in text:
        if unicodedata.category(char) in ("Co", "Cc", "Cf", "Cs", "Cn"):
            return f"holds the private-use or control character U+{ord(char):04X}"
    if len(text.split()) > DATA_TEXT_MAX_WORDS:
        return f"more than {DATA_TEXT_MAX_WORDS} words: a table cell is not a sentence"
    if re.search(r"[.!?;]\s|[.!?;]\Z", text):
        return "holds sentence punctuation: a table cell is not a sentence"
    for numeral in find_numerals(text):
        return f"holds the number {numeral.token!r}: a number in a report comes from a formatted value or a claim"
    for verdict in find_verdicts(text, supported_languages()):
        return f"gives the verdict {verdict.text!r}: only a decision record's trigger gives one"
    return None
