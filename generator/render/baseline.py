"""The `since_baseline` block: each row and metric of the design's `regression` block against the
baseline results file readout.yaml's `regression.baseline` names.

The same comparison `readout regress` gates on (generator.claims.record.noninferiority: the paired change, its
interval and its verdict against the design's margin, with the block as the freeze holds it),
read only from files: the baseline is the committed file, never a git ref, so a report reads the
same in every clone and `render --check` gives the same answer in a shallow one. Both sides are
re-derived from their run files and judgements first (the baseline's lie beside it), exactly as
`regress` re-derives them: a resealed file with other per-query values stops the render instead
of turning a regression into a pass. Other judgements, queries or corpus than the results' stop
the render, as they stop the gate. A block set or moved after the results existed marks every
verdict of the table post hoc, with the freeze that did it. Figures are shown at three decimals,
or more where fewer would round one onto the other side of the margin or of zero
(generator.claims.record.noninferiority.deciding_decimals). The template (templates/since-baseline.html.j2)
receives every value through its door; the verdict words are data, computed, never labels.
"""

from __future__ import annotations

from typing import Any

from generator.claims.record.frozen_rules import frozen_regression
from generator.claims.tracing.measured import changes_since_baseline
from generator.claims.record.noninferiority import deciding_decimals
from generator.project import Project
from generator.project.outputs import OutputSpec
from generator.render.doors import Door
from generator.render.labels import Labels
from generator.render.values import format_number
from generator.render.tables import sample_view
from generator.core.results import Results

BLOCK = "since_baseline"
# A report's tables show three decimals; more only where three would flip what a reader compares.
LEAST_DECIMALS = 3


def shows_since_baseline(spec: OutputSpec) -> bool:
    return any(BLOCK in section.show for section in spec.sections)


def since_baseline_view(project: Project, spec: OutputSpec, results: Results, door: Door,
                        labels: Labels) -> dict[str, Any] | None:
    """The table's rows (row, metric, baseline, now, change, interval, verdict), the baseline
    file, the margin and, when the block was set after the results, why the verdicts are post hoc;
    None when no section of this output shows the block."""
    if not shows_since_baseline(spec):
        return None
    rule = frozen_regression(project)
    block = rule.block
    changes, current = changes_since_baseline(project, rule)
    decimals = deciding_decimals(changes, block.margin, least=LEAST_DECIMALS)

    def figure(value: float | None, sign: str = "") -> Any:
        return door.data("not drawn" if value is None else format_number(value, f"{sign}.{decimals}f"))

    rows = [{"row": door.code(change.row), "metric": door.data(change.metric),
             "baseline": figure(change.baseline), "now": figure(change.now), "change": figure(change.change, "+"),
             "interval": (door.interval(figure(change.low, "+"), figure(change.high, "+"))
                          if change.low is not None and change.high is not None else figure(None)),
             "verdict": door.data(change.verdict)}
            for change in changes]
    return {"rows": rows, "file": door.code(project.regression_baseline), "margin": door.data(f"{block.margin:g}"),
            "sample": sample_view(current, door, labels),
            "post_hoc": door.data(rule.describe()) if rule.post_hoc else None,
            "post_hoc_mark": door.data("post hoc") if rule.post_hoc else None}
