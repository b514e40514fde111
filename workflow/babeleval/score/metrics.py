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
  (``ItemMean``, ``CorpusStatistics`` or ``Recomputed``); an ``ItemMean`` of outcomes makes it
  ``right_or_wrong`` per item, and ``outcome_column`` names the record field holding that outcome
  (``correct``, ``correct_norm``), which the budgeted estimate models;
- ``interval``: how its confidence interval is computed: ``EXACT`` (Clopper-Pearson, for a share of items:
  right at 0% and 100% and at any n, where a percentile bootstrap of 0/3 gives the zero-width [0, 0]) or
  ``BOOTSTRAP`` (percentile bootstrap over items, for corpus and graded metrics); ``INTERVAL_METHODS`` words
  each for readers;
- ``applies``: the task families and scoring modes whose scored records it can be computed from;
- ``function``: its value over *all* scored records of a combination (so corpus metrics such as BLEU,
  chrF, macro-F1 and balanced accuracy are computed over the corpus, not averaged per item), given the
  ``options`` it names (BLEU's target language and SentencePiece model);
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
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterable, Mapping, Sequence

from ..core.errors import ConfigError
from ..core.registry import Registry
from ..tasks.families import Family
from . import bleu_tokenizers
from .qa import tokenizer_name

Record = dict[str, Any]

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


def item_value(name: str) -> Callable[[Record], Any]:
    """A record's ``name`` (None where it has none): the per-item value of an ``ItemMean``."""
    return lambda record: record.get(name)


# -- how a metric is resampled ---------------------------------------------------------------------


@dataclass(frozen=True)
class ItemMean:
    """The mean of one value per item, ``value(record)``; an item whose value is None does not count."""

    value: Callable[[Record], float | bool | None]
    outcome: bool = False  # the value is right/wrong: paired tests use the exact McNemar test
    column: str | None = None  # the record field ``value`` reads as it is (``item_outcome``), where it is one
    bootstrap: ClassVar[str] = "items"


def item_outcome(column: str) -> ItemMean:
    """The share of items right, each item's right/wrong outcome the record's ``column`` (a bool)."""
    return ItemMean(item_value(column), outcome=True, column=column)


@dataclass(frozen=True)
class Statistics:
    """Sufficient statistics per record, and ``score``: the metric's value from statistics summed over records
    (a sequence, or a numpy row of a resample: returned as computed, float32 stays float32)."""

    rows: tuple[tuple[int, ...], ...]
    score: Callable[[Any], Any]


@dataclass(frozen=True)
class CorpusStatistics:
    """Per-item sufficient statistics, summed over a resample and turned into a score, as sacrebleu's
    bootstrap and paired test do: ``statistics(records, **options)``."""

    statistics: Callable[..., Statistics]
    bootstrap: ClassVar[str] = "corpus"


@dataclass(frozen=True)
class Recomputed:
    """The metric computed again over each resample of the records (macro-F1, balanced accuracy, SQuAD)."""

    bootstrap: ClassVar[str] = "items"


Resampling = ItemMean | CorpusStatistics | Recomputed


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


# -- translation: sacrebleu's BLEU and chrF ----------------------------------------------------------


def _translations(records: list[Record]) -> tuple[list[str], list[str]]:
    """Hypotheses (an unreadable prediction is an empty one) and references."""
    return [r["prediction"] if r["prediction"] is not None else "" for r in records], [r["gold"] for r in records]


def _sacrebleu_model_path() -> Path | None:
    """Where sacrebleu keeps the FLORES-200 SentencePiece model spBLEU uses.

    sacrebleu downloads it there on first use; machines without internet use it when it is already there, or
    when params.yaml gives a path to a copy (which is then put where sacrebleu looks).
    """
    try:
        from sacrebleu.tokenizers import tokenizer_spm
    except ImportError:  # pragma: no cover - sacrebleu is a core dependency
        return None
    info = tokenizer_spm.SPM_MODELS.get("flores200")
    if info is None:  # pragma: no cover - sacrebleu without the flores200 tokenizer
        return None
    return Path(tokenizer_spm.SACREBLEU_DIR) / "models" / Path(info["url"]).name


def flores200_model_path(explicit: str | None = None) -> Path | None:
    """The FLORES-200 SentencePiece model file, if one is available locally (the given path, else sacrebleu's cache)."""
    candidates = [Path(explicit)] if explicit else []
    cached = _sacrebleu_model_path()
    if cached is not None:
        candidates.append(cached)
    return next((p for p in candidates if p.is_file()), None)


def _install_flores200_model(path: Path) -> None:
    """Put ``path`` where sacrebleu's flores200 tokenizer loads its model from, so it does not download."""
    target = _sacrebleu_model_path()
    if target is None or target == path or (target.is_file() and target.read_bytes() == path.read_bytes()):
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".tmp")
    tmp.write_bytes(path.read_bytes())
    tmp.replace(target)


def bleu_tokenize(references: Sequence[str], target_language: str | None = None, spm_model: str | None = None) -> str:
    """BLEU's tokenizer into ``target_language`` (a FLORES-200 code; without one, the references' script decides).

    spBLEU (FLORES-200 SentencePiece) where the model file is available and no language-specific tokenizer
    applies (``bleu_tokenizers``); a model given by path is put where sacrebleu looks for it.
    """
    path = flores200_model_path(spm_model)
    if path is not None:
        _install_flores200_model(path)
    return bleu_tokenizers.choose(bleu_tokenizers.target_code(target_language, references), path is not None)


def _bleu_scorer(tokenize: str, references: list[str] | None = None, **settings: Any):
    """sacrebleu's BLEU with its default settings (exponential smoothing, n-grams up to 4) and ``tokenize``;
    ``references`` cached, so that its signature can be read before scoring."""
    from sacrebleu.metrics import BLEU

    return BLEU(tokenize=tokenize, references=None if references is None else [references], **settings)


def _bleu(records: list[Record], **options: Any) -> float:
    if not records:
        return float("nan")
    hypotheses, references = _translations(records)
    scorer = _bleu_scorer(bleu_tokenize(references, **options), references)
    return float(scorer.corpus_score(hypotheses, None).score)


def _bleu_signature(records: list[Record], **options: Any) -> str:
    references = _translations(records)[1]
    return str(_bleu_scorer(bleu_tokenize(references, **options), references).get_signature())


def _bleu_statistics(records: list[Record], **options: Any) -> Statistics:
    """[hypothesis length, reference length, matches per order, hypothesis n-grams per order] per item."""
    from sacrebleu.metrics import BLEU

    hypotheses, references = _translations(records)
    tokenize = bleu_tokenize(references, **options)
    corpus = _bleu_scorer(tokenize)
    # A sentence's statistics do not depend on effective_order; with it on, sacrebleu does not warn per sentence.
    sentence = _bleu_scorer(tokenize, effective_order=True)
    scores = [sentence.sentence_score(hypothesis, [reference]) for hypothesis, reference in zip(hypotheses, references)]
    order = corpus.max_ngram_order

    def from_sums(sums):
        return BLEU.compute_bleu(correct=sums[2: 2 + order], total=sums[2 + order:], sys_len=int(sums[0]),
                                 ref_len=int(sums[1]), smooth_method=corpus.smooth_method,
                                 smooth_value=corpus.smooth_value, effective_order=corpus.effective_order,
                                 max_ngram_order=order).score
    return Statistics(tuple((s.sys_len, s.ref_len, *s.counts, *s.totals) for s in scores), from_sums)


def _chrf_scorer(references: list[str] | None = None):
    """chrF with sacrebleu's defaults: character n-grams up to 6, beta 2, case-sensitive, spaces ignored, no word
    n-grams (chrF, not chrF++); ``references`` cached, so that its signature can be read before scoring."""
    from sacrebleu.metrics import CHRF

    return CHRF(references=None if references is None else [references])


def _chrf(records: list[Record]) -> float:
    if not records:
        return float("nan")
    hypotheses, references = _translations(records)
    return float(_chrf_scorer(references).corpus_score(hypotheses, None).score)


def _chrf_signature(records: list[Record]) -> str:
    return str(_chrf_scorer(_translations(records)[1]).get_signature())


def chrf_pair_statistics(hypothesis: str, reference: str, char_order: int, whitespace: bool) -> tuple[int, ...]:
    """[hypothesis n-grams, reference n-grams, matches] per character order, as sacrebleu's CHRF counts them
    (a hypothesis n-gram counts only where the reference has n-grams of that order)."""
    from sacrebleu.metrics.helpers import extract_all_char_ngrams

    row: list[int] = []
    hyp_orders = extract_all_char_ngrams(hypothesis, char_order, whitespace)
    ref_orders = extract_all_char_ngrams(reference, char_order, whitespace)
    for hyp, ref in zip(hyp_orders, ref_orders):
        matches = sum(min(count, ref[ngram]) for ngram, count in hyp.items() if ngram in ref)
        row += [sum(hyp.values()) if ref else 0, sum(ref.values()), matches]
    return tuple(row)


def chrf_from_statistics(statistics: Any, beta: int, order: int) -> Any:
    """chrF from summed statistics: sacrebleu's CHRF F-score with effective-order averaging (its default).

    The operations are sacrebleu's, in its order, so float32 sums give sacrebleu's numbers to the bit.
    """
    factor = beta ** 2
    avg_prec, avg_rec, effective_order = 0.0, 0.0, 0
    for i in range(order):
        n_hyp, n_ref, n_match = statistics[3 * i: 3 * i + 3]
        if n_hyp > 0 and n_ref > 0:
            avg_prec += n_match / n_hyp
            avg_rec += n_match / n_ref
            effective_order += 1
    if effective_order:
        avg_prec /= effective_order
        avg_rec /= effective_order
    if not avg_prec + avg_rec:
        return 0.0
    score = (1 + factor) * avg_prec * avg_rec
    score /= (factor * avg_prec) + avg_rec
    return 100 * score


def _chrf_statistics(records: list[Record]) -> Statistics:
    chrf = _chrf_scorer()
    rows = tuple(chrf_pair_statistics(hypothesis, reference, chrf.char_order, chrf.whitespace)
                 for hypothesis, reference in zip(*_translations(records)))
    return Statistics(rows, lambda sums: chrf_from_statistics(sums, chrf.beta, chrf.char_order))


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
    Metric("bleu", "BLEU, 0-100", _bleu, family_is("translation"), CorpusStatistics(_bleu_statistics),
           scale=POINTS, rank=2, options=("target_language", "spm_model"), signature_of=_bleu_signature),
    Metric("chrf", "chrF, 0-100", _chrf, family_is("translation"), CorpusStatistics(_chrf_statistics),
           scale=POINTS, rank=1, signature_of=_chrf_signature),
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
