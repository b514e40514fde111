"""Seeded bootstrap over items: confidence intervals for every metric, recomputed from raw records.

A metric is recomputed from per-item data in one of three shapes:

- **item means** (acc, acc_norm, parse_failure_rate): the mean of one value
  per item, resampled with vectorised indexing;
- **corpus metrics** (bleu, spbleu, chrf, chrf++, or any sacrebleu metric the
  task code reports): sacrebleu's per-segment sufficient statistics, summed
  over a resample and turned into a score by the metric itself, exactly as
  ``sacrebleu --confidence`` and its paired bootstrap test do;
- **any other metric the scoring code defines** (``babeleval.metrics.get_metric``:
  macro-F1, balanced accuracy, SQuAD F1 ...): the metric's own ``compute`` over
  each resample of the records, so the interval is on the reported scale.

Hypotheses and references of corpus metrics are a record's ``prediction`` and
``gold`` (as the task code scores translation; an unreadable prediction is an
empty hypothesis), else its ``hypothesis`` and ``references``/``reference``.

Resampling draws item indices with ``numpy.random.default_rng(seed).choice``
(the same call sacrebleu makes), one fresh generator per combination, so a
combination's interval does not depend on which other combinations exist.
The interval is the percentile interval of the resampled scores.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..core.progress import Progress

DEFAULT_SAMPLES = 1000
DEFAULT_CONFIDENCE = 0.95

# metric name -> the per-item field holding its outcome
ITEM_FIELDS: dict[str, str] = {"acc": "correct", "acc_norm": "correct_norm"}
# metric name -> a function of the record giving its per-item value
DERIVED: dict[str, Callable[[dict[str, Any]], float]] = {
    "parse_failure_rate": lambda r: float(not r.get("parsed", True)),
}
CORPUS_METRICS = ("bleu", "spbleu", "chrf", "chrf++")


def corpus_metric(name: str):
    """The sacrebleu scorer of a corpus metric: the task code's own where it defines one, else sacrebleu's defaults."""
    defined = task_metric(name)
    if defined is not None and hasattr(defined, "_scorer"):
        return defined._scorer()
    from sacrebleu.metrics import BLEU, CHRF

    if name == "bleu":
        return BLEU()
    if name == "spbleu":
        return BLEU(tokenize="flores200")
    if name == "chrf":
        return CHRF()
    if name == "chrf++":
        return CHRF(word_order=2)
    raise KeyError(f"unknown corpus metric {name!r} (known: {', '.join(CORPUS_METRICS)})")


def task_metric(name: str):
    """The metric object scoring reported ``name`` with (``babeleval.metrics.get_metric``), if the code has one."""
    from ..score import metrics

    get = getattr(metrics, "get_metric", None)
    if get is None:
        return None
    try:
        return get(name)
    except KeyError:
        return None


def hypothesis(record: dict[str, Any]) -> str | None:
    prediction = record.get("prediction")
    if isinstance(prediction, str) or (prediction is None and isinstance(record.get("gold"), str)):
        return prediction or ""
    value = record.get("hypothesis")
    return value if isinstance(value, str) else None


def references(record: dict[str, Any]) -> list[str] | None:
    if isinstance(record.get("gold"), str) and isinstance(record.get("prediction"), (str, type(None))):
        return [record["gold"]]
    refs = record.get("references")
    if refs is None and isinstance(record.get("reference"), str):
        refs = [record["reference"]]
    if isinstance(refs, str):
        refs = [refs]
    return list(refs) if refs else None


@dataclass
class ItemData:
    """Per-item data a metric is recomputed from.

    ``values``: (n,) per-item values (means) or (n, k) sacrebleu statistics (``scorer`` set); or ``records``
    with the metric's own ``compute`` (neither set: ``values`` is unused).
    """

    metric: str
    ids: list[str]
    values: np.ndarray
    scorer: Any = None
    records: list[dict[str, Any]] | None = None
    compute: Callable[[list[dict[str, Any]]], float] | None = None

    @property
    def n(self) -> int:
        return len(self.ids)

    @property
    def kind(self) -> str:
        return "records" if self.compute is not None else "corpus" if self.scorer is not None else "mean"

    def score(self) -> float:
        if self.n == 0:
            return float("nan")
        if self.kind == "records":
            return float(self.compute(self.records))
        if self.kind == "corpus":
            return float(self.scorer._compute_score_from_stats(self.values.sum(0)).score)
        return float(self.values.mean())

    def resampled(self, idx: np.ndarray) -> np.ndarray:
        """Scores of the resamples ``idx`` (B, n) of item positions."""
        if self.kind == "records":
            return np.array([self.compute([self.records[i] for i in row]) for row in idx], dtype=float)
        if self.kind == "corpus":
            # float32 sums, as sacrebleu's own bootstrap and paired test compute them
            stats = self.values.astype("float32")[idx].sum(axis=1)
            return np.array([self.scorer._compute_score_from_stats(s).score for s in stats])
        return self.values[idx].mean(axis=1)

    def subset(self, ids: Sequence[str]) -> "ItemData":
        pos = {k: i for i, k in enumerate(self.ids)}
        rows = [pos[k] for k in ids]
        records = [self.records[i] for i in rows] if self.records is not None else None
        values = self.values[rows] if len(self.values) else self.values
        return ItemData(self.metric, list(ids), values, self.scorer, records, self.compute)


def item_data(metric: str, records: Sequence[dict[str, Any]]) -> ItemData | None:
    """What ``metric`` is recomputed from in ``records``; None when it cannot be recomputed from them."""
    if metric in ITEM_FIELDS or metric in DERIVED:
        return mean_item_data(metric, records)
    defined = task_metric(metric)
    if metric in CORPUS_METRICS or hasattr(defined, "_scorer"):
        return corpus_item_data(metric, records)
    if defined is not None:
        return records_item_data(metric, records, defined.compute)
    return mean_item_data(metric, records)  # a per-item numeric field named like the metric


def mean_item_data(metric: str, records: Sequence[dict[str, Any]]) -> ItemData | None:
    getter: Callable[[dict[str, Any]], Any]
    if metric in DERIVED:
        getter = DERIVED[metric]
    else:
        name = ITEM_FIELDS.get(metric, metric)
        if not records or not all(name in r for r in records):
            return None
        getter = lambda r: r[name]  # noqa: E731
    ids, values = [], []
    for record in records:
        value = getter(record)
        if value is None:  # not scored per item (e.g. ``correct`` of a corpus-level task)
            continue
        if isinstance(value, bool) or isinstance(value, (int, float)):
            ids.append(str(record["id"]))
            values.append(float(value))
        else:
            return None
    if not values and records:
        return None
    return ItemData(metric, ids, np.asarray(values, dtype=float))


def records_item_data(metric: str, records: Sequence[dict[str, Any]], compute) -> ItemData | None:
    records = list(records)
    try:
        compute(records)
    except Exception as exc:  # the records lack what the metric reads
        logging.warning("%s: cannot recompute from the raw records (%s: %s)", metric, type(exc).__name__, exc)
        return None
    return ItemData(metric, [str(r["id"]) for r in records], np.empty(0), records=records,
                    compute=lambda rs: float(compute(rs)))


def corpus_item_data(metric: str, records: Sequence[dict[str, Any]]) -> ItemData | None:
    pairs = [(str(r["id"]), hypothesis(r), references(r)) for r in records]
    pairs = [p for p in pairs if p[1] is not None and p[2] is not None]
    if not pairs:
        return None
    width = max(len(p[2]) for p in pairs)
    hyps = [p[1] for p in pairs]
    # sacrebleu wants reference *streams*; a missing reference (variable count per item) is None
    streams = [[p[2][j] if j < len(p[2]) else None for p in pairs] for j in range(width)]
    try:
        scorer = corpus_metric(metric)
        stats = scorer._extract_corpus_statistics(hyps, streams)
    except Exception as exc:  # e.g. spBLEU's SentencePiece model cannot be fetched offline
        logging.warning("%s: cannot recompute per item (%s: %s); no interval or paired test for it",
                        metric, type(exc).__name__, exc)
        return None
    return ItemData(metric, [p[0] for p in pairs], np.asarray(stats, dtype=float), scorer)


def resample_indices(n: int, n_samples: int, seed: int) -> np.ndarray:
    """(n_samples, n) item positions drawn with replacement, as sacrebleu draws them."""
    rng = np.random.default_rng(seed)
    return rng.choice(n, size=(n_samples, n), replace=True)


def percentile_interval(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    alpha = 1.0 - confidence
    low, high = np.quantile(samples, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def confidence_interval(data: ItemData, *, seed: int, n_samples: int = DEFAULT_SAMPLES,
                        confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float]:
    """Percentile bootstrap interval of the metric; NaNs when there are no items."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    if data.n == 0:
        return float("nan"), float("nan")
    samples = data.resampled(resample_indices(data.n, n_samples, seed))
    return percentile_interval(samples, confidence)


def interval_for(metric: str, records: Sequence[dict[str, Any]], *, seed: int, n_samples: int = DEFAULT_SAMPLES,
                 confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float]:
    """The interval of ``metric`` over ``records``, or NaNs when it cannot be recomputed per item."""
    data = item_data(metric, records)
    if data is None:
        return float("nan"), float("nan")
    return confidence_interval(data, seed=seed, n_samples=n_samples, confidence=confidence)


def leaderboard_intervals(frame, raw_files: Sequence[str], *, seed: int, n_samples: int = DEFAULT_SAMPLES,
                          confidence: float = DEFAULT_CONFIDENCE):
    """``frame`` (the leaderboard) with ``ci_low`` and ``ci_high`` from the raw file of each row's combination.

    Raw files are read one at a time (a big grid never sits in memory at once). A metric that cannot be
    recomputed per item, or a combination without a raw file, gets empty cells.
    """
    from ..core.jsonl import read_jsonl
    from .records import combo_from_path, slim

    wanted: dict[tuple, list[str]] = {}
    for row in frame.itertuples(index=False):
        wanted.setdefault((row.model, row.task, row.language, row.template), []).append(row.metric)
    bounds: dict[tuple, tuple[float, float]] = {}
    files = sorted(map(str, raw_files))
    progress = Progress(len(files), what="bootstrapped intervals of", unit="combinations")
    for done, path in enumerate(files, 1):
        combo = tuple(combo_from_path(path))
        if combo in wanted:
            records = [slim(r) for r in read_jsonl(path)]  # one file at a time; slim keeps what metrics read
            for metric in wanted[combo]:
                bounds[(*combo, metric)] = interval_for(metric, records, seed=seed, n_samples=n_samples,
                                                        confidence=confidence)
        progress.tick(done)
    keys = zip(frame["model"], frame["task"], frame["language"], frame["template"], frame["metric"])
    cis = [bounds.get(key, (float("nan"), float("nan"))) for key in keys]
    out = frame.copy()
    out["ci_low"] = [c[0] for c in cis]
    out["ci_high"] = [c[1] for c in cis]
    return out
