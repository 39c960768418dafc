"""The evaluation stage: the configured rows over one labelled dataset, written to results.json.

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
from pathlib import Path
from typing import Any, Callable, Sequence

from generator import __version__
from generator.errors import InputError, ModelUnavailableError
from generator.evaluate.cache import EmbeddingCache, RerankCache
from generator.evaluate.cost import measure_rerank_cost
from generator.evaluate.environment import package_versions, thread_count
from generator.core.data_source import identifier_of
from generator.evaluate.irds import ensure_exported
from generator.evaluate.data import Dataset, check_dataset_layout, hash_inputs, load_dataset
from generator.core.metrics import ROW_METRICS, Metric, metrics_from_names
from generator.core.metrics import timing_summary
from generator.evaluate.models import resolve_device, resolve_model
from generator.core.options import RESULTS_FILE, EvaluationOptions
from generator.evaluate.retrieval import dense_rankings, fused_rankings, rerank_rankings, sparse_rankings
from generator.core.rows import RowSpec, roles_from_specs
from generator.core.runfiles import QRELS_COPY_NAME, format_qrels, format_run, qrels_copy_entry, read_supplied_run
from generator.core.sample_check import sample_comparisons
from generator.core.scoring import RowRun, rerank_summary, score_rows
from generator.core.comparisons import method_description
from generator.fileio import default_cache_dir, display_home_path, display_path, dumps_json, reading, sha256_bytes, sha256_file, write_set
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
    """Run the configured rows and build the results document (nothing is written here)."""
    started_at = _now()
    if dataset is None:
        prepare_data(options, log)
    dataset = dataset or load_dataset(options.data)
    query_ids = dataset.select_queries(options.query_set, size=options.sample_size, order=options.sample_order,
                                       seed=options.sample_seed)
    cache_dir = options.cache_dir or default_cache_dir()
    log(f"{len(dataset.documents)} documents, {len(query_ids)} queries ({options.query_set}); "
        f"cache {display_home_path(cache_dir)}")

    specs = options.row_specs()
    roles = roles_from_specs(specs)
    models = resolve_row_models(specs, options)
    _check_comparisons(options.comparisons, roles.names)
    device = resolve_device(options.device)
    runs = RowRunner(dataset, query_ids, options, models, cache_dir, device, log, load_cross_encoder).run(specs)
    rerank_spec = models.rerank_spec
    candidates = runs.rankings[rerank_spec.over] if rerank_spec else None
    rerank_cost = _rerank_cost(dataset, runs, models, candidates, query_ids, options, device, log)

    judgements = {q: dict(dataset.qrels.scores.get(q, {})) for q in query_ids}
    metrics = metrics_from_names(options.metrics) if options.metrics is not None else ROW_METRICS
    scored = score_rows(runs.rows, judgements, query_ids, bootstrap_resamples=options.bootstrap_resamples,
                        seed=options.seed, pairs=options.comparisons, metrics=metrics, baseline=roles.baseline,
                        extra_pairs=[(roles.rerank, roles.rerank_over)] if roles.rerank else [])
    rerank = runs.rerank
    identity = dataset.identify()
    results: dict[str, Any] = {
        "documents": len(dataset.documents),
        "queries": len(query_ids),
        "query_set": options.query_set,
        "candidate_depth": options.depth,
        **scored,
        **rerank_summary(candidates, rerank.rankings if rerank else None, rerank.milliseconds if rerank else None,
                         query_ids),
        "rerank_cost": rerank_cost,
        # A query a row found no candidate for has no line in that row's run file: plain trec_eval
        # then averages over fewer queries; `trec_eval -c` (and this tool) count it as zero.
        "queries_without_candidates": {row: [q for q in query_ids if not runs.rankings[row].get(q)]
                                       for row in sorted(runs.rankings)},
        # The queries' own words, so a reader of the per-query table sees what was asked.
        "query_texts": {q: dataset.queries[q] for q in query_ids},
        "runs": {row: f"{options.runs_dir.name}/{run_file_name(row)}" for row in runs.rankings},
        "manifest": _manifest(dataset, identity, query_ids, specs, models, runs, options, device, started_at),
    }
    if identity["differing_inputs"]:
        log(f"note: inputs differ from the published {identity['of']} files "
            f"({', '.join(identity['differing_inputs'])}): this run is not a reproduction of it")
    return Evaluation(results=results, rankings=runs.rankings, judgements=judgements, metrics=tuple(metrics))


@dataclass
class RowModels:
    """The models of the configured rows, resolved before the long work starts so that a missing
    model fails in seconds: each dense row's, and the reranker's (or why it does not run)."""
    dense: dict[str, Any]
    rerank_spec: RowSpec | None
    rerank_identity: Any = None
    rerank_reason: str | None = None


def resolve_row_models(specs: Sequence[RowSpec], options: EvaluationOptions) -> RowModels:
    rerank_spec = next((spec for spec in specs if spec.kind == "rerank"), None)
    models = RowModels({spec.name: resolve_model(spec.model) for spec in specs if spec.kind == "dense"}, rerank_spec)
    if rerank_spec is None:
        models.rerank_reason = "no rerank row is configured (evaluate.rows)"
    elif options.skip_rerank:
        models.rerank_reason = options.skip_rerank_reason
    else:
        try:
            models.rerank_identity = resolve_model(rerank_spec.model)
        except ModelUnavailableError as error:
            raise ModelUnavailableError(f"{error}; or run with --skip-rerank to record the {rerank_spec.name} "
                                        "row as not measured") from None
    return models


@dataclass
class RowRuns:
    """What running the rows gave: each row's rankings, and what the manifest says about them."""
    rankings: dict[str, dict[str, list[tuple[str, float]]]] = field(default_factory=dict)
    rows: list[RowRun] = field(default_factory=list)
    dense_outcomes: dict[str, Any] = field(default_factory=dict)
    rerank: Any = None
    supplied: dict[str, dict[str, str]] = field(default_factory=dict)


@dataclass
class RowRunner:
    """Runs each configured row in order, one method per kind; a row reads the rankings of the rows
    above it."""
    dataset: Dataset
    query_ids: Sequence[str]
    options: EvaluationOptions
    models: RowModels
    cache_dir: Path
    device: str
    log: Callable[[str], None]
    load_cross_encoder: Callable | None = None

    def run(self, specs: Sequence[RowSpec]) -> RowRuns:
        self.queries = {q: self.dataset.queries[q] for q in self.query_ids}
        self.runs = RowRuns()
        for spec in specs:
            rankings, model_name = getattr(self, f"_{spec.kind}")(spec)
            if rankings is not None:
                self.runs.rankings[spec.name] = rankings
            self.runs.rows.append(RowRun(spec.name, spec.label(self.options.depth, model_name), rankings,
                                         self.models.rerank_reason if spec.kind == "rerank" else None))
        return self.runs

    def _dense(self, spec: RowSpec) -> tuple[Any, str | None]:
        identity = self.models.dense[spec.name]
        outcome = dense_rankings(self.dataset.documents, self.queries, identity, self.options.depth,
                                 EmbeddingCache(self.cache_dir), progress=self.options.progress, log=self.log,
                                 device=self.device, batch_size=self.options.encode_batch_size)
        self.runs.dense_outcomes[spec.name] = outcome
        return outcome.rankings, identity.name

    def _sparse(self, spec: RowSpec) -> tuple[Any, str | None]:
        self.log(f"{spec.name}: indexing with bm25s")
        return sparse_rankings(self.dataset.documents, self.queries, self.options.depth, k1=spec.k1, b=spec.b), None

    def _fusion(self, spec: RowSpec) -> tuple[Any, str | None]:
        return fused_rankings([self.runs.rankings[name] for name in spec.of], spec.method, self.options.depth,
                              k=spec.k, alpha=spec.alpha), None

    def _rerank(self, spec: RowSpec) -> tuple[Any, str | None]:
        identity = self.models.rerank_identity
        if identity is None:
            return None, None
        self.runs.rerank = rerank_rankings(self.runs.rankings[spec.over], self.queries, _texts(self.dataset), identity,
                                           spec.max_length, RerankCache(self.cache_dir, identity.cache_key),
                                           progress=self.options.progress, log=self.log,
                                           load_model=self.load_cross_encoder, device=self.device,
                                           batch_size=self.options.rerank_batch_size)
        return self.runs.rerank.rankings, identity.name

    def _run(self, spec: RowSpec) -> tuple[Any, str | None]:
        shown = display_path(spec.file)
        if not spec.file.is_file():
            raise InputError("run file not found", path=shown, field=f"evaluate.rows.{spec.name}.file")
        documents = {document.doc_id for document in self.dataset.documents}
        rankings = read_supplied_run(spec.file, shown, queries=self.dataset.queries, documents=documents,
                                     depth=self.options.depth, query_ids=self.query_ids)
        self.runs.supplied[spec.name] = {
            "path": os.path.relpath(spec.file.resolve(), self.options.outputs_dir.resolve().parent),
            "sha256": sha256_file(spec.file)}
        return rankings, None


def _texts(dataset: Dataset) -> dict[str, str]:
    return {document.doc_id: document.retrieval_text for document in dataset.documents}


def _rerank_cost(dataset: Dataset, runs: RowRuns, models: RowModels,
                 candidates: dict[str, list[tuple[str, float]]] | None, query_ids: Sequence[str],
                 options: EvaluationOptions, device: str, log: Callable[[str], None]) -> dict[str, Any]:
    """The reranker's cost: its own times when it ran, else measured by its shape (or not measured)."""
    spec = models.rerank_spec
    if runs.rerank is not None:
        return measured_rerank_cost(models.rerank_identity.name, runs.rerank.milliseconds, candidates, query_ids,
                                    options, device, spec.max_length)
    if spec is None:
        return not_measured_cost(None, models.rerank_reason)
    queries = {q: dataset.queries[q] for q in query_ids}
    return shape_rerank_cost(candidates, spec, queries, _texts(dataset), query_ids, options, device, log)


def _manifest(dataset: Dataset, identity: dict[str, Any], query_ids: Sequence[str], specs: Sequence[RowSpec],
              models: RowModels, runs: RowRuns, options: EvaluationOptions, device: str,
              started_at: str) -> dict[str, Any]:
    """What a reader needs to reproduce the figures: inputs, parameters, models, machine, times."""
    return {
        "inputs": dataset.input_hashes,
        # Relative to the project, so the manifest does not depend on where the clone lives; an
        # ir_datasets export is named by its identifier, not by where this machine caches it.
        **({"data_source": options.data_source} if options.data_source else
           {"data_directory": os.path.relpath(options.data.resolve(), options.outputs_dir.resolve().parent)}),
        "reproduction": identity,
        "parameters": options.parameters(),
        "runtime": options.runtime(device),
        # Where each supplied run came from; its rows are re-written in runs/ like any other.
        **({"supplied_runs": runs.supplied} if runs.supplied else {}),
        "query_ids": list(query_ids),
        # BEIR reads a negative grade as not relevant; how many the qrels hold is said, not hidden.
        "negative_judgements": dataset.negative_judgements,
        "per_query_key": "per_query",
        "rows": [spec.parameters() for spec in specs],
        "models": _models_manifest(specs, models.dense, runs.dense_outcomes, models.rerank_identity,
                                   models.rerank_reason),
        "caches": {**_dense_cache_manifest(runs.dense_outcomes),
                   "rerank_resumed_queries": runs.rerank.resumed_queries if runs.rerank else [],
                   "rerank_computed_queries": runs.rerank.computed_queries if runs.rerank else []},
        "uncertainty": method_description(options.bootstrap_resamples, options.seed),
        "packages": package_versions(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "threads": thread_count(),
        "started_at": started_at,
        "finished_at": _now(),
    }


def prepare_data(options: EvaluationOptions, log: Callable[[str], None] = print) -> None:
    """An `irds:` dataset is exported to its BEIR folder first (once; generator.evaluate.irds)."""
    if options.data_source:
        ensure_exported(identifier_of(options.data_source), options.data, log)


def _check_comparisons(pairs: Sequence[tuple[str, str]] | None, names: Sequence[str]) -> None:
    for index, pair in enumerate(pairs or ()):
        unknown = [name for name in pair if name not in names]
        if unknown:
            raise InputError(f"no row is named {unknown[0]!r}; the rows are {', '.join(names)}",
                             field=f"evaluate.comparisons[{index}]")


def _models_manifest(specs: Sequence[RowSpec], identities: dict[str, Any], dense_outcomes: dict[str, Any],
                     rerank_identity: Any, rerank_reason: str | None) -> dict[str, Any]:
    """The first dense row's model under `dense` and the reranker's under `rerank`, where
    earlier results put them; any further dense row's under `dense:<row>`."""
    models: dict[str, Any] = {}
    for spec in specs:
        if spec.kind == "dense":
            key = "dense" if "dense" not in models else f"dense:{spec.name}"
            models[key] = {**identities[spec.name].as_manifest(),
                           "max_seq_length": dense_outcomes[spec.name].max_seq_length}
        elif spec.kind == "rerank":
            models["rerank"] = (rerank_identity.as_manifest() if rerank_identity
                                else {"requested": spec.model, "not_measured_reason": rerank_reason})
    return models


def _dense_cache_manifest(dense_outcomes: dict[str, Any]) -> dict[str, Any]:
    """Whether the first dense row re-used its cached embeddings, and how long encoding took."""
    if not dense_outcomes:
        return {}
    first = next(iter(dense_outcomes.values()))
    return {"dense_embeddings": "re-used" if first.embeddings_cached else "computed",
            "dense_encode_seconds": first.encode_seconds}


def measured_rerank_cost(model: str, milliseconds: dict[str, float], candidates: dict[str, list[tuple[str, float]]],
                         query_ids: Sequence[str], options: EvaluationOptions, device: str,
                         max_length: int) -> dict[str, Any]:
    """The rerank row's own times, in the same form as a cost measured by shape."""
    per_query_milliseconds = {q: float(milliseconds[q]) for q in query_ids}
    per_query_pairs = {q: len(candidates[q]) for q in query_ids}
    return {"measured": True, "cost": "measured", "quality": "measured", "model": model,
            "weights": "the model's own", "max_length": max_length,
            "batch_size": options.rerank_batch_size, "device": device, "threads": thread_count(),
            **timing_summary(per_query_milliseconds, per_query_pairs),
            "per_query_milliseconds": per_query_milliseconds, "per_query_pairs": per_query_pairs}


def not_measured_cost(model: str | None, reason: str) -> dict[str, Any]:
    return {"measured": False, "cost": "not measured", "quality": "not measured", "model": model,
            "not_measured_reason": reason}


def shape_rerank_cost(candidates: dict[str, list[tuple[str, float]]], spec: RowSpec, queries: dict[str, str],
                      texts: dict[str, str], query_ids: Sequence[str], options: EvaluationOptions, device: str,
                      log: Callable[[str], None]) -> dict[str, Any]:
    """The reranker's cost measured by its shape on the pairs it would score (the candidates of
    the row it reranks), when its weights did not run.

    Its quality stays not measured: random weights give times, never rankings. The measurement
    takes minutes per query for a large model, so it runs on the release sample only and resumes
    from its per-query cache (generator.evaluate.cost).
    """
    if options.rerank_cost == "none":
        return not_measured_cost(spec.model, "the rerank row did not run and readout.yaml asks for no "
                                             "cost by shape (evaluate.rerank_cost: none)")
    if options.query_set != "sample":
        return not_measured_cost(spec.model, "cost by shape is measured on the release sample only "
                                             f"({RESULTS_FILE['sample']})")
    pairs_by_query = {q: [(queries[q], texts[doc_id]) for doc_id, _ in candidates.get(q, [])] for q in query_ids}
    if not all(pairs_by_query.values()):
        return not_measured_cost(spec.model, f"a query has no {spec.over} candidates to score")
    try:
        measurement = measure_rerank_cost(pairs_by_query, spec.model, max_length=spec.max_length,
                                          batch_size=options.rerank_batch_size, cache_dir=options.cache_dir,
                                          device=device, progress=options.progress, log=log)
    except (InputError, ModelUnavailableError) as error:
        log(f"cost by shape: not measured: {error}")
        return not_measured_cost(spec.model, f"its shape could not be built: {error}")
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
                "qrels_copy": qrels_copy_entry(qrels_path.relative_to(outputs_root).as_posix(), qrels_data,
                                               evaluation.judgements)}
    if sample_path is not None:
        sample, comparisons = _sample_comparisons(sample_path, {**results, "manifest": manifest})
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
