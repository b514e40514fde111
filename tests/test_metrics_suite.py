"""Metrics: BLEU/chrF against sacrebleu itself, EM/F1 and balanced accuracy / macro-F1 on worked examples."""

from __future__ import annotations

import math

import pytest
import sacrebleu

from babeleval.core.errors import ConfigError
from babeleval.score import metrics
from babeleval.score import qa
from babeleval.score.metrics import balanced_accuracy, compute_all, macro_f1

HYPS = ["The cat sits on the mat.", "A quick brown dog jumps.", "", "Rain is expected tomorrow in the north."]
REFS = ["The cat sat on the mat.", "The quick brown fox jumps.", "Nothing was said.", "Rain is expected in the north tomorrow."]


def records(hyps, refs):
    return [{"prediction": h if h else None, "gold": r, "parsed": bool(h), "correct": None} for h, r in zip(hyps, refs)]


def test_bleu_and_chrf_are_sacrebleus_corpus_scores():
    values, signatures = compute_all(["bleu", "chrf"], records(HYPS, REFS))
    assert values["bleu"] == pytest.approx(sacrebleu.corpus_bleu(HYPS, [REFS]).score)
    assert values["chrf"] == pytest.approx(sacrebleu.corpus_chrf(HYPS, [REFS]).score)
    # corpus level, not a mean of sentence scores
    mean_sentence = sum(sacrebleu.sentence_bleu(h, [r]).score for h, r in zip(HYPS, REFS)) / len(HYPS)
    assert values["bleu"] != pytest.approx(mean_sentence)
    assert "tok:13a" in signatures["bleu"] and "version:" in signatures["bleu"]
    assert "nc:6" in signatures["chrf"]


def test_unreadable_translation_counts_as_empty_hypothesis():
    values, _ = compute_all(["bleu", "parse_failure_rate"], records(HYPS, REFS))
    assert values["parse_failure_rate"] == 0.25


def test_spbleu_uses_the_flores200_model_when_given(tmp_path, monkeypatch):
    """With a SentencePiece model file at hand, BLEU is spBLEU: flores200 tokenizer, said in the signature."""
    import sentencepiece as spm
    from sacrebleu.tokenizers import tokenizer_spm

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(HYPS + REFS + ["日本語の文も少し入れておく。", "हिंदी का एक वाक्य।"] * 20), encoding="utf-8")
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(tmp_path / "tiny"), vocab_size=60,
                                   character_coverage=1.0, minloglevel=2)
    monkeypatch.setattr(tokenizer_spm, "SACREBLEU_DIR", str(tmp_path / "sacrebleu-home"))
    values, signatures = compute_all(["bleu"], records(HYPS, REFS), spm_model=str(tmp_path / "tiny.model"))
    assert "tok:flores200" in signatures["bleu"]
    expected = sacrebleu.metrics.BLEU(tokenize="flores200").corpus_score(HYPS, [REFS]).score
    assert values["bleu"] == pytest.approx(expected)


def test_bleu_falls_back_to_13a_without_the_model(tmp_path, monkeypatch):
    from sacrebleu.tokenizers import tokenizer_spm

    monkeypatch.setattr(tokenizer_spm, "SACREBLEU_DIR", str(tmp_path / "empty"))
    _, signatures = compute_all(["bleu"], records(HYPS, REFS), spm_model=str(tmp_path / "missing.model"))
    assert "tok:13a" in signatures["bleu"]


# -- balanced accuracy and macro-F1 (JNLI, MARC-ja) --------------------------------------------------


def test_balanced_accuracy_worked_example():
    # class 0: 3 of 4 right; class 1: 1 of 2 right -> (0.75 + 0.5) / 2
    golds = [0, 0, 0, 0, 1, 1]
    preds = [0, 0, 0, 1, 1, 0]
    assert balanced_accuracy(golds, preds) == pytest.approx(0.625)
    assert balanced_accuracy([], []) != balanced_accuracy([], [])  # nan


def test_macro_f1_worked_example():
    golds = [0, 0, 0, 0, 1, 1]
    preds = [0, 0, 0, 1, 1, 0]
    # class 0: tp 3, fp 1, fn 1 -> 6/8; class 1: tp 1, fp 1, fn 1 -> 2/4
    assert macro_f1(golds, preds) == pytest.approx((0.75 + 0.5) / 2)


def test_macro_f1_counts_labels_only_predicted_and_unreadable_predictions():
    # a prediction of a label never gold adds a class with F1 0 (sklearn's average="macro" does the same)
    assert macro_f1([0, 0, 1], [0, 2, 1]) == pytest.approx((2 / 3 + 1.0 + 0.0) / 3)
    # an unreadable prediction (None) lowers its gold class's recall
    assert macro_f1([0, 1], [0, None]) == pytest.approx((1.0 + 0.0 + 0.0) / 3)


def test_macro_f1_matches_sklearn_when_available():
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    golds = [0, 1, 2, 2, 1, 0, 0, 2, 1, 1]
    preds = [0, 2, 2, 2, 1, 1, 0, 0, 1, 2]
    assert macro_f1(golds, preds) == pytest.approx(sklearn_metrics.f1_score(golds, preds, average="macro"))
    assert balanced_accuracy(golds, preds) == pytest.approx(sklearn_metrics.balanced_accuracy_score(golds, preds))


def test_metrics_over_classification_records():
    recs = [{"answer": g, "prediction": p, "correct": g == p, "correct_norm": True, "parsed": True}
            for g, p in zip([0, 0, 1, 2], [0, 1, 1, 2])]
    values, _ = compute_all(["acc", "acc_norm", "balanced_acc", "macro_f1"], recs)
    assert values["acc"] == 0.75
    assert values["acc_norm"] == 1.0
    assert values["balanced_acc"] == pytest.approx((0.5 + 1 + 1) / 3)
    assert values["macro_f1"] == pytest.approx((2 / 3 + 2 / 3 + 1) / 3)


# -- SQuAD-style EM/F1 for Japanese ------------------------------------------------------------------


def test_mecab_tokenizer_is_used():
    assert qa.tokenizer_name().startswith("mecab")
    assert qa.tokenize("日本で最初の鉄道。") == ["日本", "で", "最初", "の", "鉄道"]


@pytest.mark.parametrize("prediction,golds,em,f1", [
    ("1872年", ["1872年"], 1.0, 1.0),
    (" 1872年 ", ["1872年"], 1.0, 1.0),                  # whitespace
    ("１８７２年", ["1872年"], 1.0, 1.0),                # full-width digits (neologdn)
    ("栄西", ["僧の栄西", "栄西"], 1.0, 1.0),            # several golds: the best counts
    ("僧の栄西", ["栄西"], 0.0, 2 * (1 / 3) * 1 / (1 / 3 + 1)),  # tokens 僧/の/栄西 vs 栄西: P 1/3, R 1
    ("静岡県と山梨県", ["静岡県"], 0.0, 0.5),            # 静岡/県/と/山梨/県 vs 静岡/県: P 2/5, R 1 -> 4/7? see below
    ("富士山", ["1872年"], 0.0, 0.0),
    ("「観音埼灯台」。", ["観音埼灯台"], 0.0, 1.0),      # punctuation tokens removed for F1, kept for EM
])
def test_squad_scores(prediction, golds, em, f1):
    got_em, got_f1 = qa.best_over_golds(prediction, golds)
    assert got_em == em
    if prediction == "静岡県と山梨県":
        pred_tokens = qa.tokenize(qa.normalize_answer(prediction))
        gold_tokens = qa.tokenize(qa.normalize_answer(golds[0]))
        common = sum(min(pred_tokens.count(t), gold_tokens.count(t)) for t in set(gold_tokens))
        p, r = common / len(pred_tokens), common / len(gold_tokens)
        f1 = 2 * p * r / (p + r)
    assert got_f1 == pytest.approx(f1)


def test_no_prediction_scores_zero():
    assert qa.best_over_golds(None, ["栄西"]) == (0.0, 0.0)


def test_em_f1_over_a_combination_on_a_0_100_scale():
    recs = [{"exact_match": 1.0, "f1": 1.0, "parsed": True}, {"exact_match": 0.0, "f1": 0.5, "parsed": True},
            {"exact_match": 0.0, "f1": 0.0, "parsed": False}]
    values, _ = compute_all(["exact_match", "f1", "parse_failure_rate"], recs)
    assert values["exact_match"] == pytest.approx(100 / 3)
    assert values["f1"] == pytest.approx(50.0)
    assert values["parse_failure_rate"] == pytest.approx(1 / 3)


def test_unknown_metric_is_named():
    with pytest.raises(ConfigError, match=r"unknown metric 'blue' \(known: .*; did you mean 'bleu'\?\)"):
        metrics.get_metric("blue")
    assert math.isnan(compute_all(["acc"], [])[0]["acc"])
