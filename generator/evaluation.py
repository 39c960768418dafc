"""The evaluation stage: four rows over one labelled dataset, written to results.json.

`evaluate` is the orchestration (load, retrieve, score, compare); the writing happens at the
edge in `write_outputs`. Nothing heavy is imported at module level: the retrieval functions
import torch, sentence-transformers and bm25s when they run.
"""

from __future__ import annotations

import os
import platform
import sys
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, Callable

from generator.data import Dataset, load_dataset
from generator.errors import InputError, ModelUnavailableError
from generator.fileio import atomic_write_json, display_path
from generator.metrics import DELTA_METRICS, ROW_METRICS, macro_mean, p95, per_query_metrics, same_candidate_sets, signed_delta
from generator.runfiles import write_run

ROWS = ("dense", "sparse", "hybrid", "hybrid+rerank")
RERANK_ROW = "hybrid+rerank"
RESULTS_FILE = {"sample": "results.json", "all": "results-300.json"}
RUNS_DIR = {"sample": "runs", "all": "runs-300"}
PACKAGES = ("traced-readout", "sentence-transformers", "transformers", "torch", "bm25s", "numpy",
            "huggingface-hub", "tokenizers")


@dataclass(frozen=True)
class EvaluationOptions:
    data: Path
    outputs_dir: Path
    query_set: str = "sample"
    dense_model: str = "BAAI/bge-small-en-v1.5"
    rerank_model: str = "BAAI/bge-reranker-v2-m3"
    skip_rerank: bool = False
    skip_rerank_reason: str = "skipped on request (--skip-rerank)"
    output: Path | None = None
    cache_dir: Path | None = None
    depth: int = 50
    rrf_k: int = 60
    rerank_max_length: int = 512
    bootstrap_resamples: int = 10000
    seed: int = 20261130
    progress: bool = True

    @property
    def results_path(self) -> Path:
        return self.output or (self.outputs_dir / RESULTS_FILE[self.query_set])

    @property
    def runs_dir(self) -> Path:
        return self.results_path.parent / RUNS_DIR[self.query_set]

    def parameters(self) -> dict[str, Any]:
        """Everything that changes the numbers (and nothing that does not, like paths)."""
        return {
            "query_set": self.query_set, "candidate_depth": self.depth, "rrf_k": self.rrf_k,
            "dense_model": self.dense_model, "dense_similarity": "dot product of normalized embeddings",
            "sparse": {"library": "bm25s", "method": "lucene", "k1": 1.5, "b": 0.75, "stopwords": "en",
                       "stemmer": None},
            "rerank_model": self.rerank_model, "rerank_max_length": self.rerank_max_length,
            "rerank_skipped": self.skip_rerank,
            "document_text": "title + ' ' + text, stripped",
            "relevant": "qrels score > 0",
            "bootstrap_resamples": self.bootstrap_resamples, "seed": self.seed,
        }


DEFAULTS = EvaluationOptions(data=Path("data/scifact"), outputs_dir=Path("outputs"))


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


def diagnose(ranked: list[str], relevant: set[str], cutoff: int = 5) -> dict[str, Any]:
    """Why a query lost recall at the cutoff: relevant documents missing from the candidates
    (reranking cannot help) versus present but ranked below the cutoff (reranking could help)."""
    candidates = set(ranked)
    missed = sorted(relevant - candidates)
    below = sorted(doc_id for doc_id in ranked[cutoff:] if doc_id in relevant)
    if missed and below:
        verdict = "candidate miss and ordering problem"
    elif missed:
        verdict = "candidate miss"
    elif below:
        verdict = "ordering problem"
    else:
        verdict = "none"
    return {"missed_by_candidates": missed, f"ranked_below_{cutoff}": below, "diagnosis": verdict}


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
    from generator.uncertainty import paired_comparison

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
    from generator.cache import EmbeddingCache, RerankCache, default_cache_dir
    from generator.models import resolve_model
    from generator.retrieval import dense_rankings, hybrid_rankings, rerank_rankings, sparse_rankings

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
            relevant = dataset.qrels.relevant(q)
            per_query[row][q] = per_query_metrics(ranked, relevant)
            diagnosis[row][q] = diagnose(ranked, relevant)

    labels = {"dense": dense_identity.name, "sparse": "bm25s (BM25, Lucene variant)",
              "hybrid": f"RRF k={options.rrf_k} over dense and sparse top {options.depth}",
              RERANK_ROW: rerank_identity.name if rerank_identity else options.rerank_model}
    table = [_row_entry(row, per_query.get(row), per_query["dense"], labels[row],
                        rerank_reason if row == RERANK_ROW else None, query_ids, options) for row in ROWS]

    reproduced, differing = dataset.is_reproduction_of_scifact()
    from generator.uncertainty import method_description

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
        "diagnosis_summary": {row: _count_verdicts(diagnosis[row]) for row in diagnosis},
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


def _count_verdicts(by_query: dict[str, dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for entry in by_query.values():
        counts[entry["diagnosis"]] = counts.get(entry["diagnosis"], 0) + 1
    return dict(sorted(counts.items()))


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
            import json

            from generator.uncertainty import compare_sample_to_full

            sample = json.loads(sample_path.read_text(encoding="utf-8"))
            # The spec's question is about the rerank row; the other rows answer the same
            # question for what was measured when the rerank row could not be.
            results = {**results, "comparison_300": compare_sample_to_full(sample, results, row=RERANK_ROW),
                       "comparison_300_by_row": {row: compare_sample_to_full(sample, results, row=row)
                                                 for row in ROWS[1:]}}
    path = atomic_write_json(options.results_path, results)
    log(f"wrote {display_path(path)} and {len(evaluation.rankings)} run files in {display_path(options.runs_dir)}")
    return path


def options_for_project(project, **overrides: Any) -> EvaluationOptions:
    """Defaults < the project's readout.yaml `evaluate:` block < command-line overrides."""
    configured = project.evaluation
    known = {f for f in EvaluationOptions.__dataclass_fields__}
    for key in configured:
        if key not in known or key in ("data", "outputs_dir", "output"):
            raise InputError(f"unknown option {key!r} under evaluate:", path=str(project.config_path),
                             field=f"evaluate.{key}")
    data = project.config.get("data")
    options = replace(DEFAULTS, data=project.resolve(data) if data else DEFAULTS.data,
                      outputs_dir=project.outputs_dir, **configured)
    return replace(options, **{key: value for key, value in overrides.items() if value is not None})


def evaluate_project(project, query_set: str = "sample", log: Callable[[str], None] = print) -> Path:
    options = options_for_project(project, query_set=query_set)
    return write_outputs(evaluate(options, log=log), options, log=log)


def results_are_current(project, query_set: str = "sample") -> tuple[bool, str]:
    """Whether outputs/results*.json was made from today's inputs and parameters (for `build`)."""
    import json

    from generator.data import check_dataset_layout, hash_inputs

    options = options_for_project(project, query_set=query_set)
    if not options.results_path.is_file():
        return False, f"{options.results_path.name} does not exist"
    try:
        manifest = json.loads(options.results_path.read_text(encoding="utf-8"))["manifest"]
    except (ValueError, KeyError):
        return False, f"{options.results_path.name} has no readable manifest"
    if manifest.get("parameters") != options.parameters():
        return False, "parameters changed"
    check_dataset_layout(options.data)
    if manifest.get("inputs") != hash_inputs(options.data):
        return False, "input files changed"
    return True, "inputs and parameters unchanged"


def evaluate_command(args) -> int:
    from generator.project import load_project

    project = load_project(args.project)
    options = options_for_project(
        project, data=args.data, query_set=args.queries, dense_model=args.dense_model,
        rerank_model=args.rerank_model, skip_rerank=args.skip_rerank, output=args.output,
        cache_dir=args.cache_dir)
    if options.query_set not in RESULTS_FILE:
        raise InputError(f"unknown query set {options.query_set!r}; choose 'sample' or 'all'", field="--queries")
    if options.skip_rerank and args.skip_rerank:
        options = replace(options, skip_rerank_reason="skipped on request (--skip-rerank)")

    def log(message: str) -> None:
        print(message, file=sys.stderr)

    write_outputs(evaluate(options, log=log), options, log=log)
    return 0
