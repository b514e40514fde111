"""BLEU and chrF resampled from our own per-item statistics: sacrebleu's numbers, to the bit.

The registry's statistics (``babeleval.score.metrics``: BLEU from ``BLEU.sentence_score`` and
``BLEU.compute_bleu``, chrF from sacrebleu's n-gram helpers and our copy of its F-score) must give
sacrebleu's ``corpus_score`` on the full set, and on every resample exactly what sacrebleu's own statistics
(``_extract_corpus_statistics`` / ``_compute_score_from_stats``, which the package no longer calls) give on
the same draws with float32 sums, so the leaderboard's intervals and the paired tests are unchanged.
"""

from __future__ import annotations

import numpy as np
import pytest
from sacrebleu.metrics import BLEU, CHRF

from babeleval.analysis.settings import DEFAULT_SETTINGS
from babeleval.analysis import bootstrap
from babeleval.score.metrics import bleu_tokenize, compute_all, get_metric

# (target, references, hypotheses): Latin, Japanese (ja-mecab or char), Devanagari; empty hypotheses in each
SETS = {
    "eng_Latn": (["The cat sat on the mat.", "A quick brown fox jumps over the lazy dog.",
                  "It is raining in Paris today.", "We will meet at noon.", "The market closes at noon.",
                  "Bees make honey from nectar.", "The train left late yesterday."],
                 ["The cat sits on the mat.", "A quick brown dog jumps over a lazy fox.", "",
                  "We meet at noon tomorrow.", "Market shuts at twelve.", "Bees make honey from nectar.", ""]),
    "jpn_Jpan": (["猫は朝から居間のソファで眠っています。", "明日は両親と一緒に市場へ行きます。",
                  "日本の首都は東京です。", "水は零度で凍ります。", "一週間は七日あります。"],
                 ["猫は夜から寝室のベッドで眠っています。", "", "日本の首都は東京です。",
                  "水は百度で沸騰します。", "一週間は七日です。"]),
    "hin_Deva": (["बिल्ली सुबह से बैठक के सोफ़े पर सो रही है।", "कल हम अपने माता-पिता के साथ बाज़ार जाएँगे।",
                  "एक दिन में चौबीस घंटे होते हैं।", "सूरज पूर्व में उगता है।"],
                 ["बिल्ली रात से कमरे के बिस्तर पर सो रही है।", "", "एक दिन में चौबीस घंटे होते हैं।",
                  "सूरज पश्चिम में डूबता है।"]),
}


def records(references, hypotheses):
    return [{"id": f"s{i}", "prediction": h or None, "gold": r, "parsed": bool(h), "correct": None}
            for i, (h, r) in enumerate(zip(hypotheses, references))]


def sacrebleu_scorer(name, references, target):
    return BLEU(tokenize=bleu_tokenize(references, target)) if name == "bleu" else CHRF()


@pytest.mark.parametrize("target", sorted(SETS))
@pytest.mark.parametrize("name", ["bleu", "chrf"])
def test_summed_statistics_give_sacrebleus_corpus_score(name, target):
    references, hypotheses = SETS[target]
    recs = records(references, hypotheses)
    statistics = get_metric(name).statistics(recs, {"target_language": target})
    sums = [sum(column) for column in zip(*statistics.rows)]
    expected = sacrebleu_scorer(name, references, target).corpus_score(hypotheses, [references]).score
    assert float(statistics.score(sums)) == pytest.approx(expected, abs=1e-9)
    assert compute_all([name], recs, target_language=target)[0][name] == pytest.approx(expected, abs=1e-9)
    assert 0 < expected < 100


@pytest.mark.parametrize("target", sorted(SETS))
@pytest.mark.parametrize("name", ["bleu", "chrf"])
def test_resamples_are_sacrebleus_on_the_same_draws(name, target):
    references, hypotheses = SETS[target]
    recs = records(references, hypotheses)
    ours = bootstrap.item_data(name, recs, {"target_language": target})
    scorer = sacrebleu_scorer(name, references, target)
    theirs = np.asarray(scorer._extract_corpus_statistics(hypotheses, [references]), dtype=float)
    np.testing.assert_array_equal(ours.values, theirs)  # the statistics themselves, item by item
    idx = bootstrap.resample_indices(ours.n, 500, seed=7)
    sums = theirs.astype("float32")[idx].sum(axis=1)
    expected = np.array([scorer._compute_score_from_stats(s).score for s in sums])
    got = ours.resampled(idx)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)  # bit for bit, float32 sums as sacrebleu's bootstrap
    assert ours.score() == scorer._compute_score_from_stats(theirs.sum(0)).score
    interval = bootstrap.interval_for(name, recs, seed=7, n_samples=500, options={"target_language": target})
    assert interval == bootstrap.percentile_interval(expected, DEFAULT_SETTINGS.confidence)


def test_records_without_translations_have_no_interval():
    assert bootstrap.item_data("bleu", [{"id": "a", "correct": True}]) is None
    assert bootstrap.item_data("chrf", []) is None
