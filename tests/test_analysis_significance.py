"""Paired tests against statsmodels and sacrebleu, Holm-Bonferroni, and the pairwise tables on hand-made runs."""

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from analysis_data import HYPOTHESES_A, HYPOTHESES_B, REFERENCES, translation_records, write_results
from babeleval.analysis import significance
from babeleval.analysis.bootstrap import item_data
from babeleval.analysis.records import load_outcomes, load_scores
from babeleval.score.metrics import bleu_tokenize


@pytest.mark.parametrize("a_only, b_only, both, neither", [(0, 0, 5, 5), (0, 2, 8, 0), (7, 1, 3, 9),
                                                           (12, 4, 40, 44), (25, 25, 0, 0), (1, 30, 2, 2)])
def test_exact_mcnemar_matches_statsmodels(a_only, b_only, both, neither):
    a = [True] * a_only + [False] * b_only + [True] * both + [False] * neither
    b = [False] * a_only + [True] * b_only + [True] * both + [False] * neither
    got_a, got_b, p = significance.mcnemar_exact(a, b)
    assert (got_a, got_b) == (a_only, b_only)
    table = [[both, a_only], [b_only, neither]]
    assert p == pytest.approx(mcnemar(table, exact=True).pvalue, abs=1e-12)


def test_holm_matches_statsmodels():
    rng = np.random.default_rng(0)
    for size in (1, 2, 5, 17):
        p = rng.random(size) ** 3
        np.testing.assert_allclose(significance.holm(p), multipletests(p, method="holm")[1], atol=1e-12)
    p = [0.01, 0.04, 0.03, 0.5]
    np.testing.assert_allclose(significance.holm(p), [0.04, 0.09, 0.09, 0.5])  # by hand: 4*.01, 3*.03, max(.09, 2*.04)
    assert len(significance.holm([])) == 0


@pytest.mark.parametrize("name", ["bleu", "chrf"])
def test_paired_bootstrap_matches_sacrebleu(name):
    from sacrebleu.metrics import BLEU, CHRF
    from sacrebleu.significance import _paired_bs_test

    scorer = BLEU(tokenize=bleu_tokenize(REFERENCES)) if name == "bleu" else CHRF()  # as ours are built
    a = item_data(name, translation_records(HYPOTHESES_A))
    b = item_data(name, translation_records(HYPOTHESES_B))
    ours = significance.paired_bootstrap(b, a, seed=11, n_samples=500)

    baseline_stats = scorer._extract_corpus_statistics(HYPOTHESES_A, [REFERENCES])
    baseline = {name: (baseline_stats, scorer._aggregate_and_compute(baseline_stats))}
    _, result = _paired_bs_test(baseline, "b", HYPOTHESES_B, [REFERENCES], {name: scorer}, n_samples=500, seed=11)
    assert ours == pytest.approx(result[name].p_value, abs=1e-12)


def test_compare_picks_the_test_from_the_metric():
    a = translation_records(HYPOTHESES_A)
    b = translation_records(HYPOTHESES_B)
    row = significance.compare(a, b, "chrf", seed=0, n_samples=200)
    assert row["test"].startswith("paired bootstrap") and row["a_only"] is None and 0 < row["p_value"] <= 1
    acc_a = [{"id": str(i), "correct": i < 6} for i in range(10)]
    acc_b = [{"id": str(i), "correct": i < 2} for i in range(12)]  # two extra items b alone answered
    row = significance.compare(acc_a, acc_b, "acc", seed=0)
    assert row["test"] == "exact McNemar" and row["n_items"] == 10 and (row["a_only"], row["b_only"]) == (4, 0)
    assert row["p_value"] == pytest.approx(0.125)
    graded_a = [{"id": str(i), "f1": 0.1 * i} for i in range(10)]
    graded_b = [{"id": str(i), "f1": 0.05 * i} for i in range(10)]
    assert significance.compare(graded_a, graded_b, "f1", seed=0, n_samples=200)["test"].startswith("paired bootstrap")
    assert significance.compare(acc_a, acc_b, "bleu", seed=0) is None  # no hypotheses: nothing to test


def test_pairwise_tables_on_hand_made_runs(tmp_path):
    raws, scores = write_results(tmp_path)
    tables = significance.pairwise(load_outcomes(raws), load_scores(scores), seed=0, n_samples=200)
    templates, models = tables["templates"], tables["models"]
    # 3 models x 2 languages, one template pair, metric acc (acc_norm only exists under paper)
    assert len(templates) == 6 and set(templates["metric"]) == {"acc"}
    row = templates[(templates.fixed == "m3") & (templates.language == "eng_Latn")].iloc[0]
    assert (row.a, row.b, row.a_only, row.b_only) == ("instruct", "paper", 2, 0)
    assert row.p_value == pytest.approx(0.5)
    assert (templates["family_size"] == 6).all()
    assert templates["correction"].str.startswith("Holm-Bonferroni over 6 tests (template vs template").all()
    # 3 model pairs x 2 languages x 2 templates for acc, plus 3 x 2 for acc_norm under paper
    assert len(models) == 12 + 6
    assert set(models.groupby("metric")["family_size"].first().items()) == {("acc", 12), ("acc_norm", 6)}
    row = models[(models.language == "eng_Latn") & (models.fixed == "paper") & (models.a == "m1")
                 & (models.b == "m3") & (models.metric == "acc")].iloc[0]
    assert (row.a_only, row.b_only, row.n_items) == (0, 5, 10)
    assert row.p_value == pytest.approx(0.0625)
    assert (models["p_holm"] >= models["p_value"]).all()
    assert list(models["significant"]) == list(models["p_holm"] < 0.05)
    # the interval beside p_holm is adjusted like it (the function's own tests are below)
    for row in models.itertuples(index=False):
        assert (row.adj_low, row.adj_high) == significance.holm_level_interval(
            row.diff, row.diff_se, row.n_items, row.a_only, row.b_only, 0.05, row.family_size)


@pytest.mark.parametrize("a_only, b_only, n, family_size", [(5, 0, 10, 1), (6, 0, 10, 1), (9, 1, 40, 1), (9, 1, 40, 3),
                                                             (30, 12, 200, 1), (30, 12, 200, 20), (3, 3, 8, 2)])
def test_a_mcnemar_rows_adjusted_interval_excludes_0_exactly_when_its_bonferroni_p_is_below_alpha(a_only, b_only, n,
                                                                                                 family_size):
    _, _, p = significance.mcnemar_exact([True] * a_only + [False] * b_only, [False] * a_only + [True] * b_only)
    low, high = significance.holm_level_interval((a_only - b_only) / n, 0.1, n, a_only, b_only, 0.05, family_size)
    assert low <= (a_only - b_only) / n <= high
    assert (not low <= 0 <= high) == (min(1.0, p * family_size) < 0.05)


def test_a_graded_rows_adjusted_interval_is_normal_and_simultaneous_over_its_family():
    # one test: the usual normal 95% interval; m tests: Bonferroni's 1 - alpha / m, Holm's strictest step
    one = significance.holm_level_interval(0.1, 0.05, 50, None, None, 0.05, 1)
    assert one == pytest.approx((0.1 - 1.959964 * 0.05, 0.1 + 1.959964 * 0.05))
    low, high = significance.holm_level_interval(0.1, 0.05, 50, None, None, 0.05, 10)
    assert high - 0.1 == pytest.approx(2.807034 * 0.05) and 0.1 - low == pytest.approx(high - 0.1)
    # no spread in the resamples, or no discordant item: no interval, said as NaN, not as a point
    assert all(np.isnan(v) for v in significance.holm_level_interval(0.1, float("nan"), 50, None, None, 0.05, 3))
    assert all(np.isnan(v) for v in significance.holm_level_interval(0.0, 0.0, 50, 0, 0, 0.05, 3))
