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
from typing import Any, Callable, Sequence

from generator import __version__
from generator.errors import InputError, ModelUnavailableError
from generator.evaluate.cache import EmbeddingCache, RerankCache, default_cache_dir
from generator.evaluate.cost import measure_rerank_cost
from generator.evaluate.environment import package_versions, thread_count
from generator.evaluate.data import Dataset, check_dataset_layout, hash_inputs, load_dataset
from generator.evaluate.metrics import ROW_METRICS, Metric, metrics_from_names
from generator.evaluate.metrics import timing_summary
from generator.evaluate.models import resolve_device, resolve_model
from generator.evaluate.options import RERANK_ROW, RESULTS_FILE, ROWS, EvaluationOptions
from generator.evaluate.retrieval import dense_rankings, hybrid_rankings, rerank_rankings, sparse_rankings
from generator.evaluate.runfiles import QRELS_COPY_NAME, format_qrels, format_run, read_supplied_run
from generator.evaluate.sample_check import sample_comparisons
from generator.evaluate.scoring import RowRun, rerank_summary, score_rows
from generator.evaluate.comparisons import method_description
from generator.fileio import display_path, dumps_json, reading, sha256_bytes, sha256_file, write_set
from generator.results import Results, read_results, seal

def _now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


@dataclass
class Evaluation:
    results: dict[str, Any]
    rankings: dict[str, dict[str, list[tuple[str, float]]]] = field(default_factory=dict)
    # The judgements of the evaluated queries (query -> document -> grade), copied beside the runs.
    judgements: dict[str, dict[str, int]] = field(default_factory=dict)
    # The metrics the figures were computed with; the manifest records their definitions.
    metrics: tuple[Metric, ...] = ROW_METRICS


def evaluate(options: EvaluationOptions, *, log: Callable[[str], None] = print,
             dataset: Dataset | None = None, load_cross_encoder: Callable | None = None) -> Evaluation:
    """Run the four rows and build the results document (nothing is written here)."""
    started_at = _now()
    dataset = dataset or load_dataset(options.data)
    query_ids = dataset.select_queries(options.query_set, size=options.sample_size, order=options.sample_order,
                                       seed=options.sample_seed)
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

    device = resolve_device(options.device)
    dense = dense_rankings(dataset.documents, queries, dense_identity, options.depth,
                           EmbeddingCache(cache_dir), progress=options.progress, log=log, device=device,
                           batch_size=options.encode_batch_size)
    log("sparse: indexing with bm25s")
    sparse = sparse_rankings(dataset.documents, queries, options.depth)
    hybrid = hybrid_rankings(dense.rankings, sparse, options.rrf_k, options.depth)
    rankings = {"dense": dense.rankings, "sparse": sparse, "hybrid": hybrid}

    rerank = None
    if rerank_identity is not None:
        rerank = rerank_rankings(hybrid, queries, texts, rerank_identity, options.rerank_max_length,
                                 RerankCache(cache_dir, rerank_identity.cache_key), progress=options.progress,
                                 log=log, load_model=load_cross_encoder, device=device,
                                 batch_size=options.rerank_batch_size)
        rankings[RERANK_ROW] = rerank.rankings
    if rerank is not None:
        rerank_cost = measured_rerank_cost(rerank_identity.name, rerank.milliseconds, hybrid, query_ids, options,
                                           device)
    else:
        rerank_cost = shape_rerank_cost(hybrid, queries, texts, query_ids, options, device, log)

    labels = {"dense": dense_identity.name, "sparse": "bm25s (BM25, Lucene variant)",
              "hybrid": f"RRF k={options.rrf_k} over dense and sparse top {options.depth}",
              RERANK_ROW: rerank_identity.name if rerank_identity else options.rerank_model}
    judgements = {q: dict(dataset.qrels.scores.get(q, {})) for q in query_ids}
    rows = [RowRun(row, labels[row], rankings.get(row), rerank_reason if row == RERANK_ROW else None) for row in ROWS]
    supplied = {}
    documents = {document.doc_id for document in dataset.documents}
    for name, path in options.run_rows:
        shown = display_path(path)
        if not path.is_file():
            raise InputError("run file not found", path=shown, field=f"run_rows.{name}")
        rankings[name] = read_supplied_run(path, shown, queries=dataset.queries, documents=documents,
                                           depth=options.depth, query_ids=query_ids)
        supplied[name] = {"path": os.path.relpath(path.resolve(), options.outputs_dir.resolve().parent),
                          "sha256": sha256_file(path)}
        rows.append(RowRun(name, f"run file {path.name}", rankings[name]))
    metrics = metrics_from_names(options.metrics) if options.metrics is not None else ROW_METRICS
    scored = score_rows(rows, judgements, query_ids, bootstrap_resamples=options.bootstrap_resamples,
                        seed=options.seed, pairs=options.comparisons, metrics=metrics)

    identity = dataset.identify()
    results: dict[str, Any] = {
        "documents": len(dataset.documents),
        "queries": len(query_ids),
        "query_set": options.query_set,
        "candidate_depth": options.depth,
        **scored,
        **rerank_summary(hybrid, rerank.rankings if rerank else None, rerank.milliseconds if rerank else None,
                         query_ids),
        "rerank_cost": rerank_cost,
        # A query a row found no candidate for has no line in that row's run file: plain trec_eval
        # then averages over fewer queries; `trec_eval -c` (and this tool) count it as zero.
        "queries_without_candidates": {row: [q for q in query_ids if not rankings[row].get(q)]
                                       for row in sorted(rankings)},
        # The queries' own words, so a reader of the per-query table sees what was asked.
        "query_texts": {q: dataset.queries[q] for q in query_ids},
        "runs": {row: f"{options.runs_dir.name}/{run_file_name(row)}" for row in rankings},
        "manifest": {
            "inputs": dataset.input_hashes,
            # Relative to the project, so the manifest does not depend on where the clone lives.
            "data_directory": os.path.relpath(options.data.resolve(), options.outputs_dir.resolve().parent),
            "reproduction": identity,
            "parameters": options.parameters(),
            "runtime": options.runtime(device),
            # Where each supplied run came from; its rows are re-written in runs/ like any other.
            **({"supplied_runs": supplied} if supplied else {}),
            "query_ids": query_ids,
            # BEIR reads a negative grade as not relevant; how many the qrels hold is said, not hidden.
            "negative_judgements": dataset.negative_judgements,
            "per_query_key": "per_query",
            "models": {"dense": {**dense_identity.as_manifest(), "max_seq_length": dense.max_seq_length},
                       "rerank": (rerank_identity.as_manifest() if rerank_identity
                                  else {"requested": options.rerank_model, "not_measured_reason": rerank_reason})},
            "caches": {"dense_embeddings": "re-used" if dense.embeddings_cached else "computed",
                       "dense_encode_seconds": dense.encode_seconds,
                       "rerank_resumed_queries": rerank.resumed_queries if rerank else [],
                       "rerank_computed_queries": rerank.computed_queries if rerank else []},
            "uncertainty": method_description(options.bootstrap_resamples, options.seed),
            "packages": package_versions(),
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "threads": thread_count(),
            "started_at": started_at,
            "finished_at": _now(),
        },
    }
    if identity["differing_inputs"]:
        log(f"note: inputs differ from the published {identity['of']} files "
            f"({', '.join(identity['differing_inputs'])}): this run is not a reproduction of it")
    return Evaluation(results=results, rankings=rankings, judgements=judgements, metrics=tuple(metrics))


def measured_rerank_cost(model: str, milliseconds: dict[str, float], hybrid: dict[str, list[tuple[str, float]]],
                         query_ids: Sequence[str], options: EvaluationOptions, device: str) -> dict[str, Any]:
    """The rerank row's own times, in the same form as a cost measured by shape."""
    per_query_milliseconds = {q: float(milliseconds[q]) for q in query_ids}
    per_query_pairs = {q: len(hybrid[q]) for q in query_ids}
    return {"measured": True, "cost": "measured", "quality": "measured", "model": model,
            "weights": "the model's own", "max_length": options.rerank_max_length,
            "batch_size": options.rerank_batch_size, "device": device, "threads": thread_count(),
            **timing_summary(per_query_milliseconds, per_query_pairs),
            "per_query_milliseconds": per_query_milliseconds, "per_query_pairs": per_query_pairs}


def not_measured_cost(model: str, reason: str) -> dict[str, Any]:
    return {"measured": False, "cost": "not measured", "quality": "not measured", "model": model,
            "not_measured_reason": reason}


def shape_rerank_cost(hybrid: dict[str, list[tuple[str, float]]], queries: dict[str, str], texts: dict[str, str],
                      query_ids: Sequence[str], options: EvaluationOptions, device: str,
                      log: Callable[[str], None]) -> dict[str, Any]:
    """The reranker's cost measured by its shape on the hybrid pairs, when its weights did not run.

    Its quality stays not measured: random weights give times, never rankings. The measurement
    takes minutes per query for a large model, so it runs on the release sample only and resumes
    from its per-query cache (generator.evaluate.cost).
    """
    if options.rerank_cost == "none":
        return not_measured_cost(options.rerank_model, "the rerank row did not run and readout.yaml asks for no "
                                                       "cost by shape (evaluate.rerank_cost: none)")
    if options.query_set != "sample":
        return not_measured_cost(options.rerank_model, "cost by shape is measured on the release sample only "
                                                       f"({RESULTS_FILE['sample']})")
    pairs_by_query = {q: [(queries[q], texts[doc_id]) for doc_id, _ in hybrid[q]] for q in query_ids}
    if not all(pairs_by_query.values()):
        return not_measured_cost(options.rerank_model, "a query has no hybrid candidates to score")
    try:
        measurement = measure_rerank_cost(pairs_by_query, options.rerank_model,
                                          max_length=options.rerank_max_length,
                                          batch_size=options.rerank_batch_size, cache_dir=options.cache_dir,
                                          device=device, progress=options.progress, log=log)
    except (InputError, ModelUnavailableError) as error:
        log(f"cost by shape: not measured: {error}")
        return not_measured_cost(options.rerank_model, f"its shape could not be built: {error}")
    figures = measurement.as_dict()
    # Local paths say where this machine keeps files, not what was measured.
    figures.pop("config_path", None)
    figures["tokenizer"] = {key: value for key, value in figures["tokenizer"].items() if key != "path"}
    return {"measured": True, **figures}


def run_file_name(row: str) -> str:
    return row.replace("+", "-") + ".trec"


def write_outputs(evaluation: Evaluation, options: EvaluationOptions,
                  log: Callable[[str], None] = print) -> Path:
    """Write the run files, the judgements and the sealed results.json (see `write_sealed_results`)."""
    outputs_root = options.results_path.parent
    sample_path = outputs_root / RESULTS_FILE["sample"]
    path = write_sealed_results(options.results_path, options.runs_dir, evaluation,
                                sample_path if options.query_set == "all" and sample_path.is_file() else None,
                                metrics=evaluation.metrics)
    log(f"wrote {display_path(path)} and {len(evaluation.rankings)} run files in {display_path(options.runs_dir)}")
    return path


def write_sealed_results(results_path: Path, runs_dir: Path, evaluation: Evaluation,
                         sample_path: Path | None = None, metrics: Sequence[Metric] = ROW_METRICS) -> Path:
    """Write the run files, the judgements and the sealed results.json as one set, the results
    last (generator.fileio.write_set): results.json records the sha256 of every file of its set,
    so a set mixed by an interrupted write is refused by `check` and re-evaluated by `build`.
    With `sample_path`, the release sample's results are compared with these (the 300-query check)."""
    outputs_root = results_path.parent
    files: list[tuple[Path, bytes]] = []
    run_files = {}
    for row, row_rankings in sorted(evaluation.rankings.items()):
        path = runs_dir / run_file_name(row)
        data = format_run(row_rankings, tag=row).encode("utf-8")
        files.append((path, data))
        run_files[row] = {"path": path.relative_to(outputs_root).as_posix(), "sha256": sha256_bytes(data)}
    qrels_path = runs_dir / QRELS_COPY_NAME
    qrels_data = format_qrels(evaluation.judgements).encode("utf-8")
    files.append((qrels_path, qrels_data))
    results = evaluation.results
    manifest = {**results["manifest"], "metrics": {metric.name: metric.as_manifest() for metric in metrics},
                "run_files": run_files,
                "qrels_copy": {"path": qrels_path.relative_to(outputs_root).as_posix(),
                               "sha256": sha256_bytes(qrels_data), "queries": len(evaluation.judgements),
                               "judgements": sum(len(grades) for grades in evaluation.judgements.values()),
                               "format": "TREC qrels: query 0 document grade"}}
    if sample_path is not None:
        sample, comparisons = _sample_comparisons(sample_path, results)
        results = {**results, **comparisons}
        manifest["compared_with"] = {"path": sample_path.name, "sha256": sample.sha256}
    results = seal({**results, "manifest": manifest}, writer=f"readout evaluate {__version__}")
    files.append((results_path, dumps_json(results).encode("utf-8")))
    write_set(files)
    return results_path


def set_problem(results_path: Path) -> str | None:
    """Why the files beside a results file are not the set it records (an interrupted write, or
    a file changed by hand): the first run file or judgements copy whose sha256 differs."""
    try:
        manifest = json.loads(results_path.read_text(encoding="utf-8")).get("manifest", {})
    except (OSError, ValueError, AttributeError, RecursionError):
        return f"{results_path.name} cannot be read"
    recorded = dict(manifest.get("run_files") or {}) if isinstance(manifest, dict) else {}
    if isinstance(manifest, dict) and isinstance(manifest.get("qrels_copy"), dict):
        recorded["judgements copy"] = manifest["qrels_copy"]
    for name, entry in sorted(recorded.items()):
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            return f"{results_path.name} records no path for {name}"
        path = results_path.parent / entry["path"]
        if not path.is_file():
            return f"{display_path(path)} is missing"
        if sha256_file(path) != entry.get("sha256"):
            return f"{display_path(path)} is not the file {results_path.name} records (an interrupted write?)"
    return None


def _sample_comparisons(sample_path: Path, results: dict[str, Any]) -> tuple[Results, dict[str, Any]]:
    with reading(sample_path):
        sample = read_results(sample_path)
        try:
            return sample, sample_comparisons(sample.data, results)
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
    problem = set_problem(options.results_path)
    if problem:
        return False, problem
    check_dataset_layout(options.data)
    if manifest.get("inputs") != hash_inputs(options.data):
        return False, "input files changed"
    return True, "inputs and parameters unchanged"
