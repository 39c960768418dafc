"""The design's `regression` block: what `readout regress` compares, the non-inferiority margin a
loss must clear and what an inconclusive change does, read from the design documents and validated.

It is frozen like a decision's rule (generator.claims.record.freeze) and evaluated against a
baseline by generator.claims.record.noninferiority; the margin is read from the block's text, not
from YAML's typing of it, so what the reader sees is what decides.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import field
from pathlib import Path
from typing import Any

from generator.claims.record.fences import _block, design_fences
from generator.core.dataclass import dataclass
from generator.storage.errors import InputError, clip
from generator.core.results import RESULTS_NAME
from generator.storage.safe_yaml import parse_yaml

# The design's `regression` block: what `readout regress` compares, and what it must rule out.
REGRESSION_INFO = "regression"
REGRESSION_KEYS = ("rows", "metrics", "margin", "inconclusive", "file", "baseline")
# What an inconclusive change (or one the sample cannot decide) does to the gate, pre-registered
# with the margin: `warn` (exit 0, said) when the block says nothing, so a design written before
# the policy existed reads as it always has; `fail` (exit 1).
INCONCLUSIVE_POLICIES = ("warn", "fail")
DEFAULT_INCONCLUSIVE = "warn"
# Every measure readout computes (recall, precision, reciprocal rank, average precision, nDCG;
# generator.core.metrics) lies in [0, 1], so a change lies in [-1, 1]: a margin of 1 or more
# rules out no loss at all.
METRIC_RANGE = (0.0, 1.0)
# A margin is written as a plain decimal: YAML 1.1 would read `0x10` as 16 and `1_000` as 1000.
_DECIMAL = re.compile(r"^[+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$")
HOW_TO_ADD_REGRESSION = ("add a fenced ```regression block to a design document (design/*.md) holding rows: "
                         "[ROW, ...], metrics: [METRIC, ...] and margin: NUMBER (the non-inferiority margin, > 0), "
                         "then `readout freeze`")


@dataclass(frozen=True)
class RegressionBlock:
    """The design's `regression` block: what is compared, the margin a loss must clear, and what an
    inconclusive change does. Frozen like a decision's rule (generator.claims.record.freeze)."""

    rows: tuple[str, ...]
    metrics: tuple[str, ...]
    margin: float
    baseline: str | None
    document: str                   # the design document, as a path is shown
    line: int                       # the block's first line
    lines: dict[str, int] = field(default_factory=dict)   # key -> line
    inconclusive: str = DEFAULT_INCONCLUSIVE
    file: str = RESULTS_NAME        # the results file in outputs/ whose query set decides
    name: str = ""                  # the design document's name in design/

    def where(self, key: str) -> dict[str, Any]:
        """InputError's location of one of the block's keys."""
        return {"path": self.document, "line": self.lines.get(key, self.line), "field": key}

    def as_dict(self) -> dict[str, Any]:
        return {"rows": list(self.rows), "metrics": list(self.metrics), "margin": self.margin,
                "inconclusive": self.inconclusive, "file": self.file, "baseline": self.baseline,
                "document": self.document, "line": self.line}

    def snapshot(self) -> dict[str, Any]:
        """What a freeze keeps of the block: everything that decides a verdict."""
        return {"rows": list(self.rows), "metrics": list(self.metrics), "margin": self.margin,
                "inconclusive": self.inconclusive, "file": self.file, "baseline": self.baseline,
                "document": self.name}


def read_regression_block(design_dir: Path) -> RegressionBlock | None:
    """The `regression` block of the design documents, validated; None when there is none."""
    return _regression_block(design_fences(design_dir, (REGRESSION_INFO,)))


def _regression_block(found: list[tuple[str, str, int, str | None, str, str]]) -> RegressionBlock | None:
    if not found:
        return None
    if len(found) > 1:
        first, second = found[0], found[1]
        raise InputError(f"a second regression block (the first is at {first[5]}:{first[2]}): the design fixes one",
                         path=second[5], line=second[2])
    _, content, line, _, name, shown = found[0]
    data, line_of = _block(content, line, shown, what="a regression block holds a YAML mapping of rows, metrics, "
                                                       "margin and (optionally) inconclusive, file and baseline")
    unknown = sorted(str(key) for key in data if key not in REGRESSION_KEYS)
    if unknown:
        raise InputError(f"unknown key; a regression block holds {', '.join(REGRESSION_KEYS)}", path=shown,
                         line=line_of(unknown[0]), field=clip(unknown[0], 40))
    for key in ("rows", "metrics", "margin"):
        if key not in data:
            raise InputError(f"missing; {HOW_TO_ADD_REGRESSION}", path=shown, line=line, field=key)
    names = {}
    for key, what in (("rows", "rows of the results table, e.g. [hybrid]"), ("metrics", "metrics, e.g. [nDCG@5]")):
        value = data[key]
        if not isinstance(value, list) or not value or not all(isinstance(item, str) and item.strip()
                                                               for item in value):
            raise InputError(f"a non-empty list of {what}", path=shown, line=line_of(key), field=key)
        stripped = [item.strip() for item in value]
        repeated = sorted(item for item, times in Counter(stripped).items() if times > 1)   # linear in the names
        if repeated:
            raise InputError(f"{clip(repeated[0], 40)!r} is listed twice", path=shown, line=line_of(key), field=key)
        names[key] = tuple(stripped)
    margin = _margin(content, data["margin"], shown, line_of("margin"))
    policy = data.get("inconclusive", DEFAULT_INCONCLUSIVE)
    if policy not in INCONCLUSIVE_POLICIES:
        raise InputError(f"what an inconclusive change does to the gate: {' or '.join(INCONCLUSIVE_POLICIES)} "
                         f"(default {DEFAULT_INCONCLUSIVE}), got {clip(str(policy), 40)!r}", path=shown,
                         line=line_of("inconclusive"), field="inconclusive")
    results_file = data.get("file", RESULTS_NAME)
    if (not isinstance(results_file, str) or not re.fullmatch(r"results(?:-[A-Za-z0-9_-]{1,40})?\.json",
                                                               results_file)):
        raise InputError("the results file in outputs/ whose query set decides, e.g. results.json or "
                         "results-all.json", path=shown, line=line_of("file"), field="file")
    baseline = data.get("baseline")
    if baseline is not None and (not isinstance(baseline, str) or not baseline.strip() or "\x00" in baseline):
        raise InputError("a results file (relative to the project) or a git ref, e.g. v1.2 or "
                         "baseline/results.json", path=shown, line=line_of("baseline"), field="baseline")
    return RegressionBlock(rows=names["rows"], metrics=names["metrics"], margin=margin,
                           baseline=baseline.strip() if baseline else None, document=shown, line=line,
                           lines={str(key): line_of(str(key)) for key in data}, inconclusive=policy,
                           file=results_file, name=name)


def _margin(content: str, value: Any, shown: str, line: int) -> float:
    """The margin as written: a plain decimal strictly inside the metric's range. The text is read,
    not YAML's typing of it, so `0x10` or `1_000` (YAML 1.1's 16 and 1000) are refused."""
    low, high = METRIC_RANGE
    shape = (f"the non-inferiority margin in the metric's units: a plain decimal above {low:g} and below "
             f"{high - low:g} (every metric lies in [{low:g}, {high:g}]), e.g. 0.01")
    written = None
    if isinstance(value, (int, float, str)) and not isinstance(value, bool):
        root = parse_yaml(content, shown)
        node = root.value.get("margin") if root is not None and isinstance(root.value, dict) else None
        written = node[1].value if node is not None and isinstance(node[1].value, str) else None
    if written is None or not _DECIMAL.match(written.strip()):
        raise InputError(f"{shape}, got {clip(str(written if written is not None else value), 40)}", path=shown,
                         line=line, field="margin")
    margin = float(written.strip())
    if not math.isfinite(margin) or not 0.0 < margin < high - low:
        raise InputError(f"{shape}, got {clip(written.strip(), 40)}", path=shown, line=line, field="margin")
    return margin
