"""Intervals valid at every n and at the bounds: a share of items gets the exact Clopper-Pearson interval, checked
against statsmodels on hand-made counts (0/3, 3/3, 1/1000 among them); the method is the metric's declaration."""

import pytest
from statsmodels.stats.proportion import proportion_confint

from babeleval.analysis import bootstrap
from babeleval.analysis.intervals import SMALL_N, clopper_pearson, is_small
from babeleval.core.errors import ConfigError
from babeleval.score import metrics

CASES = [(0, 3), (3, 3), (1, 3), (1, 1000), (0, 1), (1, 1), (12, 24), (0, 24), (999, 1000), (7, 29)]


@pytest.mark.parametrize(("successes", "n"), CASES)
@pytest.mark.parametrize("confidence", [0.95, 0.9])
def test_exact_interval_matches_statsmodels(successes, n, confidence):
    low, high = clopper_pearson(successes, n, confidence)
    ref_low, ref_high = proportion_confint(successes, n, alpha=1 - confidence, method="beta")
    assert low == pytest.approx(ref_low, abs=1e-12)
    assert high == pytest.approx(ref_high, abs=1e-12)
    assert low <= successes / n <= high


def test_exact_interval_is_scipy_stats_beta_quantile_to_the_bit():
    """clopper_pearson computes the quantile with scipy.special (a job then skips importing scipy.stats): it must be
    beta.ppf's own number, not one that rounds differently."""
    import numpy as np
    from scipy.stats import beta

    cases = [(s, n, c) for n in range(1, 80) for s in range(n + 1) for c in (0.5, 0.9, 0.95, 0.99)]
    s, n, c = (np.array(column, dtype=float) for column in zip(*cases))
    low = np.where(s > 0, beta.ppf((1 - c) / 2, np.maximum(s, 1), n - s + 1), 0.0)
    high = np.where(s < n, beta.ppf(1 - (1 - c) / 2, s + 1, np.maximum(n - s, 1)), 1.0)
    for case, expected in zip(cases, zip(low.tolist(), high.tolist())):
        assert clopper_pearson(*case) == expected, case


def test_bounds_are_never_zero_width():
    low, high = clopper_pearson(0, 3, 0.95)
    assert (low, round(high, 4)) == (0.0, 0.7076)  # the bootstrap said [0, 0]
    low, high = clopper_pearson(3, 3, 0.95)
    assert (round(low, 4), high) == (0.2924, 1.0)
    low, high = clopper_pearson(1, 1000, 0.95)
    assert 0 < low < 0.001 < high < 0.006


def records(outcomes, parsed=None):
    parsed = parsed or [True] * len(outcomes)
    return [{"id": f"i{k}", "correct": bool(v), "parsed": p} for k, (v, p) in enumerate(zip(outcomes, parsed))]


def test_accuracy_and_parse_failure_rate_use_the_declared_exact_interval():
    assert metrics.get_metric("acc").interval == metrics.EXACT
    assert metrics.get_metric("parse_failure_rate").interval == metrics.EXACT
    assert metrics.get_metric("chrf").interval == metrics.BOOTSTRAP
    assert metrics.get_metric("macro_f1").interval == metrics.BOOTSTRAP
    assert bootstrap.interval_for("acc", records([0, 0, 0]), seed=0) == pytest.approx(
        proportion_confint(0, 3, method="beta"))
    assert bootstrap.interval_for("acc", records([1, 1, 1]), seed=0) == pytest.approx(
        proportion_confint(3, 3, method="beta"))
    # parse failures: 1 of 4 unparsed; accuracy over parsed items: 2 of the 3 parsed
    recs = records([1, 1, 0, 0], parsed=[True, True, True, False])
    assert bootstrap.interval_for("parse_failure_rate", recs, seed=0) == pytest.approx(
        proportion_confint(1, 4, method="beta"))
    assert bootstrap.interval_for("acc_parsed", recs, seed=0) == pytest.approx(
        proportion_confint(2, 3, method="beta"))
    # seed and resamples do not enter an exact interval
    assert bootstrap.interval_for("acc", recs, seed=1, n_samples=10) == bootstrap.interval_for("acc", recs, seed=2)


def test_every_metric_declares_its_interval_in_words():
    for metric in metrics.METRICS.values():
        assert metric.interval_method in metrics.INTERVAL_METHODS.values()
    with pytest.raises(ConfigError, match="exact binomial interval needs a share"):
        metrics.Metric("graded", "graded, 0-100", lambda records: 0.0, metrics.anywhere_but_translation,
                       metrics.Recomputed(), scale=metrics.POINTS, interval=metrics.EXACT)


def test_small_counts_are_marked():
    assert is_small(SMALL_N - 1) and not is_small(SMALL_N) and not is_small(None)
