"""The commands that write reports: `render` (and `render --check`), `build` (evaluate if the
inputs changed, then check, then render), `sandbox` (the offline L03 example) and `ceiling` (the
oracle reranking ceiling)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from generator.commands.cli import EXIT_FINDINGS, EXIT_OK, print_lines, project_argument
from generator.storage.errors import InputError
from generator.storage.fileio import dumps_json
from generator.storage.paths import display_path, path_option

if TYPE_CHECKING:
    from generator.render.renderer import RenderOutcome
    from generator.sandbox.runner import SandboxOutcome


# --- render / build --------------------------------------------------------------------------


def configure_render(parser: argparse.ArgumentParser) -> None:
    project_argument(parser, "project directory; default: .")
    parser.add_argument("--check", dest="check_only", action="store_true",
                        help="write nothing; exit 1 if the committed outputs differ from a fresh render")
    parser.add_argument("--draft", action="store_true",
                        help="render even when claims are untraceable, flagging every failure visibly")


def report_render(outcome: RenderOutcome, check_only: bool) -> int:
    report = outcome.report
    if outcome.refused:
        print_lines(outcome.refused, sys.stderr)
        print(f"Render refused: the claim check failed ({report.untraceable} of {report.total} claims "
              f"untraceable{', design freeze broken' if not report.freeze_ok else ''}). Fix or strike "
              f"the claims (readout check lists them), or pass --draft to render with every failure "
              f"flagged.", file=sys.stderr)
        return EXIT_FINDINGS
    if outcome.drafted:
        print(f"Draft: rendering with {len(outcome.drafted)} flagged failure(s); not for release.", file=sys.stderr)
    if outcome.orphans:
        print_lines([str(orphan) for orphan in outcome.orphans], sys.stderr)
        print(f"Render failed: {len(outcome.orphans)} orphan text(s) in the outputs; nothing written.",
              file=sys.stderr)
        return EXIT_FINDINGS
    if check_only:
        print_lines(outcome.stale + outcome.unverified + outcome.foreign, sys.stdout)
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
    print_lines([f"warning: {line}" for line in outcome.unverified + outcome.foreign], sys.stderr)
    return EXIT_OK


def run_render(args: argparse.Namespace) -> int:
    from generator.project import load_project
    from generator.render.renderer import render_project
    
    project = load_project(args.project)
    if args.check_only:
        return report_render(render_project(project, draft=args.draft, check_only=True), check_only=True)
    from generator.storage.locks import outputs_lock   # here: `render --check` writes nothing and never loads it

    with outputs_lock(project.outputs_dir):
        outcome = render_project(project, draft=args.draft)
    return report_render(outcome, check_only=False)


def configure_build(parser: argparse.ArgumentParser) -> None:
    project_argument(parser, "project directory (the repository root, or examples/l03); default: .")
    parser.add_argument("--data", type=path_option, default=None,
                        help="dataset directory for this build (a BEIR folder for kind: beir); "
                             "default: the project's readout.yaml `data`")
    parser.add_argument("--draft", action="store_true",
                        help="render even when claims are untraceable, flagging every failure visibly")


def run_build(args: argparse.Namespace) -> int:
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
        code = report_sandbox(outcome.sandbox)
        if code != EXIT_OK:
            print("Build stopped: the sandbox run is invalid; nothing rendered.", file=sys.stderr)
            return code
    assert outcome.render is not None
    return report_render(outcome.render, check_only=False)


# --- sandbox / ceiling -----------------------------------------------------------------------


def configure_sandbox(parser: argparse.ArgumentParser) -> None:
    project_argument(parser, "sandbox project directory (default examples/l03)", default=Path("examples/l03"))
    parser.add_argument("--report-visibility", action="store_true",
                        help="ask for a single admitted/declared 'visibility' ratio; always refused "
                             "(exit 2): each acquisition stage keeps its own denominator")


def report_sandbox(outcome: SandboxOutcome) -> int:
    if not outcome.valid:
        print(f"Error: run invalid: {'; '.join(outcome.invalid_reasons)} "
              f"(see {display_path(outcome.manifest_path)})", file=sys.stderr)
        return EXIT_FINDINGS
    return EXIT_OK


def run_sandbox(args: argparse.Namespace) -> int:
    from generator.storage.locks import outputs_lock
    from generator.project import load_project
    from generator.core.results.model import ResultsModel, sandbox_figures
    from generator.sandbox.runner import run_sandbox
    
    project = load_project(args.project)
    project.require_kind("sandbox", "sandbox")
    with outputs_lock(project.outputs_dir):
        outcome = run_sandbox(project.sandbox_config(), report_visibility=args.report_visibility)
    if outcome.valid and outcome.result is not None:
        results = ResultsModel(outcome.result.results)
        k = sandbox_figures(results).parameters["cutoff"]
        print_lines([f"accepted: {change}" for change in outcome.accepted_changes], sys.stdout)
        print(f"{project.title}: {results.documents} documents, {results.queries} topics, cutoff {k}")
        for row in results.rows:
            print(f"  {row['search']:<9} Recall@{k} {row[f'recall@{k}']:.6f}  nDCG@{k} {row[f'nDCG@{k}']:.6f}")
        print("  funnel: " + ", ".join(f"{s['stage']} {s['label']}" for s in outcome.funnel["stages"]))
        print(f"wrote {display_path(project.outputs_dir)}")
    return report_sandbox(outcome)


def configure_ceiling(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", nargs="?", type=path_option, default=None,
                        help="JSON case file {query, query_vector, documents: [{id, text, vector, "
                             "relevance}], w, k, pool, cutoff, oracle}; omit to run the built-in preset")
    parser.add_argument("--pool", type=int, default=None, help="candidate pool depth")
    parser.add_argument("--cutoff", type=int, default=None, help="metric cutoff")
    parser.add_argument("--no-oracle", action="store_true", help="report the fused order, not the oracle")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="text for people (default), json for machines")


def run_ceiling(args: argparse.Namespace) -> int:
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
