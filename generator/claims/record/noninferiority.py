"""Each row and metric's paired change since a baseline, and its verdict against the design's margin.

What a regression gate compares is fixed in the design, so it moves only with a freeze: one
fenced `regression` block in a design document (design/*.md), read with the design's other
rules and kept in the freeze's rules snapshot (generator.claims.record.regression_block and .freeze)::

    ```regression
    rows: [hybrid, hybrid+rerank]     # rows of the results table
    metrics: [nDCG@5]                 # metrics of the per-query block
    margin: 0.01                      # the non-inferiority margin, a plain decimal in (0, 1)
    inconclusive: fail                # optional: fail or warn (default) on an inconclusive change
    file: results-all.json            # optional: the results file whose query set decides
    baseline: baseline/results.json   # optional: a results file or a git ref
    ```

`changes_since` pairs two results files query by query and, for each row and metric, gives the
mean of the differences new minus baseline, its BCa bootstrap interval
(generator.core.comparisons.bootstrap_interval, seeded per row and metric with `seed_for`), wins,
ties and losses, and the verdict against the margin m (generator.core.power.regression_verdict):

- **regression** when the interval lies wholly below -m, or lies wholly below zero while the
  change itself is beyond -m (a loss the sample tells from noise, most likely larger than the
  margin: never a pass);
- **non-inferior** when the interval lies wholly above -m;
- **inconclusive** otherwise, with the queries that would decide it: the sample size at which the
  paired test detects a change of the margin (generator.core.power.queries_needed, at power 0.8
  and alpha 0.05, with this sample's spread);
- **cannot be decided** below the fewest queries any paired test can decide on
  (generator.core.sample_size): no interval is drawn from them.

Two files are compared only when they measured the same thing, each difference refused with what
differs, in this order: the corpus (the manifest's corpus sha256), the query set (the query ids,
and which set: the release sample or every test query), the judgements (the manifest's
`qrels_copy.sha256`, which holds exactly the judgements of those queries), each metric's
definition (`manifest.metrics`) and each compared row's per-query ids. A change against another
corpus, other queries, other judgements or another metric is not a change of the system.

`deciding_decimals` gives the precision every figure is shown at: four decimals, or more when
fewer would round an endpoint or the change onto the other side of -m or 0 (an interval
[-0.01004, ...] is never shown as [-0.0100, ...] against a margin of 0.01).

No git here (generator.commands.regression_baseline reads a baseline from git; a report reads only files), and
NumPy and SciPy only when an interval is drawn and no signed memo (generator.storage.memo) remembers it,
so a render that shows the change starts without them once it has been drawn.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterable

from generator.claims.record.regression_block import (DEFAULT_INCONCLUSIVE, HOW_TO_ADD_REGRESSION,
                                                      INCONCLUSIVE_POLICIES, RegressionBlock, read_regression_block)
from generator.core.dataclass import dataclass
from generator.core.options import DEFAULT_BOOTSTRAP_RESAMPLES, DEFAULT_SEED
from generator.core.sample_size import minimum_queries, too_few_queries
from generator.core.signflip import plain_float, wins_ties_losses
from generator.storage.errors import InputError, clip
from generator.storage.paths import display_path
from generator.storage.memo import default_memo
from generator.core.results import Results, seal_problem
from generator.core.results.model import corpus_input

__all__ = ["CONFIDENCE", "DEFAULT_INCONCLUSIVE", "HOW_TO_ADD", "INCONCLUSIVE", "INCONCLUSIVE_POLICIES",
           "NON_INFERIOR", "REGRESSION", "UNDECIDED", "VERDICTS", "Change", "RegressionBlock", "changes_since",
           "deciding_decimals", "read_regression_block", "require_regression_block"]

HOW_TO_ADD = HOW_TO_ADD_REGRESSION
# The verdicts (generator.core.power's words, repeated here so that reading them needs no SciPy).
REGRESSION = "regression"
NON_INFERIOR = "non-inferior"
INCONCLUSIVE = "inconclusive"
UNDECIDED = "cannot be decided"
VERDICTS = (REGRESSION, INCONCLUSIVE, UNDECIDED, NON_INFERIOR)
CONFIDENCE = 0.95
# The power a sample that would decide an inconclusive change is sized for (generator.core.power).
DECIDING_POWER = 0.8
MAX_LISTED = 5
# Figures are shown at this many decimals at least, and at most this many (a value within 1e-15 of
# a threshold is shown in full).
LEAST_DECIMALS, MOST_DECIMALS = 4, 15
QUERY_SET_NAMES = {"sample": "the release sample", "all": "every test query"}
# What the verdict rule is, for the memo: a remembered comparison made under an older rule is not reused.
VERDICT_RULE = 2


def require_regression_block(design_dir: Path) -> RegressionBlock:
    block = read_regression_block(design_dir)
    if block is None:
        raise InputError(f"no regression block in the design: {HOW_TO_ADD}", path=display_path(design_dir))
    return block


@dataclass(frozen=True)
class Change:
    """One row and metric: the paired change since the baseline, and its verdict."""

    row: str
    metric: str
    queries: int
    baseline: float         # the baseline's mean over the queries
    now: float              # the new mean over the same queries
    change: float           # the mean of the per-query differences, new minus baseline
    low: float | None       # its interval (None: too few queries to draw one)
    high: float | None
    interval_method: str | None
    wins: int               # queries better now, tied, worse now
    ties: int
    losses: int
    verdict: str
    why: str | None = None              # why it cannot be decided
    queries_needed: int | None = None   # inconclusive or undecided: the queries that would decide it
    sd: float | None = None             # the standard deviation of the differences

    def as_dict(self) -> dict[str, Any]:
        return {"row": self.row, "metric": self.metric, "queries": self.queries, "baseline": self.baseline,
                "now": self.now, "change": self.change, "ci95_low": self.low, "ci95_high": self.high,
                "interval_method": self.interval_method, "wins": self.wins, "ties": self.ties,
                "losses": self.losses, "verdict": self.verdict, "why": self.why,
                "queries_needed": self.queries_needed, "sd_difference": self.sd}


def deciding_decimals(changes: Iterable[Change], margin: float, *, least: int = LEAST_DECIMALS) -> int:
    """The fewest decimals (at least `least`) at which no shown change or endpoint crosses -margin
    or 0 by rounding: what the reader compares stays on the side the verdict read."""
    values = [value for change in changes for value in (change.change, change.low, change.high) if value is not None]
    for decimals in range(least, MOST_DECIMALS + 1):
        if all(_same_side(value, decimals, threshold) for value in values for threshold in (-margin, 0.0)):
            return decimals
    return MOST_DECIMALS


def _same_side(value: float, decimals: int, threshold: float) -> bool:
    shown = float(f"{value:.{decimals}f}")
    return (shown > threshold) == (value > threshold) and (shown < threshold) == (value < threshold)


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


def _corpus(results: Results) -> tuple[str, str] | None:
    """(the corpus file's name, its sha256) as the manifest records it, or None."""
    found = corpus_input(results.model.manifest_block("inputs"))
    if found is None or not isinstance(found[1].get("sha256"), str):
        return None
    return found[0], found[1]["sha256"]


def _query_set(results: Results, queries: set[str]) -> str:
    name = QUERY_SET_NAMES.get(results.model.query_set or "")
    return f"{len(queries):,} queries" + (f", {name}" if name else "")


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


def _require_same_corpus(baseline: Results, baseline_shown: str, current: Results, current_shown: str) -> None:
    then, now = _corpus(baseline), _corpus(current)
    if then == now:
        return
    said = {shown: f"{found[0]} sha256 {found[1][:12]}" if found else "no corpus hash"
            for shown, found in ((baseline_shown, then), (current_shown, now))}
    raise InputError(f"measured on another corpus than the baseline ({baseline_shown}): {said[current_shown]} now, "
                     f"{said[baseline_shown]} in the baseline: not a change of the system; measure the baseline again "
                     "on this corpus", path=current_shown)


def _require_same_queries(block: RegressionBlock, baseline: Results, baseline_shown: str, current: Results,
                          current_shown: str) -> None:
    before, after = set(baseline.model.query_ids), set(current.model.query_ids)
    if before == after:
        return
    only_now, only_then = sorted(after - before), sorted(before - after)
    first = ", ".join(clip(query, 20) for query in (only_now or only_then)[:2])
    raise InputError(f"the query sets differ: {_query_set(current, after)} now, {_query_set(baseline, before)} in the "
                     f"baseline ({baseline_shown}); {len(only_now):,} only now, {len(only_then):,} only in the "
                     f"baseline (first: {first}); compare with a baseline of {block.file}", path=current_shown)


def _require_same_judgements(baseline: Results, baseline_shown: str, current: Results, current_shown: str) -> None:
    then, now = _judgements(baseline), _judgements(current)
    for digest, shown in ((then, baseline_shown), (now, current_shown)):
        if digest is None:
            raise InputError("records no hash of its judgements (manifest.qrels_copy.sha256), so a change "
                             "against it cannot be told from a change of the judgements", path=shown)
    if then != now:
        raise InputError(f"the judgements differ from the baseline's ({baseline_shown}): qrels sha256 "
                         f"{now[:12]} now, {then[:12]} in the baseline; a change measured on other judgements is "
                         "not a change of the system (measure the baseline again on these)", path=current_shown)


def _require_same_metrics(block: RegressionBlock, baseline: Results, baseline_shown: str, current: Results,
                          current_shown: str) -> None:
    for metric in block.metrics:
        then = baseline.model.manifest_block("metrics").get(metric)
        now = current.model.manifest_block("metrics").get(metric)
        if then != now:
            raise InputError(f"metric {clip(metric, 40)} is defined otherwise than in the baseline ({baseline_shown}): "
                             f"{clip(str(now), 80)} now, {clip(str(then), 80)} in the baseline; a change of the "
                             "metric is not a change of the system (measure the baseline again with this "
                             "definition)", path=current_shown)


def _require_comparable(block: RegressionBlock, baseline: Results, baseline_shown: str, current: Results,
                        current_shown: str) -> list[str]:
    """The query ids both files share, after refusing any difference of corpus, query set,
    judgements or metric definition."""
    _require_same_corpus(baseline, baseline_shown, current, current_shown)
    _require_same_queries(block, baseline, baseline_shown, current, current_shown)
    _require_same_judgements(baseline, baseline_shown, current, current_shown)
    _require_same_metrics(block, baseline, baseline_shown, current, current_shown)
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
    baseline and its verdict. Raises InputError when the files cannot be compared. Both files
    must have been re-derived by the caller (generator.commands.regression; generator.render.baseline):
    a seal proves only that nobody changed a file since it was sealed, not what it says."""
    _require_sealed(baseline, baseline_shown)
    _require_sealed(current, current_shown)
    _require_rows_and_metrics(block, [(current_shown, current), (baseline_shown, baseline)])
    queries = _require_comparable(block, baseline, baseline_shown, current, current_shown)
    pairs = [(row, metric, _scores(baseline, baseline_shown, row, metric, queries),
              _scores(current, current_shown, row, metric, queries))
             for row in block.rows for metric in block.metrics]
    inputs = {"baseline": baseline.sha256, "now": current.sha256, "rows": list(block.rows),
              "metrics": list(block.metrics), "margin": block.margin, "resamples": DEFAULT_BOOTSTRAP_RESAMPLES,
              "seed": DEFAULT_SEED, "confidence": CONFIDENCE, "rule": VERDICT_RULE}
    measured = default_memo().remembered("change since baseline", inputs, lambda: _measure(pairs, block.margin))
    return [Change(**entry) for entry in measured]


def _measure(pairs: list[tuple[str, str, list[float], list[float]]], margin: float) -> list[dict[str, Any]]:
    """The numbers of each (row, metric): NumPy and SciPy, imported here so that a remembered
    comparison (and every command that draws none) runs without them."""
    from generator.core.comparisons import bootstrap_interval, seed_for
    from generator.core.power import queries_needed, regression_verdict

    alpha = 1.0 - CONFIDENCE
    least = minimum_queries(alpha)
    measured = []
    for row, metric, before, after in pairs:
        differences = [new - old for new, old in zip(after, before)]
        wins, ties, losses = wins_ties_losses(differences)
        count = len(differences)
        change = plain_float(math.fsum(differences) / count)
        entry = {"row": row, "metric": metric, "queries": count, "baseline": plain_float(math.fsum(before) / count),
                 "now": plain_float(math.fsum(after) / count), "change": change, "wins": wins, "ties": ties,
                 "losses": losses, "low": None, "high": None, "interval_method": None, "why": None,
                 "queries_needed": None, "sd": None}
        too_few = too_few_queries(count, alpha)
        if too_few is not None:
            measured.append({**entry, "verdict": UNDECIDED, "why": too_few, "queries_needed": least})
            continue
        seed = seed_for(DEFAULT_SEED, f"{row}_since_baseline", metric)
        low, high, method = bootstrap_interval(differences, seed=seed, resamples=DEFAULT_BOOTSTRAP_RESAMPLES,
                                               confidence=CONFIDENCE)
        sd = plain_float(math.sqrt(math.fsum((d - change) ** 2 for d in differences) / (count - 1)))
        verdict = regression_verdict(low, high, margin, estimate=change)
        needed = None
        if verdict == INCONCLUSIVE:
            needed = queries_needed(sd, margin, alpha=alpha, power=DECIDING_POWER)
            needed = max(needed, least) if needed is not None else None
        measured.append({**entry, "low": low, "high": high, "interval_method": method, "verdict": verdict,
                         "queries_needed": needed, "sd": sd})
    return measured
