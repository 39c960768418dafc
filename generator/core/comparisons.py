"""Paired comparisons of any row against any baseline: a BCa bootstrap interval and a sign-flip test.

The readout's decision rule compares more than each row with dense (the nDCG@5 lift of
hybrid+rerank over hybrid), and a sample of a few dozen queries needs a better interval than a
plain percentile one. This module gives, for one (comparison, metric):

- ``delta``: the mean of the per-query differences ``d_i = row_i - base_i`` (sign kept: positive
  means the row is better), validated by :func:`uncertainty.paired_differences`;
- a bias-corrected and accelerated (BCa) bootstrap interval of that mean from
  ``scipy.stats.bootstrap((d,), numpy.mean, method="BCa")``. Resampling the queries' differences
  as one sample keeps the pairing, so this is the paired bootstrap. When every difference is
  the same value c the interval is ``(c, c)`` without resampling; when BCa is undefined (see
  :func:`bootstrap_interval`) the percentile interval of the very same resamples is used and
  ``interval_method`` says why;
- the two-sided sign-flip p-value exactly as :func:`uncertainty.paired_permutation_test`
  computes it (exact up to ``exact_max_queries`` non-zero differences, Monte Carlo above);
- wins, ties and losses (:func:`signflip.wins_ties_losses`), and whether the interval and the
  p-value agree that the difference is distinguishable from zero.

Every (comparison, metric) resamples from its own generator, seeded by :func:`seed_for`, so the
Monte Carlo errors of different intervals are not correlated.

Pure functions: inputs in, JSON-ready plain ``float``/``int``/``str``/``bool`` out (never
``-0.0``); bad arguments raise ``ValueError``. The same inputs and seed give the same numbers on
the same NumPy and SciPy versions (record both next to the seed).
"""

from __future__ import annotations

import hashlib
import math
import warnings
from typing import Any, Mapping, Sequence

import numpy as np
import scipy.stats

from generator.core.options import DEFAULT_BOOTSTRAP_RESAMPLES, DEFAULT_PERMUTATION_RESAMPLES, DEFAULT_SEED
from generator.core.signflip import (AGREE, DEFAULT_TOLERANCE, SIGNIFICANCE, agreement, plain_float,  # noqa: F401
                                         wins_ties_losses)
from generator.core.uncertainty import (DEFAULT_CONFIDENCE, DEFAULT_EXACT_MAX_QUERIES, EXACT_MAX_QUERIES_LIMIT,
                                            _check_confidence, _check_int, _check_seed, paired_differences,
                                            paired_permutation_test)

SEED_MODULUS = 2 ** 32

INTERVAL_BCA = "BCa bootstrap"
INTERVAL_ALL_EQUAL = "all differences equal"
INTERVAL_PERCENTILE = "percentile bootstrap"


# --------------------------------------------------------------------------- seeds


def comparison_key(row: str, baseline: str) -> str:
    """The name of one comparison, ``"<row>_vs_<baseline>"`` (the key in the block and the seed)."""
    return f"{row}_vs_{baseline}"


def seed_for(base_seed: int, comparison: str, metric: str) -> int:
    """A seed of its own for one (comparison, metric): ``sha256("<base_seed>:<comparison>:<metric>")``
    read as a big-endian integer, modulo 2**32.

    Different comparisons or metrics get unrelated resampling streams; the same three always
    give the same seed, on any platform and Python version.

    Raises:
        ValueError: ``base_seed`` is not a non-negative integer, or a name is not a string.
    """
    base_seed = _check_seed(base_seed)
    for name, value in (("comparison", comparison), ("metric", metric)):
        if not isinstance(value, str) or not value:
            raise ValueError(f"{name} must be a non-empty string, got {value!r}")
    digest = hashlib.sha256(f"{base_seed}:{comparison}:{metric}".encode("utf-8")).digest()
    return int.from_bytes(digest, "big") % SEED_MODULUS


# --------------------------------------------------------------------------- the interval


#: Resampled values SciPy may hold at once (8 bytes each: 400 MB). Below it the bootstrap runs in
#: one batch, as every results file written so far was drawn; above it (100,000 queries draw 7.45
#: GiB at 10,000 resamples) in batches of whole resamples from the same generator.
BOOTSTRAP_ELEMENTS_AT_ONCE = 50_000_000
#: Above this many queries the interval is the percentile bootstrap: BCa's jackknife recomputes the
#: mean n times over n - 1 values (minutes at 100,000 queries), and with that many queries the
#: bias correction and acceleration it adds are negligible.
BCA_MAX_QUERIES = 20_000


def bootstrap_batch(queries: int, resamples: int) -> int | None:
    """The resamples SciPy draws per batch: None (all at once) unless that would exceed
    BOOTSTRAP_ELEMENTS_AT_ONCE values; BCa's jackknife (n x (n - 1) values) is batched alike."""
    if queries * max(resamples, queries) <= BOOTSTRAP_ELEMENTS_AT_ONCE:
        return None
    return max(1, BOOTSTRAP_ELEMENTS_AT_ONCE // max(queries, 1))


def _bootstrap(differences: np.ndarray, method: str, resamples: int, seed: int,
               confidence: float) -> Any:
    # `rng=` is SciPy's current name for the deprecated `random_state=`; a Generator passed to
    # either gives the same stream.
    return scipy.stats.bootstrap((differences,), np.mean, method=method, n_resamples=resamples,
                                 confidence_level=confidence, rng=np.random.default_rng(seed),
                                 batch=bootstrap_batch(int(differences.size), resamples))


def _bca_undefined(differences: np.ndarray, result: Any, caught: Sequence[warnings.WarningMessage]) -> str | None:
    """Why the BCa interval scipy returned cannot be used, or None when it can."""
    observed = np.mean(differences)
    replicates = np.asarray(result.bootstrap_distribution)
    if np.all(replicates > observed) or np.all(replicates < observed):
        side = "above" if np.all(replicates > observed) else "below"
        return (f"every bootstrap mean lies {side} the observed mean, so the bias correction "
                "is infinite")
    low, high = result.confidence_interval
    degenerate = [w for w in caught if issubclass(w.category, scipy.stats.DegenerateDataWarning)]
    if math.isfinite(low) and math.isfinite(high) and not degenerate:
        return None
    leave_one_out = [np.mean(np.delete(differences, i)) for i in range(differences.size)]
    if all(value == leave_one_out[0] for value in leave_one_out):
        return "every leave-one-out mean is equal, so the acceleration is 0/0"
    if degenerate:
        return f"scipy warned: {degenerate[0].message}"
    return "scipy returned a non-finite endpoint"


def bootstrap_interval(
    differences: np.ndarray,
    *,
    seed: int,
    resamples: int = DEFAULT_BOOTSTRAP_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> tuple[float, float, str]:
    """BCa bootstrap interval of the mean of paired differences, with the method actually used.

    ``scipy.stats.bootstrap((d,), numpy.mean, method="BCa", n_resamples=resamples,
    confidence_level=confidence, rng=numpy.random.default_rng(seed))``: ``resamples`` times, n
    queries are drawn with replacement and their differences averaged; the interval is read
    from those means at percentiles shifted by the bias correction z0 (where the observed mean
    falls among them) and the jackknife acceleration a.

    - Every difference the same value c (including n = 1 and identical runs): ``(c, c)``,
      ``"all differences equal"``, no resampling.
    - BCa undefined: every bootstrap mean on one side of the observed mean (z0 infinite), the
      leave-one-out means all equal (a is 0/0), or scipy returns a non-finite endpoint or warns
      ``DegenerateDataWarning``. Then the percentile interval of the same resamples (same seed)
      is returned with ``"percentile bootstrap (BCa undefined: <why>)"``.
    - Otherwise ``"BCa bootstrap"``.

    Args:
        differences: per-query differences row minus baseline, as returned by
            :func:`uncertainty.paired_differences` (finite float64, at least one).
        seed: seed for ``numpy.random.default_rng`` (non-negative integer).
        resamples: bootstrap replicates (>= 1). Default 10000.
        confidence: coverage, strictly between 0 and 1. Default 0.95.

    Returns:
        ``(low, high, interval_method)`` with plain floats, ``low <= high``.

    Raises:
        ValueError: bad differences or parameters.
    """
    values = paired_differences(differences, np.zeros(np.shape(differences)))
    seed = _check_seed(seed)
    resamples = _check_int("resamples", resamples, minimum=1)
    confidence = _check_confidence(confidence)

    if np.all(values == values[0]):
        point = plain_float(values[0])
        return point, point, INTERVAL_ALL_EQUAL
    if values.size > BCA_MAX_QUERIES:
        result = _bootstrap(values, "percentile", resamples, seed, confidence)
        low, high = result.confidence_interval
        return plain_float(low), plain_float(high), (f"{INTERVAL_PERCENTILE} (BCa not drawn: its jackknife takes "
                                                     f"n x n work, and n is {values.size:,} queries)")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = _bootstrap(values, "BCa", resamples, seed, confidence)
    reason = _bca_undefined(values, result, caught)
    method = INTERVAL_BCA
    if reason is not None:
        result = _bootstrap(values, "percentile", resamples, seed, confidence)
        method = f"{INTERVAL_PERCENTILE} (BCa undefined: {reason})"
    low, high = result.confidence_interval
    return plain_float(low), plain_float(high), method


# --------------------------------------------------------------------------- one comparison


def compare(
    row_scores: Sequence[float],
    base_scores: Sequence[float],
    *,
    seed: int,
    resamples: int = DEFAULT_BOOTSTRAP_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    exact_max_queries: int = DEFAULT_EXACT_MAX_QUERIES,
    permutation_resamples: int = DEFAULT_PERMUTATION_RESAMPLES,
) -> dict[str, Any]:
    """Everything the readout shows for one (comparison, metric) on the same queries.

    Args:
        row_scores: per-query metric values of the judged row.
        base_scores: the baseline's values for the same queries, same order.
        seed: this comparison's seed (see :func:`seed_for`), used by the bootstrap and, above
            ``exact_max_queries`` non-zero differences, by the Monte Carlo sign-flip test.
        resamples: bootstrap replicates. Default 10000.
        confidence: interval coverage. Default 0.95 (the keys say ci95 whatever it is).
        exact_max_queries: enumerate all sign flips up to this many non-zero differences.
        permutation_resamples: Monte Carlo sign flips above that. Default 100000.

    Returns:
        ``{"delta", "ci95_low", "ci95_high", "interval_method", "p_value", "p_value_method",
        "wins", "ties", "losses", "queries", "excludes_zero", "p_below_0_05",
        "distinguishable", "agreement", "seed"}``. ``distinguishable`` is ``excludes_zero and
        p_below_0_05``; ``agreement`` is ``"agree"`` or a phrase naming the interval and the
        p-value when only one of them clears zero.

    Raises:
        ValueError: bad scores (see :func:`uncertainty.paired_differences`) or parameters.
    """
    differences = paired_differences(row_scores, base_scores)
    low, high, interval_method = bootstrap_interval(differences, seed=seed, resamples=resamples,
                                                    confidence=confidence)
    test = paired_permutation_test(row_scores, base_scores, exact_max_queries=exact_max_queries,
                                   resamples=permutation_resamples, seed=seed)
    wins, ties, losses = wins_ties_losses(differences.tolist())
    excludes_zero = low > 0.0 or high < 0.0
    p_below = test["p_value"] < SIGNIFICANCE
    return {
        "delta": plain_float(differences.mean()),
        "ci95_low": low,
        "ci95_high": high,
        "interval_method": interval_method,
        "p_value": plain_float(test["p_value"]),
        "p_value_method": test["method"],
        "wins": wins,
        "ties": ties,
        "losses": losses,
        "queries": int(differences.size),
        "excludes_zero": excludes_zero,
        "p_below_0_05": p_below,
        "distinguishable": excludes_zero and p_below,
        "agreement": agreement(low, high, test["p_value"]),
        "seed": int(seed),
    }


# --------------------------------------------------------------------------- the block


def default_pairs(
    rows: Sequence[str],
    baseline: str = "dense",
    extra: Sequence[tuple[str, str]] = (("hybrid+rerank", "hybrid"),),
) -> list[tuple[str, str]]:
    """Every row against ``baseline`` (not the baseline against itself), then each ``extra``
    (row, baseline) pair whose two rows are both in ``rows``; no pair twice.

    Raises:
        ValueError: ``baseline`` is not one of ``rows``.
    """
    rows = list(rows)
    if baseline not in rows:
        raise ValueError(f"baseline {baseline!r} is not one of the rows {rows}")
    pairs = [(row, baseline) for row in rows if row != baseline]
    for row, base in extra:
        if row in rows and base in rows and row != base and (row, base) not in pairs:
            pairs.append((row, base))
    return pairs


def per_query_scores(per_query: Mapping[str, Mapping[str, Mapping[str, float]]], row: str,
            query_ids: Sequence[str], metric: str) -> list[float]:
    by_query = per_query[row]
    scores = []
    for q in query_ids:
        if q not in by_query:
            raise ValueError(f"per_query[{row!r}] has no values for query {q!r}")
        if metric not in by_query[q]:
            raise ValueError(f"per_query[{row!r}][{q!r}] has no {metric!r}")
        scores.append(by_query[q][metric])
    return scores


def _missing_reason(name: str, role: str, not_measured: Mapping[str, str]) -> str:
    reason = not_measured.get(name)
    if reason:
        return f"{role} {name} was not measured: {reason}"
    return f"{role} {name} has no per-query values"


def comparisons_block(
    per_query: Mapping[str, Mapping[str, Mapping[str, float]]],
    query_ids: Sequence[str],
    pairs: Sequence[tuple[str, str]],
    metrics: Sequence[str],
    *,
    seed: int,
    resamples: int,
    not_measured: Mapping[str, str],
) -> dict[str, Any]:
    """Every (row, baseline) pair compared on every metric, keyed ``"<row>_vs_<baseline>"`` (sorted).

    Each value is ``{"row", "baseline", "measured": True, "metrics": {metric: compare(...)}}``,
    the scores read as ``per_query[row][q][metric]`` for ``q`` in ``query_ids`` and each metric
    seeded with ``seed_for(seed, key, metric)``; or, when the row or the baseline has no
    per-query values, ``{"row", "baseline", "measured": False, "not_measured_reason"}`` naming
    the side(s) missing and the reason ``not_measured`` gives for them.

    Raises:
        ValueError: no queries, a pair of a row with itself or given twice, a measured row
            lacking a query or a metric, or bad scores or parameters.
    """
    query_ids = list(query_ids)
    if not query_ids:
        raise ValueError("query_ids is empty: need at least one query")
    seed = _check_seed(seed)
    block: dict[str, Any] = {}
    for row, baseline in pairs:
        key = comparison_key(row, baseline)
        if row == baseline:
            raise ValueError(f"pair {key}: a row cannot be compared with itself")
        if key in block:
            raise ValueError(f"pair {key} is given twice")
        entry: dict[str, Any] = {"row": row, "baseline": baseline}
        missing = [_missing_reason(name, role, not_measured)
                   for name, role in ((row, "row"), (baseline, "baseline")) if name not in per_query]
        if missing:
            entry.update(measured=False, not_measured_reason="; ".join(missing))
        else:
            entry.update(measured=True, metrics={
                metric: compare(per_query_scores(per_query, row, query_ids, metric),
                                per_query_scores(per_query, baseline, query_ids, metric),
                                seed=seed_for(seed, key, metric), resamples=resamples)
                for metric in metrics})
        block[key] = entry
    return {key: block[key] for key in sorted(block)}


def method_description(
    resamples: int = DEFAULT_BOOTSTRAP_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
    *,
    exact_max_queries: int = DEFAULT_EXACT_MAX_QUERIES,
    permutation_resamples: int = DEFAULT_PERMUTATION_RESAMPLES,
) -> dict[str, Any]:
    """A JSON-ready description of how :func:`comparisons_block` computed its numbers.

    Belongs in the run manifest next to the NumPy and SciPy versions.

    Raises:
        ValueError: bad parameters.
    """
    resamples = _check_int("resamples", resamples, minimum=1)
    seed = _check_seed(seed)
    confidence = _check_confidence(confidence)
    exact_max_queries = _check_int("exact_max_queries", exact_max_queries, minimum=0,
                                   maximum=EXACT_MAX_QUERIES_LIMIT)
    permutation_resamples = _check_int("permutation_resamples", permutation_resamples, minimum=1)
    return {
        "difference": "per query: row minus baseline, sign kept; delta is the mean over queries",
        "interval": {
            "kind": "bias-corrected and accelerated (BCa) bootstrap",
            "implementation": "scipy.stats.bootstrap((d,), numpy.mean, method='BCa')",
            "unit": "query (the paired differences resampled with replacement)",
            "statistic": "mean paired difference",
            "resamples": resamples,
            "confidence": confidence,
            "generator": "numpy.random.default_rng",
            "seed": seed,
            "seed_per_comparison": "sha256('<seed>:<comparison>:<metric>') mod 2**32",
            "all_differences_equal": "(c, c) without resampling",
            "fallback": ("percentile interval of the same resamples when BCa is undefined "
                         "(bias correction or acceleration not finite, or scipy returns no "
                         "endpoint); interval_method says why"),
        },
        "p_value": {
            "kind": "paired randomization (sign-flip), two-sided",
            # Where the test lives, read from the code so it cannot go stale (results written before the
            # kernel moved say generator.evaluate.uncertainty: the same function).
            "implementation": f"{paired_permutation_test.__module__}.{paired_permutation_test.__qualname__}",
            "zero_differences": "left out (|d| <= tolerance)",
            "exact_when_nonzero_differences_at_most": exact_max_queries,
            "exact": "all 2^m sign assignments; p = count / 2^m",
            "monte_carlo": "p = (count + 1) / (resamples + 1), seeded like the interval",
            "monte_carlo_resamples": permutation_resamples,
        },
        "distinguishable": f"the interval excludes zero AND p < {SIGNIFICANCE}",
        "agreement": "'agree' when both criteria say the same, else a phrase naming which says what",
        "wins_ties_losses": "win d > tolerance, loss d < -tolerance, tie otherwise",
        "tolerance": DEFAULT_TOLERANCE,
    }
