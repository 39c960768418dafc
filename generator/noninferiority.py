"""The design's `regression` block, and each row and metric's paired change since a baseline.

What a regression gate compares is fixed in the design, so it moves only with a freeze: one
fenced `regression` block in a design document (design/*.md, read the way the `trigger` and
`budget` blocks are, generator.claims.record.triggers)::

    ```regression
    rows: [hybrid, hybrid+rerank]     # rows of the results table
    metrics: [nDCG@5]                 # metrics of the per-query block
    margin: 0.01                      # the non-inferiority margin, in the metric's units, > 0
    baseline: outputs/baseline/results.json   # optional: a results file or a git ref
    ```

`changes_since` pairs two results files query by query and, for each row and metric, gives the
mean of the differences new minus baseline, its BCa bootstrap interval
(generator.core.comparisons.bootstrap_interval, seeded per row and metric with `seed_for`), wins,
ties and losses, and the verdict against the margin (generator.core.power.regression_verdict):
**regression** when the interval lies wholly below minus the margin, **non-inferior** when it
lies wholly above it, **inconclusive** when it reaches it (the sample cannot tell noise from a
loss of the margin's size).

Two files are compared only when they measured the same thing: the same judgements (the
manifest's `qrels_copy.sha256`) and the same queries (the query ids of each compared row's
per-query block). Any difference is refused with what differs, never compared on a subset: a
change against other judgements or other queries is not a change of the system.

No git here (generator.regression reads a baseline from git; a report reads only a file), and
NumPy and SciPy only when an interval is drawn and no signed memo (generator.memo) remembers it,
so a render that shows the change starts without them once it has been drawn.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.claims.record.triggers import design_fences
from generator.core.options import DEFAULT_BOOTSTRAP_RESAMPLES, DEFAULT_SEED
from generator.core.signflip import plain_float, wins_ties_losses
from generator.errors import InputError, clip
from generator.fileio import display_path
from generator.memo import default_memo
from generator.results import Results, seal_problem
from generator.safe_yaml import load_config_with_lines

BLOCK_INFO = "regression"
BLOCK_KEYS = ("rows", "metrics", "margin", "baseline")
# The verdicts (generator.core.power's words, repeated here so that reading them needs no SciPy).
REGRESSION = "regression"
NON_INFERIOR = "non-inferior"
INCONCLUSIVE = "inconclusive"
VERDICTS = (REGRESSION, INCONCLUSIVE, NON_INFERIOR)
CONFIDENCE = 0.95
MAX_LISTED = 5
HOW_TO_ADD = ("add a fenced ```regression block to a design document (design/*.md) holding rows: [ROW, ...], "
              "metrics: [METRIC, ...] and margin: NUMBER (the non-inferiority margin, > 0), then `readout freeze`")


@dataclass(frozen=True)
class RegressionBlock:
    """The design's `regression` block: what is compared, and the margin a loss must clear."""

    rows: tuple[str, ...]
    metrics: tuple[str, ...]
    margin: float
    baseline: str | None
    document: str                   # the design document, as a path is shown
    line: int                       # the block's first line
    lines: dict[str, int] = field(default_factory=dict)   # key -> line

    def where(self, key: str) -> dict[str, Any]:
        """InputError's location of one of the block's keys."""
        return {"path": self.document, "line": self.lines.get(key, self.line), "field": key}

    def as_dict(self) -> dict[str, Any]:
        return {"rows": list(self.rows), "metrics": list(self.metrics), "margin": self.margin,
                "baseline": self.baseline, "document": self.document, "line": self.line}


@dataclass(frozen=True)
class Change:
    """One row and metric: the paired change since the baseline, and its verdict."""

    row: str
    metric: str
    queries: int
    baseline: float         # the baseline's mean over the queries
    now: float              # the new mean over the same queries
    change: float           # the mean of the per-query differences, new minus baseline
    low: float              # its interval
    high: float
    interval_method: str
    wins: int               # queries better now, tied, worse now
    ties: int
    losses: int
    verdict: str

    def as_dict(self) -> dict[str, Any]:
        return {"row": self.row, "metric": self.metric, "queries": self.queries, "baseline": self.baseline,
                "now": self.now, "change": self.change, "ci95_low": self.low, "ci95_high": self.high,
                "interval_method": self.interval_method, "wins": self.wins, "ties": self.ties,
                "losses": self.losses, "verdict": self.verdict}


# --------------------------------------------------------------------------- the design's block


def read_regression_block(design_dir: Path) -> RegressionBlock | None:
    """The `regression` block of the design documents, validated; None when there is none."""
    found = [(content, line, shown) for _, content, line, _, _, shown in design_fences(design_dir, (BLOCK_INFO,))]
    if not found:
        return None
    if len(found) > 1:
        _, line, shown = found[1]
        raise InputError(f"a second regression block (the first is at {found[0][2]}:{found[0][1]}): the design "
                         "fixes one", path=shown, line=line)
    return _read_block(*found[0])


def require_regression_block(design_dir: Path) -> RegressionBlock:
    block = read_regression_block(design_dir)
    if block is None:
        raise InputError(f"no regression block in the design: {HOW_TO_ADD}", path=display_path(design_dir))
    return block


def _read_block(content: str, line: int, shown: str) -> RegressionBlock:
    try:
        data, lines = load_config_with_lines(content, shown)
    except InputError as error:
        raise InputError(error.reason, path=shown, line=line + (error.line or 1) - 1) from None
    if not isinstance(data, dict):
        raise InputError("a regression block holds a YAML mapping of rows, metrics, margin and (optionally) "
                         "baseline", path=shown, line=line)

    def line_of(key: str) -> int:
        return line + (lines.line(key) or 1) - 1

    unknown = sorted(str(key) for key in data if key not in BLOCK_KEYS)
    if unknown:
        raise InputError(f"unknown key; a regression block holds {', '.join(BLOCK_KEYS)}", path=shown,
                         line=line_of(unknown[0]), field=clip(unknown[0], 40))
    for key in ("rows", "metrics", "margin"):
        if key not in data:
            raise InputError(f"missing; {HOW_TO_ADD}", path=shown, line=line, field=key)
    names = {}
    for key, what in (("rows", "rows of the results table, e.g. [hybrid]"), ("metrics", "metrics, e.g. [nDCG@5]")):
        value = data[key]
        if not isinstance(value, list) or not value or not all(isinstance(item, str) and item.strip()
                                                               for item in value):
            raise InputError(f"a non-empty list of {what}", path=shown, line=line_of(key), field=key)
        repeated = sorted(item for item, times in Counter(value).items() if times > 1)   # linear in the names
        if repeated:
            raise InputError(f"{clip(repeated[0], 40)!r} is listed twice", path=shown, line=line_of(key), field=key)
        names[key] = tuple(item.strip() for item in value)
    margin = data["margin"]
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not math.isfinite(margin) or margin <= 0:
        raise InputError(f"the non-inferiority margin in the metric's units: a number > 0, got {clip(str(margin), 40)}",
                         path=shown, line=line_of("margin"), field="margin")
    baseline = data.get("baseline")
    if baseline is not None and (not isinstance(baseline, str) or not baseline.strip() or "\x00" in baseline):
        raise InputError("a results file (relative to the project) or a git ref, e.g. v1.2 or "
                         "outputs/baseline/results.json", path=shown, line=line_of("baseline"), field="baseline")
    return RegressionBlock(rows=names["rows"], metrics=names["metrics"], margin=float(margin),
                           baseline=baseline.strip() if baseline else None, document=shown, line=line,
                           lines={key: line_of(key) for key in data})


# --------------------------------------------------------------------------- the comparison


def _listed(items: list[str]) -> str:
    shown = ", ".join(clip(item, 40) for item in items[:MAX_LISTED])
    return shown + (f" and {len(items) - MAX_LISTED:,} more" if len(items) > MAX_LISTED else "") if items else "(none)"


def _require_sealed(results: Results, shown: str) -> None:
    problem = seal_problem(results.written)
    if problem:
        raise InputError(problem, path=shown)


def _judgements(results: Results) -> str | None:
    digest = results.model.manifest_block("qrels_copy").get("sha256")
    return digest if isinstance(digest, str) and digest else None


def _require_rows_and_metrics(block: RegressionBlock, files: list[tuple[str, Results]]) -> None:
    """Every row of the block measured, with per-query values, in both files; every metric in them."""
    for shown, results in files:
        model = results.model
        unknown = [row for row in block.rows if row not in model.row_names]
        if unknown:
            raise InputError(f"unknown row{'s' if len(unknown) > 1 else ''} {_listed(unknown)}: not in {shown} "
                             f"(its rows: {_listed(model.row_names)})", **block.where("rows"))
        unmeasured = [row for row in block.rows if not model.measured(row) or not model.per_query(row)]
        if unmeasured:
            raise InputError(f"{_listed(unmeasured)} not measured query by query in {shown}: a change needs "
                             "per-query values on both sides", **block.where("rows"))
        known = set.intersection(*(set(values) for row in block.rows for values in model.per_query(row).values()))
        unknown = [metric for metric in block.metrics if metric not in known]
        if unknown:
            raise InputError(f"unknown metric{'s' if len(unknown) > 1 else ''} {_listed(unknown)}: not measured per "
                             f"query in {shown} (its metrics: {_listed(model.metric_names or sorted(known))})",
                             **block.where("metrics"))


def _require_comparable(block: RegressionBlock, baseline: Results, baseline_shown: str, current: Results,
                        current_shown: str) -> list[str]:
    """The query ids both files share, after refusing any difference of judgements or queries."""
    then, now = _judgements(baseline), _judgements(current)
    for digest, shown in ((then, baseline_shown), (now, current_shown)):
        if digest is None:
            raise InputError("records no hash of its judgements (manifest.qrels_copy.sha256), so a change "
                             "against it cannot be told from a change of the judgements", path=shown)
    if then != now:
        raise InputError(f"the judgements differ from the baseline's ({baseline_shown}): qrels sha256 "
                         f"{now[:12]} now, {then[:12]} in the baseline; a change measured on other judgements is "
                         "not a change of the system (measure the baseline again on these)", path=current_shown)
    queries: set[str] | None = None
    for row in block.rows:
        before, after = set(baseline.model.per_query(row)), set(current.model.per_query(row))
        if before != after:
            raise InputError(f"the query sets differ from the baseline's ({baseline_shown}) in row {row}: "
                             f"{len(after):,} queries now, {len(before):,} in the baseline; only now: "
                             f"{_listed(sorted(after - before))}; only in the baseline: "
                             f"{_listed(sorted(before - after))} (compare runs on the same queries)",
                             path=current_shown)
        if queries is not None and after != queries:
            raise InputError(f"row {row} holds other queries than row {block.rows[0]}: the rows compared must "
                             "share one query set", path=current_shown)
        queries = after
    return sorted(queries or ())


def _scores(results: Results, shown: str, row: str, metric: str, queries: list[str]) -> list[float]:
    by_query = results.model.per_query(row)
    scores = []
    for query in queries:
        value = by_query[query].get(metric)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise InputError(f"per_query.{row}.{clip(query, 40)}.{metric} is {clip(str(value), 40)!r}, not a number",
                             path=shown)
        scores.append(float(value))
    return scores


def changes_since(block: RegressionBlock, baseline: Results, baseline_shown: str, current: Results,
                  current_shown: str) -> list[Change]:
    """Each row and metric of the block, in the block's order: the paired change since the
    baseline and its verdict. Raises InputError when the files cannot be compared."""
    _require_sealed(baseline, baseline_shown)
    _require_sealed(current, current_shown)
    _require_rows_and_metrics(block, [(current_shown, current), (baseline_shown, baseline)])
    queries = _require_comparable(block, baseline, baseline_shown, current, current_shown)
    pairs = [(row, metric, _scores(baseline, baseline_shown, row, metric, queries),
              _scores(current, current_shown, row, metric, queries))
             for row in block.rows for metric in block.metrics]
    inputs = {"baseline": baseline.sha256, "now": current.sha256, "rows": list(block.rows),
              "metrics": list(block.metrics), "margin": block.margin, "resamples": DEFAULT_BOOTSTRAP_RESAMPLES,
              "seed": DEFAULT_SEED, "confidence": CONFIDENCE}
    measured = default_memo().remembered("change since baseline", inputs, lambda: _measure(pairs, block.margin))
    return [Change(**entry) for entry in measured]


def _measure(pairs: list[tuple[str, str, list[float], list[float]]], margin: float) -> list[dict[str, Any]]:
    """The numbers of each (row, metric): NumPy and SciPy, imported here so that a remembered
    comparison (and every command that draws none) runs without them."""
    from generator.core.comparisons import bootstrap_interval, seed_for
    from generator.core.power import regression_verdict

    measured = []
    for row, metric, before, after in pairs:
        differences = [new - old for new, old in zip(after, before)]
        seed = seed_for(DEFAULT_SEED, f"{row}_since_baseline", metric)
        low, high, method = bootstrap_interval(differences, seed=seed, resamples=DEFAULT_BOOTSTRAP_RESAMPLES,
                                               confidence=CONFIDENCE)
        wins, ties, losses = wins_ties_losses(differences)
        count = len(differences)
        measured.append({"row": row, "metric": metric, "queries": count,
                         "baseline": plain_float(math.fsum(before) / count),
                         "now": plain_float(math.fsum(after) / count),
                         "change": plain_float(math.fsum(differences) / count), "low": low, "high": high,
                         "interval_method": method, "wins": wins, "ties": ties, "losses": losses,
                         "verdict": regression_verdict(low, high, margin)})
    return measured
