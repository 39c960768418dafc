"""Values attributed to the wrong thing: the sentence must name whose value it shows.

A figure is only as true as its label. Three rules, each over the values a claim *shows* (its
placeholders):

- **Rows.** A value read from one row (`table[search=hybrid]...`, `per_query.hybrid...`,
  `diagnosis.hybrid...`, `ceiling.rows.hybrid...`, `comparisons.hybrid+rerank_vs_hybrid...`, the
  reranker's own `rerank_cost` and times, a further rerank row's `rerank_costs.ROW...`) is shown only in a sentence that names that row, by its
  name or a common alias (ROW_ALIASES): hybrid's change cannot be presented as the reranker's
  lift. A change (`..._vs_dense`, `comparisons.ROW_vs_BASELINE`) also names its baseline: a lift
  over dense cannot pass for a lift over hybrid. Once a sentence names a row that has no alias
  (a second reranker, `hybrid+rerank-int8`), a word such as "reranker" no longer names the first
  one: its values need its own name.
- **Queries.** A value of one query (`per_query.hybrid.13.nDCG@5`, `rerank_milliseconds.13`) is
  shown only in a sentence that names the query id: one query's value cannot pass for the mean.
  The id written in the text is then accounted for (it is not a hand-typed number).
- **Query sets.** A sentence that shows values from two results files, or from any file other
  than the release sample's results.json, shows each file's query count through a placeholder
  bound to that file's `queries` (for example `{queries}` from results-300.json), so the sample
  size shown is always the one measured.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Mapping

from generator.core.rows import DEFAULT_RERANK_ROW as RERANK_ROW, KIND_WORDS, default_rows
from generator.results import RESULTS_NAME, Step

# The SciFact review's rows are named by their kind's words (generator.core.rows.KIND_WORDS,
# which also keeps any configured row from taking another kind's word); the sandbox's by its own.
ROW_ALIASES: dict[str, tuple[str, ...]] = {
    **{row.name: KIND_WORDS[row.kind] for row in default_rows()},
    "bm25": ("bm25",),
    "opaque": ("opaque", "supplied run"),
    "reranked": ("reranked", "reranker", "rerank", "reranking"),
}
# Keys whose children are row names, and whose grandchildren are query ids.
ROW_KEYED = ("per_query", "per_topic", "diagnosis", "diagnosis_summary", "comparison_300_by_row")
QUERY_KEYED_BY_ROW = ("per_query", "per_topic", "diagnosis")
QUERY_KEYED = ("rerank_milliseconds", "reranked_top_5")
# The ceiling block keys its rows one level down: ceiling.rows.<row>, ceiling.per_query.<row>.<query>.
CEILING = "ceiling"
# Top-level keys about the reranker alone: a sentence showing them names the reranker.
RERANK_KEYS = ("rerank_cost", "rerank_milliseconds", "p95_rerank_milliseconds", "reranked_top_5")
# Each further rerank row's cost, keyed by its row: rerank_costs.<row>.p95_milliseconds.
FURTHER_RERANK_COSTS = "rerank_costs"
# rerank_cost's own per-query maps: rerank_cost.per_query_milliseconds.<query>.
QUERY_KEYED_IN_COST = ("per_query_milliseconds", "per_query_pairs", "per_query_cpu_seconds", "per_query_load_average")
_AGGREGATE = re.compile(r"\b(mean|means|average|averaged|averages|macro|overall|across|typical|typically)\b",
                        re.IGNORECASE)


@dataclass(frozen=True)
class ShownValue:
    name: str                 # the placeholder
    file: str                 # results file, relative to outputs/
    steps: tuple[Step, ...]


def rows_of(steps: tuple[Step, ...]) -> set[str]:
    """Every row a value belongs to: its own row, and the baseline a change is measured against
    (`delta_nDCG@5_vs_dense`, `paired_vs_dense`, `comparisons.hybrid+rerank_vs_hybrid`)."""
    rows = {row} if (row := row_of(steps)) is not None else set()
    for step in steps:
        if step.kind == "key":
            match = re.search(r"(?:^|_)vs_(.+)$", step.key)
            if match:
                rows.add(match.group(1))
                head = step.key[:match.start()]
                if head and not head.startswith(("delta", "paired")):
                    rows.add(head)
    return rows


def named_rows(text: str, known: Iterable[str]) -> set[str]:
    return {row for row in known if mentions_row(text, row)}


def _keys(steps: tuple[Step, ...]) -> list[str | None]:
    return [step.key if step.kind == "key" else None for step in steps]


def row_of(steps: tuple[Step, ...]) -> str | None:
    """The row a value is a value of: `table[search=ROW]...`, `per_query.ROW...`,
    `ceiling.rows.ROW...`, `comparisons.ROW_vs_BASELINE...`, or the reranker's own blocks."""
    if not steps:
        return None
    keys = _keys(steps)
    first = steps[0]
    if first.kind == "key" and first.key == "table" and len(steps) > 1 and steps[1].kind == "select":
        return steps[1].value
    if keys[0] in ROW_KEYED and len(keys) > 1 and keys[1] is not None:
        return keys[1]
    if keys[0] == CEILING and len(keys) > 2 and keys[1] in ("rows", "per_query") and keys[2] is not None:
        return keys[2]
    if keys[0] == "comparisons" and len(keys) > 1 and keys[1] is not None and "_vs_" in keys[1]:
        return keys[1].rsplit("_vs_", 1)[0]
    if keys[0] in RERANK_KEYS:
        return RERANK_ROW
    if keys[0] == FURTHER_RERANK_COSTS and len(keys) > 1 and keys[1] is not None:
        return keys[1]
    return None


def baseline_of(steps: tuple[Step, ...]) -> str | None:
    """The row a change is measured against (`delta_nDCG@5_vs_dense`, `paired_vs_dense`,
    `comparisons.hybrid+rerank_vs_hybrid`): a lift is only a lift over something named."""
    for key in _keys(steps):
        if key is not None and (match := re.search(r"(?:^|_)vs_(.+)$", key)):
            return match.group(1)
    return None


def query_of(steps: tuple[Step, ...]) -> str | None:
    keys = _keys(steps)
    if len(keys) > 2 and keys[0] in QUERY_KEYED_BY_ROW and keys[2] is not None:
        return keys[2]
    if len(keys) > 1 and keys[0] in QUERY_KEYED and keys[1] is not None:
        return keys[1]
    if len(keys) > 3 and keys[0] == CEILING and keys[1] == "per_query" and keys[3] is not None:
        return keys[3]
    if len(keys) > 2 and keys[0] == "rerank_cost" and keys[1] in QUERY_KEYED_IN_COST and keys[2] is not None:
        return keys[2]
    if len(keys) > 3 and keys[0] == FURTHER_RERANK_COSTS and keys[2] in QUERY_KEYED_IN_COST and keys[3] is not None:
        return keys[3]
    return None


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


def attribution_reasons(shown: Iterable[ShownValue], visible_text: str, queries_placeholders: Mapping[str, str],
                        query_set_files: set[str], primary: str = RESULTS_NAME,
                        rows: Iterable[str] = ()) -> list[str]:
    """Every broken attribution rule (see the module docstring), one reason each.

    `queries_placeholders` maps a results file to the placeholder the claim shows its `queries`
    through (files whose count the claim does not show are absent); `query_set_files` are the
    files measured on a query set (they hold an integer `queries`), the only ones the third rule
    is about.
    """
    reasons = []
    shown = list(shown)
    # Rows without aliases of their own (a configured second reranker, "hybrid+rerank-int8"): once
    # the sentence names one, a generic word such as "reranker" no longer says which row it means.
    rows_of_shown = {row for value in shown for row in rows_of(value.steps)}
    named_plainly = sorted(row for row in set(rows) - rows_of_shown - set(ROW_ALIASES)
                           if mentions_row(visible_text, row))
    for value in shown:
        row = row_of(value.steps)
        if row is not None and not mentions_row(visible_text, row):
            aliases = " or ".join(repr(alias) for alias in ROW_ALIASES.get(row, (row,))[:3])
            reasons.append(f"{{{value.name}}} is a value of row {row}, but the sentence does not name that row "
                           f"(say {aliases}): a figure is only as true as its label")
        elif row is not None and named_plainly and _only_by_alias(visible_text, row):
            reasons.append(f"{{{value.name}}} is a value of row {row}, but the sentence names row "
                           f"{named_plainly[0]} and calls {row} only by a word both could answer to: "
                           f"name {row} itself")
        baseline = baseline_of(value.steps)
        if baseline is not None and baseline != row and not mentions_row(visible_text, baseline):
            aliases = " or ".join(repr(alias) for alias in ROW_ALIASES.get(baseline, (baseline,))[:3])
            reasons.append(f"{{{value.name}}} is a change over {baseline}, but the sentence does not name {baseline} "
                           f"(say {aliases}): a lift over one row must not pass for a lift over another")
        query = query_of(value.steps)
        if query is not None and not query_spans(visible_text, query):
            reasons.append(f"{{{value.name}}} is the value of query {query} alone, but the sentence does not name "
                           f"query {query}: one query's value must not pass for the mean")
        elif query is not None and _AGGREGATE.search(visible_text):
            reasons.append(f"{{{value.name}}} is the value of query {query} alone, but the sentence speaks of "
                           f"{_AGGREGATE.search(visible_text).group(0)!r}: one query's value must not pass for the mean")
    files = sorted({value.file for value in shown if not _counts_itself(value) and value.file in query_set_files})
    if len(files) > 1 or (files and files[0] != primary):
        for file in files:
            if file not in queries_placeholders:
                reasons.append(f"values come from {file}{' and ' + ', '.join(f for f in files if f != file) if len(files) > 1 else ''}; "
                               f"show its query count with a placeholder bound to {file}'s `queries` so the "
                               f"sample size a reader sees is the one measured")
    return reasons


def _counts_itself(value: ShownValue) -> bool:
    return len(value.steps) == 1 and value.steps[0].kind == "key" and value.steps[0].key in ("queries", "query_set")
