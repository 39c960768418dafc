"""One builder per block: the evaluation stage, the sandbox and the checker's re-derivation
(generator.claims.tracing.rederive) all call these, so a block is built one way only and checking a file
is rebuilding its blocks from its run files and judgements and comparing.

Pure: rankings and judgements in (wherever they came from: the retrieval rows, a run file, a test
fixture), JSON-ready data out. The statistics are the kernel's (generator.core); NumPy and SciPy
are imported only when a comparison is drawn (`draw_comparison`).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

from generator.core.all_pairs import all_pairs_block as _family_block, reusing
from generator.core.dataclass import dataclass
from generator.core.diagnosis import count_verdicts, diagnose, ndcg_verdict, recall_verdict
from generator.core.frontier import NOTE as FRONTIER_NOTE, SUMMARY_KEYS, ceiling_at_depth
from generator.core.headroom import NOTE as CEILING_NOTE, oracle_order
from generator.core.metrics import Metric, macro_mean, p95, percentile, same_candidate_sets, signed_delta
from generator.core.results.model import frontier_order
from generator.core.results.sample_check import sample_comparisons
from generator.core.results.schema import (ALL_PAIRS, BM25_TOP5, CANDIDATE_DEPTH, CEILING, COMPARISON_WITH_SAMPLE,
                                           COMPARISON_WITH_SAMPLE_BY_ROW, COMPARISONS, DIAGNOSIS, DIAGNOSIS_SUMMARY, POWER,
                                           DOCUMENTS, FORMAT, FORMAT_VERSION, FRONTIER, FUNNEL, MANIFEST,
                                           MEAN_TOKEN_LENGTH, OPAQUE_RUN, P95_RERANK, PARAMETERS, PER_QUERY,
                                           POSITIVE_JUDGEMENTS, QUERIES, QUERIES_WITHOUT_CANDIDATES, QUERY_DETAILS,
                                           QUERY_SET, QUERY_TEXTS, RERANK_COSTS, RERANK_MILLISECONDS, RERANKED_TOP_5,
                                           RERANKER, RUNS, SAME_CANDIDATES, STATUS, TABLE, TOKEN_LENGTHS)

Ranking = Sequence[tuple[str, float]]
# The cutoff of the evaluation stage's diagnosis: a relevant document below it is an ordering problem.
DIAGNOSIS_CUTOFF = 5
RERANKED_TOP = 5


@dataclass(frozen=True)
class RowRun:
    """One row to score: its rankings per query, or None with the reason it was not measured."""

    name: str
    label: str | None
    rankings: Mapping[str, Ranking] | None
    not_measured_reason: str | None = None


def ranked_ids(rankings: Mapping[str, Ranking], query_ids: Sequence[str]) -> dict[str, list[str]]:
    """Each query's documents in rank order (scores dropped)."""
    return {q: [doc for doc, _ in rankings.get(q, [])] for q in query_ids}


# --- quality ---------------------------------------------------------------------------------


def per_query_block(rankings: Mapping[str, Mapping[str, Sequence[str]]], judgements: Mapping[str, Mapping[str, int]],
                    query_ids: Sequence[str], metrics: Sequence[Metric]) -> dict[str, dict[str, dict[str, float]]]:
    """`per_query`: each measured row's value of every metric on every query (a query the row
    ranks nothing for scores zero, as `trec_eval -c`)."""
    return {row: {q: {metric.name: metric.per_query(list(by_query.get(q, [])), judgements.get(q, {}))
                      for metric in metrics} for q in query_ids}
            for row, by_query in rankings.items()}


def table_block(rows: Sequence[RowRun], per_query: Mapping[str, Mapping[str, Mapping[str, float]]],
                query_ids: Sequence[str], metrics: Sequence[Metric], baseline: str | None, *,
                describe: str = "model") -> list[dict[str, Any]]:
    """`table`: each row's mean of every metric and, with a baseline, its change over it; a row
    that was not measured holds nulls and its reason. `describe` is the field naming what the
    row is (`model` for the evaluation stage, `label` for the sandbox)."""
    table = []
    for row in rows:
        entry: dict[str, Any] = {"search": row.name, describe: row.label}
        values = per_query.get(row.name)
        if values is None:
            entry.update({"measured": False, "not_measured_reason": row.not_measured_reason})
            entry.update({metric.name: None for metric in metrics})
            if baseline is not None:
                entry.update({f"delta_{metric.name}_vs_{baseline}": None for metric in metrics})
            table.append(entry)
            continue
        entry["measured"] = True
        for metric in metrics:
            entry[metric.name] = macro_mean(values[q][metric.name] for q in query_ids)
        if baseline is not None:
            for metric in metrics:
                base_mean = macro_mean(per_query[baseline][q][metric.name] for q in query_ids)
                entry[f"delta_{metric.name}_vs_{baseline}"] = signed_delta(entry[metric.name], base_mean)
        table.append(entry)
    return table


def diagnosis_entry(ranking: Sequence[str], grades: Mapping[str, int], cutoff: int = DIAGNOSIS_CUTOFF) -> dict[str, Any]:
    """One query's candidate diagnosis (the evaluation stage's): the relevant documents its
    candidates miss, those ranked below the cutoff, and the verdict."""
    found = diagnose(list(ranking), grades, cutoff)
    return {"missed_by_candidates": found.not_in_candidates, f"ranked_below_{cutoff}": found.ranked_below,
            "diagnosis": recall_verdict(found)}


def diagnosis_block(rankings: Mapping[str, Mapping[str, Sequence[str]]], judgements: Mapping[str, Mapping[str, int]],
                    query_ids: Sequence[str], cutoff: int = DIAGNOSIS_CUTOFF) -> dict[str, dict[str, Any]]:
    """`diagnosis` of the evaluation stage: every measured row, every query."""
    return {row: {q: diagnosis_entry(by_query.get(q, []), judgements.get(q, {}), cutoff) for q in query_ids}
            for row, by_query in rankings.items()}


def topic_diagnosis_entry(ranked: Ranking, grades: Mapping[str, int], cutoff: int) -> dict[str, Any]:
    """One topic's diagnosis as the sandbox writes it: the top k, the candidates in order, the
    misses, the verdict (candidate miss or ordering problem, by nDCG) and every candidate's score."""
    ranking = [doc for doc, _ in ranked]
    found = diagnose(ranking, grades, cutoff)
    return {f"top_{cutoff}": found.top, "candidates": ranking, "misses": found.misses,
            "diagnosis": ndcg_verdict(found), "scores": [{"doc_id": doc, "score": score} for doc, score in ranked]}


def diagnosis_summary_block(diagnosis: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> dict[str, dict[str, int]]:
    """`diagnosis_summary`: how many queries of each row have each verdict."""
    return {row: count_verdicts({q: entry["diagnosis"] for q, entry in by_query.items()})
            for row, by_query in diagnosis.items()}


def ceiling_block(rankings: Mapping[str, Mapping[str, Sequence[str]]], judgements: Mapping[str, Mapping[str, int]],
                  query_ids: Sequence[str], metrics: Sequence[Metric]) -> dict[str, Any]:
    """`ceiling`: per row, each metric's mean ceiling (its candidates in label order,
    generator.core.headroom), its own mean and the headroom between them; per row and query,
    each metric's ceiling."""
    rows: dict[str, Any] = {}
    per_query: dict[str, Any] = {}
    for row, by_query in sorted(rankings.items()):
        per_query[row] = {}
        for query in query_ids:
            grades = judgements.get(query, {})
            best = oracle_order(list(by_query.get(query, [])), grades)
            per_query[row][query] = {metric.name: metric.per_query(best, grades) for metric in metrics}
        rows[row] = {}
        for metric in metrics:
            ceiling = macro_mean(per_query[row][q][metric.name] for q in query_ids)
            actual = macro_mean(metric.per_query(list(by_query.get(q, [])), judgements.get(q, {})) for q in query_ids)
            rows[row][metric.name] = {"ceiling": ceiling, "row": actual, "headroom": ceiling - actual}
    return {"note": CEILING_NOTE, "rows": rows, "per_query": per_query}


# --- comparisons -----------------------------------------------------------------------------


def draw_comparison(row_scores: Sequence[float], base_scores: Sequence[float], *, name: str, metric: str, seed: int,
                    resamples: int, **method: Any) -> dict[str, Any]:
    """One comparison drawn with the kernel's paired statistics (NumPy and SciPy, imported here
    only: a results file without comparisons never needs them), seeded by its name and metric."""
    from generator.core.comparisons import compare, seed_for

    return compare(list(row_scores), list(base_scores), seed=seed_for(seed, name, metric), resamples=resamples,
                   **method)


def comparisons_block(per_query: Mapping[str, Any], query_ids: Sequence[str], pairs: Sequence[tuple[str, str]],
                      metrics: Sequence[str], *, seed: int, resamples: int,
                      not_measured: Mapping[str, str]) -> dict[str, Any]:
    """`comparisons` (generator.core.comparisons.comparisons_block)."""
    from generator.core.comparisons import comparisons_block as drawn

    return drawn(per_query, query_ids, pairs, metrics, seed=seed, resamples=resamples, not_measured=not_measured)


def scores_of(per_query: Mapping[str, Any], row: str, query_ids: Sequence[str], metric: str) -> list[float]:
    return [float(per_query[row][q][metric]) for q in query_ids]


def all_pairs_block(rows: Sequence[str], measured: Mapping[str, bool], metrics: Sequence[str],
                    comparisons: Mapping[str, Any], draw: Callable[[str, str, str, str], Mapping[str, Any]]
                    ) -> dict[str, Any]:
    """`all_pairs` (generator.core.all_pairs): a pair `comparisons` holds is taken from it (the
    same seed gives the same figures); `draw(row, baseline, name, metric)` draws the others."""
    return _family_block(rows, measured, metrics, reusing(comparisons, draw))


POWER_ALPHA, POWER_TARGET, POWER_SIMULATIONS = 0.05, 0.8, 400


def power_block(per_query: Mapping[str, Any], query_ids: Sequence[str], comparisons: Mapping[str, Any], *,
                seed: int) -> dict[str, Any]:
    """`power` (generator.core.power): for each measured comparison and metric, what its sample
    can detect at alpha 0.05 and power 0.8, checked by simulating the sign-flip test there."""
    from generator.core.comparisons import seed_for
    from generator.core.power import minimum_detectable_effect, simulated_power_shared_flips

    entries: dict[str, Any] = {}
    for name, entry in sorted(comparisons.items()):
        if not isinstance(entry, dict) or entry.get("measured") is False or not isinstance(entry.get("metrics"), dict):
            continue
        row, baseline = entry["row"], entry["baseline"]
        metrics: dict[str, Any] = {}
        for metric in sorted(entry["metrics"]):
            differences = [a - b for a, b in zip(scores_of(per_query, row, query_ids, metric),
                                                 scores_of(per_query, baseline, query_ids, metric))]
            detectable = minimum_detectable_effect(differences, alpha=POWER_ALPHA, power=POWER_TARGET)
            figures = {"queries": detectable["queries"], "sd_difference": detectable["sd_difference"],
                       "minimum_detectable_effect": detectable["minimum_detectable_effect"]}
            if detectable["minimum_detectable_effect"] is None:
                figures["why"] = detectable.get("why")
            else:
                check = simulated_power_shared_flips(differences, detectable["minimum_detectable_effect"],
                                                     alpha=POWER_ALPHA,
                                        simulations=POWER_SIMULATIONS, seed=seed_for(seed, name, metric))
                figures.update(simulated_power=check["simulated_power"], standard_error=check["standard_error"])
            metrics[metric] = figures
        entries[name] = {"row": row, "baseline": baseline, "metrics": metrics}
    return {"alpha": POWER_ALPHA, "power": POWER_TARGET, "simulations": POWER_SIMULATIONS,
            "method": "minimum detectable effect: paired t approximation (t(1-alpha/2, n-1) + t(power, n-1)) * sd / "
                      "sqrt(n); checked by simulating the two-sided sign-flip test (Monte Carlo, 2,000 sign "
                      "assignments) on samples resampled from the differences, centred and shifted to that effect",
            "comparisons": entries}


def score_rows(rows: Sequence[RowRun], judgements: Mapping[str, Mapping[str, int]], query_ids: Sequence[str], *,
               bootstrap_resamples: int, seed: int, metrics: Sequence[Metric],
               pairs: Sequence[tuple[str, str]] | None = None, baseline: str = "dense",
               extra_pairs: Sequence[tuple[str, str]] = (("hybrid+rerank", "hybrid"),)) -> dict[str, Any]:
    """The quality blocks of an evaluation: `table`, `per_query`, `comparisons`, `all_pairs`,
    `ceiling`, `diagnosis` and `diagnosis_summary`.

    Every row's change is over `baseline` (which must be measured). `pairs` are the (row,
    baseline) comparisons to make; by default every row against `baseline`, then `extra_pairs`
    (each rerank row against the row it reorders)."""
    from generator.core.comparisons import default_pairs

    measured = {row.name: ranked_ids(row.rankings, query_ids) for row in rows if row.rankings is not None}
    if baseline not in measured:
        raise ValueError(f"the baseline row {baseline!r} was not measured")
    per_query = per_query_block(measured, judgements, query_ids, metrics)
    diagnosis = diagnosis_block(measured, judgements, query_ids)
    pairs = list(pairs) if pairs is not None else default_pairs([row.name for row in rows], baseline, extra_pairs)
    names = [metric.name for metric in metrics]
    comparisons = comparisons_block(per_query, query_ids, pairs, names, seed=seed, resamples=bootstrap_resamples,
                                    not_measured={row.name: row.not_measured_reason or "not measured"
                                                  for row in rows if row.rankings is None})

    def draw(row: str, base: str, name: str, metric: str) -> Mapping[str, Any]:
        return draw_comparison(scores_of(per_query, row, query_ids, metric), scores_of(per_query, base, query_ids, metric),
                               name=name, metric=metric, seed=seed, resamples=bootstrap_resamples)

    return {
        TABLE.name: table_block(rows, per_query, query_ids, metrics, baseline),
        PER_QUERY.name: per_query,
        COMPARISONS.name: comparisons,
        ALL_PAIRS.name: all_pairs_block([row.name for row in rows], {row.name: row.name in measured for row in rows},
                                        names, comparisons, draw),
        POWER.name: power_block(per_query, query_ids, comparisons, seed=seed),
        CEILING.name: ceiling_block(measured, judgements, query_ids, metrics),
        DIAGNOSIS.name: diagnosis,
        DIAGNOSIS_SUMMARY.name: diagnosis_summary_block(diagnosis),
    }


# --- the reranker ----------------------------------------------------------------------------


def timing_summary(per_query_milliseconds: Mapping[str, float], per_query_pairs: Mapping[str, int]) -> dict[str, Any]:
    """The figures a reranker's cost is read by, from its per-query wall times and pair counts:
    p50 and p95 milliseconds per query, the pairs scored and pairs per second of scoring time."""
    times = [float(per_query_milliseconds[q]) for q in per_query_milliseconds]
    pairs = sum(int(per_query_pairs[q]) for q in per_query_milliseconds)
    seconds = math.fsum(times) / 1000.0
    return {"queries": len(times), "pairs": pairs, "p50_milliseconds": percentile(times, 50),
            "p95_milliseconds": p95(times), "pairs_per_second": pairs / seconds if seconds > 0 else 0.0}


def rerank_summary(candidates: Mapping[str, Sequence[str]] | None, reranked: Mapping[str, Ranking] | None,
                   milliseconds: Mapping[str, float] | None, query_ids: Sequence[str]) -> dict[str, Any]:
    """The spec's blocks about the decided reranker (nulls when it was not measured):
    `same_50_rows_after_rerank`, `p95_rerank_milliseconds`, `rerank_milliseconds`, `reranked_top_5`."""
    if reranked is None or milliseconds is None or candidates is None:
        return {SAME_CANDIDATES.name: None, P95_RERANK.name: None, RERANK_MILLISECONDS.name: None,
                RERANKED_TOP_5.name: {}}
    return {
        SAME_CANDIDATES.name: same_candidate_sets({q: list(candidates[q]) for q in query_ids},
                                                  ranked_ids(reranked, query_ids)),
        P95_RERANK.name: p95([milliseconds[q] for q in query_ids]),
        RERANK_MILLISECONDS.name: {q: milliseconds[q] for q in query_ids},
        RERANKED_TOP_5.name: {q: [{"corpus_id": d, "score": float(s)} for d, s in reranked[q][:RERANKED_TOP]]
                              for q in query_ids},
    }


def same_candidates(over: Mapping[str, Sequence[str]] | None, reranked: Mapping[str, Sequence[str]] | None) -> bool | None:
    """`same_50_rows_after_rerank` from two rows' rankings (None when either was not measured)."""
    return same_candidate_sets(over, reranked) if over is not None and reranked is not None else None


def reranked_top_ids(reranked: Mapping[str, Sequence[str]], queries: Sequence[str]) -> dict[str, list[str]]:
    """The documents `reranked_top_5` lists, per query (its scores are the model's, kept as recorded)."""
    return {q: list(reranked.get(q, []))[:RERANKED_TOP] for q in queries}


def queries_without_candidates_block(rankings: Mapping[str, Mapping[str, Sequence[Any]]],
                                     query_ids: Sequence[str]) -> dict[str, list[str]]:
    """`queries_without_candidates`: per row, the queries it ranked nothing for."""
    return {row: [q for q in query_ids if not rankings[row].get(q)] for row in sorted(rankings)}


def frontier_entry(configuration: Mapping[str, Any], over: Mapping[str, Sequence[str]],
                   judgements: Mapping[str, Mapping[str, int]], query_ids: Sequence[str], metric: Metric,
                   over_mean: float) -> dict[str, Any]:
    """One priced configuration with its timing summary (from its per-query times) and its ceiling."""
    times = {q: float(configuration["per_query_milliseconds"][q]) for q in query_ids}
    pairs = {q: int(configuration["per_query_pairs"][q]) for q in query_ids}
    summary = timing_summary(times, pairs)
    ceiling = ceiling_at_depth(over, judgements, query_ids, metric, int(configuration["depth"]))
    entry = {key: configuration.get(key) for key in SUMMARY_KEYS[:7]}
    entry.update({"p50_milliseconds": summary["p50_milliseconds"], "p95_milliseconds": summary["p95_milliseconds"],
                  "ceiling": ceiling, "headroom": ceiling - over_mean})
    extra = {key: value for key, value in configuration.items() if key not in entry}
    return {**entry, **extra, "per_query_milliseconds": times, "per_query_pairs": pairs}


def frontier_block(configurations: Sequence[Mapping[str, Any]], over_row: str,
                   over: Mapping[str, Sequence[str]], judgements: Mapping[str, Mapping[str, int]],
                   query_ids: Sequence[str], metric: Metric) -> dict[str, Any]:
    """`frontier`: every configuration, cheapest p95 first (generator.core.frontier)."""
    over_mean = macro_mean(metric.per_query(list(over.get(q, [])), judgements.get(q, {})) for q in query_ids)
    entries = [frontier_entry(configuration, over, judgements, query_ids, metric, over_mean)
               for configuration in configurations]
    entries.sort(key=frontier_order)
    return {"note": FRONTIER_NOTE, "over": over_row, "metric": metric.name, "over_mean": over_mean,
            "queries": len(query_ids), "configurations": entries}


# --- whole documents -------------------------------------------------------------------------


def evaluation_document(*, documents: int, query_ids: Sequence[str], query_set: str, candidate_depth: int,
                        quality: Mapping[str, Any], rerank: Mapping[str, Any], rerank_costs: Mapping[str, Any],
                        frontier: Mapping[str, Any] | None, rankings: Mapping[str, Mapping[str, Sequence[Any]]],
                        query_texts: Mapping[str, str], runs: Mapping[str, str],
                        manifest: Mapping[str, Any]) -> dict[str, Any]:
    """A results document of the evaluation stage, in the current format (unsealed)."""
    return {
        FORMAT.name: FORMAT_VERSION,
        DOCUMENTS.name: documents,
        QUERIES.name: len(query_ids),
        QUERY_SET.name: query_set,
        CANDIDATE_DEPTH.name: candidate_depth,
        **quality,
        **rerank,
        RERANK_COSTS.name: dict(rerank_costs),
        **({FRONTIER.name: dict(frontier)} if frontier is not None else {}),
        # A query a row found no candidate for has no line in that row's run file: plain trec_eval
        # then averages over fewer queries; `trec_eval -c` (and this tool) count it as zero.
        QUERIES_WITHOUT_CANDIDATES.name: queries_without_candidates_block(rankings, query_ids),
        # The queries' own words, so a reader of the per-query table sees what was asked.
        QUERY_TEXTS.name: dict(query_texts),
        RUNS.name: dict(runs),
        MANIFEST.name: dict(manifest),
    }


def with_manifest(document: Mapping[str, Any], **entries: Any) -> dict[str, Any]:
    """The document with `entries` added to its manifest."""
    manifest = document.get(MANIFEST.name) if isinstance(document.get(MANIFEST.name), Mapping) else {}
    return {**document, MANIFEST.name: {**manifest, **entries}}


def manifest_of(document: Mapping[str, Any]) -> dict[str, Any]:
    manifest = document.get(MANIFEST.name)
    return dict(manifest) if isinstance(manifest, Mapping) else {}


def sandbox_document(*, documents: int, queries: int, positive_judgements: int, parameters: Mapping[str, Any],
                     table: Sequence[Mapping[str, Any]], per_query: Mapping[str, Any], diagnosis: Mapping[str, Any],
                     token_lengths: Mapping[str, int], mean_token_length: float, query_details: Mapping[str, Any],
                     bm25_top5: Mapping[str, Any], opaque_run: Mapping[str, Any], reranker: Mapping[str, Any],
                     funnel: Mapping[str, Any], runs: Mapping[str, str]) -> dict[str, Any]:
    """A results document of the L03 sandbox, in the current format (unsealed; the runner adds
    the manifest)."""
    return {FORMAT.name: FORMAT_VERSION, STATUS.name: "valid", DOCUMENTS.name: documents, QUERIES.name: queries,
            POSITIVE_JUDGEMENTS.name: positive_judgements, PARAMETERS.name: dict(parameters), TABLE.name: list(table),
            PER_QUERY.name: dict(per_query), DIAGNOSIS.name: dict(diagnosis), TOKEN_LENGTHS.name: dict(token_lengths),
            MEAN_TOKEN_LENGTH.name: mean_token_length, QUERY_DETAILS.name: dict(query_details),
            BM25_TOP5.name: dict(bm25_top5), OPAQUE_RUN.name: dict(opaque_run), RERANKER.name: dict(reranker),
            FUNNEL.name: funnel, RUNS.name: dict(runs)}


def sandbox_run_manifest(*, valid: bool, inputs: Mapping[str, Any], parameters: Mapping[str, Any],
                         details: Mapping[str, Any], invalid_reasons: Sequence[str] = (),
                         recorded: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """`run_manifest.json`, the sandbox's stop-condition record: the status, every input's sha256
    and the parameters (what a later run is held to), then how the run was made (`details`); an
    invalid run adds why, and the manifest it was held to."""
    manifest = {STATUS.name: "valid" if valid else "invalid", "inputs": dict(inputs),
                PARAMETERS.name: dict(parameters), **details}
    if not valid:
        manifest.update({"invalid_reasons": list(invalid_reasons), "recorded": recorded})
    return manifest


def recorded_run_manifest(manifest: Mapping[str, Any]) -> dict[str, Any] | None:
    """The inputs and parameters a run manifest holds a later run to: its own, or, for an invalid
    run (which never becomes the reference), the ones it was itself held to."""
    if manifest.get(STATUS.name) == "invalid":
        recorded = manifest.get("recorded")
        return dict(recorded) if isinstance(recorded, Mapping) else None
    return {"inputs": manifest.get("inputs"), PARAMETERS.name: manifest.get(PARAMETERS.name)}


def run_manifest_view(document: Mapping[str, Any]) -> dict[str, Any]:
    """The part of run_manifest.json a sealed results.json vouches for (status, inputs, parameters)."""
    manifest = manifest_of(document)
    return {STATUS.name: "valid", "inputs": manifest.get("inputs"), PARAMETERS.name: manifest.get(PARAMETERS.name)}


def invalid_sandbox_record(reasons: Sequence[str], note: str) -> dict[str, Any]:
    """What the sandbox writes in place of results for an invalid run: no figure, only why."""
    return {STATUS.name: "invalid", "invalid_reasons": list(reasons), "note": note}


def sample_comparison_blocks(sample: Mapping[str, Any], full: Mapping[str, Any]) -> dict[str, Any]:
    """`comparison_with_sample` and `comparison_with_sample_by_row` (generator.core.results.sample_check)."""
    found = sample_comparisons(sample, full)
    return {COMPARISON_WITH_SAMPLE.name: found["decided"], COMPARISON_WITH_SAMPLE_BY_ROW.name: found["by_row"]}

