"""Values attributed to the wrong thing: the sentence must name whose value it shows.

A figure is only as true as its label. What a value is (the row it belongs to, the baseline a
change is measured against, the query it is of, the query set it was measured on) is read from
the results schema (generator.results.schema.locate), so every declared block is attributed the
day it is declared. Three rules, each over the values a claim *shows* (its placeholders):

- **Rows.** A value of one row (in `table`, `per_query`, `diagnosis`, `ceiling`, `comparisons`,
  `rerank_costs`, a block about the decided reranker, ...) is shown only in a sentence that names
  that row, by its name or a common alias (ROW_ALIASES): hybrid's change cannot be presented as
  the reranker's lift. A change also names its baseline: a lift over dense cannot pass for a lift
  over hybrid. Once a sentence names a row that has no alias (a second reranker,
  `hybrid+rerank-int8`), a word such as "reranker" no longer names the first one: its values need
  its own name.
- **Queries.** A value of one query (`per_query.hybrid.13.nDCG@5`, `rerank_milliseconds.13`) is
  shown only in a sentence that names the query id: one query's value cannot pass for the mean.
  The id written in the text is then accounted for (it is not a hand-typed number).
- **Query sets.** Every value measured over a query set belongs to its file's set (the sample
  side of a comparison with the release sample, to the sample's). A sentence that shows values of
  two sets, or of any set other than the release sample's, shows each set's query count; and a
  value is read with the query count that governs it (the nearest before it, else the first
  after it), which must be its own set's: "on all {n} queries, ... {v}" cannot take `n` from one
  file and `v` from another.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from generator.core.rows import KIND_WORDS, default_rows
from generator.results import RESULTS_NAME, ResultsModel, Step
from generator.results.schema import QUERY_SET, Location

# The SciFact review's rows are named by their kind's words (generator.core.rows.KIND_WORDS,
# which also keeps any configured row from taking another kind's word); the sandbox's by its own.
ROW_ALIASES: dict[str, tuple[str, ...]] = {
    **{row.name: KIND_WORDS[row.kind] for row in default_rows()},
    "bm25": ("bm25",),
    "opaque": ("opaque", "supplied run"),
    "reranked": ("reranked", "reranker", "rerank", "reranking"),
}
_AGGREGATE = re.compile(r"\b(mean|means|average|averaged|averages|macro|overall|across|typical|typically)\b",
                        re.IGNORECASE)
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
    return [span for word in ROW_ALIASES.get(row, (row,)) for span in _word_spans(text, word)]


def _word_spans(text: str, word: str) -> list[tuple[int, int]]:
    return [(match.start(), match.end())
            for match in re.finditer(r"(?<![\w+-])" + re.escape(word.lower()) + r"(?![\w+]|-(?=\w))", text.lower())]


def mentions_row(text: str, row: str) -> bool:
    return bool(mention_spans(text, row))


def query_spans(text: str, query: str) -> list[tuple[int, int]]:
    """Where the query id appears in the text as a token of its own."""
    return [(match.start(), match.end())
            for match in re.finditer(r"(?<![\w.-])" + re.escape(query) + r"(?![\w-]|\.\d)", text)]


def _only_by_alias(text: str, row: str) -> bool:
    """The sentence names `row` only through an alias ("reranker"), never by its own name."""
    return mentions_row(text, row) and not _word_spans(text, row)


def attribution_reasons(shown: Iterable[ShownValue], visible_text: str, primary: str = RESULTS_NAME,
                        rows: Iterable[str] = ()) -> list[str]:
    """Every broken attribution rule (see the module docstring), one reason each. `shown` is in
    the order the sentence shows its values."""
    reasons = []
    shown = list(shown)
    # Rows without aliases of their own (a configured second reranker, "hybrid+rerank-int8"): once
    # the sentence names one, a generic word such as "reranker" no longer says which row it means.
    rows_of_shown = {row for value in shown for row in rows_of(value)}
    named_plainly = sorted(row for row in set(rows) - rows_of_shown - set(ROW_ALIASES)
                           if mentions_row(visible_text, row))
    for value in shown:
        row = row_of(value)
        if row is not None and not mentions_row(visible_text, row):
            aliases = " or ".join(repr(alias) for alias in ROW_ALIASES.get(row, (row,))[:3])
            reasons.append(f"{{{value.name}}} is a value of row {row}, but the sentence does not name that row "
                           f"(say {aliases}): a figure is only as true as its label")
        elif row is not None and named_plainly and _only_by_alias(visible_text, row):
            reasons.append(f"{{{value.name}}} is a value of row {row}, but the sentence names row "
                           f"{named_plainly[0]} and calls {row} only by a word both could answer to: "
                           f"name {row} itself")
        baseline = baseline_of(value)
        if baseline is not None and baseline != row and not mentions_row(visible_text, baseline):
            aliases = " or ".join(repr(alias) for alias in ROW_ALIASES.get(baseline, (baseline,))[:3])
            reasons.append(f"{{{value.name}}} is a change over {baseline}, but the sentence does not name {baseline} "
                           f"(say {aliases}): a lift over one row must not pass for a lift over another")
        query = query_of(value)
        if query is not None and not query_spans(visible_text, query):
            reasons.append(f"{{{value.name}}} is the value of query {query} alone, but the sentence does not name "
                           f"query {query}: one query's value must not pass for the mean")
        elif query is not None and _AGGREGATE.search(visible_text):
            reasons.append(f"{{{value.name}}} is the value of query {query} alone, but the sentence speaks of "
                           f"{_AGGREGATE.search(visible_text).group(0)!r}: one query's value must not pass for the mean")
    reasons.extend(query_set_reasons(shown, primary))
    return reasons


def query_set_reasons(shown: list[ShownValue], primary: str = RESULTS_NAME) -> list[str]:
    """The third rule: each value with the query count of its own query set."""
    counts = [(index, value) for index, value in enumerate(shown) if value.query_set and is_query_count(value)]
    measured = [(index, value) for index, value in enumerate(shown) if value.query_set and not is_query_count(value)]
    sets = sorted({value.query_set for _, value in measured})
    counted = {value.query_set: value.name for _, value in counts}
    reasons = []
    if len(sets) > 1 or (sets and sets[0] != primary):
        for query_set in sets:
            if query_set not in counted:
                others = [other for other in sets if other != query_set]
                reasons.append(f"values come from {query_set}{' and ' + ', '.join(others) if others else ''}; "
                               f"show its query count with a placeholder bound to {query_set}'s `queries` so the "
                               f"sample size a reader sees is the one measured")
    if not counts:
        return reasons
    for index, value in measured:
        before = [count for at, count in counts if at < index]
        governing = before[-1] if before else next((count for at, count in counts if at > index), None)
        if governing is not None and governing.query_set != value.query_set:
            reasons.append(f"{{{value.name}}} comes from {value.query_set} but is read with {{{governing.name}}}, the "
                           f"query count of {governing.query_set}: a value goes with its own query set's count")
    return reasons
