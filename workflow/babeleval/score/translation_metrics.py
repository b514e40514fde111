"""BLEU and chrF, with sacrebleu: their corpus scores, signatures and per-item sufficient statistics (summed over a
resample of items for intervals and paired tests), and BLEU's tokenizer for a target language (the table is
``babeleval.score.bleu_tokenizers``; spBLEU's FLORES-200 SentencePiece model is found or put where sacrebleu looks).

The metric objects that report them are the registry's (``babeleval.score.metrics``: ``bleu``, ``chrf``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from . import bleu_tokenizers
from .resampling import Record, Statistics


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


def bleu(records: list[Record], **options: Any) -> float:
    if not records:
        return float("nan")
    hypotheses, references = _translations(records)
    scorer = _bleu_scorer(bleu_tokenize(references, **options), references)
    return float(scorer.corpus_score(hypotheses, None).score)


def bleu_signature(records: list[Record], **options: Any) -> str:
    references = _translations(records)[1]
    return str(_bleu_scorer(bleu_tokenize(references, **options), references).get_signature())


def bleu_statistics(records: list[Record], **options: Any) -> Statistics:
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


def chrf(records: list[Record]) -> float:
    if not records:
        return float("nan")
    hypotheses, references = _translations(records)
    return float(_chrf_scorer(references).corpus_score(hypotheses, None).score)


def chrf_signature(records: list[Record]) -> str:
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


def chrf_statistics(records: list[Record]) -> Statistics:
    chrf = _chrf_scorer()
    rows = tuple(chrf_pair_statistics(hypothesis, reference, chrf.char_order, chrf.whitespace)
                 for hypothesis, reference in zip(*_translations(records)))
    return Statistics(rows, lambda sums: chrf_from_statistics(sums, chrf.beta, chrf.char_order))
