"""A budgeted variant set in params.yaml: its plan and named errors, the cells each variant renders, the scores'
subset fields, the leaderboard without subsets, and the cross-lingual sensitivity test on the estimates."""

import copy

import numpy as np
import pandas as pd
import pytest
import yaml

from babeleval.analysis import variation
from babeleval.analysis.budget_estimate import Study, exhaustive
from babeleval.analysis.budget_table import BudgetedSet, budget_table, outcome_columns
from babeleval.analysis.settings import AnalysisSettings
from babeleval.core.paths import Combo
from babeleval.analysis.leaderboard import budgeted_section, leaderboard
from babeleval.core.errors import ConfigError, DataError
from babeleval.grid import rules
from babeleval.grid.params import validate
from babeleval.prompts.budget_design import StudyPlan
from babeleval.prompts.record import PromptRecord
from babeleval.prompts.render import budgeted_requests
from babeleval.score.metrics import get_metric
from conftest import copy_workflow, TINY_GRID

AXES = {"enum": ["upper", "num", "lower"], "sep": ["colon", "dash"]}
LANGUAGES = ["eng_Latn", "hin_Deva", "jpn_Jpan"]


@pytest.fixture
def params(repo_root):
    params = yaml.safe_load(TINY_GRID.read_text(encoding="utf-8"))
    params["tasks"] = {"belebele": copy.deepcopy(params["tasks"]["belebele"])}
    params["tasks"]["belebele"].update(languages=LANGUAGES, templates=["paper", "formatspread~enum=num"], variants={
        "formatspread": {"sample": "all", "axes": AXES, "budget": {"fraction": 0.25, "parallel": True}}})
    return params


def test_the_drawn_variants_share_the_budget_and_listed_templates_run_in_full(params, repo_root):
    grid = validate(params, root=repo_root)
    plan = grid.tasks["belebele"].budgets["formatspread"]
    # the six points of the axes, the base's own settings among them; the listed variant runs in full
    assert len(plan.variants) == 5 and "formatspread" in plan.variants and "formatspread~enum=num" not in plan.variants
    assert plan.parallel and plan.seed == params["seed"]
    assert grid.prompt_record("belebele", "hin_Deva", "formatspread~sep=dash").budget == plan
    assert "budget" not in grid.prompt_record("belebele", "hin_Deva", "paper").as_json()  # unchanged records
    assert PromptRecord.from_json(grid.prompt_record("belebele", "eng_Latn", "formatspread").as_json()).budget == plan
    assert rules.is_budgeted(grid, "belebele", "formatspread") and not rules.is_budgeted(grid, "belebele", "paper")
    [entry] = rules.budgeted_sets(grid)
    assert entry["plan"] == plan.as_json() and entry["model"] in grid.models
    assert entry["metric"] == "acc"  # the variants' headline: the outcome the estimate models
    # the plots are over the templates the leaderboard shows: the two run in full
    assert any("template_spread" in path for path in rules.figure_targets(grid))


@pytest.mark.parametrize("budget, message", [
    ({"fraction": 0.2, "cells": 40}, "give either `cells` or `fraction`"),
    ({"parallel": True}, "give either `cells` or `fraction`"),
    ({"cells": 6}, "6 cells a language cannot give each of 5 variants 2 items: the smallest budget that works is "
                   "10 cells a language, 30 in all over the 3 language(s); these 6 cells a language serve a family of "
                   "at most 3 variants"),
    ({"fraction": 1.5}, "budget.fraction: 1.5 is greater than the maximum of 1"),
    ({"share": 0.1}, "budget.share: unknown key; allowed here: cells, fraction, parallel"),
])
def test_a_bad_budget_is_a_named_error(params, repo_root, budget, message):
    params["tasks"]["belebele"]["variants"]["formatspread"]["budget"] = budget
    with pytest.raises(ConfigError, match="tasks.belebele.variants.formatspread") as error:
        validate(params, root=repo_root)
    assert message in str(error.value)


def test_a_set_of_one_variant_is_refused(params, repo_root):
    params["tasks"]["belebele"]["variants"]["formatspread"].update(sample=1)
    with pytest.raises(ConfigError, match="shares cells among the base's variants, and the grid has 1"):
        validate(params, root=repo_root)


@pytest.mark.parametrize("task, base, headline", [("translation_to", "en_zeroshot", "chrf"), ("jsquad", "0.1", "f1")])
def test_a_budget_on_a_metric_without_a_right_or_wrong_item_is_refused_at_validation(repo_root, task, base, headline):
    params = yaml.safe_load(TINY_GRID.read_text(encoding="utf-8"))
    params["tasks"] = {task: copy.deepcopy(params["tasks"][task])}
    params["tasks"][task]["variants"] = {base: {"sample": "all", "axes": {"shots": [0, 1, 2]},
                                                "budget": {"fraction": 0.5}}}
    with pytest.raises(ConfigError, match=rf"params.yaml: tasks\.{task}\.variants\.{base}\.budget: ") as error:
        validate(params, root=repo_root)
    assert f"reports {headline} " in str(error.value) and "not right or wrong per item" in str(error.value)
    # the same set without a budget is a valid grid: the budget is what is refused
    del params["tasks"][task]["variants"][base]["budget"]
    assert not validate(params, root=repo_root).tasks[task].budgets


def test_each_variant_renders_only_its_cells_and_every_job_draws_the_same_design():
    plan = StudyPlan(base="fs", variants=tuple(f"fs~enum={k}" for k in "abcdef"), budget=_budget(0.25), seed=3,
                     parallel=True)
    requests = {language: [{"id": f"q{k}", "language": language} for k in range(20)] for language in LANGUAGES}
    kept = {variant: budgeted_requests(plan, variant, requests) for variant in plan.variants}
    design = plan.cells({language: [r["id"] for r in rows] for language, rows in requests.items()})
    for variant, by_language in kept.items():
        assert sorted(r["id"] for r in by_language["hin_Deva"]) == design["hin_Deva"][variant]  # in the items order
        assert len(by_language["eng_Latn"]) == 5  # 30 cells over 6 variants
        assert [r["id"] for r in by_language["eng_Latn"]] == [r["id"] for r in by_language["jpn_Jpan"]]  # parallel
    assert sum(len(rows["eng_Latn"]) for rows in kept.values()) == 30


def _budget(fraction):
    from babeleval.prompts.budget_design import Budget
    return Budget(fraction=fraction)


def test_the_leaderboard_has_no_row_for_a_subset_and_names_it_apart():
    full = {"model": "m", "task": "t", "language": "eng_Latn", "template": "paper", "n": 8, "metrics": {"acc": 0.5}}
    subset = {**full, "template": "fs~enum=num", "n": 4, "metrics": {"acc": 0.75}, "budgeted": True, "n_full": 8,
              "budget": {"base": "fs"}}
    frame = leaderboard([full, subset])
    assert list(frame["template"]) == ["paper"]
    section = budgeted_section([full, subset])
    assert "| t      | fs    | m       |          1 |           1 |       4 |            8 |" in section
    assert budgeted_section([full]) == ""


def estimates(spreads, means, half_width):
    rows = []
    for k, (spread, mean) in enumerate(zip(spreads, means)):
        for statistic, value in (("mean", mean), ("spread", spread), ("q50", mean)):
            rows.append({"model": "m", "task": "belebele", "family": "fs", "language": f"l{k}", "statistic": statistic,
                         "estimate": value, "low": value - half_width, "high": value + half_width, "confidence": 0.9})
    return pd.DataFrame(rows)


def test_the_cross_lingual_test_reads_the_estimates_and_their_intervals():
    means = np.array([80.0, 70, 60, 50, 40, 30])
    spreads = np.array([5.0, 9, 14, 18, 25, 30])  # more sensitive where the score is lowest
    [narrow] = variation.estimate_sensitivity_table(estimates(spreads, means, 0.5), permutations=500, seed=1)\
        .to_dict("records")
    assert narrow["rho"] == pytest.approx(-1.0) and narrow["n_languages"] == 6 and narrow["p_less"] < 0.01
    assert narrow["most_sensitive"] == "l5" and narrow["sensitivity"] == "estimated spread"
    assert narrow["rho_low"] == pytest.approx(-1.0) and narrow["rho_high"] == pytest.approx(-1.0)
    [wide] = variation.estimate_sensitivity_table(estimates(spreads, means, 30.0), permutations=500, seed=1)\
        .to_dict("records")
    assert wide["rho"] == pytest.approx(-1.0) and wide["rho_low"] < -0.5 and wide["rho_high"] > 0  # intervals matter


def test_a_language_whose_spread_was_refused_is_left_out_of_the_cross_lingual_test_and_named():
    """A spread seen through too few items a variant is refused (NaN, ``budget_estimate.refusal``): the test runs
    on the other languages, its drawn interval too, and the row names the language left out."""
    means, spreads = [80.0, 70, 60, 50, 40], [5.0, 9, 14, 18, 25]
    table = estimates(spreads, means, 0.5)
    table.loc[(table["language"] == "l2") & (table["statistic"] == "spread"), ["estimate", "low", "high"]] = np.nan
    [row] = variation.estimate_sensitivity_table(table, permutations=200, seed=1).to_dict("records")
    assert row["n_languages"] == 4 and row["rho"] == pytest.approx(-1.0) and row["note"] == "no spread in l2: left out"
    assert row["rho_low"] == pytest.approx(-1.0) and row["rho_high"] == pytest.approx(-1.0)


def test_the_resource_group_test_on_estimates_has_no_drawn_interval():
    table = variation.estimate_sensitivity_table(estimates([5.0, 9, 14, 18], [80.0, 70, 60, 50], 1.0), 200, 0,
                                                 groups={"high": ["l0", "l1"], "low": ["l2", "l3"]})
    assert list(table["against"]) == ["score", "resource group"]
    assert table["rho_low"].isna().tolist() == [False, True]


def test_a_set_whose_headline_is_acc_norm_is_estimated_from_each_cells_correct_norm(tmp_path):
    """The metric a budget is validated on is the one estimated: acc_norm's outcome is the records'
    `correct_norm` (the registry's `outcome_column`), not `correct`."""
    workdir = copy_workflow(tmp_path / "wf", tasks=("belebele",))
    template = (workdir / "prompts/belebele/formatspread.yaml").read_text(encoding="utf-8")
    (workdir / "prompts/belebele/fsnorm.yaml").write_text(template + "metrics: [acc_norm]\n", encoding="utf-8")
    params = yaml.safe_load((workdir / "params.yaml").read_text(encoding="utf-8"))
    params["tasks"]["belebele"].update(languages=["eng_Latn"], templates=["paper"], variants={
        "fsnorm": {"sample": 4, "axes": AXES, "budget": {"fraction": 1.0}}})
    [entry] = rules.budgeted_sets(validate(params, root=workdir))
    assert entry["metric"] == "acc_norm" and get_metric("acc_norm").outcome_column == "correct_norm"
    assert get_metric("acc").outcome_column == "correct" and get_metric("chrf").outcome_column is None
    budgeted = BudgetedSet.from_json(entry)
    assert outcome_columns([budgeted]) == ("id", "correct_norm")
    # every cell evaluated: the estimate is the exhaustive value of correct_norm, which differs from correct's
    items = [f"q{k}" for k in range(20)]
    rng = np.random.default_rng(0)
    records = {Combo("tiny-llama", "belebele", "eng_Latn", variant): [
        {"id": i, "correct": True, "correct_norm": bool(rng.random() < 0.6)} for i in items]
        for variant in budgeted.plan.variants}
    prepared = {("belebele", "eng_Latn"): {i: {"id": i} for i in items}}
    table = budget_table([budgeted], records, prepared, AnalysisSettings(seed=0)).set_index("statistic")
    truth = exhaustive(pd.DataFrame([{"language": c.language, "variant": c.template, "item": r["id"],
                                      "correct": float(r["correct_norm"])} for c, rs in records.items() for r in rs]),
                       Study.of(budgeted.plan.variants, {"eng_Latn": items}, False)).set_index("statistic")
    assert set(table["metric"]) == {"acc_norm"} and set(table["scale"]) == {"percent"}
    assert np.allclose(table["estimate"], truth.loc[table.index, "value"] * 100)
    assert table.loc["mean", "estimate"] < 100  # not correct's (every item right)
    records[next(iter(records))][0]["correct_norm"] = None
    with pytest.raises(DataError, match="no right/wrong `correct_norm` \\(acc_norm\\)"):
        budget_table([budgeted], records, prepared, AnalysisSettings(seed=0))
