"""What a metric is, decided in one place: one ``Metric`` object per metric, in the registry ``METRICS``.

In the style of sacrebleu's small explicit metric objects and lm-evaluation-harness's registries, a metric
declares beside its computation everything the rest of the package reads about it, and nothing else decides
it again: scoring computes it, the resolved record of a combination (``babeleval.grid.records``) writes its
scale, direction, headline role and bootstrap into the scores file, the leaderboard resamples it for its
interval, the paired tests compare it, and the tables, figures and report show it on its scale with its label.

- ``name``, and ``label`` for readers;
- ``scale``: ``SHARE`` (computed as a share, 0-1, and shown as percent) or ``POINTS`` (computed and shown
  on 0-100);
- ``higher_is_better``;
- ``headline`` and ``rank``: whether it can be a task's headline number, and its place among those that
  can (lowest first; a metric without a rank comes after the ranked ones, by name);
- ``chance``: whether a chance level (the mean of 1 / number of choices) applies;
- ``resampling``: how it is recomputed on a resample of items for intervals and paired tests
  (``ItemMean``, ``CorpusStatistics`` or ``Recomputed``: ``babeleval.score.resampling``); an ``ItemMean`` of
  outcomes makes it ``right_or_wrong`` per item, and ``outcome_column`` names the record field holding that
  outcome (``correct``, ``correct_norm``), which the budgeted estimate models;
- ``interval``: how its confidence interval is computed: ``EXACT`` (Clopper-Pearson, for a share of items:
  right at 0% and 100% and at any n, where a percentile bootstrap of 0/3 gives the zero-width [0, 0]) or
  ``BOOTSTRAP`` (percentile bootstrap over items, for corpus and graded metrics); ``INTERVAL_METHODS`` words
  each for readers;
- ``applies``: the task families and scoring modes whose scored records it can be computed from;
- ``function``: its value over *all* scored records of a combination (so corpus metrics such as BLEU,
  chrF, macro-F1 and balanced accuracy are computed over the corpus, not averaged per item), given the
  ``options`` it names (BLEU's target language and SentencePiece model); BLEU's and chrF's, with sacrebleu,
  are ``babeleval.score.translation_metrics``;
- ``signature``: the printable settings its number depends on (BLEU's tokenizer, chrF's orders, the SQuAD
  F1 tokenizer), where there are some;
- ``reported``: False for a metric the analysis derives from the raw records (``acc_parsed``) rather
  than scoring reports.

Templates list the metrics they report by name; each task family has defaults (``babeleval.tasks.families``).
A metric defined outside the package (an extension file params.yaml lists under ``modules``) is added with
``register``.

Records are the raw records scoring writes: ``correct`` (bool or None), ``prediction`` / ``gold`` in the
family's form (a translation's hypothesis and reference), ``parsed``, plus ``correct_norm`` (log-likelihood),
``answer`` (gold index or golds), ``exact_match`` / ``f1`` (extractive QA, per item, 0-1).
"""

from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..core.errors import ConfigError
from ..core.registry import Registry
from ..tasks.families import Family
from .qa import tokenizer_name
from .resampling import CorpusStatistics, ItemMean, Recomputed, Record, Resampling, Statistics, item_outcome, item_value
from .translation_metrics import (bleu, bleu_signature, bleu_statistics, bleu_tokenize, chrf, chrf_signature,
                                  chrf_statistics)

SHARE = "0-1"  # computed as a share, shown as percent
POINTS = "0-100"  # computed and shown on 0-100
# the units of shown values, as machine files name them in a ``scale`` column
PERCENT_UNIT = "percent"
POINTS_UNIT = "points_0_100"
# the range a metric's shown values can take (colour bars and axes span it): both scales are shown on 0-100
SHOWN_RANGE = (0.0, 100.0)

# How a metric's interval is computed, and the words readers see for it. A share of items (right/wrong, parsed or
# not) gets the exact binomial interval: a bootstrap of 0/3 resamples only zeros and claims [0, 0].
EXACT = "clopper-pearson"
BOOTSTRAP = "bootstrap"
INTERVAL_METHODS = {EXACT: "exact Clopper-Pearson binomial interval", BOOTSTRAP: "percentile bootstrap over items"}

# The metrics other metrics and the analysis name: acc_parsed is accuracy restricted to the parsed items,
# read beside acc and the parse-failure rate (can the model answer, or does it answer in the format?).
ACCURACY = "acc"
PARSED_ACCURACY = "acc_parsed"
PARSE_FAILURE_RATE = "parse_failure_rate"


# -- building blocks (pure) ------------------------------------------------------------------------


def argmax(values: Sequence[float]) -> int:
    """Index of the largest value; the first one on ties, as lm-evaluation-harness does."""
    return max(range(len(values)), key=lambda i: (values[i], -i))


def accuracy(correct: Sequence[bool]) -> float:
    return sum(bool(c) for c in correct) / len(correct) if correct else float("nan")


def length_normalised(logprobs: Sequence[float], continuations: Sequence[str]) -> list[float]:
    """Log-likelihood per character of the continuation (lm-eval's and JGLUE's ``acc_norm``)."""
    return [lp / max(1, len(text)) for lp, text in zip(logprobs, continuations)]


def balanced_accuracy(golds: Sequence[Any], preds: Sequence[Any]) -> float:
    """Mean over gold classes of the accuracy within the class (lm-eval's ``balanced_mean``).

    A prediction that could not be read (None) counts as wrong in its gold class.
    """
    by_class: dict[Any, list[bool]] = defaultdict(list)
    for gold, pred in zip(golds, preds):
        by_class[gold].append(pred == gold)
    if not by_class:
        return float("nan")
    return sum(sum(v) / len(v) for v in by_class.values()) / len(by_class)


def macro_f1(golds: Sequence[Any], preds: Sequence[Any]) -> float:
    """F1 averaged over the labels seen in golds or predictions, 0 where undefined.

    Matches ``sklearn.metrics.f1_score(golds, preds, average="macro")`` as JGLUE's
    harness computes it; an unreadable prediction (None) is a label of its own
    that is never gold, so it lowers the recall of the gold class.
    """
    labels = set(golds) | set(preds)
    if not labels:
        return float("nan")
    scores = []
    for label in labels:
        tp = sum(g == label and p == label for g, p in zip(golds, preds))
        fp = sum(g != label and p == label for g, p in zip(golds, preds))
        fn = sum(g == label and p != label for g, p in zip(golds, preds))
        denominator = 2 * tp + fp + fn
        scores.append(2 * tp / denominator if denominator else 0.0)
    return sum(scores) / len(scores)


# -- the metric object -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Metric:
    """One metric: its computation and everything the package reads about it (the module's docstring)."""

    name: str
    label: str  # for readers: what it is and its scale
    function: Callable[..., float]  # (records, **the options it names) -> its value over the combination
    applies: Callable[[Family, str], bool]  # (family, scoring mode) -> its scored records can give it
    resampling: Resampling
    scale: str = SHARE
    higher_is_better: bool = True
    headline: bool = True
    rank: int | None = None
    chance: bool = False
    compared: bool = True  # paired tests compare it across templates and models
    reported: bool = True
    interval: str = BOOTSTRAP  # EXACT only for an ``ItemMean`` of 0/1 values (a share of items)
    options: tuple[str, ...] = ()  # the metric options (``babeleval.grid.resolve.metric_options``) it reads
    signature_of: Callable[..., str] | None = None  # (records, **options) -> its signature

    def __post_init__(self):
        if self.scale not in (SHARE, POINTS):
            raise ConfigError(f"metric '{self.name}': scale must be {SHARE!r} or {POINTS!r}, got {self.scale!r}")
        if self.interval not in INTERVAL_METHODS:
            raise ConfigError(f"metric '{self.name}': interval must be one of {sorted(INTERVAL_METHODS)}, "
                              f"got {self.interval!r}")
        if self.interval == EXACT and not (isinstance(self.resampling, ItemMean) and self.scale == SHARE):
            raise ConfigError(f"metric '{self.name}': an exact binomial interval needs a share of items "
                              "(an ItemMean of 0/1 values on the 0-1 scale); use interval=BOOTSTRAP")

    def _given(self, options: Mapping[str, Any] | None) -> dict[str, Any]:
        return {key: value for key, value in (options or {}).items() if key in self.options}

    def compute(self, records: Sequence[Record], options: Mapping[str, Any] | None = None) -> float:
        return float(self.function(list(records), **self._given(options)))

    def signature(self, records: Sequence[Record], options: Mapping[str, Any] | None = None) -> str | None:
        return self.signature_of(list(records), **self._given(options)) if self.signature_of else None

    def statistics(self, records: Sequence[Record], options: Mapping[str, Any] | None = None) -> Statistics:
        """Per-item sufficient statistics (a ``CorpusStatistics`` metric)."""
        return self.resampling.statistics(list(records), **self._given(options))

    def shown(self, value: float) -> float:
        """``value`` on the scale readers see."""
        return 100.0 * value if self.scale == SHARE else value

    def stored(self, shown: float) -> float:
        """A value on the scale readers see, back on the scale it is computed on (``shown``'s inverse)."""
        return shown / 100.0 if self.scale == SHARE else shown

    @property
    def percent(self) -> bool:
        return self.scale == SHARE

    @property
    def unit(self) -> str:
        """The unit of its shown values, as machine files name it in their ``scale`` column (``UNITS``)."""
        return PERCENT_UNIT if self.percent else POINTS_UNIT

    @property
    def interval_method(self) -> str:
        """Its interval's method, in words."""
        return INTERVAL_METHODS[self.interval]

    @property
    def axis_label(self) -> str:
        """A short axis label: the name and the scale."""
        return f"{self.name}, %" if self.percent else f"{self.name}, 0-100"

    @property
    def right_or_wrong(self) -> bool:
        """Whether each item is right or wrong and the metric is the share right (an ``ItemMean`` of outcomes):
        paired tests use the exact McNemar test."""
        return isinstance(self.resampling, ItemMean) and self.resampling.outcome

    @property
    def outcome_column(self) -> str | None:
        """The record field holding each item's right/wrong outcome (``correct`` for acc, ``correct_norm`` for
        acc_norm), where the metric's outcome is a field as it is; None for every other metric. The budgeted
        estimate (``babeleval.analysis.budget_table``) models this field, so only such a metric can be budgeted
        (``babeleval.grid.variants.check_outcome``)."""
        return self.resampling.column if self.right_or_wrong else None

    @property
    def headline_order(self) -> tuple:
        return (self.rank is None, self.rank or 0, self.name)


# -- computations -----------------------------------------------------------------------------------


def _acc(records: list[Record]) -> float:
    return accuracy([r["correct"] for r in records])


def _acc_norm(records: list[Record]) -> float:
    return accuracy([r["correct_norm"] for r in records])


def _parsed_correct(record: Record) -> bool | None:
    return record.get("correct") if record.get("parsed", True) else None


def _acc_parsed(records: list[Record]) -> float:
    return accuracy([r["correct"] for r in records if r.get("parsed", True)])


def _failed(record: Record) -> float:
    return float(not record.get("parsed", True))


def _parse_failure_rate(records: list[Record]) -> float:
    return sum(not r["parsed"] for r in records) / len(records) if records else float("nan")


def _golds_preds(records: list[Record]) -> tuple[list, list]:
    return [r["answer"] for r in records], [r["prediction"] for r in records]


def _balanced_acc(records: list[Record]) -> float:
    return balanced_accuracy(*_golds_preds(records))


def _macro_f1(records: list[Record]) -> float:
    return macro_f1(*_golds_preds(records))


def _mean_of(key: str, scale: float = 1.0) -> Callable[[list[Record]], float]:
    """The mean of a per-item 0-1 score kept under ``key``, times ``scale``."""
    return lambda records: scale * sum(r[key] for r in records) / len(records) if records else float("nan")


def _points_mean(key: str) -> Callable[[list[Record]], float]:
    """The mean of a per-item 0-1 score, on 0-100 (SQuAD's exact match and F1, as JGLUE publishes them)."""
    return _mean_of(key, 100.0)


def _squad_signature(records: list[Record]) -> str:
    return f"SQuAD v1.1 F1 over {tokenizer_name()}; normalisation: emoji removed, neologdn, whitespace"


# -- where a metric applies --------------------------------------------------------------------------


def anywhere_but_translation(family: Family, mode: str) -> bool:
    """Items judged right or wrong (a translation is not)."""
    return family.name != "translation"


def choice_families(family: Family, mode: str) -> bool:
    return family.choices


def choice_loglikelihood(family: Family, mode: str) -> bool:
    """Choices scored by log-likelihood (length normalisation needs their log-likelihoods)."""
    return family.choices and mode == "loglikelihood"


def generated(family: Family, mode: str) -> bool:
    """Generated answers, read by a parser."""
    return mode == "generate"


def family_is(*names: str) -> Callable[[Family, str], bool]:
    return lambda family, mode: family.name in names


# -- the registry ------------------------------------------------------------------------------------


# Ranks give the headline order: accuracy, then chrF and BLEU (translation), SQuAD F1 and exact match, length-normalised
# accuracy, balanced accuracy, macro-F1.
METRICS: Registry[Metric] = Registry("metric", ((metric.name, metric) for metric in (
    Metric(ACCURACY, "accuracy over all items, % (a parse failure counts as wrong)", _acc, anywhere_but_translation,
           item_outcome("correct"), rank=0, chance=True, interval=EXACT),
    Metric("acc_norm", "length-normalised accuracy, %", _acc_norm, choice_loglikelihood,
           item_outcome("correct_norm"), rank=5, chance=True, interval=EXACT),
    Metric("balanced_acc", "balanced accuracy, %", _balanced_acc, choice_families, Recomputed(), rank=6,
           chance=True),
    Metric("macro_f1", "macro-F1, %", _macro_f1, choice_families, Recomputed(), rank=7),
    Metric("exact_match", "exact match, 0-100", _points_mean("exact_match"), family_is("extractive_qa"),
           Recomputed(), scale=POINTS, rank=4),
    Metric("f1", "SQuAD F1, 0-100", _points_mean("f1"), family_is("extractive_qa"), Recomputed(), scale=POINTS,
           rank=3, signature_of=_squad_signature),
    Metric("bleu", "BLEU, 0-100", bleu, family_is("translation"), CorpusStatistics(bleu_statistics),
           scale=POINTS, rank=2, options=("target_language", "spm_model"), signature_of=bleu_signature),
    Metric("chrf", "chrF, 0-100", chrf, family_is("translation"), CorpusStatistics(chrf_statistics),
           scale=POINTS, rank=1, signature_of=chrf_signature),
    # a format property, not a score: never the headline, and reported in its own table rather than tested
    Metric(PARSE_FAILURE_RATE, "parse-failure rate, %", _parse_failure_rate, generated, ItemMean(_failed),
           higher_is_better=False, headline=False, compared=False, interval=EXACT),
    Metric(PARSED_ACCURACY, "accuracy over parsed items only, %", _acc_parsed, generated,
           ItemMean(_parsed_correct, outcome=True), headline=False, chance=True, reported=False,
           interval=EXACT),
)))


# -- an lm-eval generate_until task's metric, per filter pipeline ----------------------------------------

# lm-eval's exact_match of a reply after one of the task's filter pipelines, named as lm-eval reports it
# (``exact_match,strict-match``): one metric object per pipeline name, made on demand, so that every process reads
# the same object from the name alone. Each item's value is lm-eval's own (babeleval.score.lmeval_filters), kept in
# the scored record under the metric's name; an item the pipeline could not read is a parse failure with lm-eval's
# value (its fallback, "[invalid]", matches no reference).
FILTERED_EXACT_MATCH = "exact_match,"


@functools.cache
def filtered_exact_match(pipeline: str) -> Metric:
    name = FILTERED_EXACT_MATCH + pipeline
    return Metric(name, f"lm-eval's exact match after its filter pipeline {pipeline}, %", _mean_of(name),
                  family_is("lmeval_generate"), ItemMean(item_value(name), outcome=True), rank=0, interval=EXACT)


def find_metric(name: str) -> Metric | None:
    """The metric object of a name: the registry's, or a filter pipeline's exact match; None for an unknown name."""
    if name in METRICS:
        return METRICS[name]
    if name.startswith(FILTERED_EXACT_MATCH) and len(name) > len(FILTERED_EXACT_MATCH):
        return filtered_exact_match(name[len(FILTERED_EXACT_MATCH):])
    return None


def is_metric(name: str) -> bool:
    return find_metric(name) is not None


def register(metric: Metric) -> Metric:
    """Add a metric defined outside the package (an extension file params.yaml lists under ``modules``)."""
    return METRICS.add(metric.name, metric)


def get_metric(name: str) -> Metric:
    metric = find_metric(name)
    if metric is None:
        raise ConfigError(METRICS.unknown(name))
    return metric


def can_report(name: str, family: Family, mode: str) -> bool:
    """Whether a template of a task of ``family`` scored in ``mode`` can list the (known) metric ``name``."""
    metric = get_metric(name)
    return metric.reported and metric.applies(family, mode)


def reportable(family: Family, mode: str) -> list[str]:
    """The registry's metrics a template of a task of ``family`` scored in ``mode`` can list, in its order (a
    filter pipeline's exact match, made from its name, is not listed: ``can_report`` answers for it)."""
    return [name for name in METRICS if can_report(name, family, mode)]


def headline_metric(names: Iterable[str]) -> str | None:
    """The headline number among ``names``: the metric that can be one with the lowest rank."""
    candidates = [get_metric(name) for name in set(names)]
    candidates = [metric for metric in candidates if metric.headline]
    return min(candidates, key=lambda metric: metric.headline_order).name if candidates else None


def compute_all(names: Sequence[str], records: list[Record], **options: Any) -> tuple[dict[str, float], dict[str, str]]:
    """Values of the named metrics and the signatures of those that have one."""
    values, signatures = {}, {}
    for name in names:
        metric = get_metric(name)
        values[name] = metric.compute(records, options)
        signature = metric.signature(records, options)
        if signature:
            signatures[name] = signature
    return values, signatures


__all__ = ["ACCURACY", "BOOTSTRAP", "CorpusStatistics", "EXACT", "FILTERED_EXACT_MATCH", "filtered_exact_match", "find_metric", "is_metric", "INTERVAL_METHODS", "ItemMean", "PERCENT_UNIT", "POINTS_UNIT", "SHOWN_RANGE", "METRICS", "Metric", "PARSED_ACCURACY", "PARSE_FAILURE_RATE",
           "POINTS", "Recomputed", "SHARE", "Statistics", "accuracy", "anywhere_but_translation", "argmax",
           "balanced_accuracy", "bleu_tokenize", "can_report", "choice_families", "choice_loglikelihood", "compute_all", "family_is",
           "generated", "get_metric", "headline_metric", "item_outcome", "item_value", "length_normalised", "macro_f1", "register",
           "reportable"]
