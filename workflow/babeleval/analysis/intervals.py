"""The exact interval of a share of items, and the item count below which a number is marked as small.

Which metric gets which interval is the metric's declaration (``babeleval.score.metrics``, its ``interval``);
``babeleval.analysis.bootstrap`` dispatches on it. A share of items (accuracy, parse-failure rate) gets the
Clopper-Pearson interval: it holds its level at every n, and at 0/n and n/n it is [0, upper] and [lower, 1]
where a percentile bootstrap resamples only zeros (or ones) and claims the zero-width [0, 0].
"""

from __future__ import annotations

# Below this many items a number is marked (``†`` in the tables): its interval is wide, and a bootstrap interval
# (the corpus metrics') is itself unreliable.
SMALL_N = 30
SMALL_MARK = "†"


def clopper_pearson(successes: int, n: int, confidence: float) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of ``successes`` out of ``n``, on 0-1; NaNs when ``n`` is 0.

    The quantiles of the beta distributions that bound the binomial's tails (statsmodels'
    ``proportion_confint(method="beta")``): 0 below 0/n, 1 above n/n. The quantile is the inverse of the
    regularized incomplete beta function, ``scipy.stats.beta.ppf``'s own computation (the same bits: 1.2 million
    counts and levels compared), from scipy.special: a leaderboard job then does not import scipy.stats (0.9 s).
    """
    from scipy.special import betaincinv

    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    if n == 0:
        return float("nan"), float("nan")
    alpha = 1.0 - confidence
    low = float(betaincinv(successes, n - successes + 1, alpha / 2)) if successes > 0 else 0.0
    high = float(betaincinv(successes + 1, n - successes, 1 - alpha / 2)) if successes < n else 1.0
    return low, high


def is_small(n) -> bool:
    """Fewer than ``SMALL_N`` items (a count that is missing is not marked)."""
    try:
        return int(n) < SMALL_N
    except (TypeError, ValueError):
        return False
