"""Rank correlations of two score vectors over the same units (models, languages): Kendall's tau-b, Spearman's rho,
and the mean ranks they rest on.

The numbers are scipy.stats' (``kendalltau``, ``spearmanr``, ``rankdata``), bit for bit, computed the same way
(tests/test_analysis_sensitivity.py compares them on 500 vectors, with ties and without). They are written out here
because importing scipy.stats costs an analysis job about a second of CPU, more than its own work on a run's
leaderboard; the units ranked are few (models, or a task's languages), so counting pairs directly is cheap.
"""

from __future__ import annotations

import numpy as np


def average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks from 1, ties sharing the mean of the ranks they span (``scipy.stats.rankdata``'s default); all NaN where
    a value is missing, as scipy's are."""
    values = np.asarray(values, dtype=float)
    if np.isnan(values).any():
        return np.full(len(values), np.nan)
    order = np.argsort(values, kind="mergesort")
    ordered = values[order]
    first = np.r_[True, ordered[1:] != ordered[:-1]]
    starts = np.flatnonzero(first)
    ends = np.r_[starts[1:], len(values)]  # a tie spans ranks start + 1 .. end
    ranks = np.empty(len(values))
    ranks[order] = ((starts + ends + 1) / 2)[np.cumsum(first) - 1]
    return ranks


def _undefined(a: np.ndarray, b: np.ndarray) -> bool:
    """No ranking to correlate: fewer than two units, a missing score (scipy's NaN too), or a constant vector."""
    return len(a) < 2 or bool(np.isnan(a).any() or np.isnan(b).any() or np.all(a == a[0]) or np.all(b == b[0]))


def spearman_rho(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rho: the correlation of the two vectors' mean ranks; NaN where there is no ranking
    (``_undefined``)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if _undefined(a, b):
        return float("nan")
    # the column layout scipy's spearmanr hands np.corrcoef, so that the sums run in its order
    return float(np.corrcoef(np.column_stack((average_ranks(a), average_ranks(b))), rowvar=False)[1, 0])


def kendall_tau_b(a: np.ndarray, b: np.ndarray) -> float:
    """Kendall's tau-b: (concordant - discordant pairs) / sqrt(pairs untied in a) / sqrt(pairs untied in b); NaN
    where there is no ranking (``_undefined``)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if _undefined(a, b):
        return float("nan")
    upper = np.triu_indices(len(a), k=1)
    sign_a = np.sign(a[:, None] - a[None, :])[upper]
    sign_b = np.sign(b[:, None] - b[None, :])[upper]
    pairs = len(sign_a)
    # Python integers, as scipy keeps its counts, so the division below is the same float operation
    concordant_minus_discordant = int(np.sum(sign_a * sign_b))
    untied_a, untied_b = pairs - int(np.sum(sign_a == 0)), pairs - int(np.sum(sign_b == 0))
    tau = concordant_minus_discordant / np.sqrt(untied_a) / np.sqrt(untied_b)
    return float(min(1.0, max(-1.0, tau)))
