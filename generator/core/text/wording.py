"""Fixed wording outside the ledger: labels, the title, section titles, column labels and strike
reasons. They are headings and table words, never sentences, so they cannot carry a claim past
the checker:

- at most `max_words` words (10 for labels and titles);
- no sentence punctuation (`.`, `!`, `?`, `;`) and no Markdown or HTML markup (`*`, `_`, `` ` ``,
  `<`, `>`, `[`, `]`, `~`, `#`, `|`, `&`);
- no numerals in any spelling (generator.core.text.numerals: digits, number words, multipliers, versions);
  the digits of a name are not numerals (`nDCG@5`, `Recall@50`, `p95`, `sha256`, `BM25`), so
  names stay; a number shown to a reader comes from results or a quoted design span, through a
  claim;
- no character a reader cannot see (generator.core.text.characters: default-ignorable, format, control and
  private-use characters; the render marks its own output with private-use characters, a label
  must not be able to forge them), and words are read after look-alike letters are folded;
- no comparison, no verdict (generator.core.text.verdicts) and no word of any lexicon's assertive class
  (significantly, as good as, clearly, within budget, because, ...; generator.core.text.lexicon), unless the
  label is a question heading ("Was the measured lift a surprise"): "Hybrid is better than dense",
  "Significant gains" or "Ship the reranker" as a title is a claim nobody traces.

Any prose belongs in the claim ledger, where the checker traces it.
"""

from __future__ import annotations

import re

from generator.core.text import lexicon
from generator.core.text.characters import describe, fold, hidden_character
from generator.storage.memo import book
from generator.core.text.numerals import find_numerals
from generator.core.text.verdicts import find_verdicts, supported_languages

LABEL_MAX_WORDS = 10
# Ten long words make a heading; a 20 MB title would make a 40 MB page (it is shown twice).
LABEL_MAX_CHARS = 200
_PUNCTUATION = re.compile(r"[.!?;*_`<>\[\]~#|&]")
# Wording that compares (also the checker's trigger for requiring a predicate), and words about
# ranking quality (beside a cost measured without the model's weights they claim what was not
# measured): the lexicon's `comparative` and `quality` classes.
COMPARATIVE = lexicon.pattern("comparative")
QUALITY = lexicon.pattern("quality")
_QUESTION = re.compile(r"(what|why|how|when|where|which|who|was|were|is|are|do|does|did|can|could|should|will)\b",
                       re.IGNORECASE)


def label_problem(text: object, max_words: int = LABEL_MAX_WORDS, *, verdict: bool = False) -> str | None:
    """Why `text` is not a label (None when it is one). `verdict`: the label is a decision's outcome
    (a trigger's `fires` or `otherwise`), the one place a verdict is written. A pure function of
    its arguments, remembered (generator.storage.memo): a project's labels rarely change, and reading
    them against every language's word classes is most of what loading a project costs."""
    if not isinstance(text, str) or not text.strip():
        return "a label must be a non-empty string"
    return book("label problem").get(f"{max_words}\0{verdict:d}\0{text}",
                                     lambda: _label_problem(text, max_words, verdict))


def _label_problem(text: str, max_words: int, verdict: bool) -> str | None:
    if len(text) > LABEL_MAX_CHARS:
        return f"a label is at most {LABEL_MAX_CHARS} characters (this one has {len(text):,}): put prose in the claim ledger"
    hidden = hidden_character(text, allow="\t")
    if hidden:
        return f"a label may not hold the invisible, private-use or control character {describe(hidden)}"
    text = fold(text)
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
    asserted = _assertive_word(text)
    if asserted and not _QUESTION.match(text.strip()):
        return (f"a label that asserts ({asserted!r}) is a claim only an assertion can license: put the sentence in "
                "the claim ledger with its `asserts:`")
    return None


def _assertive_word(text: str) -> str | None:
    """The first word of any lexicon's assertive class (significance, equivalence, magnitude,
    budget fit, cause, ...) in a label: a label carries no assertion, so none is licensed there."""
    for language in lexicon.languages():
        for name, word_class in lexicon.assertive(language).items():
            if word_class.licensed_by == "decision":
                continue    # verdicts, above
            match = lexicon.pattern(name, (language,)).search(text)
            if match:
                return match.group(0)
    return None


_NUMBER_IN_LABEL = ("a label holds no numbers ({0!r}); a number a reader sees comes from results or a quoted design "
                    "span, through a claim")


DATA_TEXT_MAX_WORDS = 20


def data_text_problem(text: str) -> str | None:
    """Why a text value from results cannot be shown as a table word (a row name, a description,
    a not-measured reason): it may name things (`BM25`, `hybrid+rerank`) but may not be a
    sentence, hold a number, hide characters, give a verdict or use an assertive word (remembered,
    as label_problem)."""
    return book("data text problem").get(text, lambda: _data_text_problem(text))


def _data_text_problem(text: str) -> str | None:
    hidden = hidden_character(text)
    if hidden:
        return f"holds the invisible, private-use or control character {describe(hidden)}"
    text = fold(text)
    if len(text.split()) > DATA_TEXT_MAX_WORDS:
        return f"more than {DATA_TEXT_MAX_WORDS} words: a table cell is not a sentence"
    if re.search(r"[.!?;]\s|[.!?;]\Z", text):
        return "holds sentence punctuation: a table cell is not a sentence"
    for numeral in find_numerals(text):
        return f"holds the number {numeral.token!r}: a number in a report comes from a formatted value or a claim"
    for verdict in find_verdicts(text, supported_languages()):
        return f"gives the verdict {verdict.text!r}: only a decision record's trigger gives one"
    asserted = _assertive_word(text)
    if asserted:
        return f"asserts ({asserted!r}): only a claim's assertion that holds licenses that"
    return None


def with_article(noun: str) -> str:
    """`noun` after its indefinite article, chosen by its first letter: "an effect", "an interval
    end", "a margin". For the package's own nouns (threshold and value kinds), none of which starts
    with a silent h or a sounded u."""
    return f"{'an' if noun[:1].lower() in 'aeio' else 'a'} {noun}"
