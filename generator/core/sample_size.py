"""The smallest sample any paired interval, test or decision is drawn from: below it, "cannot be
decided with N queries", never a verdict.

One rule, for every reader that decides on paired per-query differences (`readout regress`, a
trigger that states its effect, and any later frame that weighs a sample): with n queries the
exact two-sided sign-flip test (generator.core.signflip) can reach no p-value below
``2 / 2**n``, the probability of the most extreme sign assignment and its mirror. When that is
not below alpha, no test of these n queries can tell any change from noise at level alpha, and an
interval drawn from them (a bootstrap of one query has width 0, of two a handful of values)
decides nothing either. So::

    minimum_queries(alpha) = min { n >= 1 : 2 / 2**n < alpha }     (6 at alpha 0.05, 8 at 0.01)

`too_few_queries(n, alpha)` is the sentence a reader prints in place of a verdict, or None when
n queries can decide. Pure Python: importing this loads neither NumPy nor SciPy.
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Any

DEFAULT_ALPHA = 0.05


def _alpha(alpha: Any) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, Real) or not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha must be a probability strictly between 0 and 1, got {alpha!r}")
    return float(alpha)


def smallest_p_value(queries: int) -> float:
    """The smallest two-sided p-value the exact sign-flip test can give on `queries` paired
    differences (every one non-zero and of one sign): 2 / 2**queries, 1.0 below one query."""
    if queries < 1:
        return 1.0
    return min(1.0, 2.0 / 2.0 ** queries)


def minimum_queries(alpha: float = DEFAULT_ALPHA) -> int:
    """The fewest paired queries on which a two-sided test at `alpha` can reject at all."""
    alpha = _alpha(alpha)
    # 2 / 2**n < alpha  <=>  n > 1 + log2(1 / alpha); the loop settles the boundary exactly.
    queries = max(1, math.floor(1.0 + math.log2(1.0 / alpha)))
    while smallest_p_value(queries) >= alpha:
        queries += 1
    while queries > 1 and smallest_p_value(queries - 1) < alpha:
        queries -= 1
    return queries


def too_few_queries(queries: int, alpha: float = DEFAULT_ALPHA) -> str | None:
    """"cannot be decided with N queries: ..." when `queries` is below minimum_queries(alpha);
    None when the sample is large enough to decide."""
    needed = minimum_queries(alpha)
    if queries >= needed:
        return None
    counted = f"{queries:,} quer{'y' if queries == 1 else 'ies'}"
    return (f"cannot be decided with {counted}: a paired test at alpha {alpha:g} needs at least {needed} (on "
            f"{counted} the sign-flip test's smallest p-value is {smallest_p_value(queries):.3g})")
