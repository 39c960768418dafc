"""The paired interval at any query count (issue 39): bounded memory, the same figures."""

import numpy as np


def test_a_bootstrap_drawn_in_batches_is_the_one_drawn_at_once(monkeypatch):
    """Issue 39: 100,000 queries at 10,000 resamples would hold 7.45 GiB at once; drawn in batches
    of whole resamples from the same generator, the interval is the same, bit for bit."""
    from generator.core import comparisons

    d = np.random.default_rng(4).normal(0.0, 0.2, size=300)
    at_once = comparisons.bootstrap_interval(d, seed=7, resamples=2_000)
    assert comparisons.bootstrap_batch(300, 2_000) is None
    monkeypatch.setattr(comparisons, "BOOTSTRAP_ELEMENTS_AT_ONCE", 30_000)
    assert comparisons.bootstrap_batch(300, 2_000) == 100
    assert comparisons.bootstrap_interval(d, seed=7, resamples=2_000) == at_once
    assert comparisons.bootstrap_batch(100_000, 10_000) is not None


def test_a_very_large_sample_gets_the_percentile_interval_and_says_why(monkeypatch):
    from generator.core import comparisons

    monkeypatch.setattr(comparisons, "BCA_MAX_QUERIES", 100)
    low, high, method = comparisons.bootstrap_interval(np.random.default_rng(5).normal(0.1, 0.2, 400), seed=3,
                                                       resamples=1_000)
    assert low < 0.1 < high and method.startswith("percentile bootstrap (BCa not drawn") and "400 queries" in method
