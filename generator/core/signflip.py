"""Paired statistics in pure Python: the exact two-sided sign-flip count, wins/ties/losses, and
the argument checks they share. The evaluation stage (generator.core.uncertainty) and the
checker, which re-derives recorded p-values without numpy (generator.claims.tracing.rederive), both use
these very functions, so the two can never disagree.
"""

from __future__ import annotations

import bisect
import math
from numbers import Real
from typing import Any, Sequence

# |d| at or below this is a tie (a zero difference), and ties of the summed statistic within
# tolerance * max(1, sum |d|) count as "at least as extreme".
DEFAULT_TOLERANCE = 1e-12


def check_tolerance(tolerance: Any) -> float:
    if isinstance(tolerance, bool) or not isinstance(tolerance, Real):
        raise ValueError(f"tolerance must be a non-negative number, got {tolerance!r}")
    tolerance = float(tolerance)
    if not math.isfinite(tolerance) or tolerance < 0.0:
        raise ValueError(f"tolerance must be a finite non-negative number, got {tolerance!r}")
    return tolerance


def plain_float(value: float) -> float:
    """A Python float with -0.0 folded into 0.0."""
    return float(value) + 0.0


def _all_signed_sums(part: Sequence[float]) -> list[float]:
    sums = [0.0]
    for value in part:
        sums = [total + value for total in sums] + [total - value for total in sums]
    return sums


def exact_count(values: Sequence[float], threshold: float) -> int:
    """Number of the 2^m sign vectors s with ``|sum_i s_i * values_i| >= threshold``.

    Meet in the middle: the 2^k partial sums of the first k signs against the sorted 2^(m-k) of
    the rest; for each first-half sum a, count the second-half sums b with ``a + b >= threshold``
    or ``a + b <= -threshold``. Every assignment is counted once (threshold > 0 keeps the two
    regions apart). The sums are formed in the same order as numpy would, so the count is the
    same float for float.
    """
    half = len(values) // 2
    first = _all_signed_sums(values[:half])
    second = sorted(_all_signed_sums(values[half:]))
    size = len(second)
    return sum(size - bisect.bisect_left(second, threshold - a) + bisect.bisect_right(second, -threshold - a)
               for a in first)


def exact_p_value(differences: Sequence[float], tolerance: float = DEFAULT_TOLERANCE) -> float:
    """The exact two-sided sign-flip p-value over the non-zero differences (1.0 when none)."""
    values = [float(d) for d in differences if abs(d) > tolerance]
    if not values:
        return 1.0
    eps = tolerance * max(1.0, math.fsum(abs(v) for v in values))
    observed = abs(math.fsum(values))
    if observed <= eps:
        return 1.0
    return exact_count(values, observed - eps) / float(2 ** len(values))


def wins_ties_losses(differences: Sequence[float], tolerance: float = DEFAULT_TOLERANCE) -> tuple[int, int, int]:
    """(wins, ties, losses): d > tolerance, |d| <= tolerance, d < -tolerance."""
    wins = sum(1 for d in differences if d > tolerance)
    losses = sum(1 for d in differences if d < -tolerance)
    return wins, len(differences) - wins - losses, losses


# A change is distinguishable from zero only when its interval excludes zero and p < SIGNIFICANCE.
SIGNIFICANCE = 0.05
AGREE = "agree"


def agreement(low: float, high: float, p_value: float) -> str:
    """``"agree"`` when the interval excluding zero and ``p < 0.05`` say the same, else which says what."""
    excludes = low > 0.0 or high < 0.0
    below = p_value < SIGNIFICANCE
    if excludes == below:
        return AGREE
    if excludes:
        return f"the interval excludes zero but the sign-flip p-value is {p_value:.4g}"
    return f"the sign-flip p-value is {p_value:.4g} but the interval includes zero"
