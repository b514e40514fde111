"""Confidence intervals for every metric, recomputed from per-item outcomes (``babeleval.score.outcomes``): exact for a share of items, else a seeded
bootstrap over items.

The interval's method is the metric's own declaration (``babeleval.score.metrics``, its ``interval``): a share of
items (accuracy, parse-failure rate) gets the exact Clopper-Pearson interval (``babeleval.analysis.intervals``),
right at 0% and 100% and for any n; the other metrics the percentile bootstrap. How a metric is recomputed on a resample of items is the metric's own declaration
(``babeleval.score.metrics``, its ``resampling``); this module draws the resamples:

- **item means** (``ItemMean``: acc, acc_norm, parse_failure_rate, acc_parsed): the mean of one value per
  item, resampled with vectorised indexing;
- **corpus statistics** (``CorpusStatistics``: BLEU, chrF): per-item sufficient statistics, summed over a
  resample (in float32, as sacrebleu does) and turned into a score by the metric, exactly as
  ``sacrebleu --confidence`` and its paired bootstrap test do;
- **recomputed** (``Recomputed``: macro-F1, balanced accuracy, SQuAD EM/F1): the metric's own computation
  over each resample of the records, so the interval is on the reported scale.

Resampling draws item indices with ``numpy.random.default_rng(seed).choice``
(the same call sacrebleu makes), one fresh generator per combination, so a
combination's interval does not depend on which other combinations exist.
The interval is the percentile interval of the resampled scores.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..core.paths import combo_from_path
from ..core.progress import Progress
from ..score import outcomes
from ..score.metrics import EXACT, CorpusStatistics, ItemMean, Metric, find_metric
from .intervals import clopper_pearson
from .settings import DEFAULT_SETTINGS



@dataclass(frozen=True)
class ItemData:
    """Per-item data a metric is recomputed from.

    ``values``: (n,) per-item values of a mean, or (n, k) sufficient statistics turned into a score by
    ``from_sums``; or ``records`` with the metric's own ``compute`` (``values`` then unused).
    """

    metric: str
    ids: list[str]
    values: np.ndarray
    from_sums: Callable[[np.ndarray], Any] | None = None
    records: list[dict[str, Any]] | None = None
    compute: Callable[[list[dict[str, Any]]], float] | None = None
    outcome: bool = False  # right/wrong per item: paired tests use the exact McNemar test

    @property
    def n(self) -> int:
        return len(self.ids)

    @property
    def kind(self) -> str:
        return "records" if self.compute is not None else "corpus" if self.from_sums is not None else "mean"

    def score(self) -> float:
        if self.n == 0:
            return float("nan")
        if self.kind == "records":
            return float(self.compute(self.records))
        if self.kind == "corpus":
            return float(self.from_sums(self.values.sum(0)))
        return float(self.values.mean())

    def resampled(self, idx: np.ndarray) -> np.ndarray:
        """Scores of the resamples ``idx`` (B, n) of item positions."""
        if self.kind == "records":
            return np.array([self.compute([self.records[i] for i in row]) for row in idx], dtype=float)
        if self.kind == "corpus":
            # float32 sums, as sacrebleu's own bootstrap and paired test compute them
            stats = self.values.astype("float32")[idx].sum(axis=1)
            return np.array([self.from_sums(s) for s in stats])
        return self.values[idx].mean(axis=1)

    def resampled_scores(self, n_samples: int, seed: int) -> np.ndarray:
        """Scores of the ``n_samples`` resamples ``resample_indices`` draws with ``seed``: ``resampled`` on them.

        Whole-number item means (right/wrong) are summed through each resample's draw counts, one product of the
        counts and the values in place of a gather per resample: the same integer sums, so the same scores to the
        bit. numpy's own loop (einsum), not BLAS: BLAS threads that wait for each other on a busy machine made it
        four times slower than the gather.
        """
        if self.kind == "mean" and self.n and _whole_numbers(self.values):
            return np.einsum("ij,j->i", resample_counts(self.n, n_samples, seed), self.values) / self.n
        return self.resampled(resample_indices(self.n, n_samples, seed))

    def subset(self, ids: Sequence[str]) -> "ItemData":
        if list(ids) == self.ids:  # the items both sides hold are all of this side's, in its order
            return self
        pos = {k: i for i, k in enumerate(self.ids)}
        rows = [pos[k] for k in ids]
        records = [self.records[i] for i in rows] if self.records is not None else None
        values = self.values[rows] if len(self.values) else self.values
        return ItemData(self.metric, list(ids), values, self.from_sums, records, self.compute, self.outcome)


def item_data(metric: str, records: Sequence[dict[str, Any]],
              options: Mapping[str, Any] | None = None) -> ItemData | None:
    """What ``metric`` is recomputed from in ``records``; None when it cannot be recomputed from them (a metric
    the registry does not know has no interval rather than a wrong one).

    ``options``: the combination's metric options (its scores file's record), as scoring computed it with.
    """
    defined = find_metric(metric)
    if defined is None:
        return None
    if isinstance(defined.resampling, ItemMean):
        return mean_item_data(defined, records)
    if isinstance(defined.resampling, CorpusStatistics):
        return corpus_item_data(defined, records, options)
    return records_item_data(defined, records, options)


def mean_item_data(metric: Metric, records: Sequence[dict[str, Any]]) -> ItemData | None:
    ids, values = [], []
    for record in records:
        value = metric.resampling.value(record)
        if value is None:  # not scored per item (e.g. ``correct`` of a corpus-level task)
            continue
        if isinstance(value, bool) or isinstance(value, (int, float)):
            ids.append(str(record["id"]))
            values.append(float(value))
        else:
            return None
    if not values and records:
        return None
    return ItemData(metric.name, ids, np.asarray(values, dtype=float), outcome=metric.right_or_wrong)


def records_item_data(metric: Metric, records: Sequence[dict[str, Any]],
                      options: Mapping[str, Any] | None) -> ItemData | None:
    records = list(records)
    try:
        metric.compute(records, options)
    except Exception as exc:  # the records lack what the metric reads
        logging.warning("%s: cannot recompute from the raw records (%s: %s)", metric.name, type(exc).__name__, exc)
        return None
    return ItemData(metric.name, [str(r["id"]) for r in records], np.empty(0), records=records,
                    compute=lambda rs: metric.compute(rs, options))


def corpus_item_data(metric: Metric, records: Sequence[dict[str, Any]],
                     options: Mapping[str, Any] | None) -> ItemData | None:
    if not records:
        return None
    try:
        statistics = metric.statistics(records, options)
    except Exception as exc:  # records without translations; spBLEU's SentencePiece model cannot be fetched offline
        logging.warning("%s: cannot recompute per item (%s: %s); no interval or paired test for it",
                        metric.name, type(exc).__name__, exc)
        return None
    return ItemData(metric.name, [str(r["id"]) for r in records], np.asarray(statistics.rows, dtype=float),
                    from_sums=statistics.score)


def _whole_numbers(values: np.ndarray) -> bool:
    # below 2**53 a float64 sum of whole numbers is exact in any order
    return bool(np.all(np.abs(values) < 2 ** 40) and np.all(values == np.round(values)))


# Every combination of a grid draws the same resamples (its own fresh generator on the grid's seed, and most
# have the same number of items): drawn once, kept read-only.
@functools.lru_cache(maxsize=4)
def resample_indices(n: int, n_samples: int, seed: int) -> np.ndarray:
    """(n_samples, n) item positions drawn with replacement, as sacrebleu draws them."""
    rng = np.random.default_rng(seed)
    idx = rng.choice(n, size=(n_samples, n), replace=True)
    idx.flags.writeable = False
    return idx


@functools.lru_cache(maxsize=4)
def resample_counts(n: int, n_samples: int, seed: int) -> np.ndarray:
    """(n_samples, n): how many times each resample of ``resample_indices`` drew each item."""
    idx = resample_indices(n, n_samples, seed)
    flat = (np.arange(n_samples)[:, None] * n + idx).ravel()
    counts = np.bincount(flat, minlength=n_samples * n).reshape(n_samples, n).astype(float)
    counts.flags.writeable = False
    return counts


def percentile_interval(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    alpha = 1.0 - confidence
    low, high = np.quantile(samples, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def confidence_interval(data: ItemData, *, seed: int, n_samples: int = DEFAULT_SETTINGS.samples,
                        confidence: float = DEFAULT_SETTINGS.confidence) -> tuple[float, float]:
    """Percentile bootstrap interval of the metric; NaNs when there are no items."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    if data.n == 0:
        return float("nan"), float("nan")
    samples = data.resampled_scores(n_samples, seed)
    return percentile_interval(samples, confidence)


def interval_for(metric: str, records: Sequence[dict[str, Any]], *, seed: int, n_samples: int = DEFAULT_SETTINGS.samples,
                 confidence: float = DEFAULT_SETTINGS.confidence,
                 options: Mapping[str, Any] | None = None) -> tuple[float, float]:
    """The interval of ``metric`` over ``records`` by the metric's declared method, or NaNs when it cannot be
    recomputed per item."""
    data = item_data(metric, records, options)
    if data is None:
        return float("nan"), float("nan")
    if find_metric(metric).interval == EXACT:
        return clopper_pearson(int(round(float(data.values.sum()))), data.n, confidence)
    return confidence_interval(data, seed=seed, n_samples=n_samples, confidence=confidence)


def leaderboard_intervals(frame, outcome_files: Sequence[str], *, seed: int, n_samples: int = DEFAULT_SETTINGS.samples,
                          confidence: float = DEFAULT_SETTINGS.confidence,
                          options: Mapping[tuple, Mapping[str, Any]] | None = None):
    """``frame`` (the leaderboard) with ``ci_low`` and ``ci_high`` (each metric's declared interval) from the outcome
    table of each row's combination.

    Tables are read one at a time (a big grid never sits in memory at once), without the text no metric reads. A
    metric that cannot be recomputed per item, or a combination without an outcome table, gets empty cells. ``options``: the metric
    options of each (model, task, language, template), as its scores file records them.
    """
    wanted: dict[tuple, list[str]] = {}
    for row in frame.itertuples(index=False):
        wanted.setdefault((row.model, row.task, row.language, row.template), []).append(row.metric)
    bounds: dict[tuple, tuple[float, float]] = {}
    files = sorted(map(str, outcome_files))
    progress = Progress(len(files), what="bootstrapped intervals of", unit="combinations")
    for done, path in enumerate(files, 1):
        combo = tuple(combo_from_path(path))
        if combo in wanted:
            records = outcomes.read(path, without=outcomes.TEXT_ONLY)
            for metric in wanted[combo]:
                bounds[(*combo, metric)] = interval_for(metric, records, seed=seed, n_samples=n_samples,
                                                        confidence=confidence, options=(options or {}).get(combo))
        progress.tick(done)
    keys = zip(frame["model"], frame["task"], frame["language"], frame["template"], frame["metric"])
    cis = [bounds.get(key, (float("nan"), float("nan"))) for key in keys]
    out = frame.copy()
    out["ci_low"] = [c[0] for c in cis]
    out["ci_high"] = [c[1] for c in cis]
    return out
