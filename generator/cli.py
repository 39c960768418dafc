"""The `readout` command line: a thin layer that parses options, calls one library function per
command and maps exceptions to exit codes (0 success, 1 findings, 2 usage or input error).

Heavy libraries (torch, sentence-transformers, bm25s) are never imported here: each command
imports its library module inside its run function, and only the evaluation modules import
the heavy ones, inside the functions that need them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable, Sequence

from generator.errors import ReadoutError

# --- selftest -------------------------------------------------------------------------------


def _configure_selftest(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--mutant", action="store_true",
        help="run the same fixtures against a deliberately broken nDCG (ideal counts only the "
             "relevant documents retrieved); the self-test must then FAIL and exit 1")


def _run_selftest(args: argparse.Namespace) -> int:
    from generator.selftest import run_selftest

    return run_selftest(mutant=args.mutant, out=sys.stdout)


# --- evaluate -------------------------------------------------------------------------------


def _configure_evaluate(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("project", nargs="?", default=".", type=Path,
                        help="project directory holding readout.yaml and outputs/ (default: .)")
    parser.add_argument("--data", type=Path, default=None,
                        help="BEIR dataset directory (corpus.jsonl, queries.jsonl, qrels/test.tsv); "
                             "default: the project's readout.yaml `data`")
    parser.add_argument("--queries", default=None,
                        help="'sample' (first 20 test queries in qrels order, the release sample) "
                             "or 'all' (the 300-query check, written to results-300.json)")
    parser.add_argument("--dense-model", default=None,
                        help="bi-encoder: hub name, local path or alias (default BAAI/bge-small-en-v1.5; "
                             "alias 'minilm-offline' is the packaged all-MiniLM-L6-v2)")
    parser.add_argument("--rerank-model", default=None,
                        help="cross-encoder: hub name or local path (default BAAI/bge-reranker-v2-m3)")
    parser.add_argument("--skip-rerank", action="store_true", default=None,
                        help="record the hybrid+rerank row as not measured instead of running it")
    parser.add_argument("--output", type=Path, default=None,
                        help="results file (default outputs/results.json, or outputs/results-300.json "
                             "with --queries all)")
    parser.add_argument("--cache-dir", type=Path, default=None,
                        help="embedding and rerank-score cache (default ~/.cache/readout or $READOUT_CACHE)")


def _run_evaluate(args: argparse.Namespace) -> int:
    from generator.evaluation import evaluate_command

    return evaluate_command(args)


# --- check / freeze / import-draft -----------------------------------------------------------


def _configure_check(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("project", nargs="?", default=".", type=Path,
                        help="project directory (design/, claims/, outputs/); default: .")
    parser.add_argument("--format", choices=("text", "json", "github"), default="text",
                        help="output format: text for people, json for machines, github for CI annotations")
    parser.add_argument("--no-record", action="store_true",
                        help="do not append a new ledger version to claims/trace-history.jsonl")


def _run_check(args: argparse.Namespace) -> int:
    from generator.checker import check_command

    return check_command(args)


def _configure_freeze(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("project", nargs="?", default=".", type=Path,
                        help="project directory whose design/ documents are frozen; default: .")


def _run_freeze(args: argparse.Namespace) -> int:
    from generator.checker import freeze_command

    return freeze_command(args)


def _configure_import_draft(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("draft", type=Path, help="Markdown draft to split into one claim per sentence")
    parser.add_argument("--output", dest="output_name", required=True,
                        choices=("teachback", "aar", "readout"),
                        help="which report the draft is for")
    parser.add_argument("--ledger", type=Path, default=Path("claims/ledger.yaml"),
                        help="ledger to append to (default claims/ledger.yaml)")


def _run_import_draft(args: argparse.Namespace) -> int:
    from generator.ledger import import_draft_command

    return import_draft_command(args)


# --- render / build --------------------------------------------------------------------------


def _configure_render(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("project", nargs="?", default=".", type=Path,
                        help="project directory; default: .")
    parser.add_argument("--check", dest="check_only", action="store_true",
                        help="write nothing; exit 1 if the committed outputs differ from a fresh render")
    parser.add_argument("--draft", action="store_true",
                        help="render even when claims are untraceable, flagging every failure visibly")


def _run_render(args: argparse.Namespace) -> int:
    from generator.rendering import render_command

    return render_command(args)


def _configure_build(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("project", nargs="?", default=".", type=Path,
                        help="project directory (the repository root, or examples/l03); default: .")


def _run_build(args: argparse.Namespace) -> int:
    from generator.build import build_command

    return build_command(args)


# --- sandbox / ceiling -----------------------------------------------------------------------


def _configure_sandbox(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("project", nargs="?", default=Path("examples/l03"), type=Path,
                        help="sandbox project directory (default examples/l03)")
    parser.add_argument("--report-visibility", action="store_true",
                        help="ask for a single admitted/declared 'visibility' ratio; always refused "
                             "(exit 2): each acquisition stage keeps its own denominator")


def _run_sandbox(args: argparse.Namespace) -> int:
    from generator.sandbox import sandbox_command

    return sandbox_command(args)


def _configure_ceiling(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", nargs="?", type=Path, default=None,
                        help="JSON case file {query, query_vector, documents: [{id, text, vector, "
                             "relevance}], w, k, pool, cutoff, oracle}; omit to run the built-in preset")
    parser.add_argument("--pool", type=int, default=None, help="candidate pool depth")
    parser.add_argument("--cutoff", type=int, default=None, help="metric cutoff")
    parser.add_argument("--no-oracle", action="store_true", help="report the fused order, not the oracle")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="text for people (default), json for machines")


def _run_ceiling(args: argparse.Namespace) -> int:
    from generator.ceiling import ceiling_command

    return ceiling_command(args)


# --- registry --------------------------------------------------------------------------------

Command = tuple[str, str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]

COMMANDS: tuple[Command, ...] = (
    ("selftest", "check the scorer against hand-computed fixtures", _configure_selftest, _run_selftest),
    ("evaluate", "run the four-row benchmark and write results.json", _configure_evaluate, _run_evaluate),
    ("freeze", "record the hashes of the design documents", _configure_freeze, _run_freeze),
    ("check", "prove every ledger claim against design documents and results", _configure_check, _run_check),
    ("import-draft", "turn a Markdown draft into unsourced ledger claims", _configure_import_draft,
     _run_import_draft),
    ("render", "render readout.html, TEACHBACK.md and AAR.md from the checked ledger", _configure_render,
     _run_render),
    ("build", "evaluate if inputs changed, then check, then render", _configure_build, _run_build),
    ("sandbox", "run the offline L03 teaching sandbox", _configure_sandbox, _run_sandbox),
    ("ceiling", "compute the oracle reranking ceiling", _configure_ceiling, _run_ceiling),
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="readout",
        description="Decide, with evidence anyone can audit, whether a cross-encoder reranker earns "
                    "its CPU cost.",
        epilog="Exit codes: 0 success, 1 findings (failed check, untraceable claim, stale output), "
               "2 usage or input error.")
    from generator import __version__

    parser.add_argument("--version", action="version", version=f"readout {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, summary, configure, run in COMMANDS:
        sub = subparsers.add_parser(name, help=summary, description=summary[0].upper() + summary[1:] + ".")
        configure(sub)
        sub.set_defaults(run=run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except ReadoutError as error:
        print(f"Error: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("Interrupted.", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
