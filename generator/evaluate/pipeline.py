"""The evaluation stage: four rows over one labelled dataset, written to results.json.

`evaluate` is the orchestration (load, retrieve, score, compare) and returns the results document
in memory; `write_outputs` is the edge that writes run files and results.json. Nothing heavy is
imported at module level: the retrieval functions import torch, sentence-transformers and bm25s
when they run.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, Callable

from generator.errors import InputError, ModelUnavailableError
from generator.evaluate.cache import EmbeddingCache, RerankCache, default_cache_dir
from generator.evaluate.data import Dataset, check_dataset_layout, hash_inputs, load_dataset
from generator.evaluate.diagnosis import count_verdicts, diagnose, recall_verdict
from generator.evaluate.metrics import (DELTA_METRICS, ROW_METRICS, macro_mean, p95, per_query_metrics,
                                        same_candidate_sets, signed_delta)
from generator.evaluate.models import resolve_model
from generator.evaluate.options import RERANK_ROW, RESULTS_FILE, ROWS, RUNS_DIR, EvaluationOptions
from generator.evaluate.retrieval import dense_rankings, hybrid_rankings, rerank_rankings, sparse_rankings
from generator.evaluate.runfiles import write_run
from generator.evaluate.sample_check import compare_sample_to_full
from generator.evaluate.uncertainty import method_description, paired_comparison
from generator.fileio import atomic_write_json, display_path, reading
from generator.results import read_results

PACKAGES = ("traced-readout", "sentence-transformers", "transformers", "torch", "bm25s", "numpy",
            "huggingface-hub", "tokenizers")
DIAGNOSIS_CUTOFF = 5


def _package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def _now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def _row_entry(row: str, per_query: dict[str, dict[str, float]] | None, dense_per_query: dict[str, dict[str, float]],
               model_label: str | None, not_measured_reason: str | None, query_ids: list[str],
               options: EvaluationOptions) -> dict[str, Any]:
    entry: dict[str, Any] = {"search": row, "model": model_label}
    if per_query is None:
        entry.update({"measured": False, "not_measured_reason": not_measured_reason})
        for metric in ROW_METRICS:
            entry[metric] = None
        for metric in DELTA_METRICS:
            entry[f"delta_{metric}_vs_dense"] = None
        entry["paired_vs_dense"] = None
        return entry
    entry["measured"] = True
    for metric in ROW_METRICS:
        entry[metric] = macro_mean(per_query[q][metric] for q in query_ids)
    entry["paired_vs_dense"] = {}
    for metric in DELTA_METRICS:
        dense_mean = macro_mean(dense_per_query[q][metric] for q in query_ids)
        entry[f"delta_{metric}_vs_dense"] = signed_delta(entry[metric], dense_mean)
        entry["paired_vs_dense"][metric] = paired_comparison(
            [per_query[q][metric] for q in query_ids], [dense_per_query[q][metric] for q in query_ids],
            bootstrap_resamples=options.bootstrap_resamples, seed=options.seed)
    return entry


@dataclass
class Evaluation:
    results: dict[str, Any]
    rankings: dict[str, dict[str, list[tuple[str, float]]]] = field(default_factory=dict)


def evaluate(options: EvaluationOptions, *, log: Callable[[str], None] = print,
             dataset: Dataset | None = None, load_cross_encoder: Callable | None = None) -> Evaluation:
    """Run the four rows and build the results document (nothing is written here)."""
    started_at = _now()
    dataset = dataset or load_dataset(options.data)
    query_ids = dataset.select_queries(options.query_set)
    queries = {q: dataset.queries[q] for q in query_ids}
    texts = {document.doc_id: document.retrieval_text for document in dataset.documents}
    cache_dir = options.cache_dir or default_cache_dir()
    log(f"{len(dataset.documents)} documents, {len(query_ids)} queries ({options.query_set}); cache {cache_dir}")

    # Resolve every model before the long work starts, so a missing model fails in seconds.
    dense_identity = resolve_model(options.dense_model)
    rerank_identity = None
    rerank_reason = None
    if options.skip_rerank:
        rerank_reason = options.skip_rerank_reason
    else:
        try:
            rerank_identity = resolve_model(options.rerank_model)
        except ModelUnavailableError as error:
            raise ModelUnavailableError(f"{error}; or run with --skip-rerank to record the {RERANK_ROW} "
                                        "row as not measured") from None

    dense = dense_rankings(dataset.documents, queries, dense_identity, options.depth,
                           EmbeddingCache(cache_dir), progress=options.progress, log=log)
    log("sparse: indexing with bm25s")
    sparse = sparse_rankings(dataset.documents, queries, options.depth)
    hybrid = hybrid_rankings(dense.rankings, sparse, options.rrf_k, options.depth)
    rankings = {"dense": dense.rankings, "sparse": sparse, "hybrid": hybrid}

    rerank = None
    if rerank_identity is not None:
        rerank = rerank_rankings(hybrid, queries, texts, rerank_identity, options.rerank_max_length,
                                 RerankCache(cache_dir, rerank_identity.cache_key), progress=options.progress,
                                 log=log, load_model=load_cross_encoder)
        rankings[RERANK_ROW] = rerank.rankings

    per_query: dict[str, dict[str, dict[str, float]]] = {}
    diagnosis: dict[str, dict[str, dict[str, Any]]] = {}
    for row, row_rankings in rankings.items():
        per_query[row] = {}
        diagnosis[row] = {}
        for q in query_ids:
            ranked = [doc_id for doc_id, _ in row_rankings[q]]
            per_query[row][q] = per_query_metrics(ranked, dataset.qrels.relevant(q))
            found = diagnose(ranked, dataset.qrels.scores.get(q, {}), DIAGNOSIS_CUTOFF)
            diagnosis[row][q] = {"missed_by_candidates": found.not_in_candidates,
                                 f"ranked_below_{DIAGNOSIS_CUTOFF}": found.ranked_below,
                                 "diagnosis": recall_verdict(found)}

    labels = {"dense": dense_identity.name, "sparse": "bm25s (BM25, Lucene variant)",
              "hybrid": f"RRF k={options.rrf_k} over dense and sparse top {options.depth}",
              RERANK_ROW: rerank_identity.name if rerank_identity else options.rerank_model}
    table = [_row_entry(row, per_query.get(row), per_query["dense"], labels[row],
                        rerank_reason if row == RERANK_ROW else None, query_ids, options) for row in ROWS]

    reproduced, differing = dataset.is_reproduction_of_scifact()
    results: dict[str, Any] = {
        "documents": len(dataset.documents),
        "queries": len(query_ids),
        "query_set": options.query_set,
        "candidate_depth": options.depth,
        "table": table,
        "same_50_rows_after_rerank": (same_candidate_sets(
            {q: [d for d, _ in hybrid[q]] for q in query_ids},
            {q: [d for d, _ in rerank.rankings[q]] for q in query_ids}) if rerank else None),
        "p95_rerank_milliseconds": p95([rerank.milliseconds[q] for q in query_ids]) if rerank else None,
        "rerank_milliseconds": ({q: rerank.milliseconds[q] for q in query_ids} if rerank else None),
        "reranked_top_5": ({q: [{"corpus_id": d, "score": float(s)} for d, s in rerank.rankings[q][:5]]
                            for q in query_ids} if rerank else {}),
        "per_query": per_query,
        "diagnosis": diagnosis,
        "diagnosis_summary": {row: count_verdicts({q: entry["diagnosis"] for q, entry in diagnosis[row].items()})
                              for row in diagnosis},
        "runs": {row: f"{RUNS_DIR[options.query_set]}/{_run_file_name(row)}" for row in rankings},
        "manifest": {
            "inputs": dataset.input_hashes,
            # Relative to the project, so the manifest does not depend on where the clone lives.
            "data_directory": os.path.relpath(options.data.resolve(), options.outputs_dir.resolve().parent),
            "reproduction": {"of": "BEIR SciFact test split", "is_reproduction": reproduced,
                             "differing_inputs": differing},
            "parameters": options.parameters(),
            "query_ids": query_ids,
            "models": {"dense": {**dense_identity.as_manifest(), "max_seq_length": dense.max_seq_length},
                       "rerank": (rerank_identity.as_manifest() if rerank_identity
                                  else {"requested": options.rerank_model, "not_measured_reason": rerank_reason})},
            "caches": {"dense_embeddings": "re-used" if dense.embeddings_cached else "computed",
                       "dense_encode_seconds": dense.encode_seconds,
                       "rerank_resumed_queries": rerank.resumed_queries if rerank else [],
                       "rerank_computed_queries": rerank.computed_queries if rerank else []},
            "uncertainty": method_description(bootstrap_resamples=options.bootstrap_resamples, seed=options.seed),
            "packages": _package_versions(),
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "threads": _thread_count(),
            "started_at": started_at,
            "finished_at": _now(),
        },
    }
    if not reproduced:
        log(f"note: inputs differ from the published BEIR SciFact files ({', '.join(differing)}): "
            "this run is not a reproduction")
    return Evaluation(results=results, rankings=rankings)


def _thread_count() -> int:
    try:
        import torch

        return int(torch.get_num_threads())
    except ImportError:  # pragma: no cover
        return os.cpu_count() or 1


def _run_file_name(row: str) -> str:
    return row.replace("+", "-") + ".trec"


def write_outputs(evaluation: Evaluation, options: EvaluationOptions,
                  log: Callable[[str], None] = print) -> Path:
    """Run files first, results.json last: a results file never points at missing runs."""
    for row, row_rankings in evaluation.rankings.items():
        write_run(options.runs_dir / _run_file_name(row), row_rankings, tag=row)
    results = evaluation.results
    if options.query_set == "all":
        sample_path = options.results_path.parent / RESULTS_FILE["sample"]
        if sample_path.is_file():
            results = {**results, **_sample_comparisons(sample_path, results)}
    path = atomic_write_json(options.results_path, results)
    log(f"wrote {display_path(path)} and {len(evaluation.rankings)} run files in {display_path(options.runs_dir)}")
    return path


def _sample_comparisons(sample_path: Path, results: dict[str, Any]) -> dict[str, Any]:
    """How each row's change on the release sample relates to the full query set.

    The spec's question is about the rerank row; the other rows answer the same question for
    what was measured when the rerank row could not be.
    """
    with reading(sample_path):
        sample = read_results(sample_path).data
        try:
            return {"comparison_300": compare_sample_to_full(sample, results, row=RERANK_ROW),
                    "comparison_300_by_row": {row: compare_sample_to_full(sample, results, row=row)
                                              for row in ROWS[1:]}}
        except ValueError as error:
            raise InputError(f"cannot compare with the release sample: {error}",
                             path=display_path(sample_path)) from None


def run_and_write(options: EvaluationOptions, log: Callable[[str], None] = print) -> Path:
    """Evaluate and write the outputs: what `readout evaluate` and `readout build` do."""
    return write_outputs(evaluate(options, log=log), options, log=log)


def results_are_current(options: EvaluationOptions) -> tuple[bool, str]:
    """Whether the results file was made from today's inputs and parameters (for `build`)."""
    if not options.results_path.is_file():
        return False, f"{options.results_path.name} does not exist"
    try:
        manifest = json.loads(options.results_path.read_text(encoding="utf-8"))["manifest"]
    except (ValueError, KeyError, TypeError, RecursionError):
        return False, f"{options.results_path.name} has no readable manifest"
    if not isinstance(manifest, dict) or manifest.get("parameters") != options.parameters():
        return False, "parameters changed"
    check_dataset_layout(options.data)
    if manifest.get("inputs") != hash_inputs(options.data):
        return False, "input files changed"
    return True, "inputs and parameters unchanged"
