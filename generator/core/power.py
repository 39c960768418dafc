"""What a paired query sample of this size can detect, and what it can show is *not* there: the
minimum detectable effect, the queries a target effect needs, a simulated check of both with the
tool's own sign-flip test, equivalence (TOST) and non-inferiority on paired differences.

Every function works on the per-query differences ``d_i = row_i - base_i`` of one metric (sign
kept: positive means the row is better), validated by :func:`uncertainty.paired_differences`
(pass ``differences`` as a 1-D sequence of finite numbers). With n queries,

    mean = (1/n) * sum_i d_i,    sd = sqrt( sum_i (d_i - mean)^2 / (n - 1) ),    se = sd / sqrt(n),

and ``t_{q, n-1}`` is the q-quantile of Student's t with n - 1 degrees of freedom
(``scipy.stats.t.ppf``).

Conventions, stated once:

- ``alpha`` and ``power`` are strictly between 0 and 1 and ``power > alpha`` (a two-sided test
  at level alpha already rejects with probability alpha when there is no effect, so a lower
  target power asks for nothing); ``margin`` is a finite number > 0, in the metric's units.
- What is undefined is said, not computed: fewer than two queries (no standard deviation) gives
  ``None`` in place of the number and a ``"why"`` string; every result carries ``"why"`` (``None``
  when everything is defined). All differences equal (sd = 0) makes the t statistic a division
  by zero: the tests then decide exactly from the mean (p-values 0.0 or 1.0), the minimum
  detectable effect is ``None`` with a reason.
- Results are plain Python ``float``/``int``/``bool``/``str``/``None``, never ``-0.0`` or NaN, so
  they serialise to JSON unchanged. Randomness (only in :func:`simulated_power`) comes from
  ``numpy.random.default_rng(seed)``: the same inputs and seed give the same numbers on the same
  NumPy version.

Bad arguments raise ``ValueError`` naming the argument. Pure functions: NumPy and SciPy only, no
I/O.
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Any, Sequence

import numpy as np
import scipy.stats

from generator.core.signflip import plain_float
from generator.core.uncertainty import (DEFAULT_EXACT_MAX_QUERIES, EXACT_MAX_QUERIES_LIMIT, _check_int, _check_seed,
                                        check_probability, paired_differences, paired_permutation_test)

DEFAULT_ALPHA = 0.05
DEFAULT_POWER = 0.8
DEFAULT_SIMULATIONS = 400
#: Monte Carlo sign flips per simulated test above ``exact_max_queries`` non-zero differences:
#: enough to place p against 0.05 (p < 0.05 iff at most 49 of 1,000 flips are as extreme), few
#: enough that 400 simulated tests of 300 queries take about a second.
DEFAULT_SIMULATION_RESAMPLES = 1_000
DEFAULT_MAXIMUM_QUERIES = 1_000_000

METHOD_MDE = "paired t approximation (t_{1-alpha/2,n-1} + t_{power,n-1}) * sd / sqrt(n)"
METHOD_TOST = ("two one-sided paired t-tests (Schuirmann): H0 mean <= -margin and H0 mean >= +margin; "
               "p = max of the two; equivalent iff p < alpha, iff the (1 - 2 alpha) t interval of the "
               "mean lies inside (-margin, +margin)")
METHOD_NON_INFERIORITY = ("one-sided paired t-test of H0 mean <= -margin; non-inferior iff p < alpha, iff "
                          "the one-sided (1 - alpha) lower t bound of the mean is above -margin")
WHY_ONE_QUERY = "one query: the standard deviation of the differences needs at least two"
WHY_ALL_EQUAL_MDE = ("every difference is the same (sd 0): the t approximation divides by zero, and any "
                     "non-zero effect would be certain")
WHY_ALL_EQUAL_TEST = "every difference is the same (sd 0): decided exactly from the mean"

REGRESSION = "regression"
NON_INFERIOR = "non-inferior"
INCONCLUSIVE = "inconclusive"


# --------------------------------------------------------------------------- validation


def _check_alpha_power(alpha: Any, power: Any) -> tuple[float, float]:
    alpha, power = check_probability("alpha", alpha), check_probability("power", power)
    if power <= alpha:
        raise ValueError(
            f"power must be greater than alpha ({alpha!r}): a two-sided test at level alpha rejects "
            f"with probability alpha when there is no effect, got power {power!r}")
    return alpha, power


def _check_finite(name: str, value: Any, *, positive: bool = False, non_negative: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if positive and not value > 0.0:
        raise ValueError(f"{name} must be greater than 0, got {value!r}")
    if non_negative and value < 0.0:
        raise ValueError(f"{name} must be at least 0, got {value!r}")
    return value


def _differences(differences: Sequence[float]) -> np.ndarray:
    return paired_differences(differences, np.zeros(np.shape(differences)))


def _summary(values: np.ndarray) -> tuple[int, float, float | None, bool]:
    """(n, mean, sd with ddof 1 or None when n < 2, all differences equal)."""
    n = int(values.size)
    all_equal = bool(np.all(values == values[0]))
    mean = float(values[0]) if all_equal else float(values.mean())
    if n < 2:
        return n, mean, None, all_equal
    return n, mean, 0.0 if all_equal else float(values.std(ddof=1)), all_equal


def _mde_factor(n: int, alpha: float, power: float) -> float:
    """(t_{1-alpha/2, n-1} + t_{power, n-1}) / sqrt(n): the MDE in units of sd."""
    df = n - 1
    return float((scipy.stats.t.ppf(1.0 - alpha / 2.0, df) + scipy.stats.t.ppf(power, df)) / math.sqrt(n))


# --------------------------------------------------------------------------- power


def minimum_detectable_effect(
    differences: Sequence[float],
    *,
    alpha: float = DEFAULT_ALPHA,
    power: float = DEFAULT_POWER,
) -> dict[str, Any]:
    """The smallest true mean paired difference this sample's size and spread would detect.

    The analytic paired-t approximation, for a two-sided test at level ``alpha`` reaching
    ``power``, with n queries and the sample standard deviation sd (ddof 1) of the differences::

        MDE = (t_{1-alpha/2, n-1} + t_{power, n-1}) * sd / sqrt(n)

    It ignores the far rejection tail and uses central t quantiles in place of the noncentral t,
    so it runs a little off an exact power calculation for very small n (within 2% of
    statsmodels' ``TTestPower`` from n = 15 at conventional alpha and power, within 0.1% at
    alpha 0.05, power 0.8). :func:`simulated_power` checks it with the tool's own sign-flip test.

    Returns:
        ``{"queries": n, "sd_difference": sd, "alpha", "power", "minimum_detectable_effect",
        "method", "why"}``. With fewer than two queries ``sd_difference`` and the effect are
        ``None``; with every difference equal (sd 0) the effect is ``None``; ``why`` says which
        (``None`` otherwise).

    Raises:
        ValueError: bad differences (see :func:`uncertainty.paired_differences`), alpha or power.
    """
    values = _differences(differences)
    alpha, power = _check_alpha_power(alpha, power)
    n, _, sd, _ = _summary(values)
    result: dict[str, Any] = {"queries": n, "sd_difference": None if sd is None else plain_float(sd),
                              "alpha": alpha, "power": power, "minimum_detectable_effect": None,
                              "method": METHOD_MDE, "why": None}
    if sd is None:
        result["why"] = WHY_ONE_QUERY
    elif sd == 0.0:
        result["why"] = WHY_ALL_EQUAL_MDE
    else:
        result["minimum_detectable_effect"] = plain_float(_mde_factor(n, alpha, power) * sd)
    return result


def queries_needed(
    sd: float,
    effect: float,
    *,
    alpha: float = DEFAULT_ALPHA,
    power: float = DEFAULT_POWER,
    maximum: int = DEFAULT_MAXIMUM_QUERIES,
) -> int | None:
    """The smallest n >= 2 whose minimum detectable effect reaches ``|effect|``::

        min { n >= 2 : (t_{1-alpha/2, n-1} + t_{power, n-1}) * sd / sqrt(n) <= |effect| }

    the inverse of :func:`minimum_detectable_effect` (``<=`` holds up to a relative 1e-12, so the
    MDE of n queries gives n back despite rounding). The left side decreases in n, so the search
    starts at the normal approximation ``ceil(((z_{1-alpha/2} + z_power) * sd / effect)^2)``,
    which the t quantiles can only push up (they exceed the normal ones when power > alpha),
    brackets upwards by doubling, then bisects: a few dozen quantile evaluations at most.

    Args:
        sd: standard deviation of the per-query differences (>= 0); 0 gives 2 for any non-zero
            effect.
        effect: the true mean difference to detect (its sign is ignored), in the metric's units.
        alpha, power: as in :func:`minimum_detectable_effect`.
        maximum: the largest n worth reporting (>= 2). Default 1,000,000.

    Returns:
        n as a Python int, or ``None`` when ``effect`` is 0 (no sample detects it) or more than
        ``maximum`` queries would be needed.

    Raises:
        ValueError: sd negative or not finite, effect not finite, bad alpha, power or maximum.
    """
    sd = _check_finite("sd", sd, non_negative=True)
    effect = abs(_check_finite("effect", effect))
    alpha, power = _check_alpha_power(alpha, power)
    maximum = _check_int("maximum", maximum, minimum=2)
    if effect == 0.0:
        return None
    if sd == 0.0:
        return 2
    target = effect / sd  # may underflow to 0 or overflow to inf; both are handled below

    def reached(n: int) -> bool:
        # A relative 1e-12 of slack so that the MDE of n queries, divided by its own sd, gives n
        # back despite rounding.
        return _mde_factor(n, alpha, power) <= target * (1.0 + 1e-12)

    # (z_{1-alpha/2} + z_power) * sd / sqrt(n) <= |effect| from this n on; the t factor is never
    # below the normal one (power > alpha), so more than `maximum` here means None.
    z_sum = float(scipy.stats.norm.ppf(1.0 - alpha / 2.0) + scipy.stats.norm.ppf(power))
    # Compared as z_sum / target > sqrt(maximum): squaring a huge ratio would overflow.
    if target == 0.0 or z_sum / target > math.sqrt(maximum):
        return None
    start = max(2, math.ceil((z_sum / target) ** 2))
    if reached(start):
        # The t quantiles exceed the normal ones, so this happens only at n = 2 or through
        # rounding at the ceiling: step down to the first n that reaches.
        while start > 2 and reached(start - 1):
            start -= 1
        return start
    low, step = start, 1  # low never reaches; find a high that does
    while True:
        high = low + step
        if high > maximum:
            if not reached(maximum):
                return None
            high = maximum
            break
        if reached(high):
            break
        low, step = high, step * 2
    while high - low > 1:
        middle = (low + high) // 2
        if reached(middle):
            high = middle
        else:
            low = middle
    return high


def simulated_power(
    differences: Sequence[float],
    effect: float,
    *,
    queries: int | None = None,
    alpha: float = DEFAULT_ALPHA,
    simulations: int = DEFAULT_SIMULATIONS,
    seed: int = 0,
    exact_max_queries: int = DEFAULT_EXACT_MAX_QUERIES,
    resamples: int = DEFAULT_SIMULATION_RESAMPLES,
) -> dict[str, Any]:
    """The power of the tool's own sign-flip test at a true mean difference ``effect``, simulated.

    With ``rng = numpy.random.default_rng(seed)``, each of the S = ``simulations`` runs draws
    ``queries`` (default n) differences with replacement from the centred sample ``d - mean(d)``
    (this sample's spread and shape, true mean 0), adds ``effect`` and runs
    :func:`uncertainty.paired_permutation_test` on them (row = drawn differences, base = zeros)
    with ``exact_max_queries`` (default 20) and, above that many non-zero differences, Monte
    Carlo with ``resamples`` sign flips (default 1,000) seeded from the same ``rng``. Then::

        power = #{ runs with p < alpha } / S,    standard_error = sqrt(power * (1 - power) / S)

    At ``effect = minimum_detectable_effect(d)`` the power should be near the target power; at
    ``effect = 0`` near ``alpha`` (the test's size). The centred sample's variance is
    ``sd^2 * (n - 1) / n``, a little below the sd the MDE uses, so at small n the simulated
    power runs slightly above the target (about one and a half points at n = 20).

    Returns:
        ``{"simulated_power", "simulations", "standard_error", "seed", "queries", "effect",
        "alpha", "exact_max_queries", "resamples", "method"}``.

    Raises:
        ValueError: bad differences, effect or parameters.
    """
    values = _differences(differences)
    effect = _check_finite("effect", effect)
    queries = int(values.size) if queries is None else _check_int("queries", queries, minimum=1)
    alpha = check_probability("alpha", alpha)
    simulations = _check_int("simulations", simulations, minimum=1)
    seed = _check_seed(seed)
    exact_max_queries = _check_int("exact_max_queries", exact_max_queries, minimum=0,
                                   maximum=EXACT_MAX_QUERIES_LIMIT)
    resamples = _check_int("resamples", resamples, minimum=1)

    rng = np.random.default_rng(seed)
    centred = values - values.mean()
    draws = rng.integers(0, values.size, size=(simulations, queries))
    test_seeds = rng.integers(0, 2 ** 32, size=simulations)
    zeros = np.zeros(queries)
    rejected = 0
    for drawn, test_seed in zip(draws, test_seeds):
        test = paired_permutation_test(centred[drawn] + effect, zeros, exact_max_queries=exact_max_queries,
                                       resamples=resamples, seed=int(test_seed))
        rejected += int(test["p_value"] < alpha)
    share = rejected / simulations
    return {
        "simulated_power": plain_float(share),
        "simulations": simulations,
        "standard_error": plain_float(math.sqrt(share * (1.0 - share) / simulations)),
        "seed": seed,
        "queries": queries,
        "effect": plain_float(effect),
        "alpha": alpha,
        "exact_max_queries": exact_max_queries,
        "resamples": resamples,
        "method": (f"share of {simulations} simulations with sign-flip p < {alpha}: each draws {queries} "
                   f"differences with replacement from d - mean(d), adds the effect, and runs "
                   f"{paired_permutation_test.__module__}.{paired_permutation_test.__qualname__} (exact up to "
                   f"{exact_max_queries} non-zero differences, else {resamples} Monte Carlo sign flips); "
                   f"numpy.random.default_rng(seed)"),
    }


def simulated_power_shared_flips(
    differences: Sequence[float],
    effect: float,
    *,
    alpha: float = DEFAULT_ALPHA,
    simulations: int = DEFAULT_SIMULATIONS,
    seed: int = 0,
    resamples: int = 2_000,
) -> dict[str, Any]:
    """:func:`simulated_power` in one matrix product, for the results file's `power` block.

    The same simulated samples (``queries`` = n draws with replacement from ``d - mean(d)``, plus
    ``effect``), but every sample's sign-flip p-value is the Monte Carlo one over the same
    ``resamples`` sign assignments ``F`` (B x n, drawn once from the same ``rng``)::

        p_s = (#{ b : |F_b . x_s| >= |sum x_s| - eps } + 1) / (B + 1)

    so S samples cost one S x n by n x B product instead of S separate tests (400 samples of 300
    queries: milliseconds, not seconds). For 20 or fewer non-zero differences the tool's own test
    is exact; with B = 2,000 the Monte Carlo p of a sample near alpha = 0.05 is within about
    0.005 of it, which moves the simulated power by less than its own standard error (a test
    holds the two versions together).
    """
    values = _differences(differences)
    effect = _check_finite("effect", effect)
    alpha = check_probability("alpha", alpha)
    simulations = _check_int("simulations", simulations, minimum=1)
    seed = _check_seed(seed)
    resamples = _check_int("resamples", resamples, minimum=1)
    rng = np.random.default_rng(seed)
    n = int(values.size)
    samples = (values - values.mean())[rng.integers(0, n, size=(simulations, n))] + effect
    flips = rng.choice(np.array([-1.0, 1.0]), size=(resamples, n))
    observed = np.abs(samples.sum(axis=1))
    eps = 1e-12 * np.maximum(1.0, np.abs(samples).sum(axis=1))
    as_extreme = (np.abs(samples @ flips.T) >= (observed - eps)[:, None]).sum(axis=1)
    p_values = np.where(observed <= eps, 1.0, (as_extreme + 1) / (resamples + 1))
    share = float(np.mean(p_values < alpha))
    return {"simulated_power": plain_float(share), "simulations": simulations,
            "standard_error": plain_float(math.sqrt(share * (1.0 - share) / simulations)), "seed": seed,
            "queries": n, "effect": plain_float(effect), "alpha": alpha, "resamples": resamples,
            "method": (f"share of {simulations} simulated samples with sign-flip p < {alpha}: each draws {n} "
                       f"differences with replacement from d - mean(d) and adds the effect; p by Monte Carlo over "
                       f"{resamples} sign assignments shared by every sample"),
            "why": None}


# --------------------------------------------------------------------------- equivalence


def _one_sided(n: int, mean: float, sd: float, bound: float, *, above: bool) -> float:
    """p of the one-sided t-test of H0 ``mean <= bound`` (``above``) or H0 ``mean >= bound``.

    sd 0: the mean is known exactly, so p is 0.0 when it lies strictly on the alternative's side
    and 1.0 otherwise.
    """
    if sd == 0.0:
        return 0.0 if (mean > bound if above else mean < bound) else 1.0
    t = (mean - bound) / (sd / math.sqrt(n))
    return plain_float(scipy.stats.t.sf(t, n - 1) if above else scipy.stats.t.cdf(t, n - 1))


def _half_width(n: int, sd: float, alpha: float) -> float:
    """t_{1-alpha, n-1} * sd / sqrt(n): one side of the (1 - 2 alpha) two-sided t interval."""
    return 0.0 if sd == 0.0 else float(scipy.stats.t.ppf(1.0 - alpha, n - 1) * sd / math.sqrt(n))


def tost_paired(differences: Sequence[float], margin: float, *, alpha: float = DEFAULT_ALPHA) -> dict[str, Any]:
    """Two one-sided tests (Schuirmann) that the mean paired difference lies within ±``margin``.

    With ``se = sd / sqrt(n)`` and n - 1 degrees of freedom::

        p_lower = P(T >= (mean + margin) / se)     H0: mean <= -margin
        p_upper = P(T <= (mean - margin) / se)     H0: mean >= +margin
        p_value = max(p_lower, p_upper);  equivalent iff p_value < alpha

    The interval view is the same decision: the (1 - 2 alpha) t interval ``mean ± t_{1-alpha,
    n-1} * se`` (``ci_low``, ``ci_high``, ``confidence``) lies inside ``(-margin, +margin)``.
    Every difference equal (sd 0): p_lower is 0.0 if ``mean > -margin`` else 1.0, p_upper 0.0 if
    ``mean < margin`` else 1.0, and the interval is ``(mean, mean)``.

    Returns:
        ``{"margin", "alpha", "queries", "mean_difference", "sd_difference", "p_lower",
        "p_upper", "p_value", "ci_low", "ci_high", "confidence", "equivalent", "method",
        "why"}``. One query: the p-values, sd and interval are ``None``, ``equivalent`` False,
        ``why`` says so.

    Raises:
        ValueError: bad differences, margin (must be > 0) or alpha.
    """
    values = _differences(differences)
    margin = _check_finite("margin", margin, positive=True)
    alpha = check_probability("alpha", alpha)
    if alpha >= 0.5:
        raise ValueError(f"alpha must be below 0.5 for a (1 - 2 alpha) interval, got {alpha!r}")
    n, mean, sd, _ = _summary(values)
    result: dict[str, Any] = {"margin": margin, "alpha": alpha, "queries": n, "mean_difference": plain_float(mean),
                              "sd_difference": None, "p_lower": None, "p_upper": None, "p_value": None,
                              "ci_low": None, "ci_high": None, "confidence": plain_float(1.0 - 2.0 * alpha),
                              "equivalent": False, "method": METHOD_TOST, "why": None}
    if sd is None:
        result["why"] = WHY_ONE_QUERY
        return result
    p_lower = _one_sided(n, mean, sd, -margin, above=True)
    p_upper = _one_sided(n, mean, sd, margin, above=False)
    half = _half_width(n, sd, alpha)
    p_value = max(p_lower, p_upper)
    result.update(sd_difference=plain_float(sd), p_lower=p_lower, p_upper=p_upper, p_value=p_value,
                  ci_low=plain_float(mean - half), ci_high=plain_float(mean + half), equivalent=p_value < alpha,
                  why=WHY_ALL_EQUAL_TEST if sd == 0.0 else None)
    return result


def non_inferiority(differences: Sequence[float], margin: float, *, alpha: float = DEFAULT_ALPHA) -> dict[str, Any]:
    """One-sided paired t-test that the row is not worse than the baseline by ``margin`` or more.

    H0: ``mean <= -margin`` against H1: ``mean > -margin``, with ``se = sd / sqrt(n)``::

        p_value = P(T >= (mean + margin) / se),  T ~ t_{n-1};  non_inferior iff p_value < alpha

    the same decision as the one-sided (1 - alpha) lower bound ``mean - t_{1-alpha, n-1} * se``
    lying above ``-margin``. Every difference equal (sd 0): p is 0.0 if ``mean > -margin``
    else 1.0, and the bound is the mean.

    Returns:
        ``{"margin", "alpha", "queries", "mean_difference", "sd_difference", "p_value",
        "lower_bound", "confidence", "non_inferior", "method", "why"}``. One query: p-value, sd
        and bound ``None``, ``non_inferior`` False, ``why`` says so.

    Raises:
        ValueError: bad differences, margin (must be > 0) or alpha.
    """
    values = _differences(differences)
    margin = _check_finite("margin", margin, positive=True)
    alpha = check_probability("alpha", alpha)
    n, mean, sd, _ = _summary(values)
    result: dict[str, Any] = {"margin": margin, "alpha": alpha, "queries": n, "mean_difference": plain_float(mean),
                              "sd_difference": None, "p_value": None, "lower_bound": None,
                              "confidence": plain_float(1.0 - alpha), "non_inferior": False,
                              "method": METHOD_NON_INFERIORITY, "why": None}
    if sd is None:
        result["why"] = WHY_ONE_QUERY
        return result
    p_value = _one_sided(n, mean, sd, -margin, above=True)
    result.update(sd_difference=plain_float(sd), p_value=p_value,
                  lower_bound=plain_float(mean - _half_width(n, sd, alpha)), non_inferior=p_value < alpha,
                  why=WHY_ALL_EQUAL_TEST if sd == 0.0 else None)
    return result


def regression_verdict(low: float, high: float, margin: float, *, estimate: float | None = None) -> str:
    """What an interval ``[low, high]`` of a change (new minus baseline) says against margin m > 0.

    - ``"regression"``: ``high < -m``, the whole interval is below minus the margin (the new
      version is worse by more than m); or, given the change's ``estimate``, ``high < 0`` and
      ``estimate < -m``: a loss the interval tells from noise whose best estimate is beyond the
      margin (an interval [-0.143, -0.006] around -0.054 against m = 0.01 is a regression, never
      "inconclusive");
    - ``"non-inferior"``: ``low > -m``, the whole interval is above minus the margin (any loss is
      smaller than m);
    - ``"inconclusive"``: otherwise, the interval reaches ``-m`` (endpoints equal to ``-m``
      included: the interval does not rule the margin out).

    With a (1 - 2 alpha) two-sided interval, ``"non-inferior"`` is :func:`non_inferiority`'s
    decision at level alpha.

    Raises:
        ValueError: an endpoint or the estimate not finite, ``low > high``, or margin not > 0.
    """
    low, high = _check_finite("low", low), _check_finite("high", high)
    margin = _check_finite("margin", margin, positive=True)
    if low > high:
        raise ValueError(f"low must be at most high, got low {low!r} and high {high!r}")
    if estimate is not None:
        estimate = _check_finite("estimate", estimate)
    if high < -margin or (estimate is not None and high < 0.0 and estimate < -margin):
        return REGRESSION
    if low > -margin:
        return NON_INFERIOR
    return INCONCLUSIVE
