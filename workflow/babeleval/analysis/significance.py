"""Paired significance tests on the same items, with a Holm-Bonferroni correction.

Two kinds of comparison, each on the items both sides answered (matched by id):

- **template vs template**: one model, one task, one language, two templates;
- **model vs model**: one task, one language, one template, two models.

The test follows the metric (its resampling, ``babeleval.score.metrics``):

- the mean of a per-item right/wrong outcome (acc, acc_norm): the **exact McNemar
  test**, a two-sided binomial test on the discordant items (``statsmodels``'
  ``mcnemar(exact=True)``);
- any other metric (BLEU, chrF, macro-F1, SQuAD F1 ...): **paired
  bootstrap resampling**, as ``sacrebleu``'s paired test does it (same index
  draws from ``numpy.random.default_rng(seed)``, same centred statistic,
  p = (c + 1) / (B + 1)).

Each row also holds ``diff_low`` / ``diff_high``: the percentile interval of a - b, resampling the shared items
(the same draws for both sides), so a reader sees the size a difference may have, and whether it holds 0, with
``diff_se``, the resampled difference's standard error. That interval is unadjusted, like ``p_value``. Beside
``p_holm`` stands ``adj_low`` / ``adj_high``: the interval at the level an adjusted p-value is judged at
(``holm_level_interval``); and ``mde``: the smallest difference the test could find
with 80% power at its Holm level (``babeleval.analysis.power``): for an exact McNemar test at the discordance its
items showed, for a paired bootstrap test from ``diff_se``. A difference that is not significant says what the
design could not have found.

p-values are corrected with **Holm-Bonferroni** within a family: all tests of
one comparison kind for one task and one metric. Each row says which family it
belongs to and how many tests that family holds.
"""

from __future__ import annotations

import itertools
import json
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ..core.progress import Progress
from ..score.metrics import ACCURACY, get_metric
from .bootstrap import ItemData, item_data, percentile_interval
from .power import corrected_alpha, made_test_mde
from ..core.paths import Combo
from .records import metric_options
from .settings import DEFAULT_SETTINGS

COLUMNS = ["comparison", "task", "language", "fixed", "a", "b", "metric", "n_items", "score_a", "score_b", "diff",
           "diff_low", "diff_high", "diff_se", "test", "a_only", "b_only", "p_value", "adj_low", "adj_high", "p_holm",
           "significant", "family_size", "correction", "mde"]
CORRECTION = "Holm-Bonferroni"


def mcnemar_exact(a: Sequence[bool], b: Sequence[bool]) -> tuple[int, int, float]:
    """Discordant counts (a right and b wrong, b right and a wrong) and the exact two-sided p-value."""
    a = np.asarray(a, dtype=bool)
    b = np.asarray(b, dtype=bool)
    a_only = int(np.sum(a & ~b))
    b_only = int(np.sum(~a & b))
    n = a_only + b_only
    if n == 0:
        return a_only, b_only, 1.0
    p = 2.0 * stats.binom.cdf(min(a_only, b_only), n, 0.5)
    return a_only, b_only, float(min(1.0, p))


def paired_bootstrap(a: ItemData, b: ItemData, *, seed: int, n_samples: int = DEFAULT_SETTINGS.samples) -> float:
    """Two-sided paired bootstrap p-value of the score difference (sacrebleu's paired_bs procedure).

    One departure: equal scores give p = 1. sacrebleu's count of resamples whose centred difference
    *exceeds* the observed one gives (0 + 1) / (B + 1) there, calling two identical systems different.
    """
    real = abs(a.score() - b.score())
    if real == 0:
        return 1.0
    sample_diffs = np.abs(a.resampled_scores(n_samples, seed) - b.resampled_scores(n_samples, seed))
    centred = sample_diffs - sample_diffs.mean()
    count = int(np.sum(centred > real))
    return (count + 1) / (n_samples + 1)


def resampled_difference(a: ItemData, b: ItemData, *, seed: int, n_samples: int = DEFAULT_SETTINGS.samples
                         ) -> np.ndarray:
    """a's score minus b's over the same resamples of their shared items."""
    return a.resampled_scores(n_samples, seed) - b.resampled_scores(n_samples, seed)


def difference_spread(data_a: ItemData, data_b: ItemData, *, seed: int, n_samples: int = DEFAULT_SETTINGS.samples
                      ) -> tuple[float, int] | None:
    """A pilot's spread of a - b per item, on the items both sides hold: the resampled difference's standard error
    times the square root of their number (so that ``n`` items would give ``sd / sqrt(n)``), with Bessel's
    correction (the bootstrap's own variance of a mean is the plug-in one, over ``n`` rather than ``n - 1``), and
    that number; None with fewer than two shared items or no spread. A corpus statistic (BLEU, chrF over the corpus)
    has no per-item value: its standard error is taken to shrink as ``1 / sqrt(n)`` all the same, as a mean's does,
    which holds in simulation from pilots of 40-200 items to studies of 400-1,000 (bench/corpus_power_check.py:
    within about 6%, the planned MDE found 77.5-81.5% of the time, no bias of BLEU at 1,000 items)."""
    common = sorted(set(data_a.ids) & set(data_b.ids))
    if len(common) < 2:
        return None
    _, _, se = difference_summary(resampled_difference(data_a.subset(common), data_b.subset(common), seed=seed,
                                                       n_samples=n_samples), 0.95)
    n = len(common)
    return (se * n / float(np.sqrt(n - 1)), n) if se > 0 else None


def difference_summary(differences: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """The percentile interval of resampled differences and their standard error (NaN from fewer than two)."""
    low, high = percentile_interval(differences, confidence)
    return low, high, float(np.std(differences, ddof=1)) if len(differences) > 1 else float("nan")


def holm_level_interval(diff: float, diff_se: Any, n_items: int, a_only: Any, b_only: Any, alpha: float,
                        family_size: int) -> tuple[float, float]:
    """The interval of a - b adjusted like the Holm p-value beside it: simultaneous over its family of ``m`` tests
    at level ``1 - alpha / m`` (Bonferroni: Holm's strictest step, which a lone difference must clear; a p-value
    Holm adjusts is never above Bonferroni's, so an interval that excludes 0 stands beside a significant test).

    - An exact McNemar row (its discordant counts given): Clopper-Pearson's exact interval of the share of the
      ``D`` discordant items a gets right, as a difference ``D / n * (2 q - 1)``. It is the interval the exact test
      inverts, so it excludes 0 exactly when the test rejects at that level (given ``D``). No discordant item: NaN.
    - Any other row: normal around ``diff`` with the resampled difference's standard error. Not a percentile
      interval: at ``alpha / m`` its tails would hold a handful of the resamples (1,000 by default: 0.7 in each
      tail for 36 tests). NaN where the resamples give no standard error.
    """
    level = corrected_alpha(alpha, family_size)
    if a_only is not None and not pd.isna(a_only):
        discordant = int(a_only) + int(b_only)
        if discordant == 0 or n_items <= 0:
            return float("nan"), float("nan")
        share = stats.binomtest(int(a_only), discordant).proportion_ci(confidence_level=1 - level, method="exact")
        return (discordant / n_items * (2 * share.low - 1), discordant / n_items * (2 * share.high - 1))
    if diff_se is None or pd.isna(diff_se):
        return float("nan"), float("nan")
    half = float(stats.norm.ppf(1 - level / 2)) * float(diff_se)
    return float(diff) - half, float(diff) + half


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (step-down, monotone, capped at 1)."""
    p = np.asarray(p_values, dtype=float)
    m = len(p)
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    adjusted = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adjusted[i] = running
    return adjusted


def compare(records_a: list[dict[str, Any]], records_b: list[dict[str, Any]], metric: str, *, seed: int,
            n_samples: int = DEFAULT_SETTINGS.samples, options: dict[str, Any] | None = None,
            confidence: float = DEFAULT_SETTINGS.confidence) -> dict[str, Any] | None:
    """One paired test of ``metric`` on the items both sides hold; None when it cannot be tested.

    ``options``: the metric options both sides were scored with (one task and language: the same).
    """
    return compare_data(item_data(metric, records_a, options), item_data(metric, records_b, options), metric,
                        seed=seed, n_samples=n_samples, confidence=confidence)


def compare_data(data_a: ItemData | None, data_b: ItemData | None, metric: str, *, seed: int,
                 n_samples: int = DEFAULT_SETTINGS.samples, confidence: float = DEFAULT_SETTINGS.confidence
                 ) -> dict[str, Any] | None:
    """``compare`` on what the metric is recomputed from on each side (``bootstrap.item_data``)."""
    if data_a is None or data_b is None:
        return None
    common = sorted(set(data_a.ids) & set(data_b.ids))
    if not common:
        return None
    data_a, data_b = data_a.subset(common), data_b.subset(common)
    row: dict[str, Any] = {"metric": metric, "n_items": len(common), "score_a": data_a.score(),
                           "score_b": data_b.score()}
    row["diff"] = row["score_a"] - row["score_b"]
    row["diff_low"], row["diff_high"], row["diff_se"] = difference_summary(
        resampled_difference(data_a, data_b, seed=seed, n_samples=n_samples), confidence)
    if data_a.outcome and data_b.outcome:
        a_only, b_only, p = mcnemar_exact(data_a.values == 1, data_b.values == 1)
        row.update(test="exact McNemar", a_only=a_only, b_only=b_only, p_value=p)
    else:
        p = paired_bootstrap(data_a, data_b, seed=seed, n_samples=n_samples)
        row.update(test=f"paired bootstrap ({n_samples} resamples)", a_only=None, b_only=None, p_value=p)
    return row


def _metrics(scores: dict[Combo, dict], combo: Combo) -> list[str]:
    """The metrics a combination reports that paired tests compare (not the parse-failure rate: a format
    property, with its own table)."""
    summary = scores.get(combo)
    names = list(summary["metrics"]) if summary else [ACCURACY]
    return [m for m in names if get_metric(m).compared]


class _ItemDataOf:
    """The ``item_data`` of a language's combinations, each (combination, metric, options) made once: a
    combination is in several pairs, of its templates and of its models."""

    def __init__(self, records: dict[Combo, list[dict[str, Any]]]):
        self._records, self._made = records, {}

    def __call__(self, combo: Combo, metric: str, options: dict[str, Any]) -> ItemData | None:
        key = (combo, metric, json.dumps(options, sort_keys=True, default=str))
        if key not in self._made:
            self._made[key] = item_data(metric, self._records[combo], options)
        return self._made[key]


def comparison_groups(combos: Iterable[Combo]) -> dict[tuple, dict[str, Combo]]:
    """The groups whose members are compared two by two: (kind, fixed, task, language) -> member -> combination,
    a group being the templates of one model and language, or the models of one template and language. The
    analysis tests these pairs and ``plan`` plans them (``babeleval.grid.power_plan``)."""
    groups: dict[tuple, dict[str, Combo]] = {}
    for combo in map(Combo._make, combos):
        groups.setdefault(("template", combo.model, combo.task, combo.language), {})[combo.template] = combo
        groups.setdefault(("model", combo.template, combo.task, combo.language), {})[combo.model] = combo
    return groups


def pairwise(raw: Mapping[Combo, list[dict]], scores: dict[Combo, dict] | None = None, *, seed: int,
             n_samples: int = DEFAULT_SETTINGS.samples, alpha: float = DEFAULT_SETTINGS.alpha,
             confidence: float = DEFAULT_SETTINGS.confidence) -> dict[str, pd.DataFrame]:
    """Template-vs-template and model-vs-model tables, each with Holm-corrected p-values."""
    scores = scores or {}
    rows: dict[str, list[dict[str, Any]]] = {"template": [], "model": []}
    groups = comparison_groups(raw)
    # every group lies within one (task, language): its combinations are read once, when its turn comes
    by_language: dict[tuple[str, str], list[tuple]] = {}
    for key in sorted(groups):
        by_language.setdefault(key[2:], []).append(key)
    progress = Progress(len(groups), what="compared", unit="groups of templates or models")
    done = 0
    for keys in by_language.values():
        members = {combo for key in keys for combo in groups[key].values()}
        data = _ItemDataOf({combo: raw[combo] for combo in sorted(members)})
        for key in keys:
            rows[key[0]] += _group_rows(key, groups[key], data, scores, seed=seed, n_samples=n_samples,
                                        confidence=confidence)
            done += 1
            progress.tick(done)
    return {"templates": correct(pd.DataFrame(rows["template"], columns=COLUMNS), alpha, n_samples),
            "models": correct(pd.DataFrame(rows["model"], columns=COLUMNS), alpha, n_samples)}


def _group_rows(key: tuple, members: dict[str, Combo], data: _ItemDataOf, scores: dict[Combo, dict], *, seed: int,
                n_samples: int, confidence: float) -> list[dict[str, Any]]:
    """The paired tests of one group's members, two by two, on each metric both report."""
    kind, fixed, task, language = key
    out = []
    for a, b in itertools.combinations(sorted(members), 2):
        ca, cb = members[a], members[b]
        shared = [m for m in _metrics(scores, ca) if m in set(_metrics(scores, cb))]
        for metric in shared:
            options = metric_options(scores.get(ca, {}))
            row = compare_data(data(ca, metric, options), data(cb, metric, options), metric, seed=seed,
                               n_samples=n_samples, confidence=confidence)
            if row is not None:
                row.update(comparison=f"{kind} vs {kind}", task=task, language=language, fixed=fixed, a=a, b=b)
                out.append(row)
    return out


def _mde(row: Any, alpha: float, samples: int) -> float:
    """The smallest difference the row's test could find with 80% power at its Holm level (``power.made_test_mde``);
    NaN where the items show no discordance, the resamples no spread, or too few resamples for the level."""
    found = made_test_mde(int(row.n_items), row.a_only, row.b_only, row.diff_se, alpha, int(row.family_size), samples)
    return float("nan") if found is None else found


def correct(frame: pd.DataFrame, alpha: float, samples: int = DEFAULT_SETTINGS.samples) -> pd.DataFrame:
    """Holm-Bonferroni within each (comparison, task, metric) family, the p-values and the intervals beside them;
    says so in every row."""
    frame = frame.copy()
    if frame.empty:
        return frame
    p_holm = pd.Series(np.nan, index=frame.index)
    size = pd.Series(0, index=frame.index)
    label = pd.Series("", index=frame.index, dtype=object)
    for (comparison, task, metric), index in frame.groupby(["comparison", "task", "metric"]).groups.items():
        p_holm[index] = holm(frame.loc[index, "p_value"].to_numpy(float))
        size[index] = len(index)
        label[index] = f"{CORRECTION} over {len(index)} tests ({comparison}, {task}, {metric})"
    frame["p_holm"], frame["family_size"], frame["correction"] = p_holm, size, label
    frame["significant"] = frame["p_holm"] < alpha
    frame[["adj_low", "adj_high"]] = [holm_level_interval(row.diff, row.diff_se, int(row.n_items), row.a_only,
                                                          row.b_only, alpha, int(row.family_size))
                                      for row in frame.itertuples(index=False)]
    frame["mde"] = [_mde(row, alpha, samples) for row in frame.itertuples(index=False)]
    return frame.sort_values(["comparison", "task", "metric", "language", "fixed", "a", "b"],
                             kind="stable").reset_index(drop=True)
