"""Variation analysis on records built to have a known answer: which axis matters, where, and how much."""

import numpy as np
import pandas as pd
import pytest

from babeleval.analysis import variation
from babeleval.core.paths import Combo
from babeleval.analysis.settings import AnalysisSettings

BASE = "formatspread"
VARIANTS = [BASE, f"{BASE}~enum=num", f"{BASE}~sep=dash", f"{BASE}~enum=num~sep=dash"]
# per language: accuracy with letters, and with numbers; the separator never matters
DESIGN = {"eng_Latn": (0.9, 0.9), "fra_Latn": (0.8, 0.75), "jpn_Jpan": (0.6, 0.4), "hin_Deva": (0.5, 0.2)}
N_ITEMS = 40


def records(accuracy, n=N_ITEMS, offset=0):
    right = round(accuracy * n)
    return [{"id": f"item{i}", "correct": ((i + offset) % n) < right, "parsed": True} for i in range(n)]


@pytest.fixture
def raw():
    out = {}
    for model, shift in (("big", 0.0), ("small", -0.1)):
        for language, (letters, numbers) in DESIGN.items():
            for template in VARIANTS:
                accuracy = (numbers if "enum=num" in template else letters) + shift
                out[Combo(model, "belebele", language, template)] = records(max(accuracy, 0.0))
        # a lone template: not a variation study, left out
        out[Combo(model, "belebele", "eng_Latn", "paper")] = records(0.5)
    return out


def test_spread_per_model_language_with_intervals(raw):
    matrices = variation.outcome_matrices(raw)
    assert all(base == BASE for (_, _, _, base) in matrices)
    spread = variation.spread_table(matrices, samples=300, seed=1).set_index(["model", "language"])
    hin = spread.loc[("big", "hin_Deva")]
    assert hin["n_variants"] == 4 and hin["n_items"] == N_ITEMS
    assert hin["spread"] == pytest.approx(0.3) and hin["min"] == pytest.approx(0.2)
    assert hin["worst_variant"].startswith(f"{BASE}~enum=num")
    assert hin["sd"] == pytest.approx(np.std([0.5, 0.5, 0.2, 0.2], ddof=1))
    assert hin["spread_low"] <= hin["spread"] <= hin["spread_high"]
    assert spread.loc[("big", "eng_Latn"), "spread"] == 0.0
    # a 30-point format effect on 40 items is beyond item noise; no effect at all is not
    assert hin["p_spread"] < 0.01 and 0 < hin["spread_noise"] < 0.3
    assert spread.loc[("big", "eng_Latn"), "p_spread"] == 1.0
    again = variation.spread_table(matrices, samples=300, seed=1).set_index(["model", "language"])
    pd.testing.assert_frame_equal(spread, again)


def test_axes_say_which_axis_matters_per_language(raw):
    axes = variation.axes_table(variation.outcome_matrices(raw))
    big = axes[axes["model"] == "big"].set_index(["language", "axis"])
    assert big.loc[("hin_Deva", "enum"), "effect_range"] == pytest.approx(0.3)
    assert big.loc[("hin_Deva", "enum"), "worst_value"] == "num"
    assert big.loc[("hin_Deva", "sep"), "effect_range"] == pytest.approx(0.0)
    assert big.loc[("eng_Latn", "enum"), "effect_range"] == pytest.approx(0.0)


def test_decomposition_finds_enum_and_its_language_interaction(raw):
    table = variation.decomposition_table(variation.outcome_matrices(raw)).set_index("term")
    assert table.loc["sep", "ss"] == pytest.approx(0.0, abs=1e-9)
    assert table.loc["enum", "ss"] > 0 and table.loc["language x enum", "ss"] > 0
    assert table.loc["model", "df"] == 1 and table.loc["language", "df"] == 3
    # the parts add up to the total sum of squares of per-item correctness
    values = np.concatenate([[float(r["correct"]) for r in recs] for c, recs in raw.items() if c.template != "paper"])
    assert table["ss"].sum() == pytest.approx(((values - values.mean()) ** 2).sum())
    assert table["share"].sum() == pytest.approx(1.0)


def test_rank_stability_across_variants(raw):
    ranks = variation.ranks_table(variation.outcome_matrices(raw)).set_index("language")
    assert ranks.loc["hin_Deva", "kendall_w"] == pytest.approx(1.0)  # 'big' is always ahead
    assert ranks.loc["hin_Deva", "winners"] == "big=4"
    single = {c: r for c, r in raw.items() if c.model == "big"}
    alone = variation.ranks_table(variation.outcome_matrices(single))
    assert alone["note"].str.contains("one model").all() and alone["kendall_w"].isna().all()


def test_sensitivity_is_larger_where_the_language_is_known_least(raw):
    spread = variation.spread_table(variation.outcome_matrices(raw), samples=50, seed=1)
    table = variation.sensitivity_table(spread, permutations=1000, seed=1).set_index("model")
    assert set(variation.sensitivity_table(spread, 100, 1)["against"]) == {"score"}  # no groups given
    big = table.loc["big"]
    assert big["n_languages"] == 4 and big["rho"] == pytest.approx(-1.0)
    assert big["permutations"] == 24  # 4! orderings: the exact test
    assert big["p_less"] == pytest.approx(1 / 24) and big["p_two_sided"] == pytest.approx(2 / 24)
    assert big["most_sensitive"] == "hin_Deva" and big["least_sensitive"] == "eng_Latn"
    assert big["against"] == "score"


def test_sensitivity_against_resource_groups(raw):
    spread = variation.spread_table(variation.outcome_matrices(raw), samples=50, seed=1)
    groups = {"high": ["eng_Latn", "fra_Latn"], "mid": ["jpn_Jpan"], "low": ["hin_Deva"], "unused": ["zul_Latn"]}
    table = variation.sensitivity_table(spread, permutations=1000, seed=1, groups=groups)
    row = table[(table["model"] == "big") & (table["against"] == "resource group")].iloc[0]
    assert row["n_languages"] == 4 and row["rho"] < -0.9 and row["permutations"] == 24


def test_permutation_test_sampled_when_orderings_are_many():
    rng = np.random.default_rng(0)
    x = rng.normal(size=12)
    rho, two, less, used = variation.permutation_test(x, -x + rng.normal(scale=0.1, size=12), 500, seed=3)
    assert rho < -0.8 and used == 500 and 0 < two <= 0.01 and 0 < less <= 0.01


def test_items_not_shared_by_every_variant_are_left_out(raw):
    key = Combo("big", "belebele", "eng_Latn", f"{BASE}~sep=dash")
    raw[key] = raw[key][:-5]
    matrix = variation.outcome_matrices(raw)[("big", "belebele", "eng_Latn", BASE)]
    assert len(matrix) == N_ITEMS - 5 and list(matrix.columns) == sorted(VARIANTS)


def test_settings_of_a_variant_name():
    settings = variation.settings_of(f"{BASE}~enum=native~order=p3")
    assert settings["enum"] == "native" and settings["order"] == "p3" and settings["sep"] == "colon"


def test_figure_and_report_fragment(raw, tmp_path):
    from babeleval.analysis import variation_fragment, variation_plots

    matrices = variation.outcome_matrices(raw)
    tables = variation.analyse(matrices, AnalysisSettings(seed=0, samples=50, permutations=200))
    figure = tmp_path / "variation.png"
    variation_plots.variation_figure(matrices, tables["spread"], figure)
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    fragment = variation_fragment.render(tables, figure, {}, alpha=0.05)
    assert fragment.startswith('<section id="variation">') and fragment.endswith("</section>")
    assert "Largest variation term: &#x27;language x enum&#x27;" in fragment or "Largest variation term: &#x27;enum&#x27;" in fragment
    assert "rho between a language&#x27;s accuracy and its sensitivity = -1.00" in fragment
    # it leads with what item noise alone gives; the best variant says how many it was picked from, and warns
    lines = fragment.split('<ul class="findings">')[1]
    assert lines.startswith("<li>Item noise alone would give a spread over variants of ")
    assert f"best of {len(VARIANTS)} variants of {BASE}" in lines and "biased upward" in lines
    # accuracy in percent, as in the rest of the report and the CSV files, the unit named in a scale column
    shown = variation.on_reader_scale(tables["spread"])
    assert (shown["scale"] == "percent").all()
    assert (shown["mean"] == 100 * tables["spread"]["mean"]).all() and "<th>scale</th>" in fragment


def test_the_spread_sentence_counts_rows_at_the_configured_alpha(raw):
    from babeleval.analysis import variation_fragment

    tables = variation.analyse(variation.outcome_matrices(raw), AnalysisSettings(seed=0, samples=50, permutations=200))
    p = tables["spread"]["p_spread"]
    for alpha in (0.01, 0.05, 0.5):
        [sentence] = [line for line in variation_fragment.findings(tables, alpha) if line.startswith("Item noise")]
        assert f"{int((p < alpha).sum())} of {len(p)} (model, task, language) rows spread beyond it " \
               f"(permutation p < {alpha:g}," in sentence


def test_a_grid_without_variant_sets_gives_empty_tables_and_says_so(tmp_path):
    from babeleval.analysis import variation_fragment, variation_plots

    raw = {Combo("m", "belebele", "eng_Latn", "paper"): records(0.5)}
    tables = variation.analyse(variation.outcome_matrices(raw), AnalysisSettings(seed=0, samples=10, permutations=100))
    assert all(frame.empty for frame in tables.values())
    variation_plots.variation_figure({}, tables["spread"], tmp_path / "v.png")
    assert variation_fragment.render(tables, tmp_path / "v.png", {}, alpha=0.05).count(variation_fragment.EMPTY) == 5
