"""Free prose: the closed rule over the author's own words (generator.claims.language.prose).

A claim that is not a frame is the author's words, shown to the reader as such. When those words
name a result entity (a row or its alias, a metric, a model, a query set, a decision), they may
carry no number and no word outside the closed vocabulary: function words, the frozen design's
words (by stem) that the claim quotes, the schema's meaning of a value the sentence places, and never a word that
compares, counts or qualifies. Quoted spans count as the design's words only when a span is a
whole quote the claim cites (a fragment of a rule, quoted, is the author's word for it).
"""

from __future__ import annotations

import json
import re

from generator.core.text.characters import fold
from generator.claims.language import prose
from generator.claims.language.visible import UNFILLED_PLACEHOLDER
from generator.claims.record.quotable_units import reduce_markdown
from generator.claims.tracing.rules import rule
from generator.claims.tracing.rules.identity import aliases_of_files
from generator.claims.tracing.view import BLANK, ClaimView
from generator.core.rows import KIND_WORDS
from generator.storage.fileio import sha256_text
from generator.storage.memo import book
from generator.core.text.numerals import find_numerals

# A quoted span of the canonical text (generator.core.text.characters.fold turns curly quotes into '').
_QUOTED = re.compile(r"(?:\"|''|\u201c)(.+?)(?:\"|''|\u201d)")
MAX_LISTED = 4
_POSSESSIVE = re.compile(r"['\u2019]s\Z")


def _own_words(view: ClaimView) -> str:
    """The canonical sentence with every placed value blanked and every whole cited design quote
    (between quotation marks) blanked to spaces of the same length."""
    text = view.authored.replace(UNFILLED_PLACEHOLDER, BLANK)   # a value the check could not place is no one's word
    quotes = {_normal(quote) for quote in view.quotes}

    def drop(match: re.Match) -> str:
        return " " * len(match.group(0)) if _normal(match.group(1)) in quotes else match.group(0)
    return _QUOTED.sub(drop, text)


def _normal(text: str) -> str:
    return " ".join(fold(reduce_markdown(text)).lower().split()).rstrip(".")


def _entity_names(context) -> frozenset[str]:
    """Every name of a result entity in this project: rows and their kinds' words, models and their
    aliases, query sets in the ledger's languages, decisions."""

    def compute() -> frozenset[str]:
        files = context.all_results()
        names = {word for words in KIND_WORDS.values() for word in words}
        for results in files:
            names |= set(results.model.row_names)
        names |= set(aliases_of_files(context.design_dir, files))
        for language in ("en", *context.languages):
            names |= set(prose.query_set_words(language))
        names |= {row.trigger.decision for row in context.decisions}
        return frozenset(name for name in names if name)
    return context.shared(("prose entities",), compute)


def _stems(text: str, language: str) -> frozenset[str]:
    """The stems of a text's words (a design document, a claim's quotes), remembered by the text."""
    return frozenset(book("design stems").get(f"{language}:{sha256_text(text)}",
                                              lambda: sorted(prose.vocabulary(text, language))))


def _entities_in(context, text: str) -> list[tuple[int, int, str]]:
    pattern = context.shared(("prose entity pattern",), lambda: prose.entity_pattern(_entity_names(context)))
    found = [(match.start(), match.end(), match.group(0)) for match in pattern.finditer(text)] if pattern else []
    found += [(match.start(), match.end(), match.group(0)) for match in prose.METRIC.finditer(text)]
    outcomes = context.outcomes
    if outcomes is not None:
        found += [(match.start(), match.end(), match.group(0)) for match in outcomes.finditer(text)]
    return sorted(found)


def _blanked(text: str, spans: list[tuple[int, int, str]]) -> str:
    chars = list(text)
    for start, end, _ in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def _schema_words(view: ClaimView) -> str:
    """The results schema's meaning of each value the sentence places: words the author may use."""
    meanings = []
    for value in view.shown:
        location = value.location
        if location is None:
            continue
        meanings.append(location.block.meaning)
        # what kind of figure it is names it too ("the change", "the interval end", "the mean")
        meanings.append(location.kind or "")
        if location.field is not None:
            meanings.append(getattr(location.field, "meaning", "") or "")
    return " ".join(meanings)


def _names(spans: list[tuple[int, int, str]]) -> str:
    return ", ".join(dict.fromkeys(name for _, _, name in spans))


def closed_rule_problems(context, text: str, language: str, design: str, schema: str = "",
                         what: str = "the author's words name") -> list[tuple[str, str]]:
    """What `text` (canonical, values blanked) says beside a result entity that the closed rule
    refuses: a number, a word that compares, counts or qualifies, a word outside the vocabulary
    (`design`: the design's words the text may use, a claim's cited quotes or, for a title, the
    whole design; `schema`: the results schema's meaning of the values it places). Remembered by
    everything it reads, so a check that has read a sentence before needs no stemmer."""
    entities = _entities_in(context, text)
    if not entities:
        return []
    key = json.dumps([text, language, design, schema, what, entities, sorted(context.languages)], ensure_ascii=False)
    found = book("closed rule").get(sha256_text(key),
                                    lambda: _closed(context, text, entities, language, design, schema, what))
    return [(code, message) for code, message in found]


def _closed(context, text: str, entities: list, language: str, design_text: str, schema_text: str,
            what: str) -> list[list[str]]:
    schema = prose.vocabulary(schema_text, language) if schema_text else frozenset()
    design = _stems(design_text, language)
    found = []
    rest = _blanked(text, entities)
    numerals = find_numerals(rest, context.identifiers)
    if numerals:
        shown = ", ".join(repr(numeral.token) for numeral in numerals[:MAX_LISTED])
        found.append(["prose-number", f"{what} {_names(entities)} together with the number {shown}: a figure "
                                      "about a result is placed by the package (a frame: docs/claims.md, 'Frames'), or "
                                      "quote the whole design sentence"])
    allowed = prose.function_words(language)
    refused = {stem for code in {language, "en", *context.languages} for stem in prose.never_neutral(code)}
    comparing, outside = [], []
    for _, _, word in prose.words(rest):
        if word.lower() in allowed or _POSSESSIVE.sub("", word.lower()) in allowed:
            continue    # a function word of the claim's own language ("par" in French is not "on par")
        stem = prose.stem(word, language)
        if stem in schema and stem in prose.statistic_words(language):
            continue    # the statistic the placed value is ("the change is +0.048")
        if stem in refused or prose.stem(word, "en") in refused:
            comparing.append(word)
        elif stem not in design and stem not in schema:
            outside.append(word)
    if comparing:
        listed = ", ".join(repr(word) for word in dict.fromkeys(comparing))
        found.append(["prose-words", f"{what} {_names(entities)} together with {listed}, which compares, "
                                     "counts or qualifies: only a frame says that (docs/claims.md, 'Frames')"])
    if outside:
        listed = ", ".join(repr(word) for word in list(dict.fromkeys(outside))[:MAX_LISTED])
        found.append(["prose-words", f"{what} {_names(entities)} together with {listed}, outside the closed "
                                     "vocabulary (function words, the frozen design's words, the schema's meaning of "
                                     "a placed value): say what the result is with a frame, quote the design's whole "
                                     "sentence, or leave the result entity out"])
    return found


def _findings(view: ClaimView, code: str) -> list[str]:
    if view.claim.frame is not None:
        return []
    found = view.context.shared(("closed rule", view.claim.id),
                                lambda: closed_rule_problems(view.context, _own_words(view), view.claim.language,
                                                             " ".join(view.quotes), _schema_words(view)))
    return [message for finding_code, message in found if finding_code == code]


@rule("prose-number", "Free prose names no result entity with a number")
def prose_number(view: ClaimView) -> list[str]:
    """The author's words that name a row, a metric, a model, a query set or a decision carry no
    numeral of their own (a value the tool places is not theirs): a figure about a result is a
    frame's, placed by the package."""
    return _findings(view, "prose-number")


@rule("prose-words", "Free prose beside a result entity keeps to a closed vocabulary")
def prose_words(view: ClaimView) -> list[str]:
    """The author's words that name a row, a metric, a model, a query set or a decision use only
    function words, the frozen design's words and the schema's meaning of the values they place,
    and no word that compares, counts or qualifies (generator.claims.language.prose): whatever a
    sentence says of a result beyond naming it is a frame the package writes."""
    return _findings(view, "prose-words")
