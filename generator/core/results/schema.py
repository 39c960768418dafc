"""The schema of a results file: each block declared once, the way ir_measures declares a measure.

A block is a top-level key of results.json. Its declaration says what it holds, which query set
its figures belong to, and how its values are keyed: a layout is a path pattern (the path grammar
of `generator.core.results.paths`) whose slots name what a step stands for:

    {row}        a row of the table (a selector `[search={row}]` or a key)
    {baseline}   the row a change is measured against (`{row}_vs_{baseline}`)
    {query}      one query of the evaluated set
    {metric}     a metric, by its canonical name (`nDCG@5`, `recall@50`)
    {field}      a field; its meaning, kind and unit are in FIELDS (or the block's own fields)
    {index}      a position in a list
    {verdict}    a diagnosis verdict (`candidate miss`)
    {side}       `sample` or `full` in a comparison of two query sets

A trailing `...` lets a layout reach deeper (a record's free-form details). Every reader that
needs to know what a value is (the attribution and statistic rules of the checker, the source
notes of the reports, the generated reference `docs/results.md`) asks `locate`
(generator.core.results.location) what a path names, matched against these declarations, so a block
is attributed the day it is declared.

FORMAT_VERSION is written into every file (`format_version`); files without it are version 1
and are read through `generator.core.results.upgrade`.
"""

from __future__ import annotations

import functools
import re
from typing import Iterable

from generator.core.dataclass import dataclass

FORMAT_VERSION = 2
# What a value is, for the rules that read a sentence against it.
KINDS = {
    "identity": "names something (a row, a model, a file, a query set)",
    "flag": "true or false",
    "text": "words written by the tool (a reason, a note, a label)",
    "category": "one of a few fixed words (a verdict, a status)",
    "count": "a number of things, in the unit given",
    "query count": "how many queries a figure is measured over",
    "parameter": "a setting the run was made with, in the unit given",
    "mean": "a metric's mean over the evaluated queries",
    "value": "one query's value of a metric",
    "change": "a row's figure minus its baseline's (sign kept)",
    "interval end": "an end of a paired confidence interval of a change",
    "p-value": "a probability from a significance test",
    "bound": "an upper bound that reads the relevance labels (an oracle ceiling), never a quality reached",
    "time": "wall time, in the unit given",
    "rate": "a throughput, in the unit given",
    "score": "a model's or a formula's score for one document",
    "power": "the probability that a test detects a given effect",
    "record": "a group of fields",
    "list": "a list of identifiers",
}
# The kinds that are figures measured over a query set (a setting, a name or a flag is not).
FIGURE_KINDS = frozenset({"count", "mean", "change", "interval end", "p-value", "bound", "time", "rate", "power"})


@dataclass(frozen=True)
class Field:
    """A field's name (or pattern, with slots), what it means, its kind (KINDS) and unit."""

    name: str
    meaning: str
    kind: str
    unit: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"field {self.name}: unknown kind {self.kind!r}")

    @property
    def pattern(self) -> re.Pattern:
        return _slot_pattern(self.name)


@dataclass(frozen=True)
class Block:
    """One top-level key of results.json."""

    name: str
    meaning: str
    layouts: tuple[str, ...]
    kind: str = "record"                    # the kind of the block's own value when it is a scalar
    unit: str = ""
    writers: tuple[str, ...] = ("evaluate",)
    over_queries: bool = True               # its figures are measured over the file's evaluated queries
    row_role: str | None = None             # a block about one row only: which ("rerank": the decided reranker)
    derived: bool = True                    # rebuilt from the run files and judgements by `check`
    required: bool = False
    fields: tuple[Field, ...] = ()          # fields of this block only (others: FIELDS)
    formerly: tuple[str, ...] = ()          # its names in format 1
    json_type: str | None = None            # a scalar's JSON type where its kind does not say it

    @property
    def scalar(self) -> bool:
        return self.layouts == (self.name,)


_METRIC = r"[A-Za-z][A-Za-z0-9]*@[0-9]+(?::[A-Za-z]+)?"
_SLOTS = {"metric": _METRIC, "verdict": r"[a-z][a-z ]*", "side": r"sample|full", "cutoff": r"[0-9]+",
          "series": r"per_query_\w+"}


@functools.lru_cache(maxsize=None)
def _slot_pattern(text: str) -> re.Pattern:
    """A key pattern (`delta_{metric}_vs_{baseline}`) as a regular expression with named groups."""
    parts, position = [], 0
    for match in re.finditer(r"\{(\w+)\}", text):
        parts.append(re.escape(text[position:match.start()]))
        parts.append(f"(?P<{match.group(1)}>{_SLOTS.get(match.group(1), '.+?' if match.end() < len(text) else '.+')})")
        position = match.end()
    parts.append(re.escape(text[position:]))
    return re.compile("".join(parts) + r"\Z")


# --- fields: one meaning per name, wherever it appears ---------------------------------------

FIELDS: tuple[Field, ...] = (
    Field("search", "the row's name", "identity"),
    Field("model", "the model a row or a cost ran (or was priced as)", "identity"),
    Field("label", "what the row does, in words", "text"),
    Field("measured", "whether it was measured (false: no figure is given)", "flag"),
    Field("not_measured_reason", "why it was not measured", "text"),
    Field("{metric}", "the metric's mean over the evaluated queries", "mean", "metric value"),
    Field("delta_{metric}_vs_{baseline}", "the row's mean minus the baseline's", "change", "metric value"),
    Field("row", "the row compared, or the row's own mean beside its ceiling", "identity"),
    Field("baseline", "the row it is compared with", "identity"),
    Field("base", "the row it is compared with", "identity"),
    Field("delta", "mean per-query difference, row minus baseline", "change", "metric value"),
    Field("ci95_low", "lower end of the paired 95% interval of the change", "interval end", "metric value"),
    Field("ci95_high", "upper end of the paired 95% interval of the change", "interval end", "metric value"),
    Field("p_value", "two-sided sign-flip p-value of the change", "p-value"),
    Field("p_holm", "the p-value after Holm's step-down correction over the family of pairs", "p-value"),
    Field("p_value_method", "how the p-value was computed (exact or Monte Carlo)", "category"),
    Field("interval_method", "how the interval was drawn", "category"),
    Field("seed", "the seed the interval was drawn with", "parameter"),
    Field("wins", "queries on which the row scored higher", "count", "queries"),
    Field("ties", "queries on which both scored the same", "count", "queries"),
    Field("losses", "queries on which the row scored lower", "count", "queries"),
    Field("queries", "how many queries the figures are over", "query count", "queries"),
    Field("sample_queries", "how many queries the sample side is over", "query count", "queries"),
    Field("full_queries", "how many queries the full side is over", "query count", "queries"),
    Field("excludes_zero", "the interval lies wholly above or below zero", "flag"),
    Field("p_below_0_05", "the p-value is below 0.05", "flag"),
    Field("distinguishable", "the interval excludes zero and the p-value is below 0.05", "flag"),
    Field("distinguishable_holm", "the interval excludes zero and Holm's p-value is below 0.05", "flag"),
    Field("agreement", "whether the interval and the p-value agree", "category"),
    Field("ceiling", "the best score any reordering of the candidates could reach (reads the labels)", "bound",
          "metric value"),
    Field("headroom", "the ceiling minus the row's own mean", "bound", "metric value"),
    Field("note", "what a block's figures are, in words", "text"),
    Field("diagnosis", "why a relevant document is not in the top k", "category"),
    Field("missed_by_candidates", "relevant documents outside the candidates", "list"),
    Field("ranked_below_{cutoff}", "relevant documents among the candidates but below the cutoff", "list"),
    Field("top_{cutoff}", "the top documents, in order", "list"),
    Field("candidates", "the candidate documents, in order", "list"),
    Field("misses", "relevant documents outside the top k", "list"),
    Field("scores", "each candidate's score", "list"),
    Field("doc_id", "a document's id", "identity"),
    Field("corpus_id", "a document's id", "identity"),
    Field("score", "the score a row gave the document", "score"),
    Field("cost", "how the cost was measured: measured, measured by shape (and how), or not measured", "category"),
    Field("quality", "whether quality was measured (a cost by shape never measures it)", "category"),
    Field("weights", "which weights ran: the model's own, or random ones for a cost by shape", "text"),
    Field("p50_milliseconds", "median wall time per query", "time", "milliseconds per query"),
    Field("p95_milliseconds", "95th-percentile wall time per query", "time", "milliseconds per query"),
    Field("mean_milliseconds", "mean wall time per query", "time", "milliseconds per query"),
    Field("max_milliseconds", "largest wall time of a query", "time", "milliseconds per query"),
    Field("pairs", "query-document pairs scored", "count", "pairs"),
    Field("pairs_per_second", "pairs scored per second of wall time", "rate", "pairs per second"),
    Field("per_query_milliseconds", "each query's wall time", "time", "milliseconds per query"),
    Field("per_query_pairs", "each query's pairs", "count", "pairs"),
    Field("per_query_batch_milliseconds", "each query's wall time, batch by batch", "time", "milliseconds"),
    Field("per_query_cpu_seconds", "each query's processor time", "time", "seconds"),
    Field("per_query_load_average", "the machine's load while each query was timed", "rate", "runnable processes"),
    Field("per_query_fit", "each query's straight-line fit of time against layers timed", "record"),
    Field("per_query_timings_from_depth", "the depth each query's timing was reused from", "parameter",
          "candidates"),
    Field("max_length", "the longest input in tokens", "parameter", "tokens"),
    Field("rerank_max_length", "the reranker's longest input in tokens", "parameter", "tokens"),
    Field("candidate_depth", "candidates each row keeps per query", "parameter", "candidates"),
    Field("batch_size", "pairs per forward pass", "parameter", "pairs per forward pass"),
    Field("depth", "candidates reranked", "parameter", "candidates"),
    Field("precision", "number precision of the weights (fp32 or int8)", "category"),
    Field("device", "where it ran", "identity"),
    Field("threads", "threads it ran on", "parameter", "threads"),
    Field("layers_timed", "layer counts timed for an extrapolation", "list"),
    Field("full_layers", "the model's full depth", "parameter", "layers"),
    Field("metric", "the metric a block is about", "identity"),
    Field("over", "the row whose candidates are reranked", "identity"),
    Field("over_mean", "the over row's own mean of the metric", "mean", "metric value"),
    Field("family", "how many pairs share the correction", "count", "pairs"),
    Field("verdict", "the comparison's verdict", "category"),
    # What a model's training read (manifest.models.*.training): a count says its own noun.
    Field("steps", "optimiser steps a model was trained for", "count", "steps"),
    Field("training_pairs", "pairs a model was trained on", "count", "pairs"),
    Field("queries_read", "queries the training read", "count", "queries"),
    Field("relevance_judgements_read", "relevance judgements the training read", "count", "judgements"),
    Field("name", "a model's name as loaded", "identity"),
    Field("requested", "the model name a row asked for", "identity"),
)
_FIELDS_BY_NAME = {entry.name: entry for entry in FIELDS if "{" not in entry.name}
_FIELD_PATTERNS = [entry for entry in FIELDS if "{" in entry.name]


def field_named(key: str, own: Iterable[Field] = ()) -> tuple[Field | None, dict[str, str]]:
    """The declaration of a field key (a block's own first, then FIELDS) and the slots its
    pattern binds (`delta_nDCG@5_vs_dense`: metric nDCG@5, baseline dense)."""
    own = tuple(own)
    for entry in own:
        if "{" not in entry.name and entry.name == key:
            return entry, {}
    if key in _FIELDS_BY_NAME:
        return _FIELDS_BY_NAME[key], {}
    for entry in (*[e for e in own if "{" in e.name], *_FIELD_PATTERNS):
        match = entry.pattern.match(key)
        if match:
            return entry, {name: value for name, value in match.groupdict().items() if value is not None}
    return None, {}


# --- blocks ----------------------------------------------------------------------------------

BOTH = ("evaluate", "sandbox")

FORMAT = Block("format_version", "the version of this schema the file was written in", ("format_version",),
               kind="identity", writers=BOTH, over_queries=False, derived=False, required=True)
DOCUMENTS = Block("documents", "documents in the corpus", ("documents",), kind="count", unit="documents",
                  writers=BOTH, over_queries=False, derived=False, required=True)
QUERIES = Block("queries", "queries the figures are measured over (the query set's size)", ("queries",),
                kind="query count", unit="queries", writers=BOTH, required=True, formerly=("topics",))
QUERY_SET = Block("query_set", "which query set: `sample` (the release sample) or `all` (every test query)",
                  ("query_set",), kind="identity", over_queries=False, derived=False)
CANDIDATE_DEPTH = Block("candidate_depth", "candidates each row keeps per query", ("candidate_depth",),
                        kind="parameter", unit="candidates", over_queries=False, derived=False)
TABLE = Block("table", "one entry per configured row: its metric means and its changes over the baseline",
              ("table[search={row}].{field}",), writers=BOTH, required=True)
PER_QUERY = Block("per_query", "each query's value of every metric, row by row",
                  ("per_query.{row}.{query}.{metric}",), writers=BOTH, required=True,
                  fields=(Field("{metric}", "the metric's value on this query", "value", "metric value"),),
                  formerly=("per_topic",))
COMPARISONS = Block(
    "comparisons", "each configured pair of rows, compared on the same queries: the change, its paired interval "
    "(BCa bootstrap), wins, ties and losses, and the exact sign-flip p-value",
    ("comparisons.{row}_vs_{baseline}.metrics.{metric}.{field}", "comparisons.{row}_vs_{baseline}.{field}"))
ALL_PAIRS = Block(
    "all_pairs", "every pair of measured rows on each metric, with Holm's step-down correction across the pairs",
    ("all_pairs.metrics.{metric}.pairs.{row}_vs_{baseline}.{field}", "all_pairs.metrics.{metric}.{field}",
     "all_pairs.{field}..."),
    fields=(Field("correction", "how the p-values were corrected", "text"),
            Field("left_out", "rows left out because they were not measured", "list"),
            Field("rows", "the rows compared", "list")))
POWER = Block(
    "power", "what each comparison's sample can detect: the standard deviation of its per-query differences, the "
    "minimum detectable effect of a paired two-sided test at the stated alpha and power (paired t approximation), and "
    "that power checked by simulating the tool's own sign-flip test at that effect",
    ("power.comparisons.{row}_vs_{baseline}.metrics.{metric}.{field}", "power.comparisons.{row}_vs_{baseline}.{field}",
     "power.{field}..."),
    fields=(Field("sd_difference", "the standard deviation of the per-query differences", "change", "metric value"),
            Field("minimum_detectable_effect", "the smallest true change the paired test detects at the stated "
                  "alpha and power on these queries", "change", "metric value"),
            Field("simulated_power", "the share of simulated samples at the minimum detectable effect in which the "
                  "sign-flip test gives p below alpha", "power"),
            Field("standard_error", "the simulation's standard error of that share", "power"),
            Field("alpha", "the test's level", "parameter"),
            Field("power", "the power asked for", "parameter"),
            Field("simulations", "samples simulated", "count", "samples"),
            Field("method", "how the figures were computed", "text"),
            Field("why", "why a figure could not be computed", "text")))
CEILING = Block(
    "ceiling", "the oracle ceiling of each row's own candidates: the best its candidates could score, from the labels",
    ("ceiling.rows.{row}.{metric}.{field}", "ceiling.per_query.{row}.{query}.{metric}", "ceiling.{field}"),
    fields=(Field("row", "the row's own mean, beside its ceiling", "mean", "metric value"),
            Field("{metric}", "the ceiling of one query's candidates", "bound", "metric value")))
DIAGNOSIS = Block(
    "diagnosis", "for each row and query, why a relevant document is not near the top: a candidate miss or an "
    "ordering problem, with the documents", ("diagnosis.{row}.{query}.{field}...",), writers=BOTH)
DIAGNOSIS_SUMMARY = Block(
    "diagnosis_summary", "queries of each diagnosis, row by row", ("diagnosis_summary.{row}.{verdict}",),
    fields=(Field("{verdict}", "queries with this diagnosis", "count", "queries"),))
SAME_CANDIDATES = Block(
    "same_50_rows_after_rerank", "whether the decided reranker kept every query's candidate set (true iff, for "
    "every query, its list is the same set as the row it reorders)", ("same_50_rows_after_rerank",), kind="flag",
    row_role="rerank")
P95_RERANK = Block(
    "p95_rerank_milliseconds", "95th-percentile rerank time per query of the decided reranker",
    ("p95_rerank_milliseconds",), kind="time", unit="milliseconds per query", row_role="rerank", derived=False)
RERANK_MILLISECONDS = Block(
    "rerank_milliseconds", "each query's rerank time, decided reranker", ("rerank_milliseconds.{query}",),
    kind="time", unit="milliseconds", row_role="rerank", derived=False,
    fields=(Field("{query}", "one query's rerank time", "time", "milliseconds"),))
RERANKED_TOP_5 = Block(
    "reranked_top_5", "the decided reranker's top five documents per query, with their scores",
    ("reranked_top_5.{query}[{index}].{field}",), row_role="rerank")
RERANK_COSTS = Block(
    "rerank_costs", "each rerank row's cost: its own times when it ran, else measured by its shape (random weights on "
    "the real pairs), else not measured; a cost by shape never measures quality",
    ("rerank_costs.{row}.{series}.{query}...", "rerank_costs.{row}.{field}..."), derived=False,
    formerly=("rerank_cost",))
FRONTIER = Block(
    "frontier", "every reranker configuration priced by shape on the release sample's candidates, beside the "
    "ceiling of its depth's candidates",
    ("frontier.configurations[{index}].{series}.{query}...", "frontier.configurations[{index}].{field}...",
     "frontier.{field}"), derived=False)
QUERIES_WITHOUT_CANDIDATES = Block(
    "queries_without_candidates", "queries a row found no candidate for (they score zero)",
    ("queries_without_candidates.{row}",), fields=(Field("{row}", "the row's queries without candidates", "list"),))
QUERY_TEXTS = Block("query_texts", "each evaluated query's words, as recorded: not re-derivable from runs and "
                    "judgements; check holds them to the dataset's queries file where it is reachable with its "
                    "recorded sha256", ("query_texts.{query}",), over_queries=False,
                    derived=False, fields=(Field("{query}", "the query's words", "text"),))
RUNS = Block("runs", "each measured row's TREC run file, relative to outputs/", ("runs.{row}",), writers=BOTH,
             over_queries=False, derived=False, fields=(Field("{row}", "the row's run file", "identity"),))
COMPARISON_WITH_SAMPLE = Block(
    "comparison_with_sample", "the decided reranker's change over the baseline on the release sample against the same "
    "change on this file's queries (written by `readout evaluate --queries all`)",
    ("comparison_with_sample.per_metric.{metric}.{side}.{field}", "comparison_with_sample.per_metric.{metric}.{field}",
     "comparison_with_sample.{field}..."), row_role="rerank", formerly=("comparison_300",))
COMPARISON_WITH_SAMPLE_BY_ROW = Block(
    "comparison_with_sample_by_row", "each row's change over the baseline on the release sample against this file's",
    ("comparison_with_sample_by_row.{row}.per_metric.{metric}.{side}.{field}",
     "comparison_with_sample_by_row.{row}.per_metric.{metric}.{field}", "comparison_with_sample_by_row.{row}.{field}..."),
    formerly=("comparison_300_by_row",))
MANIFEST = Block("manifest", "how the figures were made: inputs and their sha256 (the dataset files, and each run file a "
                 "row read as `supplied_runs`, by content: build and the gate hold the results to them), parameters, "
                 "query ids, rows, models, metrics, run files, the judgements copy, the release sample an every-query "
                 "file was compared with, packages, machine, times, and the seal",
                 ("manifest.{field}...",), writers=BOTH, over_queries=False, derived=False, required=True)

# The L03 sandbox's own blocks.
STATUS = Block("status", "`valid` for a run whose inputs and parameters match its recorded manifest", ("status",),
               kind="category", writers=("sandbox",), over_queries=False, derived=False)
POSITIVE_JUDGEMENTS = Block("positive_judgements", "judgements with a grade above zero", ("positive_judgements",),
                            kind="count", unit="judgements", writers=("sandbox",), over_queries=False, derived=False)
PARAMETERS = Block("parameters", "the sandbox's parameters (cutoff, depth, alpha, rerank weight, BM25 k1 and b)",
                   ("parameters.{field}",), writers=("sandbox",), over_queries=False, derived=False,
                   fields=(Field("cutoff", "the cutoff k of the metrics", "parameter", "documents"),
                           Field("depth", "candidates per topic", "parameter", "candidates"),
                           Field("alpha", "the hybrid's weight on BM25", "parameter"),
                           Field("rerank_weight", "the reranker's weight on query-term coverage", "parameter"),
                           Field("k1", "BM25 k1", "parameter"), Field("b", "BM25 b", "parameter")))
TOKEN_LENGTHS = Block("token_lengths", "each document's length in tokens", ("token_lengths.{field}",),
                      kind="count", unit="tokens", writers=("sandbox",), over_queries=False, derived=False,
                      fields=(Field("{doc}", "the document's length", "count", "tokens"),))
MEAN_TOKEN_LENGTH = Block("mean_token_length", "the mean document length in tokens", ("mean_token_length",),
                          kind="count", unit="tokens", writers=("sandbox",), over_queries=False, derived=False,
                          json_type="number")
QUERY_DETAILS = Block("query_details", "each topic's query, its tokens, their document frequencies and IDF, and each "
                      "candidate's query-term coverage", ("query_details.{query}.{field}...",),
                      writers=("sandbox",), over_queries=False, derived=False,
                      fields=(Field("document_frequency", "documents holding each query token", "count", "documents"),
                              Field("idf", "each query token's inverse document frequency", "score"),
                              Field("tokens", "the query's tokens, in order", "list"),
                              Field("rerank_coverage", "each candidate's query-term coverage", "score")))
BM25_TOP5 = Block("bm25_top5", "each topic's BM25 top five with scores and the query terms each document holds",
                  ("bm25_top5.{query}[{index}].{field}...",), writers=("sandbox",), derived=False)
OPAQUE_RUN = Block("opaque_run", "the supplied opaque run's metadata (its model identity: none)",
                   ("opaque_run.{field}...",), writers=("sandbox",), over_queries=False, derived=False)
RERANKER = Block("reranker", "the transparent reranker: its feature, its weight, and whether it kept the candidates "
                 "and the top k", ("reranker.{field}",), writers=("sandbox",), derived=False)
FUNNEL = Block("funnel", "the acquisition funnel: counts per stage, each ratio with its own denominator",
               ("funnel.{field}...",), writers=("sandbox",), over_queries=False, derived=False)

BLOCKS: tuple[Block, ...] = (
    FORMAT, DOCUMENTS, QUERIES, QUERY_SET, CANDIDATE_DEPTH, TABLE, PER_QUERY, COMPARISONS, ALL_PAIRS, POWER, CEILING,
    DIAGNOSIS, DIAGNOSIS_SUMMARY, SAME_CANDIDATES, P95_RERANK, RERANK_MILLISECONDS, RERANKED_TOP_5, RERANK_COSTS,
    FRONTIER, QUERIES_WITHOUT_CANDIDATES, QUERY_TEXTS, RUNS, COMPARISON_WITH_SAMPLE, COMPARISON_WITH_SAMPLE_BY_ROW,
    MANIFEST, STATUS, POSITIVE_JUDGEMENTS, PARAMETERS, TOKEN_LENGTHS, MEAN_TOKEN_LENGTH, QUERY_DETAILS, BM25_TOP5,
    OPAQUE_RUN, RERANKER, FUNNEL)
BY_NAME = {block.name: block for block in BLOCKS}
BLOCK_NAMES = frozenset(BY_NAME)
FORMER_NAMES = {former: block.name for block in BLOCKS for former in block.formerly}


def block(name: str) -> Block:
    return BY_NAME[name]
