"""A budgeted sensitivity study: which cells it evaluates, and how close its estimate comes to the exhaustive run.

The design is checked on its margins and its reproducibility; the estimator on a grid evaluated in full (where
it must give the exhaustive values exactly) and on simulated studies from bench/prompt_budget_sim.py, whose
outcomes follow a known model with interactions the estimator does not fit.
"""

import importlib.util
import sys
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from babeleval.prompts.budget_design import Budget, choose_cells, choose_study
from babeleval.analysis.budget_estimate import (STATISTICS, Study, _groups, _level_shift, _logits, _moderation,
                                               drawn_variance_fits, estimate, exhaustive, outcome_grids)
from babeleval.analysis.budget_fit import fit
from babeleval.core.errors import ConfigError, DataError
from conftest import ROOT

VARIANTS = [f"fs~order=p{k}" for k in range(1, 13)]
ITEMS = [f"q{k:03d}" for k in range(50)]


def load_sim():
    spec = importlib.util.spec_from_file_location("prompt_budget_sim", ROOT / "bench" / "prompt_budget_sim.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["prompt_budget_sim"] = module
    spec.loader.exec_module(module)
    return module


def test_cells_are_balanced_over_variants_and_items():
    cells = choose_cells(VARIANTS, ITEMS, 130, seed=7)
    per_variant = [len(ids) for ids in cells.values()]
    per_item = Counter(i for ids in cells.values() for i in ids)
    assert sum(per_variant) == 130 and set(cells) == set(VARIANTS)
    assert max(per_variant) - min(per_variant) <= 1
    assert set(per_item) == set(ITEMS) and max(per_item.values()) - min(per_item.values()) <= 1
    assert all(len(set(ids)) == len(ids) for ids in cells.values())


def test_the_same_inputs_in_any_order_give_the_same_cells_and_another_seed_others():
    cells = choose_cells(VARIANTS, ITEMS, 130, seed=7)
    assert choose_cells(VARIANTS[::-1], ITEMS[::-1], 130, seed=7) == cells
    assert choose_cells(VARIANTS, ITEMS, 130, seed=8) != cells


def test_item_parallel_languages_share_their_cells_and_others_draw_their_own():
    languages = {"eng_Latn": ITEMS, "hin_Deva": ITEMS, "jpn_Jpan": ITEMS}
    parallel = choose_study(VARIANTS, languages, Budget(fraction=0.2), seed=1, parallel=True)
    assert parallel["eng_Latn"] == parallel["hin_Deva"] == parallel["jpn_Jpan"]
    assert sum(map(len, parallel["eng_Latn"].values())) == 120  # 20% of 12 x 50
    separate = choose_study(VARIANTS, languages, Budget(cells=120), seed=1, parallel=False)
    assert separate["eng_Latn"] != separate["hin_Deva"]


@pytest.mark.parametrize("budget, items, message", [
    (Budget(cells=10), {"eng_Latn": ITEMS}, "two items"),
    (Budget(cells=601), {"eng_Latn": ITEMS}, "more than"),
    (Budget(fraction=1.5), {"eng_Latn": ITEMS}, "not in"),
    (Budget(cells=100, fraction=0.1), {"eng_Latn": ITEMS}, "not both"),
    (Budget(cells=100), {"eng_Latn": ITEMS, "hin_Deva": ITEMS[:-1]}, "hin_Deva"),
])
def test_a_budget_that_cannot_be_met_is_a_config_error(budget, items, message):
    with pytest.raises(ConfigError, match=message):
        choose_study(VARIANTS, items, budget, seed=0, parallel=True)


def outcomes(rng, variants=VARIANTS, items=ITEMS, languages=("eng_Latn",)):
    return pd.DataFrame([{"language": lang, "variant": v, "item": i, "correct": float(rng.random() < 0.6)}
                         for lang in languages for v in variants for i in items])


def test_a_grid_evaluated_in_full_gives_the_exhaustive_values_with_no_width():
    full = outcomes(np.random.default_rng(0), languages=("eng_Latn", "hin_Deva"))
    study = Study.of(VARIANTS, {"eng_Latn": ITEMS, "hin_Deva": ITEMS}, parallel=True)
    result = estimate(full, study, draws=20).table.merge(exhaustive(full, study), on=["language", "statistic"])
    assert len(result) == 2 * len(STATISTICS)
    assert np.allclose(result["estimate"], result["value"])
    assert np.allclose(result["low"], result["value"]) and np.allclose(result["high"], result["value"])
    assert (result["fraction"] == 1).all()


def test_outcomes_outside_the_grid_or_twice_are_data_errors():
    study = Study.of(VARIANTS, {"eng_Latn": ITEMS}, parallel=True)
    some = outcomes(np.random.default_rng(0)).head(30)
    with pytest.raises(DataError, match="appears twice"):
        estimate(pd.concat([some, some.head(1)]), study)
    stray = some.assign(variant=["fs~order=p99"] + list(some["variant"][1:]))
    with pytest.raises(DataError, match="fs~order=p99"):
        estimate(stray, study)
    with pytest.raises(DataError, match="lacks"):
        exhaustive(some, study)


def test_the_estimate_from_a_fifth_of_the_cells_is_close_to_the_exhaustive_run():
    """Simulated truth with interactions the model lacks: quantile errors stay small and intervals cover.

    Small and few (40 variants x 300 items, four studies) to stay fast; the bounds are what this size meets
    (bench/prompt_budget_sim.py measures the full-size case over 100 studies). The tails are pulled in by the
    shrinkage, so their bound is wider than the middle's.
    """
    sim = load_sim()
    truth = sim.Truth(variants=40, items=300)
    rows = pd.concat([sim.repetition(truth, fraction=0.2, confidence=0.9, draws=200, seed=seed)
                      for seed in range(4)])
    summary = sim.summary(rows)
    assert (summary.loc[["q25", "q50", "q75"], "mean_abs_error"] < 1.5).all(), summary
    assert (summary.loc[["q05", "q95"], "mean_abs_error"] < 3.0).all(), summary
    assert summary.loc["mean", "mean_abs_error"] < 1.0, summary
    assert rows[rows["statistic"].isin(["mean", "q25", "q50", "q75"])]["covered"].mean() >= 0.75, summary


def test_several_languages_are_estimated_each_with_its_own_interval():
    sim = load_sim()
    rows = sim.repetition(sim.Truth(variants=20, items=150, languages=3), fraction=0.2, confidence=0.9,
                          draws=100, seed=3)
    assert set(rows["language"]) == {"l0", "l1", "l2"}
    assert (rows["low"] <= rows["estimate"]).all() and (rows["estimate"] <= rows["high"]).all()
    assert rows.loc[rows["statistic"] == "mean", "error"].abs().max() < 0.03, rows


def test_languages_with_their_own_items_are_estimated_from_their_own_draws():
    items = {"eng_Latn": ITEMS, "jpn_Jpan": [f"ja{k:03d}" for k in range(40)]}
    design = choose_study(VARIANTS, items, Budget(fraction=0.3), seed=2, parallel=False)
    assert set(i for ids in design["jpn_Jpan"].values() for i in ids) <= set(items["jpn_Jpan"])
    rng = np.random.default_rng(1)
    observed = pd.DataFrame([{"language": lang, "variant": v, "item": i, "correct": float(rng.random() < 0.7)}
                             for lang, by_variant in design.items() for v, ids in by_variant.items() for i in ids])
    table = estimate(observed, Study.of(VARIANTS, items, parallel=False), draws=50).table
    assert dict(table.groupby("language")["grid_cells"].first()) == {"eng_Latn": 600, "jpn_Jpan": 480}
    assert (table["low"] <= table["estimate"]).all() and (table["estimate"] <= table["high"]).all()
    mean = table[table["statistic"] == "mean"].set_index("language")["estimate"]
    assert ((mean > 0.55) & (mean < 0.85)).all(), mean


def simulated_study(seed: int = 3):
    """A simulated study of 40 variants x 300 items, its exhaustive outcomes and those of a designed 20%."""
    sim = load_sim()
    study, full = sim.simulate(sim.Truth(variants=40, items=300), np.random.default_rng(seed))
    design = choose_study(study.variants, study.items, Budget(fraction=0.2), seed=seed, parallel=True)
    chosen = pd.DataFrame([(lang, v, i) for lang, by_variant in design.items() for v, ids in by_variant.items()
                           for i in ids], columns=["language", "variant", "item"])
    return study, full, full.merge(chosen, on=["language", "variant", "item"])


def test_the_moment_variance_widens_the_variants_where_the_fit_shrinks_them_too_much():
    study, full, observed = simulated_study()
    laplace = estimate(observed, study, draws=100, seed=3, variant_variance="laplace")
    moments = estimate(observed, study, draws=100, seed=3, variant_variance="moments")
    assert moments.variances["variant"] >= laplace.variances["variant"]
    assert moments.variances["item"] == laplace.variances["item"]  # only the variants' variance is scaled
    spread = {name: fit.table.set_index("statistic").loc["spread", "estimate"]
              for name, fit in (("laplace", laplace), ("moments", moments))}
    truth = exhaustive(full, study).set_index("statistic").loc["spread", "value"]
    assert spread["laplace"] <= spread["moments"]
    assert abs(spread["moments"] - truth) <= abs(spread["laplace"] - truth) + 0.005, (spread, truth)


def test_the_variants_variance_is_drawn_from_resamples_of_the_variants_and_widens_the_tails():
    study, full, observed = simulated_study()
    grids = outcome_grids(observed, study)
    groups, y = _groups(grids, study)
    model = fit(groups, y)
    fits = drawn_variance_fits(model, groups, y, grids, study, 10, np.random.default_rng(0))
    variances = [drawn.variances["variant"] for drawn in fits]
    assert len(set(variances)) > 5 and min(variances) >= model.variances["variant"]
    assert all(drawn.variances["item"] == model.variances["item"] for drawn in fits)  # only the variants'
    width = {name: estimate(observed, study, draws=200, seed=3, variant_variance=name).table.set_index("statistic")
             .eval("high - low") for name in ("moments", "resampled")}
    assert (width["resampled"][["q05", "q95", "spread"]] > width["moments"][["q05", "q95", "spread"]]).all(), width


def test_the_draws_keep_each_cells_probability_at_the_modes_and_leave_little_to_the_level_shift():
    """Averaged over the Laplace draws, a cell's probability is pulled towards 0.5, and a variant's the more the
    further from 0.5 it is; the per-cell offsets give back the mode's probability, cell by cell."""
    study, full, observed = simulated_study()
    grids = outcome_grids(observed, study)
    groups, y = _groups(grids, study)
    model = fit(groups, y)
    thetas = model.draw(2000, np.random.default_rng(0))
    mode = expit(_logits(model, model.theta, study, 0))
    offset = _moderation(model, model.covariance_root(), study, 0)
    plain = np.mean([expit(_logits(model, thetas[:, k], study, 0)) for k in range(thetas.shape[1])], axis=0)
    moderated = np.mean([expit(_logits(model, thetas[:, k], study, 0) + offset)
                         for k in range(thetas.shape[1])], axis=0)
    plain_gap, moderated_gap = (np.abs(drawn - mode).mean() for drawn in (plain, moderated))
    assert moderated_gap < plain_gap / 3, (plain_gap, moderated_gap)
    # a variant's mean probability: the plain draws pull the best variant down further than the worst up
    order = np.argsort(mode.mean(axis=1))
    pull = plain.mean(axis=1) - mode.mean(axis=1)
    assert pull[order[-1]] < pull[order[0]]
    evaluated = ~np.isnan(grids["l0"])
    shift = _level_shift(np.stack([_logits(model, thetas[:, k], study, 0)[evaluated] + offset[evaluated]
                                   for k in range(200)]), float(grids["l0"][evaluated].mean()))
    assert abs(shift) < 0.05, shift
