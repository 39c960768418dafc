"""The commands that run the scorer and the models: `selftest` (the scorer against the spec's
fixtures), `evaluate` (the benchmark, written as results.json), `cost` (a reranker priced by its
shape) and `train-reranker` (a cross-encoder fine-tuned on the corpus alone). Each imports the
evaluation stage inside its own function, so no other command loads torch."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from generator.commands.cli import EXIT_FINDINGS, EXIT_OK, print_lines, project_argument
from generator.storage.errors import InputError
from generator.storage.fileio import dumps_json
from generator.storage.paths import display_path, path_option


# --- selftest -------------------------------------------------------------------------------


def configure_selftest(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--mutant", action="store_true",
        help="run the same fixtures against a deliberately broken nDCG (ideal counts only the "
             "relevant documents retrieved); the self-test must then FAIL and exit 1")


def run_selftest(args: argparse.Namespace) -> int:
    from generator.core.selftest import MUTANT_NOTICE, run_checks
    
    if args.mutant:
        print(MUTANT_NOTICE)
    results = run_checks(mutant=args.mutant)
    print_lines([result.line() for result in results], sys.stdout)
    failed = [result for result in results if not result.passed]
    if failed:
        print(f"{len(failed)} of {len(results)} checks FAILED")
        return EXIT_FINDINGS
    print("ALL CHECKS PASS")
    return EXIT_OK


# --- evaluate -------------------------------------------------------------------------------


def configure_evaluate(parser: argparse.ArgumentParser) -> None:
    from generator.core.options import ENCODE_BATCH_SIZE, QUERY_SETS, RERANK_COST
    
    project_argument(parser, "project directory holding readout.yaml and outputs/ (default: .)")
    parser.add_argument("--data", type=path_option, default=None,
                        help="BEIR dataset directory (corpus.jsonl, queries.jsonl, qrels/test.tsv); "
                             "default: the project's readout.yaml `data`")
    parser.add_argument("--queries", default=None, choices=QUERY_SETS,
                        help="'sample' (first 20 test queries in qrels order, the release sample) "
                             "or 'all' (every test query, written to readout.yaml's evaluate.all_results, "
                             "default results-all.json)")
    parser.add_argument("--dense-model", default=None,
                        help="bi-encoder: hub name, local path or alias (default BAAI/bge-small-en-v1.5; "
                             "alias 'minilm-offline' is the packaged all-MiniLM-L6-v2)")
    parser.add_argument("--rerank-model", default=None,
                        help="cross-encoder: hub name or local path (default BAAI/bge-reranker-v2-m3)")
    parser.add_argument("--skip-rerank", action="store_true", default=None,
                        help="record the rerank row as not measured instead of running it")
    parser.add_argument("--output", type=path_option, default=None,
                        help="results file (default outputs/results.json, or outputs/results-all.json "
                             "with --queries all)")
    parser.add_argument("--cache-dir", type=path_option, default=None,
                        help="embedding and rerank-score cache (default ~/.cache/readout or $READOUT_CACHE)")
    _runtime_arguments(parser)
    parser.add_argument("--encode-batch-size", type=int, default=None,
                        help=f"texts per forward pass of the dense encoder (default {ENCODE_BATCH_SIZE})")
    _engine_arguments(parser)
    parser.add_argument("--rerank-cost", default=None, choices=RERANK_COST,
                        help="when the rerank row does not run: 'shape' measures the reranker's cost from its "
                             "architecture with random weights (quality stays not measured), 'none' does not "
                             "(default: readout.yaml's evaluate.rerank_cost, else none)")


def _runtime_arguments(parser: argparse.ArgumentParser) -> None:
    from generator.core.options import DEVICES, RERANK_BATCH_SIZE
    
    parser.add_argument("--device", default=None, choices=DEVICES,
                        help="auto picks cuda, then mps, then cpu (default: readout.yaml's evaluate.device, "
                             "else auto)")
    parser.add_argument("--batch-size", type=int, default=None,
                        help=f"reranker pairs per forward pass (default: readout.yaml's "
                             f"evaluate.rerank_batch_size, else {RERANK_BATCH_SIZE})")


def _engine_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--engine", default="local", choices=("local", "ray"),
                        help="where corpus encoding and reranking run: this process (default) or Ray Data workers "
                             "(pip install 'traced-readout[ray]'); the figures are the same")
    parser.add_argument("--ray-address", default=None, metavar="ADDRESS",
                        help="with --engine ray: the cluster to join (auto on a node of it, or the head's HOST:6379; "
                             "not a ray:// Ray Client address, through which Ray Data does not run); "
                             "default: start a local one on this machine")
    parser.add_argument("--workers", type=int, default=None,
                        help="with --engine ray: workers, one model each (default: a local cluster's CPUs, "
                             "or every CPU of the cluster joined)")


def _engine_options(args: argparse.Namespace) -> dict[str, Any]:
    if args.engine != "ray" and (args.ray_address is not None or args.workers is not None):
        option = "--ray-address" if args.ray_address is not None else "--workers"
        raise InputError(f"{option} is for --engine ray", field=option)
    return {"engine": args.engine, "ray_address": args.ray_address, "workers": _positive(args.workers, "--workers")}


def _positive(value: int | None, option: str) -> int | None:
    if value is not None and not 1 <= value <= 65_536:
        raise InputError(f"expected a positive integer up to 65,536, got {value}", field=option)
    return value


def run_evaluate(args: argparse.Namespace) -> int:
    from generator.core.options import SKIP_RERANK_REASON
    from generator.evaluate.pipeline import run_and_write
    from generator.storage.locks import outputs_lock
    from generator.project import load_project

    project = load_project(args.project)
    project.require_kind("beir", "evaluate")
    options = project.evaluation_options(
        data=args.data, query_set=args.queries, dense_model=args.dense_model, rerank_model=args.rerank_model,
        skip_rerank=args.skip_rerank, output=args.output, cache_dir=args.cache_dir, device=args.device,
        rerank_batch_size=_positive(args.batch_size, "--batch-size"), rerank_cost=args.rerank_cost,
        encode_batch_size=_positive(args.encode_batch_size, "--encode-batch-size"),
        # A reason configured in readout.yaml describes the configured skip, not one asked for here.
        skip_rerank_reason=SKIP_RERANK_REASON if args.skip_rerank else None, **_engine_options(args))
    with outputs_lock(options.results_path.parent):
        run_and_write(options, log=lambda message: print(message, file=sys.stderr))
    return EXIT_OK


# --- cost -----------------------------------------------------------------------------------


def configure_cost(parser: argparse.ArgumentParser) -> None:
    from generator.core.options import QUERY_SETS
    
    parser.add_argument("names", nargs="+", metavar="MODEL [PROJECT]",
                        help="one or more rerankers: a built-in shape (BAAI/bge-reranker-v2-m3, -large, -base, "
                             "cross-encoder/ms-marco-MiniLM-L-12-v2, -L-6-v2), a directory holding its "
                             "config.json, or a hub name (config.json from the Hugging Face cache or hub); then "
                             "the project directory whose outputs/ hold the run the reranker reorders, when the "
                             "last name holds a readout.yaml (default: .)")
    parser.add_argument("--depth", default=None,
                        help="comma-separated candidate depths for a cost curve, e.g. 10,20,50 "
                             "(default: every candidate, one measurement)")
    parser.add_argument("--queries", default=None, choices=QUERY_SETS,
                        help="'sample' (the release sample, results.json) or 'all' (every test query)")
    parser.add_argument("--max-length", default=None,
                        help="tokens per pair after truncation, comma-separated for a sweep, e.g. 256,512 "
                             "(default 512, or readout.yaml's evaluate.rerank_max_length)")
    parser.add_argument("--method", choices=("extrapolated", "full"), default="extrapolated",
                        help="extrapolated (default): time the shape cut to 0 and 2 layers and fit the line to "
                             "its depth; full: time every layer (minutes per query for a 24-layer shape)")
    parser.add_argument("--precision", default="fp32",
                        help="comma-separated fp32 and/or int8 (PyTorch dynamic quantization of the linear "
                             "layers) (default fp32)")
    _runtime_arguments(parser)
    parser.add_argument("--cache-dir", type=path_option, default=None,
                        help="per-query timing cache (default ~/.cache/readout or $READOUT_CACHE)")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="text for people (default), json for machines")


def run_cost(args: argparse.Namespace) -> int:
    from generator.core.options import PRECISIONS
    from generator.evaluate.candidates import rerank_candidate_pairs
    from generator.evaluate.pipeline import prepare_data
    from generator.evaluate.cost import cost_curve, measure_rerank_cost
    from generator.evaluate.cost_report import (depths_from_text, format_curve, format_measurement, format_sweep,
                                                max_lengths_from_text, precisions_from_text)
    from generator.evaluate.sweep import rerank_sweep
    from generator.project import load_project

    depths = depths_from_text(args.depth) if args.depth is not None else None
    lengths = max_lengths_from_text(args.max_length) if args.max_length is not None else None
    precisions = precisions_from_text(args.precision, PRECISIONS)
    # The last name is the project when it holds one; otherwise every name is a model.
    names = list(args.names)
    project_dir = path_option(names.pop()) if len(names) > 1 and (Path(names[-1]) / "readout.yaml").is_file() \
        else Path(".")
    project = load_project(project_dir)
    project.require_kind("beir", "cost")
    options = project.evaluation_options(query_set=args.queries, cache_dir=args.cache_dir,
                                         rerank_max_length=lengths[0] if lengths else None, device=args.device,
                                         rerank_batch_size=args.batch_size)
    prepare_data(options, log=lambda message: print(message, file=sys.stderr))
    candidates = rerank_candidate_pairs(options.results_path, options.data)
    # The rerank row's own max_length, where readout.yaml gives it one, unless --max-length says otherwise.
    rerank_row = next((spec for spec in options.row_specs() if spec.kind == "rerank"), None)
    lengths = lengths or [rerank_row.max_length if rerank_row else options.rerank_max_length]
    log = lambda message: print(message, file=sys.stderr)  # noqa: E731
    common = dict(batch_size=options.rerank_batch_size, method=args.method, cache_dir=options.cache_dir,
                  device=options.device, progress=options.progress, log=log)
    sweep = len(names) > 1 or len(lengths) > 1 or len(precisions) > 1
    try:
        if sweep:
            deepest = max(len(pairs) for pairs in candidates.pairs_by_query.values())
            figures = rerank_sweep(candidates.pairs_by_query, names, depths or [deepest], lengths, precisions,
                                   **common)
        elif depths is None:
            figures = measure_rerank_cost(candidates.pairs_by_query, names[0], max_length=lengths[0],
                                          precision=precisions[0], **common).as_dict()
        else:
            figures = cost_curve(candidates.pairs_by_query, names[0], depths, max_length=lengths[0],
                                 precision=precisions[0], **common).as_dict()
    except InputError as error:
        # Name the option when that is where the bad value came from.
        if error.field in ("max_length", "batch_size", "depth", "precision", "method"):
            raise InputError(error.reason, field="--" + error.field.replace("_", "-")) from None
        raise
    if args.format == "json":
        sys.stdout.write(dumps_json(figures))
    elif sweep:
        sys.stdout.write(format_sweep(figures))
    else:
        sys.stdout.write(format_measurement(figures) if depths is None else format_curve(figures))
    return EXIT_OK


# --- train-reranker ---------------------------------------------------------------------------


def configure_train_reranker(parser: argparse.ArgumentParser) -> None:
    from generator.evaluate import training as t

    project_argument(parser, "project directory: its readout.yaml names the data (unless --data does) and "
                              f"the model goes to its {t.MODELS_DIR}/ (default: .)")
    parser.add_argument("--data", type=path_option, default=None,
                        help="BEIR dataset directory, of which only corpus.jsonl is read (default: the project's "
                             "readout.yaml `data`; with --data, readout.yaml is not read)")
    parser.add_argument("--base-model", default=t.DEFAULT_BASE_MODEL,
                        help="encoder to start from: an alias, a local directory or a Hugging Face name "
                             f"(default {t.DEFAULT_BASE_MODEL}, the packaged all-MiniLM-L6-v2)")
    parser.add_argument("--output", type=path_option, default=None,
                        help=f"model directory to write (default PROJECT/{t.MODELS_DIR}/<data folder>"
                             f"{t.OUTPUT_SUFFIX})")
    parser.add_argument("--force", action="store_true",
                        help="replace an output directory an earlier train-reranker wrote")
    parser.add_argument("--steps", type=int, default=t.DEFAULT_STEPS,
                        help=f"optimizer steps (default {t.DEFAULT_STEPS}); one step is one batch")
    parser.add_argument("--batch-size", type=int, default=t.DEFAULT_BATCH_SIZE,
                        help=f"pairs per step (default {t.DEFAULT_BATCH_SIZE})")
    parser.add_argument("--max-length", type=int, default=t.DEFAULT_MAX_LENGTH,
                        help=f"tokens per (title, text) pair after truncation (default {t.DEFAULT_MAX_LENGTH})")
    parser.add_argument("--learning-rate", type=float, default=t.DEFAULT_LEARNING_RATE,
                        help=f"peak learning rate, after a linear warm-up over the first "
                             f"{round(t.WARMUP_FRACTION * 100)}%% of the steps (default {t.DEFAULT_LEARNING_RATE})")
    parser.add_argument("--negatives", type=int, default=t.DEFAULT_NEGATIVES,
                        help=f"BM25 hard negatives per title (default {t.DEFAULT_NEGATIVES})")
    parser.add_argument("--seed", type=int, default=t.DEFAULT_SEED,
                        help=f"seeds the new classification head, the batch order and any random negative "
                             f"(default {t.DEFAULT_SEED})")


def run_train_reranker(args: argparse.Namespace) -> int:
    from generator.evaluate.data import CORPUS_FILE, check_dataset_layout, input_file
    from generator.evaluate.progress import format_duration
    from generator.evaluate.training import TrainingRecipe, corpus_label, default_output_dir, train_reranker
    from generator.project import load_project

    data, source, root = args.data, None, args.project
    if data is None:
        project = load_project(args.project)
        project.require_kind("beir", "train-reranker")
        options = project.evaluation_options()
        data, source, root = options.data, options.data_source, project.root
        if source and not (data / CORPUS_FILE).is_file():
            raise InputError(f"{source} is not exported yet; `readout evaluate` exports it once "
                             "(train-reranker reads only its corpus.jsonl)", field="data")
    recipe = TrainingRecipe(base_model=args.base_model, steps=args.steps, batch_size=args.batch_size,
                            max_length=args.max_length, learning_rate=args.learning_rate,
                            negatives_per_title=args.negatives, seed=args.seed)
    label = corpus_label(data, source)
    output = args.output or default_output_dir(root, label)
    if not data.is_dir():
        check_dataset_layout(data)   # the one-line refusal of a folder that is not there
    outcome = train_reranker(data / input_file(data, CORPUS_FILE), output, recipe, corpus_name=label, force=args.force,
                             log=lambda message: print(message, file=sys.stderr), tty=sys.stderr.isatty())
    record = outcome.record
    negatives = record["recipe"]["negatives"]
    loss = record["training_loss"]["logged"]
    print(f"wrote {display_path(outcome.output)}: a cross-encoder fine-tuned from {args.base_model} "
          f"(weights sha256 {record['weights_sha256'][:12]}); training.json holds the recipe")
    print(f"pairs: {record['recipe']['training_pairs']:,} from {record['corpus']['documents']:,} documents of "
          f"{label} ({record['recipe']['positives']['count']:,} title-text positives, {negatives['bm25_count']:,} "
          f"BM25 negatives, {negatives['random_count']:,} random); no query or relevance judgement read")
    print(f"steps: {recipe.steps:,} of {recipe.batch_size} pairs (max_length {recipe.max_length}, learning rate "
          f"{recipe.learning_rate:g}, seed {recipe.seed}), {record['recipe']['passes_over_pairs']:g} passes "
          f"over the pairs")
    if loss:
        print(f"loss: {loss[0]['loss']:.4f} to step {loss[0]['step']}, {loss[-1]['loss']:.4f} to step "
              f"{loss[-1]['step']} (each the mean since the step logged before; {record['training_loss']['mean']:.4f} "
              f"over the run)")
    seconds = record["wall_seconds"]
    print(f"time: {format_duration(seconds['total'])} ({seconds['reading_and_mining']:.1f} s reading and mining, "
          f"{format_duration(seconds['training'])} training on {record['device']}, {record['threads']} threads)")
    return EXIT_OK
