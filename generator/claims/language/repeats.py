"""A trace score that cannot be padded: a sentence said twice in one report counts once.

U/T is only a measure when T counts different sentences. Adding copies of a claim that traces
(or the same words in another order, another case, with other punctuation or markup, or with a
filler word) would lower the share of untraceable claims without adding any evidence. So, within
one output, claims whose sentences are the same words are **repeats**: the first in ledger order
counts, every later one is flagged and left out of both U and T, in the current score, in every
new history line and in the recount of the first draft. A repeat that does not trace still fails
the check: it is a sentence a reader sees.

The same words are the same multiset of lower-case word and number tokens, placeholders kept as
their names (`{hybrid:.3f}` and `{hybrid}` are one token), without the filler words of
FILLERS. Across outputs a sentence may be repeated: each report is read on its own.

Limits: a paraphrase ("hybrid outperforms dense" beside "hybrid beats dense") is a different
sentence to this rule.
"""

from __future__ import annotations

import re
from typing import Iterable

FILLERS = frozenset(("a", "an", "the", "and", "also", "so", "just", "really", "very", "indeed", "quite", "still",
                     "actually", "clearly", "simply", "truly", "of", "that", "this", "it", "is", "are", "was",
                     "were", "be", "been"))
# (placeholder name, word): one of the two is empty in each token.
_TOKEN = re.compile(r"\{\s*([A-Za-z_]\w*)[^}]*\}|([^\W_]+(?:[.,][^\W_]+)*)", re.UNICODE)


def sentence_key(text: str) -> tuple[str, ...]:
    """What two sentences must share to be the same words."""
    tokens = [f"{{{name}}}" if name else word.lower() for name, word in _TOKEN.findall(text)]
    return tuple(sorted(token for token in tokens if token not in FILLERS))


def find_repeats(claims: Iterable[tuple[str, str, str]]) -> dict[str, str]:
    """{repeat id: id of the first claim it repeats}, for (id, output, text) in ledger order."""
    first: dict[tuple[str, tuple[str, ...]], str] = {}
    repeats: dict[str, str] = {}
    for claim_id, output, text in claims:
        key = (output, sentence_key(text))
        if key[1] and key in first:
            repeats[claim_id] = first[key]
        else:
            first.setdefault(key, claim_id)
    return repeats
