"""How much a small paired query sample can prove: paired differences and the sign-flip test
(the bootstrap intervals are generator.core.comparisons').

Every function compares two systems scored on the *same* queries. ``row_scores[i]`` and
``base_scores[i]`` are one metric (for example nDCG@5) for query ``i`` under the row being
judged and under the baseline; the per-query difference is ``d_i = row_i - base_i`` (sign kept:
positive means the row is better) and the statistic is the macro mean difference
``delta = (1/n) * sum_i d_i``.

Conventions, stated once:

- Inputs are equal-length, non-empty, one-dimensional sequences of finite real numbers aligned
  by query. Mappings are refused on purpose: pass ``[scores[q] for q in query_ids]`` so the
  alignment is explicit.
- A difference with ``|d_i| <= tolerance`` (default 1e-12) is a tie: it counts as a tie in
  :func:`wins_ties_losses` and is left out of the sign flips of the permutation test (flipping
  a zero changes nothing).
- Randomness comes only from ``numpy.random.default_rng(seed)``; the same inputs, parameters
  and seed give the same numbers on the same NumPy version. (NumPy does not promise identical
  ``Generator`` streams across versions, so record the NumPy version next to the seed.)
- Results are plain Python ``float``/``int``/``str`` values and never ``-0.0``, so they
  serialise to JSON unchanged.

Bad arguments raise ``ValueError`` with a message naming the argument; nothing here asserts.
The module imports only NumPy and has no side effects.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any, Mapping, Sequence

import numpy as np

from generator.core.options import DEFAULT_PERMUTATION_RESAMPLES, DEFAULT_SEED
from generator.core.signflip import DEFAULT_TOLERANCE, check_tolerance, exact_count

DEFAULT_CONFIDENCE = 0.95
DEFAULT_EXACT_MAX_QUERIES = 20

#: Largest ``exact_max_queries`` accepted. Exact enumeration splits the m signs into two
#: halves of at most 2^20 partial sums each, so 40 stays fast and small in memory.
EXACT_MAX_QUERIES_LIMIT = 40

#: Upper bound on array elements drawn per chunk, to cap memory for large query sets. The
#: chunking is a fixed function of the inputs' length, so results stay deterministic.
_CHUNK_ELEMENTS = 2_000_000

METHOD_EXACT = "exact"
METHOD_MONTE_CARLO = "monte-carlo"


# --------------------------------------------------------------------------- validation


def _check_int(name: str, value: Any, *, minimum: int, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be at most {maximum}, got {value}")
    return value


def _check_seed(seed: Any) -> int:
    return _check_int("seed", seed, minimum=0)


def check_probability(name: str, value: Any) -> float:
    """`value` as a float strictly between 0 and 1 (a confidence, an alpha, a power)."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name} must be a number strictly between 0 and 1, got {value!r}")
    value = float(value)
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must be strictly between 0 and 1, got {value!r}")
    return value


def _check_confidence(confidence: Any) -> float:
    return check_probability("confidence", confidence)


def _as_scores(name: str, values: Any) -> np.ndarray:
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, (Sequence, np.ndarray)):
        raise ValueError(
            f"{name} must be a sequence of numbers aligned by query (a list, tuple or 1-D "
            f"array), got {type(values).__name__}")
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    if array.size and array.dtype.kind not in "iuf":
        raise ValueError(f"{name} must contain only numbers, got dtype {array.dtype}")
    array = array.astype(np.float64)
    if not np.all(np.isfinite(array)):
        position = int(np.flatnonzero(~np.isfinite(array))[0])
        raise ValueError(f"{name}[{position}] is not a finite number: {array[position]!r}")
    return array


def paired_differences(row_scores: Sequence[float], base_scores: Sequence[float]) -> np.ndarray:
    """Per-query differences ``d_i = row_i - base_i`` after validating both inputs.

    Args:
        row_scores: the judged row's per-query metric values.
        base_scores: the baseline's values for the same queries, in the same order.

    Returns:
        A float64 array of length n.

    Raises:
        ValueError: an input is not a 1-D sequence of finite numbers, is empty, or the lengths
            differ.
    """
    row = _as_scores("row_scores", row_scores)
    base = _as_scores("base_scores", base_scores)
    if row.size != base.size:
        raise ValueError(
            f"row_scores and base_scores must have one value per query each, got {row.size} "
            f"and {base.size}")
    if row.size == 0:
        raise ValueError("row_scores and base_scores are empty: need at least one query")
    return row - base


# --------------------------------------------------------------------------- permutation


def _nonzero_differences(differences: np.ndarray, tolerance: float) -> np.ndarray:
    return differences[np.abs(differences) > tolerance]


def _monte_carlo_count(values: np.ndarray, threshold: float, resamples: int, seed: int) -> int:
    rng = np.random.default_rng(seed)
    m = values.size
    rows_per_chunk = max(1, _CHUNK_ELEMENTS // m)
    count = 0
    for start in range(0, resamples, rows_per_chunk):
        rows = min(resamples, start + rows_per_chunk) - start
        signs = 1.0 - 2.0 * rng.integers(0, 2, size=(rows, m), dtype=np.int8)
        count += int(np.count_nonzero(np.abs(signs @ values) >= threshold))
    return count


def paired_permutation_test(
    row_scores: Sequence[float],
    base_scores: Sequence[float],
    *,
    exact_max_queries: int = DEFAULT_EXACT_MAX_QUERIES,
    resamples: int = DEFAULT_PERMUTATION_RESAMPLES,
    seed: int = DEFAULT_SEED,
    tolerance: float = DEFAULT_TOLERANCE,
) -> dict[str, Any]:
    """Two-sided paired randomization (sign-flip) test of the mean difference, with its method.

    Under the null hypothesis that the two systems are exchangeable on every query, each
    difference ``d_i = row_i - base_i`` is equally likely to carry either sign. With the m
    non-zero differences (``|d_i| > tolerance``; zeros are unaffected by a flip and are left
    out), the p-value is the share of sign assignments ``s`` in ``{-1, +1}^m`` whose statistic
    is at least as extreme as the observed one::

        p = #{ s : |sum_i s_i d_i| >= |sum_i d_i| - eps } / 2^m

    Comparing sums is the same as comparing means (both divide by n). ``eps = tolerance *
    max(1, sum_i |d_i|)`` absorbs floating-point summation order, so assignments whose
    statistic equals the observed one exactly are counted as ties.

    - ``m <= exact_max_queries``: ``"exact"``, all 2^m assignments are counted (split into two
      halves, see ``_exact_count``; 2^20 takes milliseconds). The observed assignment and its
      mirror image always count, so ``p >= 2 / 2^m``.
    - otherwise ``"monte-carlo"``: ``B = resamples`` assignments drawn uniformly with
      ``numpy.random.default_rng(seed)`` and ``p = (count + 1) / (B + 1)`` (the observed
      assignment counted once), which never reports 0.
    - m = 0 or an observed statistic within eps of 0 (for example identical runs): every
      assignment ties, ``p = 1.0`` exactly, method ``"exact"``.

    ``row_scores`` and ``base_scores`` are one metric's per-query values of the judged row and
    the baseline, aligned by query; ``exact_max_queries`` is 0..40 (default 20), ``resamples``
    B >= 1 (default 100000), ``seed`` a non-negative integer, ``tolerance`` >= 0 (default 1e-12).
    Returns ``{"p_value", "method": "exact" | "monte-carlo", "nonzero_differences": m,
    "queries": n, "resamples": B or None}``; raises ValueError for bad scores (see
    :func:`paired_differences`) or parameters.
    """
    differences = paired_differences(row_scores, base_scores)
    exact_max_queries = _check_int(
        "exact_max_queries", exact_max_queries, minimum=0, maximum=EXACT_MAX_QUERIES_LIMIT)
    resamples = _check_int("resamples", resamples, minimum=1)
    seed, tolerance = _check_seed(seed), check_tolerance(tolerance)
    values = _nonzero_differences(differences, tolerance)
    m = int(values.size)
    result: dict[str, Any] = {"p_value": 1.0, "method": METHOD_EXACT,
                              "nonzero_differences": m, "queries": int(differences.size),
                              "resamples": None}
    eps = tolerance * max(1.0, float(np.abs(values).sum()))
    observed = abs(float(values.sum()))
    if m == 0 or observed <= eps:
        return result
    threshold = observed - eps

    if m <= exact_max_queries:
        result["p_value"] = exact_count(values.tolist(), threshold) / float(2 ** m)
    else:
        count = _monte_carlo_count(values, threshold, resamples, seed)
        result.update(p_value=(count + 1) / (resamples + 1), method=METHOD_MONTE_CARLO, resamples=resamples)
    return result


# --------------------------------------------------------------------------- counts and summary


def wins_ties_losses(
    row_scores: Sequence[float],
    base_scores: Sequence[float],
    *,
    tolerance: float = DEFAULT_TOLERANCE,
) -> tuple[int, int, int]:
    """Count queries where the row beats, ties or trails the baseline.

    A win is ``d_i > tolerance``, a loss ``d_i < -tolerance``, a tie ``|d_i| <= tolerance``,
    with ``d_i = row_i - base_i``. ``wins + ties + losses == n``.

    Args:
        row_scores: per-query metric values of the judged row.
        base_scores: the baseline's values for the same queries, same order.
        tolerance: absolute tie tolerance (>= 0). Default 1e-12.

    Returns:
        ``(wins, ties, losses)`` as Python ints.

    Raises:
        ValueError: bad scores (see :func:`paired_differences`) or a bad tolerance.
    """
    differences = paired_differences(row_scores, base_scores)
    tolerance = check_tolerance(tolerance)
    wins = int(np.count_nonzero(differences > tolerance))
    losses = int(np.count_nonzero(differences < -tolerance))
    return wins, int(differences.size) - wins - losses, losses
