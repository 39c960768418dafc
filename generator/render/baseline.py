"""The `since_baseline` block: each row and metric of the design's `regression` block against the
baseline results file readout.yaml's `regression.baseline` names.

The same comparison `readout regress` gates on (generator.noninferiority: the paired change, its
interval and its verdict against the design's margin), read only from files: the baseline is the
committed file, never a git ref, so a report reads the same in every clone and `render --check`
gives the same answer in a shallow one. Other judgements or other queries than the results'
stop the render, as they stop the gate. The template (templates/since-baseline.html.j2) receives
every value through its door; the verdict words are data, computed, never labels.
"""

from __future__ import annotations

from typing import Any

from generator.errors import InputError
from generator.fileio import display_path, reading
from generator.noninferiority import changes_since, require_regression_block
from generator.project import Project
from generator.project.outputs import OutputSpec
from generator.render.doors import Door
from generator.render.labels import Labels
from generator.render.values import format_number
from generator.render.views import sample_view
from generator.results import Results, read_results

BLOCK = "since_baseline"


def shows_since_baseline(spec: OutputSpec) -> bool:
    return any(BLOCK in section.show for section in spec.sections)


def read_baseline(project: Project) -> Results:
    """The baseline results file readout.yaml names (read as a file: no git)."""
    if project.regression_baseline is None:
        raise InputError("since_baseline needs regression.baseline: the committed baseline results file",
                         path=display_path(project.config_path), field="regression.baseline")
    path = project.resolve(project.regression_baseline)
    with reading(path):
        return read_results(path, project.regression_baseline,
                            missing="missing: the baseline results file readout.yaml's regression.baseline names "
                                    "(copy the last release's results.json there and commit it)")


def since_baseline_view(project: Project, spec: OutputSpec, results: Results, door: Door,
                        labels: Labels) -> dict[str, Any] | None:
    """The table's rows (row, metric, baseline, now, change, interval, verdict), the baseline
    file and the margin; None when no section of this output shows the block."""
    if not shows_since_baseline(spec):
        return None
    block = require_regression_block(project.design_dir)
    baseline = read_baseline(project)
    changes = changes_since(block, baseline, display_path(project.resolve(project.regression_baseline or "")),
                            results, display_path(results.path))
    rows = [{"row": door.code(change.row), "metric": door.data(change.metric),
             "baseline": door.data(format_number(change.baseline, ".3f")),
             "now": door.data(format_number(change.now, ".3f")),
             "change": door.data(format_number(change.change, "+.3f")),
             "interval": door.interval(door.data(format_number(change.low, "+.3f")),
                                       door.data(format_number(change.high, "+.3f"))),
             "verdict": door.data(change.verdict)}
            for change in changes]
    return {"rows": rows, "file": door.code(project.regression_baseline), "margin": door.data(f"{block.margin:g}"),
            "sample": sample_view(results, door, labels)}
