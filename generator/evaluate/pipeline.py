"""The evaluation stage: the configured rows over one labelled dataset, written to results.json.

`evaluate` is the orchestration (load, retrieve, score, compare) and returns the results document
in memory; `write_outputs` is the edge that writes run files and results.json. Nothing heavy is
imported at module level: the retrieval functions import torch, sentence-transformers and bm25s
when they run.
"""

from __future__ import annotations

import gc
import os
import platform
import sys
from dataclasses import field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Sequence

from generator import __version__
from generator.core.dataclass import dataclass
from generator.storage.errors import InputError, ModelUnavailableError, clip
from generator.evaluate.cost import measure_rerank_cost
from generator.evaluate.currency import UNCHANGED, results_problem, set_problem  # noqa: F401 - set_problem: read here too
from generator.evaluate.distributed import RayEngine
from generator.evaluate.environment import package_versions, thread_count
from generator.core.data_source import identifier_of
from generator.evaluate.irds import ensure_exported
from generator.evaluate.data import Dataset, load_dataset
from generator.core.metrics import ROW_METRICS, Metric, metrics_from_names
from generator.evaluate.models import resolve_device
from generator.core.options import DEFAULT_PRECISION, RESULTS_FILE, EvaluationOptions
from generator.evaluate.sweep import rerank_sweep
from generator.evaluate.row_runner import RowModels, RowRunner, RowRuns, _batch_size, _texts, resolve_row_models
from generator.evaluate.trained_reranker import _corpus_sha256, training_provenance
from generator.core.rows import RowSpec, roles_from_specs
from generator.core.runfiles import QRELS_COPY_NAME, format_qrels, format_run, qrels_copy_entry
from generator.core.comparisons import method_description
from generator.storage.fileio import dumps_json, sha256_bytes, write_set
from generator.storage.paths import default_cache_dir, display_home_path, display_path, reading
from generator.core.results import Results, read_results, seal
from generator.core.results.builders import (evaluation_document, frontier_block, ranked_ids,
                                             rerank_summary, sample_comparison_blocks, score_rows, timing_summary,
                                             with_manifest)
from generator.storage.locks import entry_lock

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
    if without_text := dataset.queries_without_text(query_ids):
        log(empty_queries_warning(without_text))

    specs = options.row_specs()
    roles = roles_from_specs(specs)
    models = resolve_row_models(specs, options)
    _check_comparisons(options.comparisons, roles.names)
    engine = start_engine(options, log)
    try:
        device = engine.resolve_device(options.device) if engine is not None else resolve_device(options.device)
        runs = RowRunner(dataset, query_ids, options, models, cache_dir, device, log, load_cross_encoder,
                         engine).run(specs)
    finally:
        if engine is not None:
            engine.close()
    rerank_costs = {spec.name: _rerank_cost(dataset, runs, models, spec, query_ids, options, device, log)
                    for spec in models.rerank_specs}
    first = models.rerank_specs[0] if models.rerank_specs else None
    candidates = _scored_candidates(runs.rankings[first.over], first.depth) if first and first.over in runs.rankings \
        else None

    judgements = {q: dict(dataset.qrels.scores.get(q, {})) for q in query_ids}
    frontier = _frontier(dataset, runs, models, query_ids, judgements, options, device, log)
    metrics = metrics_from_names(options.metrics) if options.metrics is not None else ROW_METRICS
    quality = score_rows(runs.rows, judgements, query_ids, bootstrap_resamples=options.bootstrap_resamples,
                         seed=options.seed, pairs=options.comparisons, metrics=metrics, baseline=roles.baseline,
                         extra_pairs=roles.rerank_pairs)
    rerank = runs.reranks.get(first.name) if first else None
    identity = dataset.identify()
    results = evaluation_document(
        documents=len(dataset.documents), query_ids=query_ids, query_set=options.query_set,
        candidate_depth=options.depth, quality=quality,
        rerank=rerank_summary(ranked_ids(candidates, query_ids) if candidates is not None else None,
                              rerank.rankings if rerank else None, rerank.milliseconds if rerank else None, query_ids),
        rerank_costs=rerank_costs, frontier=frontier, rankings=runs.rankings,
        query_texts={q: dataset.queries[q] for q in query_ids},
        runs={row: f"{options.runs_dir.name}/{run_file_name(row)}" for row in runs.rankings},
        manifest=_manifest(dataset, identity, query_ids, specs, models, runs, options, device, started_at))
    if identity["differing_inputs"]:
        log(f"note: inputs differ from the published {identity['of']} files "
            f"({', '.join(identity['differing_inputs'])}): this run is not a reproduction of it")
    return Evaluation(results=results, rankings=runs.rankings, judgements=judgements, metrics=tuple(metrics))


def empty_queries_warning(query_ids: Sequence[str], shown: int = 5) -> str:
    """One line naming the evaluated queries that have no text and what the rows do with them."""
    names = ", ".join(clip(query, 40) for query in query_ids[:shown])
    if len(query_ids) > shown:
        names += f", ... ({len(query_ids) - shown} more)"
    if len(query_ids) == 1:
        count, are, them = "1 test query has", "it is", "it"
    else:
        count, are, them = f"{len(query_ids)} test queries have", "they are", "them"
    return (f"warning: {count} no text ({names}): {are} evaluated as {are}; a BM25 row ranks nothing for "
            f"{them} (every metric 0) and a dense row ranks by the embedding of an empty text")


def start_engine(options: EvaluationOptions, log: Callable[[str], None]) -> Any:
    """The Ray engine when `--engine ray` asks for it (generator.evaluate.distributed), else None."""
    if options.engine == "local":
        return None
    return RayEngine(address=options.ray_address, workers=options.workers, log=log)


def _scored_candidates(over: dict[str, list[tuple[str, float]]], depth: int | None) -> dict[str, list]:
    """The candidates a rerank row scores: its over row's top `depth` (all without one)."""
    return {query_id: ranking[:depth] for query_id, ranking in over.items()}


def _rerank_cost(dataset: Dataset, runs: RowRuns, models: RowModels, spec: RowSpec, query_ids: Sequence[str],
                 options: EvaluationOptions, device: str, log: Callable[[str], None]) -> dict[str, Any]:
    """A rerank row's cost: its own times when it ran, else measured by its shape (or not measured)."""
    if spec.over not in runs.rankings:
        return not_measured_cost(spec.model, models.reason(spec.name))
    candidates = _scored_candidates(runs.rankings[spec.over], spec.depth)
    if spec.name in runs.reranks:
        return measured_rerank_cost(models.rerank_identities[spec.name].name, runs.reranks[spec.name].milliseconds,
                                    candidates, query_ids, options, device, spec)
    queries = {q: dataset.queries[q] for q in query_ids}
    return shape_rerank_cost(candidates, spec, queries, _texts(dataset), query_ids, options, device, log)


def _frontier(dataset: Dataset, runs: RowRuns, models: RowModels, query_ids: Sequence[str],
              judgements: dict[str, dict[str, int]], options: EvaluationOptions, device: str,
              log: Callable[[str], None]) -> dict[str, Any] | None:
    """The reranker frontier (generator.core.frontier) of `evaluate.frontier`: every configuration
    priced by its shape on the release sample's candidates of the over row, beside the ceiling of
    its depth. Like any cost by shape it is measured on the release sample only."""
    spec = options.frontier
    if spec is None or options.query_set != "sample":
        return None
    over = spec.over or (models.rerank_specs[0].over if models.rerank_specs else None)
    if over is None or over not in runs.rankings:
        raise InputError(f"the frontier reranks row {over!r}, which is not a measured row here; name one in "
                         "evaluate.frontier.over", field="evaluate.frontier.over")
    texts = _texts(dataset)
    pairs_by_query = {q: [(dataset.queries[q], texts[doc_id]) for doc_id, _ in runs.rankings[over][q]]
                      for q in query_ids}
    if not all(pairs_by_query.values()):
        raise InputError(f"a query has no {over} candidates to price", field="evaluate.frontier.over")
    configurations = rerank_sweep(pairs_by_query, list(spec.models), list(spec.depths), list(spec.max_lengths),
                                  list(spec.precisions), batch_size=spec.batch_size or options.rerank_batch_size,
                                  method=spec.method, repeats=spec.repeats, cache_dir=options.cache_dir, device=device,
                                  progress=options.progress, log=log)
    for configuration in configurations:
        configuration.setdefault("per_query_pairs", {q: min(int(configuration["depth"]), len(pairs_by_query[q]))
                                                     for q in query_ids})
    ranked = {q: [doc_id for doc_id, _ in runs.rankings[over][q]] for q in query_ids}
    return frontier_block(configurations, over, ranked, judgements, query_ids, metrics_from_names([spec.metric])[0])


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
        # Evaluated queries whose text is empty or whitespace (warned about when the run starts).
        "queries_without_text": len(dataset.queries_without_text(query_ids)),
        "rows": [spec.parameters() for spec in specs],
        "models": _models_manifest(specs, models, runs.dense_outcomes, _corpus_sha256(dataset)),
        "caches": {**_dense_cache_manifest(runs.dense_outcomes), **_rerank_cache_manifest(models, runs)},
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
        # The export lives in a cache other processes share, and its set's writer would take another
        # writer's staged files for a killed run's leftovers: one exports, the others wait and re-use it.
        with entry_lock(options.data.with_name(options.data.name + ".lock")):
            ensure_exported(identifier_of(options.data_source), options.data, log)


def _check_comparisons(pairs: Sequence[tuple[str, str]] | None, names: Sequence[str]) -> None:
    for index, pair in enumerate(pairs or ()):
        unknown = [name for name in pair if name not in names]
        if unknown:
            raise InputError(f"no row is named {unknown[0]!r}; the rows are {', '.join(names)}",
                             field=f"evaluate.comparisons[{index}]")


def _models_manifest(specs: Sequence[RowSpec], models: RowModels, dense_outcomes: dict[str, Any],
                     corpus_sha256: str | None = None) -> dict[str, Any]:
    """The first dense row's model under `dense` and the first reranker's under `rerank`, where
    earlier results put them; any further one's under `dense:<row>` or `rerank:<row>`."""
    manifest: dict[str, Any] = {}
    for spec in specs:
        if spec.kind not in ("dense", "rerank"):
            continue
        key = spec.kind if spec.kind not in manifest else f"{spec.kind}:{spec.name}"
        if spec.kind == "dense":
            manifest[key] = {**models.dense[spec.name].as_manifest(),
                             "max_seq_length": dense_outcomes[spec.name].max_seq_length}
        else:
            identity = models.rerank_identities.get(spec.name)
            manifest[key] = (identity.as_manifest() if identity
                             else {"requested": spec.model, "not_measured_reason": models.reason(spec.name)})
            if identity is not None and (training := training_provenance(identity, corpus_sha256)) is not None:
                manifest[key]["training"] = training
    return manifest


def _rerank_cache_manifest(models: RowModels, runs: RowRuns) -> dict[str, Any]:
    """Which queries each rerank row resumed from its cache and which it scored (the first row's
    under the names earlier results used)."""
    entries: dict[str, Any] = {}
    for position, spec in enumerate(models.rerank_specs or (None,)):
        outcome = runs.reranks.get(spec.name) if spec else None
        suffix = "" if position == 0 else f":{spec.name}"
        entries[f"rerank_resumed_queries{suffix}"] = outcome.resumed_queries if outcome else []
        entries[f"rerank_computed_queries{suffix}"] = outcome.computed_queries if outcome else []
    return entries


def _dense_cache_manifest(dense_outcomes: dict[str, Any]) -> dict[str, Any]:
    """Whether the first dense row re-used its cached embeddings, and how long encoding took."""
    if not dense_outcomes:
        return {}
    first = next(iter(dense_outcomes.values()))
    return {"dense_embeddings": "re-used" if first.embeddings_cached else "computed",
            "dense_encode_seconds": first.encode_seconds}


def measured_rerank_cost(model: str, milliseconds: dict[str, float], candidates: dict[str, list[tuple[str, float]]],
                         query_ids: Sequence[str], options: EvaluationOptions, device: str,
                         spec: RowSpec) -> dict[str, Any]:
    """A rerank row's own times, in the same form as a cost measured by shape."""
    per_query_milliseconds = {q: float(milliseconds[q]) for q in query_ids}
    per_query_pairs = {q: len(candidates[q]) for q in query_ids}
    return {"measured": True, "cost": "measured", "quality": "measured", "model": model,
            "weights": "the model's own", "max_length": spec.max_length,
            "batch_size": _batch_size(spec, options), "device": device, "threads": thread_count(),
            **({"depth": spec.depth} if spec.depth is not None else {}),
            **({"precision": spec.precision} if spec.precision is not None else {}),
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
                                          batch_size=_batch_size(spec, options), cache_dir=options.cache_dir,
                                          method="full" if options.rerank_cost == "shape-full" else "extrapolated",
                                          precision=spec.precision or DEFAULT_PRECISION,
                                          device=device, progress=options.progress, log=log)
    except (InputError, ModelUnavailableError) as error:
        log(f"cost by shape: not measured: {error}")
        return not_measured_cost(spec.model, f"its shape could not be built: {error}")
    figures = measurement.as_dict()
    del measurement
    gc.collect()   # the shape's modules sit in reference cycles (generator.evaluate.sweep)
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
    last (generator.storage.fileio.write_set): results.json records the sha256 of every file of its set,
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
    results = with_manifest(evaluation.results, metrics={metric.name: metric.as_manifest() for metric in metrics},
                            run_files=run_files,
                            qrels_copy=qrels_copy_entry(qrels_path.relative_to(outputs_root).as_posix(), qrels_data,
                                                        evaluation.judgements))
    if sample_path is not None:
        sample, comparisons = _sample_comparisons(sample_path, results)
        results = with_manifest({**results, **comparisons},
                                compared_with={"path": sample_path.name, "sha256": sample.sha256})
    results = seal(results, writer=f"readout evaluate {__version__}")
    files.append((results_path, dumps_json(results).encode("utf-8")))
    write_set(files)
    return results_path


def _sample_comparisons(sample_path: Path, results: dict[str, Any]) -> tuple[Results, dict[str, Any]]:
    with reading(sample_path):
        sample = read_results(sample_path)
        try:
            return sample, sample_comparison_blocks(sample.data, results)
        except ValueError as error:
            raise InputError(f"cannot compare with the release sample: {error}",
                             path=display_path(sample_path)) from None


def run_and_write(options: EvaluationOptions, log: Callable[[str], None] = print) -> Path:
    """Evaluate and write the outputs: what `readout evaluate` and `readout build` do."""
    return write_outputs(evaluate(options, log=log), options, log=log)


def results_are_current(options: EvaluationOptions) -> tuple[bool, str]:
    """Whether the results file was made from today's inputs, run files and parameters (for
    `build`; generator.evaluate.currency compares them by content)."""
    problem = results_problem(options)
    return (True, UNCHANGED) if problem is None else (False, problem)
