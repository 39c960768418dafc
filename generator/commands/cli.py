"""The `readout` command line: the only layer that prints and picks exit codes.

Every command body does the same four things: load its input (usually the project), make one
library call, format what came back, and return an exit code: 0 success, 1 findings (read from
the returned result: an untraceable claim, a stale output, a failed self-test, an invalid
sandbox run), 2 usage or input error, 130 interrupted (Ctrl-C), 143 terminated (SIGTERM). Library
code raises; `main` maps every exception through `exit_code_for`, the one map, and prints it as one
line (the traceback only with `--debug` or `READOUT_DEBUG=1`). SIGTERM raises `Terminated`, a
KeyboardInterrupt, so `kill` unwinds a command exactly as Ctrl-C does: every temporary removed,
every lock released, one line.

A command that writes a project's outputs (`evaluate`, `build`, `render`, `sandbox`) holds that
directory's write lock while it runs (generator.storage.locks); a second one stops at once with exit 2.
`check` and `render --check` write no output and take no lock.

Each command imports only what it runs: its modules are imported inside its own functions, and
only the chosen command's options are configured, so `check` starts without the renderer, Jinja
or NumPy, `render` without the evaluation stage, and nothing but `evaluate`, `cost` and `build`
loads torch (tests/test_architecture.py holds each command to its import set).
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import signal
import sys
import traceback
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, NoReturn, Sequence, TextIO

from generator import __version__
from generator.storage.errors import InputError, ReadoutError
from generator.storage.fileio import LINK_LOOP, display_path, dumps_json, path_option

if TYPE_CHECKING:
    from generator.render.renderer import RenderOutcome
    from generator.sandbox.runner import SandboxOutcome

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
# 128 + SIGTERM, what a shell reports for a process the signal ended.
EXIT_TERMINATED = 143


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where SIGINT raises KeyboardInterrupt: every `except BaseException` that
    removes a temporary, every lock's release and subprocess's own handling of an interrupt then
    run for `kill` exactly as for Ctrl-C, where the default action would end the process on the
    spot, temporaries and all."""


# The one exception-to-exit-code map, most specific first. Findings are never exceptions: a
# command reads them from the result it got back.
EXCEPTION_EXIT_CODES: tuple[tuple[type[BaseException], int], ...] = (
    (Terminated, EXIT_TERMINATED),
    (KeyboardInterrupt, EXIT_INTERRUPTED),
    (ReadoutError, EXIT_USAGE),
    (Exception, EXIT_USAGE),
)


def exit_code_for(error: BaseException) -> int:
    for kind, code in EXCEPTION_EXIT_CODES:
        if isinstance(error, kind):
            return code
    raise error


ERROR_LINE_MAX = 300


def error_line(error: BaseException) -> str:
    """One line of at most ERROR_LINE_MAX characters for any exception: the library's own message,
    or, for anything unexpected, the file it came from and what (a value echoed from a hostile
    input is cut, never the whole line it came in)."""
    if isinstance(error, Terminated):
        return "Terminated."
    if isinstance(error, KeyboardInterrupt):
        return "Interrupted."
    if isinstance(error, ReadoutError):
        return _one_line(f"Error: {error}")
    where = getattr(error, "readout_path", None)
    detail = " ".join(str(error).split())[:120] or "no message"
    if isinstance(error, RecursionError):
        detail = "input nested too deeply"
    elif isinstance(error, MemoryError):
        detail = "input too large to hold in memory"
    elif isinstance(error, UnicodeDecodeError):
        detail = f"not UTF-8 text (byte {error.start})"
    elif isinstance(error, OSError) and error.strerror:
        detail = f"{error.strerror}{': ' + str(error.filename)[:100] if error.filename else ''}"
    prefix = f"{where}: " if where else ""
    loop = re.match(r"Symlink loop from '(.*)'\Z", str(error)) if isinstance(error, RuntimeError) else None
    if loop:   # Path.resolve on Python 3.11 reports a link cycle this way
        return _one_line(f"Error: {display_path(loop.group(1))}: {LINK_LOOP}")
    hint = " (run with --debug or READOUT_DEBUG=1 for the traceback)"
    if isinstance(error, OSError):   # a permission or a full disk is the user's to fix, not a bug
        return _one_line(f"Error: {prefix}{detail}")
    return _one_line(f"Error: {prefix}internal error: {type(error).__name__}: {detail}", hint)


def _one_line(text: str, tail: str = "") -> str:
    text = " ".join(text.split())
    room = ERROR_LINE_MAX - len(tail)
    return (text if len(text) <= room else text[:room - 3] + "...") + tail


def _print_lines(lines: Sequence[str], stream: TextIO) -> None:
    for line in lines:
        print(line, file=stream)


def _project_argument(parser: argparse.ArgumentParser, help_text: str, default: Path = Path(".")) -> None:
    parser.add_argument("project", nargs="?", default=default, type=path_option, help=help_text)


# --- selftest -------------------------------------------------------------------------------


def _configure_selftest(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--mutant", action="store_true",
        help="run the same fixtures against a deliberately broken nDCG (ideal counts only the "
             "relevant documents retrieved); the self-test must then FAIL and exit 1")


def _run_selftest(args: argparse.Namespace) -> int:
    from generator.core.selftest import MUTANT_NOTICE, run_checks
    
    if args.mutant:
        print(MUTANT_NOTICE)
    results = run_checks(mutant=args.mutant)
    _print_lines([result.line() for result in results], sys.stdout)
    failed = [result for result in results if not result.passed]
    if failed:
        print(f"{len(failed)} of {len(results)} checks FAILED")
        return EXIT_FINDINGS
    print("ALL CHECKS PASS")
    return EXIT_OK


# --- evaluate -------------------------------------------------------------------------------


def _configure_evaluate(parser: argparse.ArgumentParser) -> None:
    from generator.core.options import ENCODE_BATCH_SIZE, QUERY_SETS, RERANK_COST
    
    _project_argument(parser, "project directory holding readout.yaml and outputs/ (default: .)")
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


def _run_evaluate(args: argparse.Namespace) -> int:
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


def _configure_cost(parser: argparse.ArgumentParser) -> None:
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


def _run_cost(args: argparse.Namespace) -> int:
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


def _configure_train_reranker(parser: argparse.ArgumentParser) -> None:
    from generator.evaluate import training as t

    _project_argument(parser, "project directory: its readout.yaml names the data (unless --data does) and "
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


def _run_train_reranker(args: argparse.Namespace) -> int:
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


# --- init -----------------------------------------------------------------------------------


def _run_init(args: argparse.Namespace) -> int:
    from generator.commands.scaffold import init_lines, init_project

    outcome = init_project(args.directory, title=args.title, data=args.data, force=args.force, run=args.run_file,
                           run_name=args.run_name, rerank=args.rerank)
    _print_lines(init_lines(outcome), sys.stdout)
    return EXIT_OK


# --- check / freeze / import-draft -----------------------------------------------------------


def _configure_check(parser: argparse.ArgumentParser) -> None:
    _project_argument(parser, "project directory (design/, claims/, outputs/); default: .")
    parser.add_argument("--format", choices=("text", "json", "github"), default="text",
                        help="output format: text for people, json for machines, github for CI annotations")
    parser.add_argument("--no-record", action="store_true",
                        help="do not append a new ledger version to claims/trace-history.jsonl")


def _run_check(args: argparse.Namespace) -> int:
    from generator.claims.tracing.checker import check_project
    from generator.claims.tracing.report import format_github, format_text, report_dict
    from generator.project import load_project
    
    report = check_project(load_project(args.project), record_history=not args.no_record)
    if args.format == "json":
        sys.stdout.write(dumps_json(report_dict(report)))
    elif args.format == "github":
        sys.stdout.write(format_github(report))
    else:
        sys.stdout.write(format_text(report))
    return EXIT_OK if report.ok else EXIT_FINDINGS


def _configure_freeze(parser: argparse.ArgumentParser) -> None:
    _project_argument(parser, "project directory whose design/ documents are frozen; default: .")
    parser.add_argument("--reason", help="why the design changed: required once results exist (the readout shows "
                                         "the amendment, with this reason, next to the verdict)")
    parser.add_argument("--post-hoc", dest="post_hoc", action="append", default=[], metavar="DECISION",
                        help="acknowledge that this amendment sets or moves DECISION's rule after the results "
                             "existed, so its verdict is labelled post hoc (repeat for each decision)")


def _run_freeze(args: argparse.Namespace) -> int:
    from generator.claims.record.freeze import freeze_project
    from generator.project import load_project
    
    project = load_project(args.project)
    outcome = freeze_project(project, reason=args.reason, post_hoc=args.post_hoc)
    previous, current = outcome.previous, outcome.current
    for name in sorted(set(previous) | set(current)):
        document = display_path(project.design_dir / name)
        if name not in current:
            print(f"{document}: removed from the freeze")
        elif name not in previous:
            print(f"{document}: frozen at sha256 {current[name][:12]}")
        elif previous[name] != current[name]:
            print(f"{document}: re-frozen at sha256 {current[name][:12]} (was {previous[name][:12]})")
    shown = display_path(project.freeze_path)
    if outcome.entry is None:
        print(f"Design freeze unchanged: {len(current)} documents match {shown}.")
        return EXIT_OK
    entry = outcome.entry
    for decision in entry.post_hoc:
        print(f"Decision {decision}: {', '.join(entry.amended[decision])} after the results existed; its verdict "
              "is labelled post hoc.")
    when = "after results existed (an amendment)" if entry.results_existed else "before any results"
    print(f"Froze {len(current)} design document{'s' if len(current) != 1 else ''} in {shown} "
          f"(freeze {entry.number}, {when}).")
    return EXIT_OK


def _configure_import_draft(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("draft", type=path_option, help="Markdown draft to split into one claim per sentence")
    parser.add_argument("--output", dest="output_name", required=True, choices=("teachback", "aar", "readout"),
                        help="which report the draft is for")
    parser.add_argument("--ledger", type=path_option, default=Path("claims/ledger.yaml"),
                        help="ledger to append to (default claims/ledger.yaml)")


def _declared_sections(ledger_path: Path, output: str) -> list[str]:
    """The sections readout.yaml declares for `output`, when the ledger sits in a project."""
    from generator.project import load_project

    root = ledger_path.resolve().parent.parent
    if not (root / "readout.yaml").is_file():
        return []
    try:
        outputs = load_project(root).outputs or {}
    except InputError:
        return []
    return list(outputs[output].section_ids) if output in outputs else []


def _run_import_draft(args: argparse.Namespace) -> int:
    from generator.claims.language.draft import import_draft
    
    added, skipped = import_draft(args.draft, args.output_name, args.ledger,
                                  _declared_sections(args.ledger, args.output_name))
    shown = display_path(args.ledger)
    for claim in added:
        print(f"{shown}:{claim.line}: claim {claim.id} ({claim.kind}, section {claim.section}): added with no "
              "source")
    note = f"; {skipped} already in the ledger" if skipped else ""
    print(f"Imported {len(added)} claims into {shown}{note}. Each has no source yet: attach design or measured "
          "sources, then run `readout check`.")
    return EXIT_OK


def _configure_upgrade_ledger(parser: argparse.ArgumentParser) -> None:
    _project_argument(parser, "project whose claims/ledger.yaml is converted; default: .")


def _run_upgrade_ledger(args: argparse.Namespace) -> int:
    from generator.claims.language.upgrade import upgrade_ledger
    from generator.claims.tracing.checker import check_project
    from generator.claims.tracing.report import claim_location, finding_text
    from generator.project import load_project

    project = load_project(args.project)
    upgrade = upgrade_ledger(project.ledger_path)
    shown = display_path(project.ledger_path)
    for claim_id, ids in upgrade.converted.items():
        also = f" (and {', '.join(ids[1:])})" if len(ids) > 1 else ""
        print(f"{shown}: claim {claim_id}: now {len(ids)} frame{'s' if len(ids) > 1 else ''}{also}: the package "
              "writes the sentence")
    report = check_project(project, record_history=False)
    by_hand = [result for result in report.failing()
               if any(finding.code in HAND_WORK_CODES for finding in result.findings)]
    for result in by_hand:
        reasons = "; ".join(finding_text(finding) for finding in result.findings if finding.code in HAND_WORK_CODES)
        print(f"{claim_location(shown, result.claim)}: not converted: {reasons}")
    print(f"Converted {len(upgrade.converted)} claim{'s' if len(upgrade.converted) != 1 else ''} to frames in "
          f"{shown}; {len(by_hand)} still need{'s' if len(by_hand) == 1 else ''} a frame written by hand"
          + (" (listed above; docs/claims.md, 'Frames')." if by_hand else "."))
    return EXIT_FINDINGS if by_hand else EXIT_OK


# The findings a converter cannot fix: the author's own words still carry a result.
HAND_WORK_CODES = ("word-licensed", "prose-words", "prose-number")


# --- render / build --------------------------------------------------------------------------


def _configure_render(parser: argparse.ArgumentParser) -> None:
    _project_argument(parser, "project directory; default: .")
    parser.add_argument("--check", dest="check_only", action="store_true",
                        help="write nothing; exit 1 if the committed outputs differ from a fresh render")
    parser.add_argument("--draft", action="store_true",
                        help="render even when claims are untraceable, flagging every failure visibly")


def _report_render(outcome: RenderOutcome, check_only: bool) -> int:
    report = outcome.report
    if outcome.refused:
        _print_lines(outcome.refused, sys.stderr)
        print(f"Render refused: the claim check failed ({report.untraceable} of {report.total} claims "
              f"untraceable{', design freeze broken' if not report.freeze_ok else ''}). Fix or strike "
              f"the claims (readout check lists them), or pass --draft to render with every failure "
              f"flagged.", file=sys.stderr)
        return EXIT_FINDINGS
    if outcome.drafted:
        print(f"Draft: rendering with {len(outcome.drafted)} flagged failure(s); not for release.", file=sys.stderr)
    if outcome.orphans:
        _print_lines([str(orphan) for orphan in outcome.orphans], sys.stderr)
        print(f"Render failed: {len(outcome.orphans)} orphan text(s) in the outputs; nothing written.",
              file=sys.stderr)
        return EXIT_FINDINGS
    if check_only:
        _print_lines(outcome.stale + outcome.unverified + outcome.foreign, sys.stdout)
        if outcome.stale:
            print(f"Check failed: {len(outcome.stale)} of {len(outcome.rendered)} outputs differ from a fresh "
                  f"render; run `readout render`.")
        if outcome.unverified:
            print(f"Check failed: {len(outcome.unverified)} output(s) drawn from a page of the project's own; only "
                  "the tool's page is verified.")
        if outcome.foreign:
            print(f"Check failed: outputs/ holds {len(outcome.foreign)} file(s) readout did not write.")
        if not outcome.ok:
            return EXIT_FINDINGS
        print(f"{len(outcome.rendered)} outputs up to date.")
        return EXIT_OK
    for path, size in outcome.written:
        print(f"wrote {display_path(path)} ({size} bytes)")
    # Written, and said: `render --check` (the gate) fails on each of these.
    _print_lines([f"warning: {line}" for line in outcome.unverified + outcome.foreign], sys.stderr)
    return EXIT_OK


def _run_render(args: argparse.Namespace) -> int:
    from generator.project import load_project
    from generator.render.renderer import render_project
    
    project = load_project(args.project)
    if args.check_only:
        return _report_render(render_project(project, draft=args.draft, check_only=True), check_only=True)
    from generator.storage.locks import outputs_lock   # here: `render --check` writes nothing and never loads it

    with outputs_lock(project.outputs_dir):
        outcome = render_project(project, draft=args.draft)
    return _report_render(outcome, check_only=False)


def _configure_build(parser: argparse.ArgumentParser) -> None:
    _project_argument(parser, "project directory (the repository root, or examples/l03); default: .")
    parser.add_argument("--data", type=path_option, default=None,
                        help="dataset directory for this build (a BEIR folder for kind: beir); "
                             "default: the project's readout.yaml `data`")
    parser.add_argument("--draft", action="store_true",
                        help="render even when claims are untraceable, flagging every failure visibly")


def _run_build(args: argparse.Namespace) -> int:
    from dataclasses import replace
    
    from generator.commands.build import build_project
    from generator.core.data_source import identifier_of
    from generator.project import load_project
    
    project = load_project(args.project)
    if args.data is not None:
        # An option's path is relative to the working directory; readout.yaml's `data` to the project.
        project = replace(project, data=str(args.data) if identifier_of(str(args.data))
                          else str(args.data.expanduser().absolute()))
    outcome = build_project(project, log=print, draft=args.draft)
    if outcome.sandbox is not None:
        code = _report_sandbox(outcome.sandbox)
        if code != EXIT_OK:
            print("Build stopped: the sandbox run is invalid; nothing rendered.", file=sys.stderr)
            return code
    assert outcome.render is not None
    return _report_render(outcome.render, check_only=False)


# --- sandbox / ceiling -----------------------------------------------------------------------


def _configure_sandbox(parser: argparse.ArgumentParser) -> None:
    _project_argument(parser, "sandbox project directory (default examples/l03)", default=Path("examples/l03"))
    parser.add_argument("--report-visibility", action="store_true",
                        help="ask for a single admitted/declared 'visibility' ratio; always refused "
                             "(exit 2): each acquisition stage keeps its own denominator")


def _report_sandbox(outcome: SandboxOutcome) -> int:
    if not outcome.valid:
        print(f"Error: run invalid: {'; '.join(outcome.invalid_reasons)} "
              f"(see {display_path(outcome.manifest_path)})", file=sys.stderr)
        return EXIT_FINDINGS
    return EXIT_OK


def _run_sandbox(args: argparse.Namespace) -> int:
    from generator.storage.locks import outputs_lock
    from generator.project import load_project
    from generator.results.model import ResultsModel, sandbox_figures
    from generator.sandbox.runner import run_sandbox
    
    project = load_project(args.project)
    project.require_kind("sandbox", "sandbox")
    with outputs_lock(project.outputs_dir):
        outcome = run_sandbox(project.sandbox_config(), report_visibility=args.report_visibility)
    if outcome.valid and outcome.result is not None:
        results = ResultsModel(outcome.result.results)
        k = sandbox_figures(results).parameters["cutoff"]
        _print_lines([f"accepted: {change}" for change in outcome.accepted_changes], sys.stdout)
        print(f"{project.title}: {results.documents} documents, {results.queries} topics, cutoff {k}")
        for row in results.rows:
            print(f"  {row['search']:<9} Recall@{k} {row[f'recall@{k}']:.6f}  nDCG@{k} {row[f'nDCG@{k}']:.6f}")
        print("  funnel: " + ", ".join(f"{s['stage']} {s['label']}" for s in outcome.funnel["stages"]))
        print(f"wrote {display_path(project.outputs_dir)}")
    return _report_sandbox(outcome)


def _configure_ceiling(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", nargs="?", type=path_option, default=None,
                        help="JSON case file {query, query_vector, documents: [{id, text, vector, "
                             "relevance}], w, k, pool, cutoff, oracle}; omit to run the built-in preset")
    parser.add_argument("--pool", type=int, default=None, help="candidate pool depth")
    parser.add_argument("--cutoff", type=int, default=None, help="metric cutoff")
    parser.add_argument("--no-oracle", action="store_true", help="report the fused order, not the oracle")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="text for people (default), json for machines")


def _run_ceiling(args: argparse.Namespace) -> int:
    from generator.sandbox.ceiling import compute_ceiling, format_text as format_ceiling, load_case, parse_case
    
    data, source = load_case(args.input)
    if isinstance(data, dict):
        if args.pool is not None:
            data["pool"] = args.pool
        if args.cutoff is not None:
            data["cutoff"] = args.cutoff
        if args.no_oracle:
            data["oracle"] = False
    try:
        case = parse_case(data, source)
    except InputError as error:
        # Options override the file: name the option when that is where the bad value came from.
        if error.field in ("pool", "cutoff") and getattr(args, error.field) is not None:
            raise InputError(error.reason, field=f"--{error.field}") from None
        raise
    report = compute_ceiling(case)
    sys.stdout.write(dumps_json(report) if args.format == "json" else format_ceiling(report, source))
    return EXIT_OK


# --- registry --------------------------------------------------------------------------------

Command = tuple[str, str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]


def _elsewhere(module: str, function: str) -> Callable:
    """A command function that lives in another module, imported only when the command is chosen."""
    def call(argument):   # type: ignore[no-untyped-def]
        return getattr(importlib.import_module(module), function)(argument)
    call.__qualname__ = f"{module}.{function}"
    return call


COMMANDS: tuple[Command, ...] = (
    ("init", "scaffold a new review project: readout.yaml, design/, claims/, outputs/", _elsewhere("generator.commands.scaffold", "configure_init"),
     _run_init),
    ("selftest", "check the scorer against hand-computed fixtures", _configure_selftest, _run_selftest),
    ("evaluate", "run the four-row benchmark and write results.json", _configure_evaluate, _run_evaluate),
    ("freeze", "record the hashes of the design documents", _configure_freeze, _run_freeze),
    ("check", "prove every ledger claim against design documents and results", _configure_check, _run_check),
    ("import-draft", "turn a Markdown draft into unsourced ledger claims", _configure_import_draft,
     _run_import_draft),
    ("upgrade-ledger", "convert a ledger written before frames into frames the package writes",
     _configure_upgrade_ledger, _run_upgrade_ledger),
    ("render", "render readout.html, TEACHBACK.md and AAR.md from the checked ledger", _configure_render,
     _run_render),
    ("build", "evaluate if inputs changed, then check, then render", _configure_build, _run_build),
    ("gate", "what CI runs: fetch a shallow clone's history, check, then render --check",
     _elsewhere("generator.commands.gate", "configure_gate"), _elsewhere("generator.commands.gate", "run_gate")),
    ("regress", "a regression gate against the last release that tells noise from a loss",
     _elsewhere("generator.commands.regression", "configure_regress"), _elsewhere("generator.commands.regression", "run_regress")),
    ("sandbox", "run the offline L03 teaching sandbox", _configure_sandbox, _run_sandbox),
    ("ceiling", "compute the oracle reranking ceiling", _configure_ceiling, _run_ceiling),
    ("cost", "measure a reranker's CPU cost by its shape (random weights, real pairs)", _configure_cost,
     _run_cost),
    ("train-reranker", "fine-tune a cross-encoder on the corpus alone (titles and texts, no queries)",
     _configure_train_reranker, _run_train_reranker),
    ("export", "export a report's rows table as CSV or a LaTeX booktabs table", _elsewhere("generator.render.export", "configure_export"),
     _elsewhere("generator.render.export", "run_export")),
)


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error as one line like every other error (and the same exit 2)."""

    def error(self, message: str) -> NoReturn:  # type: ignore[override]
        self.exit(EXIT_USAGE, _one_line(f"Error: {self.prog}: {message} (see {self.prog} --help)") + "\n")


def build_parser(chosen: str | None = None) -> argparse.ArgumentParser:
    """Every command's parser; with `chosen`, only that command's options are configured (the
    others' configuration imports modules the chosen command does not run)."""
    parser = _Parser(
        prog="readout",
        description="Decide, with evidence anyone can audit, whether a cross-encoder reranker earns "
                    "its CPU cost.",
        epilog="Exit codes: 0 success, 1 findings (failed check, untraceable claim, stale output), "
               "2 usage or input error (or the outputs being written by another readout process), "
               "130 interrupted, 143 terminated.")
    parser.add_argument("--version", action="version", version=f"readout {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="on an unexpected error, print the traceback too (or set READOUT_DEBUG=1)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=_Parser)
    for name, summary, configure, run in COMMANDS:
        sub = subparsers.add_parser(name, help=summary, description=summary[0].upper() + summary[1:] + ".")
        if chosen is None or name == chosen:
            configure(sub)
        sub.set_defaults(run=run)
    return parser


def _debugging(args: argparse.Namespace | None) -> bool:
    return bool(getattr(args, "debug", False)) or os.environ.get("READOUT_DEBUG", "").strip() not in ("", "0")


def _command_in(argv: Sequence[str]) -> str | None:
    """The command word of a command line: the first word that is not a global option."""
    return next((word for word in argv if not word.startswith("-")), None)


def _raise_terminated(signum: int, frame: object) -> NoReturn:
    raise Terminated


@contextmanager
def _sigterm_raises() -> Iterator[None]:
    """SIGTERM raises Terminated within the block. Only where it would otherwise end the process
    on the spot (SIG_DFL): a handler or an ignore someone else set is theirs, and a thread other
    than the main one cannot set a handler at all."""
    try:
        previous = signal.getsignal(signal.SIGTERM)
        if previous is not signal.SIG_DFL:
            previous = None
        else:
            signal.signal(signal.SIGTERM, _raise_terminated)
    except ValueError:
        previous = None
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = None
    with _sigterm_raises():
        # Parsing too: building a command's parser imports its option defaults, and an interrupt
        # there is as much an interrupt as one in the command itself.
        try:
            args = build_parser(_command_in(argv)).parse_args(argv)
            return args.run(args)
        except BaseException as error:  # noqa: BLE001 - the one place every exception becomes an exit code
            if isinstance(error, SystemExit):
                raise
            code = exit_code_for(error)
            if _debugging(args) and not isinstance(error, (ReadoutError, KeyboardInterrupt)):
                traceback.print_exc(file=sys.stderr)
            print(error_line(error), file=sys.stderr)
            return code


def _interrupt_ends_the_process() -> None:
    """From here on a Ctrl-C ends the process at once and quietly, as a shell expects (it reads
    130): the work is over, and an interrupt must not become a traceback in the last lines."""
    try:
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
    except ValueError:
        pass


def run() -> NoReturn:
    """The `readout` command: `main`, then out of the process at once. A gate command's work is
    done when `main` returns (every file it writes is renamed into place by then), and tearing
    down two hundred imported modules costs a tenth of a `check`; after the model stack was loaded
    (torch keeps its own exit handlers) the interpreter exits the usual way."""
    try:
        code = main()
        _interrupt_ends_the_process()
    except KeyboardInterrupt as error:
        # One that landed outside main's own handler: as main returned, or a second Ctrl-C while
        # main reported the first.
        _interrupt_ends_the_process()
        code = exit_code_for(error)
        try:
            print(error_line(error), file=sys.stderr)
        except (OSError, ValueError):
            pass
    if any(name in sys.modules for name in ("torch", "sentence_transformers")):
        sys.exit(code)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):   # a reader that went away (`readout check | head`)
            pass
    os._exit(code)


if __name__ == "__main__":
    run()
