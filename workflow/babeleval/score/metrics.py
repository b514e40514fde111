"""Metrics over the scored items of one (model, task, language, template).

A metric is a small explicit object in the style of sacrebleu's: a ``name`` it
is reported under, ``compute(records)`` over *all* scored records of the
combination (so corpus-level metrics such as BLEU, chrF, macro-F1 and
balanced accuracy are computed over the corpus, not averaged per item), and a
printable ``signature`` where the number depends on settings a reader must
know (BLEU's tokenizer, chrF's n-gram orders). Templates list the metrics they
report by name; each task family has defaults.

Records are the raw records scoring writes: ``correct`` (bool or None),
``prediction`` / ``gold`` in the family's form, ``parsed``, plus
``correct_norm`` (log-likelihood), ``answer`` (gold index or golds).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

Record = dict[str, Any]


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


# -- metric objects --------------------------------------------------------------------------------


@dataclass
class Metric:
    name: str
    func: Callable[[list[Record]], float]
    description: str = ""

    def compute(self, records: list[Record]) -> float:
        return self.func(records)

    @property
    def signature(self) -> str | None:
        return None


def _acc(records: list[Record]) -> float:
    return accuracy([r["correct"] for r in records])


def _acc_norm(records: list[Record]) -> float:
    return accuracy([r["correct_norm"] for r in records])


def _parse_failure_rate(records: list[Record]) -> float:
    return sum(not r["parsed"] for r in records) / len(records) if records else float("nan")


def _golds_preds(records: list[Record]) -> tuple[list, list]:
    return [r["answer"] for r in records], [r["prediction"] for r in records]


def _balanced_acc(records: list[Record]) -> float:
    return balanced_accuracy(*_golds_preds(records))


def _macro_f1(records: list[Record]) -> float:
    return macro_f1(*_golds_preds(records))


def _exact_match(records: list[Record]) -> float:
    return 100.0 * sum(r["exact_match"] for r in records) / len(records) if records else float("nan")


def _f1(records: list[Record]) -> float:
    return 100.0 * sum(r["f1"] for r in records) / len(records) if records else float("nan")


@dataclass
class SacrebleuMetric(Metric):
    """A sacrebleu corpus metric (BLEU or chrF) over the combination's (hypothesis, reference) pairs."""

    kind: str = "bleu"
    options: dict[str, Any] = field(default_factory=dict)
    _signature: str | None = None

    def _scorer(self, references: Sequence[str] = ()):
        import sacrebleu

        if self.kind == "bleu":
            return sacrebleu.metrics.BLEU(**self.options, **self._tokenize(references))
        return sacrebleu.metrics.CHRF(**self.options)

    def _tokenize(self, references: Sequence[str]) -> dict[str, str]:
        """BLEU's tokenizer for the target language (``bleu_tokenizers``); none for chrF, which reads characters."""
        return {}

    def compute(self, records: list[Record]) -> float:
        if not records:
            return float("nan")
        hypotheses = [r["prediction"] if r["prediction"] is not None else "" for r in records]
        references = [r["gold"] for r in records]
        scorer = self._scorer(references)
        score = scorer.corpus_score(hypotheses, [references])
        self._signature = str(scorer.get_signature())
        return float(score.score)

    @property
    def signature(self) -> str | None:
        if self._signature is None:
            self._signature = str(self._scorer().get_signature())
        return self._signature


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


@dataclass
class BleuMetric(SacrebleuMetric):
    """BLEU with the tokenizer sacrebleu documents for the target language (see ``babeleval.bleu_tokenizers``).

    The target is the FLORES-200 code given (the translation task's target language); without one, the script
    of the references decides. The signature names the tokenizer used.
    """

    target_language: str | None = None
    flores200_available: bool = False

    def _tokenize(self, references: Sequence[str]) -> dict[str, str]:
        from . import bleu_tokenizers

        code = bleu_tokenizers.target_code(self.target_language, references)
        return {"tokenize": bleu_tokenizers.choose(code, self.flores200_available)}


def bleu_metric(spm_model: str | None = None, target_language: str | None = None) -> SacrebleuMetric:
    """BLEU into ``target_language`` (a FLORES-200 code), tokenized as ``bleu_tokenizers`` decides.

    spBLEU (FLORES-200 SentencePiece) where the model file is available and no language-specific tokenizer
    applies; the score's signature says which tokenizer was used (``tok:flores200``, ``tok:13a``, ``tok:zh`` ...).
    """
    path = flores200_model_path(spm_model)
    if path is not None:
        _install_flores200_model(path)
    return BleuMetric("bleu", _acc, "BLEU, tokenized for the target language (spBLEU where the FLORES-200 "
                      "SentencePiece model is available)", kind="bleu", target_language=target_language,
                      flores200_available=path is not None)


METRICS: dict[str, Callable[..., Metric]] = {
    "acc": lambda **_: Metric("acc", _acc, "accuracy over all items (parse failures count as wrong)"),
    "acc_norm": lambda **_: Metric("acc_norm", _acc_norm, "accuracy of the per-character length-normalised argmax"),
    "balanced_acc": lambda **_: Metric("balanced_acc", _balanced_acc, "mean over gold classes of per-class accuracy"),
    "macro_f1": lambda **_: Metric("macro_f1", _macro_f1, "F1 averaged over labels (sklearn's average='macro')"),
    "exact_match": lambda **_: Metric("exact_match", _exact_match, "SQuAD exact match, max over golds, 0-100"),
    "f1": lambda **_: Metric("f1", _f1, "SQuAD token F1, max over golds, 0-100"),
    "parse_failure_rate": lambda **_: Metric("parse_failure_rate", _parse_failure_rate,
                                             "share of responses no answer could be read from"),
    "bleu": lambda spm_model=None, target_language=None, **_: bleu_metric(spm_model, target_language),
    "chrf": lambda **_: SacrebleuMetric("chrf", _acc, "chrF (sacrebleu defaults: char order 6, beta 2)", kind="chrf"),
}


def get_metric(name: str, **options: Any) -> Metric:
    try:
        factory = METRICS[name]
    except KeyError:
        raise KeyError(f"unknown metric '{name}' (known: {', '.join(sorted(METRICS))})") from None
    return factory(**options)


def compute_all(names: Sequence[str], records: list[Record], **options: Any) -> tuple[dict[str, float], dict[str, str]]:
    """Values of the named metrics and the signatures of those that have one."""
    values, signatures = {}, {}
    for name in names:
        metric = get_metric(name, **options)
        value = metric.compute(records)
        values[name] = value if not (isinstance(value, float) and math.isnan(value)) else float("nan")
        if metric.signature:
            signatures[name] = metric.signature
    return values, signatures


__all__ = ["Metric", "METRICS", "accuracy", "argmax", "balanced_accuracy", "compute_all", "get_metric",
           "length_normalised", "macro_f1"]
