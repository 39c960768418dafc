"""Attribution: a figure is only as true as its label. The sentence names the row, the baseline,
the query and the query set each value it shows belongs to, read from the results schema
(generator.claims.tracing.naming), so every declared block is attributed the day it is declared.

Limits: the rules read words, not grammar; a sentence naming the right row in a misleading
order can still pass. A sentence that names each count after its values reads the second value
with the first count: name a count before its values.
"""

from __future__ import annotations

from generator.core.text import lexicon
from generator.claims.tracing.naming import (ROW_ALIASES, ShownValue, baseline_of, is_query_count, mentions_row,
                                             only_by_alias, query_of, query_spans, row_of, rows_of)
from generator.claims.tracing.rules import rule
from generator.claims.tracing.view import ClaimView
from generator.core.results import RESULTS_NAME

# Words that speak of a mean over queries (the lexicon's `aggregate` class).
_AGGREGATE = lexicon.pattern("aggregate")


def _aliases(row: str) -> str:
    return " or ".join(repr(alias) for alias in ROW_ALIASES.get(row, (row,))[:3])


@rule("row-named", "A row's value is shown beside the row's name")
def row_named(view: ClaimView) -> list[str]:
    """A value of one row (in `table`, `per_query`, `comparisons`, `rerank_costs`, a block about
    the decided reranker, ...) is shown only in a sentence that names that row, by its name or a
    common alias: hybrid's change cannot be presented as the reranker's lift. Once the sentence
    names a row without an alias of its own (a second reranker, `hybrid+rerank-int8`), a word
    such as "reranker" no longer says which row it means: the value needs its row's own name."""
    text = view.said
    rows_of_shown = {row for value in view.shown for row in rows_of(value)}
    named_plainly = sorted(row for row in view.rows - rows_of_shown - set(ROW_ALIASES) if mentions_row(text, row))
    found = []
    for value in view.shown:
        row = row_of(value)
        if row is not None and not mentions_row(text, row):
            found.append(f"{{{value.name}}} is a value of row {row}, but the sentence does not name that row "
                         f"(say {_aliases(row)}): a figure is only as true as its label")
        elif row is not None and named_plainly and only_by_alias(text, row):
            found.append(f"{{{value.name}}} is a value of row {row}, but the sentence names row {named_plainly[0]} "
                         f"and calls {row} only by a word both could answer to: name {row} itself")
    return found


@rule("baseline-named", "A change is shown beside its baseline's name")
def baseline_named(view: ClaimView) -> list[str]:
    """A change (row minus baseline) is shown only in a sentence that names the baseline: a lift
    over dense must not pass for a lift over hybrid."""
    found = []
    for value in view.shown:
        baseline, row = baseline_of(value), row_of(value)
        if baseline is not None and baseline != row and not mentions_row(view.said, baseline):
            found.append(f"{{{value.name}}} is a change over {baseline}, but the sentence does not name {baseline} "
                         f"(say {_aliases(baseline)}): a lift over one row must not pass for a lift over another")
    return found


@rule("query-named", "One query's value is shown beside the query's id")
def query_named(view: ClaimView) -> list[str]:
    """A value of one query (`per_query.hybrid.13.nDCG@5`, `rerank_milliseconds.13`) is shown
    only in a sentence that names the query id; the id is then accounted for (not a number typed
    by hand)."""
    return [f"{{{value.name}}} is the value of query {query_of(value)} alone, but the sentence does not name "
            f"query {query_of(value)}: one query's value must not pass for the mean"
            for value in view.shown if query_of(value) is not None and not query_spans(view.said, query_of(value))]


@rule("query-not-mean", "One query's value is not called a mean")
def query_not_mean(view: ClaimView) -> list[str]:
    """A sentence showing one query's value does not speak of a mean, an average or "across"."""
    said = _AGGREGATE.search(view.said)
    if said is None:
        return []
    return [f"{{{value.name}}} is the value of query {query_of(value)} alone, but the sentence speaks of "
            f"{said.group(0)!r}: one query's value must not pass for the mean"
            for value in view.shown if query_of(value) is not None and query_spans(view.said, query_of(value))]


def _sets(view: ClaimView) -> tuple[list[tuple[int, ShownValue]], list[tuple[int, ShownValue]]]:
    counts = [(index, value) for index, value in enumerate(view.shown) if value.query_set and is_query_count(value)]
    measured = [(index, value) for index, value in enumerate(view.shown)
                if value.query_set and not is_query_count(value)]
    return counts, measured


@rule("query-count-shown", "Values of a sample other than the release sample show its query count")
def query_count_shown(view: ClaimView) -> list[str]:
    """Every value measured over a query set belongs to its file's set. A sentence that shows
    values of two sets, or of any set other than the release sample's (results.json), shows each
    set's query count with a placeholder bound to that file's `queries`."""
    counts, measured = _sets(view)
    sets = sorted({value.query_set for _, value in measured})
    counted = {value.query_set for _, value in counts}
    if not (len(sets) > 1 or (sets and sets[0] != RESULTS_NAME)):
        return []
    found = []
    for query_set in sets:
        if query_set not in counted:
            others = [other for other in sets if other != query_set]
            found.append(f"values come from {query_set}{' and ' + ', '.join(others) if others else ''}; show its "
                         f"query count with a placeholder bound to {query_set}'s `queries` so the sample size a "
                         "reader sees is the one measured")
    return found


@rule("query-count-own-set", "A value is read with its own query set's count")
def query_count_own_set(view: ClaimView) -> list[str]:
    """A value is read with the query count that governs it (the nearest before it, else the
    first after it), which must be its own set's: "on all {n} queries, ... {v}" cannot take `n`
    from one file and `v` from another."""
    counts, measured = _sets(view)
    found = []
    for index, value in measured:
        before = [count for at, count in counts if at < index]
        governing = before[-1] if before else next((count for at, count in counts if at > index), None)
        if governing is not None and governing.query_set != value.query_set:
            found.append(f"{{{value.name}}} comes from {value.query_set} but is read with {{{governing.name}}}, the "
                         f"query count of {governing.query_set}: a value goes with its own query set's count")
    return found
