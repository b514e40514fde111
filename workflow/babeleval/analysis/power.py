"""The power of the paired test the analysis runs on right/wrong metrics, before a run and beside its results.

The analysis compares two templates (or two models) on the items both answered with the **exact McNemar test**
(``significance.mcnemar_exact``), Holm-Bonferroni corrected within a family of tests. Its power depends on three
numbers: the items ``n``, the **discordance** ``r`` (the share of items the two sides answer differently: one
right, the other wrong) and the significance level each test must clear. Out of ``n`` items ``D ~ Binomial(n, r)``
are discordant; of those, the items only side a gets right are ``Binomial(D, (r + d) / (2 r))`` where ``d`` is the
difference in accuracy (a share). The test rejects when the smaller discordant count is in the exact binomial tail
of size ``alpha``. Power is computed exactly, summing over ``D``: no normal approximation, which the exact test's
discreteness makes optimistic at the small ``D`` of a per-language comparison.

The level: Holm's first step compares the smallest p-value with ``alpha / m`` for a family of ``m`` tests, and a
lone real difference among ``m - 1`` null ones must clear about that. Planning with ``alpha / m`` (Bonferroni, the
strictest of Holm's steps) is therefore what a design must survive; several real differences in a family make
Holm's later steps easier, so the planned power is a floor (``bench/power_check.py`` simulates both).

- ``power``: the probability that the test finds a difference ``d``;
- ``minimum_detectable``: the smallest ``d`` found with the target power (MDE80 at 0.8);
- ``items_needed``: the smallest ``n`` that finds ``d`` with the target power.

Differences here are shares (0-1); the callers print them as points of accuracy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

TARGET_POWER = 0.8
# the discordance a plan assumes where no earlier run measured it: about what two prompt templates of one model
# disagree on in the repository's runs and in published prompt-sensitivity studies; always printed as assumed
ASSUMED_DISCORDANCE = 0.25


def corrected_alpha(alpha: float, family_size: int) -> float:
    """The level one test of a family must clear under Holm-Bonferroni for a lone difference: ``alpha / m``."""
    return alpha / max(1, family_size)


def _critical(discordant: np.ndarray, alpha: float) -> np.ndarray:
    """For each number of discordant items, the largest smaller-side count the exact McNemar test rejects at
    ``alpha`` (``2 * P(X <= k) < alpha`` under X ~ Binomial(D, 1/2), as ``significance.mcnemar_exact`` decides);
    -1 where no count is rejected."""
    k = stats.binom.ppf(alpha / 2, discordant, 0.5).astype(int)  # smallest k with P(X <= k) >= alpha / 2
    k = np.where(2 * stats.binom.cdf(k, discordant, 0.5) < alpha, k, k - 1)
    return np.where(discordant > 0, k, -1)


def power(n: int, discordance: float, difference: float, alpha: float) -> float:
    """The probability that the exact McNemar test at ``alpha`` finds an accuracy difference ``difference`` (a share)
    on ``n`` paired items of which a share ``discordance`` is discordant. 0 where the difference exceeds the
    discordance (impossible: each point of difference is a discordant item)."""
    d = abs(difference)
    if n <= 0 or discordance <= 0 or d > discordance:
        return 0.0
    spread = 10 * np.sqrt(n * discordance * (1 - discordance)) + 10
    low, high = max(0, int(n * discordance - spread)), min(n, int(np.ceil(n * discordance + spread)))
    discordant = np.arange(low, high + 1)
    weight = stats.binom.pmf(discordant, n, discordance)
    k = _critical(discordant, alpha)
    q = min(1.0, (discordance + d) / (2 * discordance))  # the share of discordant items side a gets right
    reject = stats.binom.cdf(k, discordant, q) + stats.binom.sf(discordant - k - 1, discordant, q)
    reject = np.where(k >= 0, reject, 0.0)
    return float(np.clip(np.sum(weight * reject), 0.0, 1.0))


def minimum_detectable(n: int, discordance: float, alpha: float, target: float = TARGET_POWER) -> float | None:
    """The smallest accuracy difference (a share) found with probability ``target``; None where even a difference
    as large as the discordance is not (too few items, or a level too strict for them)."""
    if power(n, discordance, discordance, alpha) < target:
        return None
    low, high = 0.0, discordance
    for _ in range(24):  # power rises with the difference: bisection to well below a hundredth of a point
        middle = (low + high) / 2
        if power(n, discordance, middle, alpha) >= target:
            high = middle
        else:
            low = middle
    return high


def items_needed(difference: float, discordance: float, alpha: float, target: float = TARGET_POWER,
                 most: int = 10_000_000) -> int | None:
    """The smallest number of items whose test finds ``difference`` (a share) with probability ``target``; None where
    no number up to ``most`` does (a difference larger than the discordance never is).

    The exact test's power is not monotone in n (it saw-tooths by a point or two); the search returns the first n
    of the rising trend that reaches the target, which a few more items keep above it within that tooth."""
    d = abs(difference)
    if d <= 0 or d > discordance:
        return None
    high = 16
    while power(high, discordance, d, alpha) < target:
        if high >= most:
            return None
        high = min(most, high * 2)
    low = high // 2
    while high - low > 1:
        middle = (low + high) // 2
        if power(middle, discordance, d, alpha) >= target:
            high = middle
        else:
            low = middle
    return high


def observed_mde(n_items: int, a_only: int, b_only: int, alpha: float, family_size: int) -> float | None:
    """After a run: the MDE of a test that was made, at the discordance its items showed and its Holm family's
    level. None where no item was discordant (the design's discordance is unknown) or none is detectable."""
    if n_items <= 0 or a_only + b_only == 0:
        return None
    return minimum_detectable(n_items, (a_only + b_only) / n_items, corrected_alpha(alpha, family_size))


# A paired bootstrap's p-value is (c + 1) / (B + 1) for B resamples: a test at a small level rests on the few most
# extreme resamples, and finds a difference less often than the normal formula says (bench/graded_power_check.py:
# 70% instead of 80% at 0.05 / 30 with 1,000 resamples, 81% with 10,000). Below this many resamples in the rejection
# tail, no MDE is given: the number would be optimistic.
MIN_TAIL_RESAMPLES = 10


def resamples_needed(level: float) -> int:
    """The resamples a paired bootstrap test at ``level`` needs for its MDE to hold."""
    return int(np.ceil(MIN_TAIL_RESAMPLES / level))


def normal_mde(se: float, level: float, target: float = TARGET_POWER) -> float | None:
    """The smallest difference a paired bootstrap test at ``level`` finds with probability ``target``, from the
    standard error of its difference: ``(z(1 - level) + z(target)) * se``, one tail, as the test's p-value is
    (``bootstrap_mde``). None where there is no spread."""
    if not se > 0:
        return None
    return float((stats.norm.ppf(1 - level) + stats.norm.ppf(target)) * se)


def bootstrap_mde(se: float, alpha: float, family_size: int, samples: int, target: float = TARGET_POWER
                  ) -> float | None:
    """After a run: the MDE of a paired bootstrap test (a graded or corpus metric: chrF, BLEU, F1), from the standard
    error ``se`` of the difference over its resamples, at its Holm family's level ``a``: ``(z(1 - a) + z(power)) *
    se``. The test's p-value (sacrebleu's) is the share of centred resampled differences beyond the observed one, one
    tail of their normal approximation, so it rejects a difference past ``z(1 - a) * se``; 200 simulated studies in
    tests/test_power_plan.py find a difference of this size about 80% of the time. None where the resamples did not
    vary, or where the test's ``samples`` resamples are too few for its level (``resamples_needed``)."""
    level = corrected_alpha(alpha, family_size)
    return normal_mde(se, level, target) if samples >= resamples_needed(level) else None


def made_test_mde(n_items: int, a_only: Any, b_only: Any, diff_se: Any, alpha: float, family_size: int, samples: int
                  ) -> float | None:
    """The MDE of a test that was made: an exact McNemar test's (its discordant counts known) or else a paired
    bootstrap test's (the standard error of its resampled difference, over ``samples`` resamples)."""
    if a_only is not None and not pd.isna(a_only):
        return observed_mde(n_items, int(a_only), int(b_only), alpha, family_size)
    if diff_se is None or pd.isna(diff_se):
        return None
    return bootstrap_mde(float(diff_se), alpha, family_size, samples)


@dataclass(frozen=True)
class Discordance:
    """The discordance a comparison is planned with, and where it comes from (said beside every number)."""

    share: float
    source: str  # "pilot" (measured on these two sides), "pilot, task" (pooled over the task), "assumed"
    items: int = 0  # the pilot items it was measured on (0: assumed)


@dataclass(frozen=True)
class Spread:
    """The spread a graded comparison (chrF, BLEU, F1: a paired bootstrap test) is planned with: the standard
    deviation of its difference per item, ``sd``, on the metric's scale, such that ``n`` items give a standard error
    ``sd / sqrt(n)``, and where it comes from (said beside every number). There is no assumed spread: a graded
    metric's spread depends on the task, the metric and the models too much to guess."""

    sd: float
    source: str  # "pilot" (measured on these two sides) or "pilot, pooled over the task"
    items: int  # the pilot items it was measured on


def graded_mde(items: int, spread: Spread, level: float, target: float = TARGET_POWER) -> float | None:
    """Before a run: the MDE of a paired bootstrap test on ``items`` items at ``level`` (already Holm's), its standard
    error extrapolated from a pilot's spread. None where there are no items. (The caller checks the resamples
    against ``resamples_needed``.)"""
    return _pilot_factor(spread, level, target) * spread.sd / np.sqrt(items) if items > 0 and spread.sd > 0 else None


def graded_items_needed(difference: float, spread: Spread, level: float, target: float = TARGET_POWER) -> int | None:
    """The items a paired bootstrap test needs to find ``difference`` (the metric's scale) with probability
    ``target``: the smallest n with ``graded_mde(n) <= difference``."""
    d = abs(difference)
    if d <= 0 or not spread.sd > 0:
        return None
    return int(np.ceil((_pilot_factor(spread, level, target) * spread.sd / d) ** 2))


def _pilot_factor(spread: Spread, level: float, target: float) -> float:
    """``z(1 - level) + z(target)`` with Student's t in place of the normal at the pilot's degrees of freedom (its items
    less one): a spread measured on few items is itself uncertain, and planning with it as if it were known would
    find the planned difference less often than ``target`` (the pilot sizes in bench/graded_power_check.py)."""
    df = max(1, spread.items - 1)
    return float(stats.t.ppf(1 - level, df) + stats.t.ppf(target, df))


def measured(a: np.ndarray, b: np.ndarray) -> float:
    """The share of items two sides answer differently (right/wrong outcomes on the same items, in order)."""
    a, b = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    return float(np.mean(a != b)) if len(a) else float("nan")
