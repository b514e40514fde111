"""Template sensitivity and ranking stability, checked by hand and against scipy."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from babeleval.analysis import template_sensitivity
from babeleval.analysis.rank_correlation import average_ranks, kendall_tau_b, spearman_rho


def board(rows):
    return pd.DataFrame(rows, columns=["model", "task", "language", "template", "metric", "value", "n"])


SCORES = {  # (model, template) -> acc in eng_Latn
    ("a", "t1"): 0.9, ("b", "t1"): 0.6, ("c", "t1"): 0.3,
    ("a", "t2"): 0.8, ("b", "t2"): 0.2, ("c", "t2"): 0.5,
    ("a", "t3"): 0.4, ("b", "t3"): 0.5, ("c", "t3"): 0.7,
}
LB = board([(m, "belebele", "eng_Latn", t, "acc", v, 10) for (m, t), v in SCORES.items()])


def test_spread_mean_min_max():
    table = template_sensitivity.template_sensitivity(LB)
    row = table[table.model == "a"].iloc[0]
    # on the scale readers see: accuracy in percent, named in the scale column
    assert (row.n_templates, row["min"], row["max"], row.best_template, row.worst_template) == (3, 40, 90, "t1", "t3")
    assert row.spread == pytest.approx(50) and row["mean"] == pytest.approx(70) and row.scale == "percent"
    assert row["std"] == pytest.approx(pd.Series([90, 80, 40]).std())


def test_rank_correlation_of_models_between_templates():
    table = template_sensitivity.rank_stability(LB)
    models = table[(table.ranked == "models") & (table.within == "language=eng_Latn")]
    pairs = {(r.template_a, r.template_b): r for r in models.itertuples()}
    # t1 orders a > b > c, t2 a > c > b: one discordant pair of three -> tau = (2 - 1) / 3
    assert pairs[("t1", "t2")].kendall_tau == pytest.approx(1 / 3)
    assert pairs[("t1", "t2")].spearman_rho == pytest.approx(0.5)
    # t1 vs t3 reverses the order completely
    assert pairs[("t1", "t3")].kendall_tau == pytest.approx(-1.0)
    a = [SCORES[(m, "t2")] for m in "abc"]
    b = [SCORES[(m, "t3")] for m in "abc"]
    assert pairs[("t2", "t3")].kendall_tau == pytest.approx(stats.kendalltau(a, b).statistic)
    assert pairs[("t2", "t3")].spearman_rho == pytest.approx(stats.spearmanr(a, b).statistic)


def test_ties_use_tau_b():
    tau, rho, note = template_sensitivity.rank_correlation(pd.Series([1, 2, 2, 3]).to_numpy(), pd.Series([1, 3, 2, 4]).to_numpy())
    assert tau == pytest.approx(stats.kendalltau([1, 2, 2, 3], [1, 3, 2, 4]).statistic) and note == ""
    tau, _, note = template_sensitivity.rank_correlation(pd.Series([0.5, 0.5]).to_numpy(), pd.Series([0.1, 0.2]).to_numpy())
    assert math.isnan(tau) and "tied" in note


def test_rank_correlations_are_scipys_bit_for_bit():
    """The analysis jobs rank without importing scipy.stats (babeleval.analysis.rank_correlation); on vectors of 2 to
    80 units, with many ties, few or none, they give scipy's floats exactly."""
    rng = np.random.default_rng(0)
    compared = 0
    for trial in range(500):
        n = int(rng.integers(2, 80))
        levels = int(rng.integers(1, n + 2))  # 1: all tied; n + 1: ties rare
        a = rng.integers(0, levels, n) / 7
        b = (a + rng.normal(0, 0.1, n) if trial % 4 == 0
             else rng.integers(0, levels, n) + (trial % 3 == 0) * rng.random(n))
        assert np.array_equal(average_ranks(a), stats.rankdata(a))
        if np.all(a == a[0]) or np.all(b == b[0]):
            assert math.isnan(kendall_tau_b(a, b)) and math.isnan(spearman_rho(a, b))
            continue
        assert kendall_tau_b(a, b) == stats.kendalltau(a, b).statistic, (a, b)
        assert spearman_rho(a, b) == stats.spearmanr(a, b).statistic, (a, b)
        compared += 1
    assert compared > 350
    assert math.isnan(kendall_tau_b(np.array([0.3]), np.array([0.4])))
    assert math.isnan(spearman_rho(np.array([0.3]), np.array([0.4])))
    with_missing = np.array([0.1, np.nan, 0.3])
    assert np.isnan(average_ranks(with_missing)).all() and np.isnan(stats.rankdata(with_missing)).all()
    assert math.isnan(kendall_tau_b(with_missing, np.array([0.2, 0.1, 0.4])))
    assert math.isnan(spearman_rho(np.array([0.2, 0.1, 0.4]), with_missing))


def test_one_model_has_no_model_rankings_and_ranks_languages_instead():
    rows = [("solo", "belebele", lang, t, "acc", v, 10)
            for lang, t, v in [("eng_Latn", "t1", 0.9), ("fra_Latn", "t1", 0.5), ("hin_Deva", "t1", 0.3),
                               ("eng_Latn", "t2", 0.7), ("fra_Latn", "t2", 0.6), ("hin_Deva", "t2", 0.2)]]
    table = template_sensitivity.rank_stability(board(rows))
    assert not len(table[table.ranked == "models"])  # not a row per pair saying it needs two models
    langs = table[table.ranked == "languages"].iloc[0]
    assert (langs.within, langs.n, langs.kendall_tau) == ("model=solo", 3, pytest.approx(1.0))


def test_metrics_of_one_template_and_ties():
    rows = [("a", "belebele", "eng_Latn", "t1", "acc", 0.5, 10), ("a", "belebele", "eng_Latn", "t2", "acc", 0.5, 10),
            ("a", "belebele", "eng_Latn", "t1", "acc_norm", 0.6, 10)]
    table = template_sensitivity.template_sensitivity(board(rows))
    assert list(table["metric"]) == ["acc"]  # acc_norm: one template, no spread to speak of
    assert (table.iloc[0].spread, table.iloc[0].best_template) == (0.0, template_sensitivity.TIED)
    rows = [("a", "mt", "jpn_Jpan", t, "chrf", v, 10) for t, v in (("t1", 31.5), ("t2", 40.0))]
    chrf = template_sensitivity.template_sensitivity(board(rows)).iloc[0]
    assert (chrf["min"], chrf["max"], chrf.scale) == (31.5, 40.0, "points_0_100")
