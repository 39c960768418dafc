"""The sandbox's own tokenizer and BM25 (no bm25s, no numpy): small enough to check by hand.

Tokenizer: the regex ``[a-z0-9]+(?:[-'][a-z0-9]+)?`` matched case-insensitively, tokens
lowercased, over ``title + " " + text``. A hyphen or apostrophe joins two parts into one token
("held-out" is one token, "held out" two).

BM25 (Robertson and Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond", 2009),
with the non-negative IDF variant used by Lucene:

    IDF(t)       = ln(1 + (N - n(t) + 0.5) / (n(t) + 0.5))
    weight(t, d) = IDF(t) * f * (k1 + 1) / (f + k1 * (1 - b + b * |d| / avgdl))
    score(q, d)  = sum of weight(t, d) over the distinct query tokens t

where N is the number of documents, n(t) the number of documents containing t, f the count of
t in d, |d| the token length of d and avgdl the mean token length. Defaults k1 = 1.2, b = 0.75.
A repeated query token counts once.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Iterable, Mapping, Sequence

from generator.core.dataclass import dataclass
from generator.core.metrics import ordered_sum

TOKEN_PATTERN = r"[a-z0-9]+(?:[-'][a-z0-9]+)?"
TOKEN_REGEX = re.compile(TOKEN_PATTERN, re.IGNORECASE)
DEFAULT_K1 = 1.2
DEFAULT_B = 0.75


def tokenize(text: str) -> list[str]:
    """Lowercased tokens of ``text`` matched by TOKEN_PATTERN, case-insensitively."""
    return [match.lower() for match in TOKEN_REGEX.findall(text)]


def document_tokens(title: str, text: str) -> list[str]:
    """The tokens BM25 indexes for a record: title, a space, then text."""
    return tokenize(f"{title} {text}")


def bm25_idf(n_documents: int, document_frequency: int) -> float:
    """Positive IDF: ln(1 + (N - n + 0.5) / (n + 0.5)); never negative, even for n > N/2."""
    if n_documents < 0 or document_frequency < 0 or document_frequency > n_documents:
        raise ValueError(f"need 0 <= document_frequency <= n_documents, got {document_frequency} "
                         f"and {n_documents}")
    return math.log(1.0 + (n_documents - document_frequency + 0.5) / (document_frequency + 0.5))


def bm25_term_weight(idf: float, term_frequency: int, document_length: int, average_length: float,
                     k1: float = DEFAULT_K1, b: float = DEFAULT_B) -> float:
    """IDF * f * (k1 + 1) / (f + k1 * (1 - b + b * |d| / avgdl)); 0.0 when f is 0."""
    if average_length <= 0:
        raise ValueError(f"average_length must be positive, got {average_length}")
    if term_frequency == 0:
        return 0.0
    norm = k1 * (1.0 - b + b * document_length / average_length)
    return idf * term_frequency * (k1 + 1.0) / (term_frequency + norm)


@dataclass(frozen=True)
class BM25Index:
    """Term counts, lengths and document frequencies of a tokenized corpus."""

    doc_ids: tuple[str, ...]
    term_counts: Mapping[str, Counter]
    lengths: Mapping[str, int]
    document_frequency: Mapping[str, int]
    k1: float = DEFAULT_K1
    b: float = DEFAULT_B

    @classmethod
    def build(cls, documents: Iterable[tuple[str, Sequence[str]]], k1: float = DEFAULT_K1,
              b: float = DEFAULT_B) -> "BM25Index":
        """Index ``(doc_id, tokens)`` pairs."""
        doc_ids: list[str] = []
        counts: dict[str, Counter] = {}
        frequency: Counter = Counter()
        for doc_id, tokens in documents:
            if doc_id in counts:
                raise ValueError(f"duplicate doc_id {doc_id!r}")
            doc_ids.append(doc_id)
            counts[doc_id] = Counter(tokens)
            frequency.update(set(tokens))
        if not doc_ids:
            raise ValueError("cannot index an empty corpus")
        lengths = {doc_id: sum(counter.values()) for doc_id, counter in counts.items()}
        return cls(tuple(doc_ids), counts, lengths, dict(frequency), k1, b)

    @property
    def n_documents(self) -> int:
        return len(self.doc_ids)

    @property
    def average_length(self) -> float:
        return sum(self.lengths.values()) / self.n_documents

    def idf(self, term: str) -> float:
        return bm25_idf(self.n_documents, self.document_frequency.get(term, 0))

    def term_weight(self, term: str, doc_id: str) -> float:
        return bm25_term_weight(self.idf(term), self.term_counts[doc_id][term], self.lengths[doc_id],
                                self.average_length, self.k1, self.b)

    def score(self, query_tokens: Sequence[str], doc_id: str) -> float:
        return ordered_sum(self.term_weight(term, doc_id) for term in dict.fromkeys(query_tokens))

    def score_all(self, query_tokens: Sequence[str]) -> dict[str, float]:
        """BM25 score of every document (0.0 where no query token occurs)."""
        return {doc_id: self.score(query_tokens, doc_id) for doc_id in self.doc_ids}
