"""The commands over the ledger and the design record: `check` (every claim traced), `freeze` (the
design documents' hashes recorded), `import-draft` (a Markdown draft turned into unsourced claims)
and `upgrade-ledger` (a ledger written before frames converted into frames)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator.commands.cli import EXIT_FINDINGS, EXIT_OK, project_argument
from generator.storage.errors import InputError
from generator.storage.fileio import dumps_json
from generator.storage.paths import display_path, path_option


# --- check / freeze / import-draft -----------------------------------------------------------


def configure_check(parser: argparse.ArgumentParser) -> None:
    project_argument(parser, "project directory (design/, claims/, outputs/); default: .")
    parser.add_argument("--format", choices=("text", "json", "github"), default="text",
                        help="output format: text for people, json for machines, github for CI annotations")
    parser.add_argument("--no-record", action="store_true",
                        help="do not append a new ledger version to claims/trace-history.jsonl")


def run_check(args: argparse.Namespace) -> int:
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


def configure_freeze(parser: argparse.ArgumentParser) -> None:
    project_argument(parser, "project directory whose design/ documents are frozen; default: .")
    parser.add_argument("--reason", help="why the design changed: required once results exist (the readout shows "
                                         "the amendment, with this reason, next to the verdict)")
    parser.add_argument("--post-hoc", dest="post_hoc", action="append", default=[], metavar="DECISION",
                        help="acknowledge that this amendment sets or moves DECISION's rule after the results "
                             "existed, so its verdict is labelled post hoc (repeat for each decision)")


def run_freeze(args: argparse.Namespace) -> int:
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


def configure_import_draft(parser: argparse.ArgumentParser) -> None:
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


def run_import_draft(args: argparse.Namespace) -> int:
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


def configure_upgrade_ledger(parser: argparse.ArgumentParser) -> None:
    project_argument(parser, "project whose claims/ledger.yaml is converted; default: .")


def run_upgrade_ledger(args: argparse.Namespace) -> int:
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
