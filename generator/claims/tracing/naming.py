"""How a sentence names what a value belongs to: rows (by name or a common alias), queries, and
the value itself as a rule reads it (ShownValue: its file, its path, where the results schema
places it and the query set it was measured on).

What a value is, is read from the results schema (generator.core.results.location.locate), never from
its path's spelling, so every declared block is named the day it is declared.
"""

from __future__ import annotations

import functools
import re
from typing import Iterable

from generator.core.dataclass import dataclass
from generator.core.rows import KIND_WORDS, default_rows
from generator.core.results import ResultsModel, Step
from generator.core.results.location import Location
from generator.core.results.schema import QUERY_SET

# The SciFact review's rows are named by their kind's words (generator.core.rows.KIND_WORDS,
# which also keeps any configured row from taking another kind's word); the sandbox's by its own.
ROW_ALIASES: dict[str, tuple[str, ...]] = {
    **{row.name: KIND_WORDS[row.kind] for row in default_rows()},
    "bm25": ("bm25",),
    "opaque": ("opaque", "supplied run"),
    "reranked": ("reranked", "reranker", "rerank", "reranking"),
}
# A file read without its own data (a unit test, a path in no file): located with the SciFact
# review's roles.
_NO_FILE = ResultsModel({})


@dataclass(frozen=True)
class ShownValue:
    """A value a claim shows: its placeholder, the results file and path it comes from, where the
    schema places it, and the file whose query set it was measured on (None: no query set)."""

    name: str
    file: str
    steps: tuple[Step, ...]
    where: Location | None = None
    query_set: str | None = None
    canonical: tuple[Step, ...] | None = None     # the path in the current format's spelling

    @property
    def location(self) -> Location | None:
        return self.where if self.where is not None else _NO_FILE.locate(self.steps)


def shown_value(name: str, file: str, steps: tuple[Step, ...], model: ResultsModel) -> ShownValue:
    """A value as a rule reads it, located in its own file."""
    location = model.locate(steps)
    query_set = None
    if location is not None and (location.block.over_queries or location.block is QUERY_SET) \
            and model.measures_queries:
        compared = model.manifest_block("compared_with").get("path")
        sample_side = location.side == "sample" or location.name == "sample_queries"
        query_set = str(compared) if sample_side and compared else file
    return ShownValue(name, file, steps, location, query_set, model.canonical(steps)[0])


def row_of(value: ShownValue) -> str | None:
    """The row a value is a value of."""
    location = value.location
    return location.row if location is not None else None


def baseline_of(value: ShownValue) -> str | None:
    """The row a change is measured against: a lift is only a lift over something named."""
    location = value.location
    return location.baseline if location is not None else None


def query_of(value: ShownValue) -> str | None:
    location = value.location
    return location.query if location is not None else None


def rows_of(value: ShownValue) -> set[str]:
    """Every row a value belongs to: its own row, and the baseline a change is measured against."""
    return {row for row in (row_of(value), baseline_of(value)) if row is not None}


def named_rows(text: str, known: Iterable[str]) -> set[str]:
    return {row for row in known if mentions_row(text, row)}


def is_query_count(value: ShownValue) -> bool:
    """A value that says how many queries (or which query set) something was measured on."""
    location = value.location
    return location is not None and (location.kind == "query count" or location.block is QUERY_SET)


def mention_spans(text: str, row: str) -> list[tuple[int, int]]:
    """Where the sentence names a row, by its name or an alias, as a whole word (`hybrid` inside
    "hybrid+rerank" names the rerank row, not hybrid)."""
    return [span for word in ROW_ALIASES.get(row, (row,)) for span in word_spans(text, word)]


def word_spans(text: str, word: str) -> list[tuple[int, int]]:
    return [(match.start(), match.end()) for match in _word_pattern(word).finditer(text.lower())]


@functools.lru_cache(maxsize=4096)
def _word_pattern(word: str) -> re.Pattern:
    return re.compile(r"(?<![\w+-])" + re.escape(word.lower()) + r"(?![\w+]|-(?=\w))")


def mentions_row(text: str, row: str) -> bool:
    return bool(mention_spans(text, row))


def rows_in_order(text: str, known: Iterable[str]) -> list[tuple[int, int, str]]:
    """Every mention of a known row, (start, end, row) in reading order; where two mentions
    overlap ("hybrid+rerank" and "rerank"), the longer one."""
    spans = sorted(((start, end, row) for row in set(known) for start, end in mention_spans(text, row)),
                   key=lambda item: (item[0], -(item[1] - item[0]), item[2]))
    kept: list[tuple[int, int, str]] = []
    for start, end, row in spans:
        if kept and start < kept[-1][1]:
            continue
        kept.append((start, end, row))
    return kept


def query_spans(text: str, query: str) -> list[tuple[int, int]]:
    """Where the query id appears in the text as a token of its own."""
    return [(match.start(), match.end())
            for match in re.finditer(r"(?<![\w.-])" + re.escape(query) + r"(?![\w-]|\.\d)", text)]


def only_by_alias(text: str, row: str) -> bool:
    """The sentence names `row` only through an alias ("reranker"), never by its own name."""
    return mentions_row(text, row) and not word_spans(text, row)
