"""`readout regress`: a regression gate against the last release that tells noise from a loss.

A fixed tolerance ("fail when nDCG@5 drops by more than 0.01") fails on noise and passes real
losses: on a few dozen queries a mean moves by more than that between two runs of the same
system, and a loss of twice the tolerance can hide in a noisy mean. This gate pairs the two runs
query by query instead and asks whether the interval of the change rules the loss out
(generator.claims.record.noninferiority):

1. What is compared, the margin and what an inconclusive change does come from the design's
   `regression` block as the freeze holds it (generator.claims.record.frozen_rules.frozen_regression):
   a block changed and not frozen is refused, and one set or moved after results existed makes
   the verdict **post hoc**, said on its own line. They move only with a freeze, never in a CI
   file edited on the day a gate fails.
2. Which results file: the block's `file` (default results.json), one the project declares.
3. The baseline: `--baseline`, else the block's `baseline`, else the results the project
   committed at the merge base of HEAD with the repository's default branch (origin/HEAD, then
   origin/main, main, master). A git ref is read from that commit: the results file and every
   run file and judgements copy it names, with `git cat-file`. A results file given as a path
   must be committed and unchanged when the project is in a git work tree (a baseline moves only
   with a commit), and is read with the run files and judgements beside it.
4. Both sides are re-derived from those run files and judgements (generator.claims.tracing:
   every per-query value, every figure), never believed: a sealed file anyone can reseal proves
   nothing. A baseline that is this very commit, unchanged, is refused: it shows no change.
5. Refused (exit 2), with what differs: another corpus, other queries, other judgements, another
   metric definition, an unknown row or metric, no regression block.
6. Each row and metric: the paired change, its interval, wins, ties and losses, and the verdict:
   **regression** (exit 1), **inconclusive** or **cannot be decided** (exit 1 when the block says
   `inconclusive: fail`, else 0, said so, with the queries that would decide it), or
   **non-inferior**.

Output: text, `--format json`, or `--format github` (annotations); and, whenever
GITHUB_STEP_SUMMARY names a file, a Markdown table appended to it. Exit codes are readout's own:
0 pass, 1 a regression (or an inconclusive change the design fails on), 2 usage or input error.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from generator.claims.record.frozen_rules import FrozenRegression, frozen_regression
from generator.commands.regression_baseline import (Baseline, FirstRelease, _derived, _refuse_the_same_commit,
                                                     resolve_baseline)
from generator.core.dataclass import dataclass
from generator.storage.errors import InputError, clip
from generator.storage.fileio import dumps_json
from generator.storage.paths import display_path, path_option
from generator.claims.record.noninferiority import (INCONCLUSIVE, NON_INFERIOR, REGRESSION, UNDECIDED, VERDICTS, Change,
                                      RegressionBlock, changes_since, deciding_decimals)
from generator.project import Project, load_project
from generator.core.results import Results

SUMMARY_VARIABLE = "GITHUB_STEP_SUMMARY"
EXIT_OK, EXIT_REGRESSION = 0, 1
FORMATS = ("text", "json", "github")
ANNOTATION = {REGRESSION: "error", INCONCLUSIVE: "warning", UNDECIDED: "warning", NON_INFERIOR: "notice"}


def configure_regress(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("project", nargs="?", type=path_option, default=Path("."),
                        help="project directory (readout.yaml, design/, outputs/); default: .")
    parser.add_argument("--baseline", default=None, metavar="REF_OR_FILE",
                        help="what to compare with: a git ref (a tag, a branch, HEAD~1) whose commit holds the "
                             "results file the design's regression block names, or a results file committed in git "
                             "with its run files and judgements beside it; default: the block's baseline, else the "
                             "merge base of HEAD with the default branch (origin/HEAD, origin/main, main, master)")
    parser.add_argument("--format", choices=FORMATS, default="text",
                        help="text for people (default), json for machines, github for CI annotations; whenever "
                             f"${SUMMARY_VARIABLE} names a file (GitHub Actions sets it), a Markdown table is also "
                             "appended to it")


# --------------------------------------------------------------------------- the gate


@dataclass(frozen=True)
class RegressOutcome:
    rule: FrozenRegression
    baseline: Baseline | FirstRelease
    now: str                    # the current results file, as shown
    now_sha256: str
    changes: list[Change]

    @property
    def block(self) -> RegressionBlock:
        return self.rule.block

    def count(self, *verdicts: str) -> int:
        return sum(1 for change in self.changes if change.verdict in verdicts)

    @property
    def undecided(self) -> int:
        """Changes the sample cannot tell from a loss of the margin: inconclusive, or too few queries."""
        return self.count(INCONCLUSIVE, UNDECIDED)

    @property
    def ok(self) -> bool:
        return self.count(REGRESSION) == 0 and not (self.block.inconclusive == "fail" and self.undecided)

    @property
    def queries(self) -> int:
        return self.changes[0].queries if self.changes else 0

    @property
    def decimals(self) -> int:
        return deciding_decimals(self.changes, self.block.margin)

    def _needed(self) -> str:
        needed = [change.queries_needed for change in self.changes if change.verdict in (INCONCLUSIVE, UNDECIDED)]
        counted = [count for count in needed if count is not None and count > self.queries]
        if not counted:
            return ""
        return f" (about {max(counted):,} queries would decide {'it' if len(needed) == 1 else 'them'})"

    def summary(self) -> str:
        total, margin = len(self.changes), f"-{self.block.margin:g}"
        regressions, undecided = self.count(REGRESSION), self.undecided
        post_hoc = f" The verdict is post hoc: {self.rule.sentence()}." if self.rule.post_hoc else ""
        if isinstance(self.baseline, FirstRelease):
            return (f"PASS: a first release: {self.baseline.how} ({self.baseline.commit[:12]}) holds no results, so "
                    "there is nothing to compare and no regression.")
        said = f" ({undecided} inconclusive or undecided)" if undecided else ""
        if regressions:
            verb = "is a regression" if regressions == 1 else "are regressions"
            return (f"FAIL: {regressions} of {total} changes {verb}: a loss the interval tells from noise, beyond the "
                    f"margin ({margin}){said}.{post_hoc}")
        if undecided and self.block.inconclusive == "fail":
            return (f"FAIL, {undecided} of {total} inconclusive or undecided: these {self.queries:,} queries cannot "
                    f"tell noise from a loss of the margin ({margin}){self._needed()}, and the design fails such a "
                    f"change (inconclusive: fail).{post_hoc}")
        if undecided:
            return (f"PASS, {undecided} of {total} inconclusive: the interval reaches {margin}, so these "
                    f"{self.queries:,} queries cannot tell noise from a loss of the margin{self._needed()}; no "
                    f"regression shown (the design warns on such a change: inconclusive: warn).{post_hoc}")
        return (f"PASS: {'the change is' if total == 1 else f'all {total} changes are'} non-inferior: "
                f"{'its interval lies' if total == 1 else 'every interval lies'} above {margin}.{post_hoc}")

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "summary": self.summary(), "design": self.block.as_dict(),
                "frozen": self.rule.as_dict(), "baseline": self.baseline.as_dict(),
                "now": {"shown": self.now, "sha256": self.now_sha256}, "queries": self.queries,
                "counts": {verdict: self.count(verdict) for verdict in VERDICTS},
                "changes": [change.as_dict() for change in self.changes]}


def current_results(project: Project, block: RegressionBlock) -> Results:
    """The results file the block names, one the project declares, re-derived from the run files and
    judgements beside it."""
    if block.file not in project.results_files:
        raise InputError(f"{block.file} is not a results file this project declares "
                         f"({', '.join(project.results_files)})",
                         **block.where("file"))
    shown = display_path(project.outputs_dir / block.file)
    if not (project.outputs_dir / block.file).is_file():
        raise InputError(f"missing: `readout build` writes it (the design's regression block compares {block.file})",
                         path=shown)
    return _derived(project.outputs_dir, block.file, shown,
                    "does not re-derive from its run files and judgements, so it is not compared (`readout build` "
                    "makes it again)")


def regress(project: Project, baseline_option: str | None) -> RegressOutcome:
    rule = frozen_regression(project)
    block = rule.block
    current = current_results(project, block)
    baseline = resolve_baseline(project, baseline_option, block)
    path = project.outputs_dir / block.file
    now = display_path(path)
    if isinstance(baseline, FirstRelease):
        return RegressOutcome(rule, baseline, now, current.sha256, [])
    _refuse_the_same_commit(project, baseline, path)
    return RegressOutcome(rule, baseline, now, current.sha256,
                          changes_since(block, baseline.results, baseline.shown, current, now))


def _figure(value: float | None, decimals: int, sign: bool = False) -> str:
    return "not drawn" if value is None else f"{value:{'+' if sign else ''}.{decimals}f}"


def _interval(change: Change, decimals: int) -> str:
    if change.low is None or change.high is None:
        return "not drawn"
    return f"[{_figure(change.low, decimals, True)}, {_figure(change.high, decimals, True)}]"


def _verdict_said(change: Change, margin: float) -> str:
    """The verdict, and for one the sample cannot settle, why and the queries that would."""
    if change.verdict == UNDECIDED:
        return change.why or UNDECIDED
    if change.verdict != INCONCLUSIVE:
        return change.verdict
    if change.queries_needed is None:
        return f"inconclusive; more queries than can be counted would detect a change of the margin ({margin:g})"
    if change.queries_needed <= change.queries:
        return (f"inconclusive; these {change.queries:,} queries already detect a change of the margin ({margin:g}) "
                "at power 0.8: the change itself lies near it")
    return (f"inconclusive; about {change.queries_needed:,} queries would decide it (a change of the margin, "
            f"{margin:g}, detected at power 0.8)")


def change_line(change: Change, decimals: int, margin: float) -> str:
    return (f"{change.row} {change.metric}: baseline {_figure(change.baseline, decimals)}, now "
            f"{_figure(change.now, decimals)}, change {_figure(change.change, decimals, True)}, 95% interval "
            f"{_interval(change, decimals)}; {change.wins} better, {change.ties} tied, {change.losses} worse of "
            f"{change.queries:,} queries: {_verdict_said(change, margin)}")


def header_lines(outcome: RegressOutcome) -> list[str]:
    block, rule, baseline = outcome.block, outcome.rule, outcome.baseline
    return [f"Baseline: {baseline.shown}, {baseline.how}; re-derived from its run files and judgements."
            if isinstance(baseline, Baseline) else f"Baseline: none, {baseline.how} holds no results.",
            f"Now: {outcome.now}, re-derived; {outcome.queries:,} queries on both sides, the same corpus and "
            "judgements." if outcome.changes else f"Now: {outcome.now}, re-derived.",
            f"Rule: margin {block.margin:g}, inconclusive {block.inconclusive} "
            f"({block.document}:{block.lines.get('margin', block.line)}); {rule.describe()}."]


def _lines(outcome: RegressOutcome) -> list[str]:
    decimals = outcome.decimals
    return [change_line(change, decimals, outcome.block.margin) for change in outcome.changes]


def format_text(outcome: RegressOutcome) -> str:
    return "\n".join([*header_lines(outcome), *_lines(outcome), outcome.summary()]) + "\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def format_github(outcome: RegressOutcome) -> str:
    """One annotation per row and metric on the design's regression block, then the summary."""
    block = outcome.block
    place = f"file={_escape_property(block.document)},line={block.line}"
    lines = [f"::{ANNOTATION[change.verdict]} {place},"
             f"title={_escape_property(f'readout regress: {change.row} {change.metric}')}"
             f"::{_escape_data(line)}" for change, line in zip(outcome.changes, _lines(outcome))]
    level = "error" if not outcome.ok else "warning" if outcome.undecided or outcome.rule.post_hoc else "notice"
    lines.append(f"::{level} title=readout regress::{_escape_data(outcome.summary())}")
    return "\n".join([*lines, *header_lines(outcome), outcome.summary()]) + "\n"


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def summary_markdown(outcome: RegressOutcome) -> str:
    """The step summary: a heading, the baseline and the rule, and one table row per row and metric."""
    decimals = outcome.decimals
    rows = [f"| {_cell(change.row)} | {_cell(change.metric)} | {_figure(change.baseline, decimals)} | "
            f"{_figure(change.now, decimals)} | {_figure(change.change, decimals, True)} | "
            f"{_interval(change, decimals)} | "
            f"{f'**{change.verdict}**' if change.verdict == REGRESSION else _cell(change.verdict)} |"
            for change in outcome.changes]
    return "\n".join([
        f"### readout regress: {'FAIL' if not outcome.ok else 'PASS'}"
        + (" (post hoc verdict)" if outcome.rule.post_hoc else ""), "",
        *("- " + _cell(line) for line in header_lines(outcome)), "",
        *(["| Row | Metric | Baseline | Now | Change | 95% interval | Verdict |",
           "| --- | --- | ---: | ---: | ---: | --- | --- |", *rows, ""] if rows else []),
        _cell(outcome.summary()), "", ""])


def append_step_summary(outcome: RegressOutcome) -> str | None:
    """Append the Markdown table to the file GITHUB_STEP_SUMMARY names (GitHub's protocol is to
    append); returns a warning line when that file cannot be written, None otherwise."""
    target = os.environ.get(SUMMARY_VARIABLE, "").strip()
    if not target:
        return None
    try:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(summary_markdown(outcome))
    except OSError as error:
        return f"regress: cannot append to ${SUMMARY_VARIABLE} ({clip(target, 80)}): {error.strerror or error}"
    return None


def run_regress(args: argparse.Namespace) -> int:
    outcome = regress(load_project(args.project), args.baseline)
    if args.format == "json":
        sys.stdout.write(dumps_json(outcome.as_dict()))
    elif args.format == "github":
        sys.stdout.write(format_github(outcome))
    else:
        sys.stdout.write(format_text(outcome))
    warning = append_step_summary(outcome)
    if warning is not None:
        print(warning, file=sys.stderr)
    return EXIT_OK if outcome.ok else EXIT_REGRESSION
