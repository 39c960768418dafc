"""The BM25 sanity example of spec section 5, asserted to 4 decimals."""

import math

import pytest

from generator.sandbox.bm25 import BM25Index, bm25_idf, bm25_term_weight, tokenize


def test_idf_of_a_term_in_two_of_three_documents_is_ln_1_6():
    assert round(bm25_idf(3, 2), 4) == 0.4700
    assert bm25_idf(3, 2) == pytest.approx(math.log(1.6), abs=1e-15)


def test_document_a_length_100_term_three_times_weighs_0_7386():
    assert round(bm25_term_weight(bm25_idf(3, 2), 3, 100, 100.0), 4) == 0.7386


def test_document_b_length_50_term_once_weighs_0_5909():
    assert round(bm25_term_weight(bm25_idf(3, 2), 1, 50, 100.0), 4) == 0.5909


def test_index_reproduces_the_sanity_example_from_token_lists():
    a = ["term"] * 3 + ["filler"] * 97
    b = ["term"] + ["filler"] * 49
    c = ["other"] * 150
    index = BM25Index.build([("A", a), ("B", b), ("C", c)])
    assert index.average_length == 100.0
    assert round(index.idf("term"), 4) == 0.4700
    assert round(index.score(["term"], "A"), 4) == 0.7386
    assert round(index.score(["term"], "B"), 4) == 0.5909
    assert index.score(["term"], "C") == 0.0


def test_idf_stays_positive_for_a_term_in_every_document():
    assert bm25_idf(3, 3) > 0


def test_tokenizer_joins_hyphen_and_apostrophe_parts_and_lowercases():
    assert tokenize("Held-out QUERY's, held out; BM25 k1=1.2") == [
        "held-out", "query's", "held", "out", "bm25", "k1", "1", "2"]
