"""Power before the run: the exact McNemar power, the MDE, the items needed, and `plan` on the tests' grid."""

import itertools
import math

import numpy as np
import pytest
from conftest import ROOT, TINY_GRID
from scipy import stats

from babeleval.analysis import power
from babeleval.analysis.significance import mcnemar_exact
from babeleval.cli import plan as plan_cli
from babeleval.core import paths
from babeleval.grid.params import load_params
from babeleval.grid.power_plan import plan
from babeleval.score import outcomes


def brute_force_power(n, discordance, difference, alpha):
    """Every split of n items into (a only right, b only right, same), weighted by its trinomial probability,
    tested with the analysis's own test."""
    p = [(discordance + difference) / 2, (discordance - difference) / 2, 1 - discordance]
    total = 0.0
    for a_only, b_only in itertools.product(range(n + 1), repeat=2):
        if a_only + b_only > n:
            continue
        a = [True] * a_only + [False] * b_only
        if mcnemar_exact(a, [not x for x in a])[2] < alpha:
            total += stats.multinomial.pmf([a_only, b_only, n - a_only - b_only], n, p)
    return total


@pytest.mark.parametrize("n,discordance,difference,alpha", [(30, 0.4, 0.2, 0.05), (25, 0.5, 0.3, 0.01),
                                                            (40, 0.2, 0.1, 0.05 / 3)])
def test_power_is_the_analysis_tests_own(n, discordance, difference, alpha):
    assert power.power(n, discordance, difference, alpha) == pytest.approx(
        brute_force_power(n, discordance, difference, alpha), abs=1e-9)


def test_mde_reaches_the_target_and_matches_the_normal_approximation_where_it_holds():
    n, r, alpha = 900, 0.25, 0.05
    mde = power.minimum_detectable(n, r, alpha)
    assert power.power(n, r, mde, alpha) == pytest.approx(0.8, abs=1e-6)
    normal = (stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(0.8)) * math.sqrt(r / n)
    assert mde == pytest.approx(normal, abs=0.003)
    # a family of 30 tests makes each clear alpha / 30: a larger MDE
    assert power.minimum_detectable(n, r, power.corrected_alpha(alpha, 30)) > mde + 0.01
    # too few items: no difference up to the discordance is found with 80% power
    assert power.minimum_detectable(8, r, alpha) is None


def test_items_needed_finds_the_difference():
    n = power.items_needed(0.05, 0.25, 0.05)
    assert power.power(n, 0.25, 0.05, 0.05) >= 0.8 > power.power(n // 2, 0.25, 0.05, 0.05)
    assert power.minimum_detectable(n, 0.25, 0.05) <= 0.05 + 1e-9
    assert power.items_needed(0.3, 0.25, 0.05) is None  # a difference larger than the discordance


def _write_pilot(root, combo, correct):
    model, task, language, template = combo
    path = root / paths.OUTCOMES.format(model=model, task=task, language=language, template=template)
    path.parent.mkdir(parents=True, exist_ok=True)
    outcomes.write(path, [{"id": str(i), "correct": bool(c)} for i, c in enumerate(correct)])


def test_plan_on_the_tests_grid_uses_the_pilot_where_it_has_one(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    grid = load_params(TINY_GRID)
    ids = {key: [str(r["id"]) for r in rows] for key, rows in plan_cli.rendered_requests(grid).items()}
    assert len(ids["belebele", "eng_Latn", "paper"]) == 24 and len(ids["belebele", "eng_Latn", "blog"]) == 19

    assumed = plan(grid, ids, plan_cli.pilot_reader(tmp_path), difference=0.1)
    belebele = [p for p in assumed if p.task == "belebele"]
    # one model, three templates, three languages: 3 pairs a language, one Holm family of 9
    assert len(belebele) == 9 and {p.family_size for p in belebele} == {9}
    assert all(p.alpha == pytest.approx(0.05 / 9) for p in belebele)
    assert {p.discordance.source for p in belebele} == {"assumed"}
    pair = next(p for p in belebele if (p.language, p.a, p.b) == ("eng_Latn", "blog", "paper"))
    assert pair.items == 19  # blog's exemplars are evaluation items: not in its prompts
    assert pair.needed == power.items_needed(0.1, power.ASSUMED_DISCORDANCE, 0.05 / 9)

    # a pilot of instruct and paper in English: half the items answered differently
    _write_pilot(tmp_path, ("tiny-llama", "belebele", "eng_Latn", "paper"), [i % 2 for i in range(24)])
    _write_pilot(tmp_path, ("tiny-llama", "belebele", "eng_Latn", "instruct"), [0] * 24)
    piloted = {(p.language, p.a, p.b): p for p in plan(grid, ids, plan_cli.pilot_reader(tmp_path))
               if p.task == "belebele"}
    measured = piloted["eng_Latn", "instruct", "paper"].discordance
    assert (measured.share, measured.source, measured.items) == (0.5, "pilot", 24)
    assert piloted["hin_Deva", "instruct", "paper"].discordance.source == "pilot, pooled over the task"
    assert piloted["eng_Latn", "instruct", "paper"].mde == power.minimum_detectable(24, 0.5, 0.05 / 9)


def test_plan_command_prints_each_family_and_writes_every_row(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    assert plan_cli.main(["--params", str(TINY_GRID), "--pilot", str(tmp_path), "--difference", "10",
                          "--csv", str(tmp_path / "plan.csv")]) == 0
    out = capsys.readouterr().out
    assert "## belebele: template vs template on acc: 9 tests, alpha 0.0056 per test" in out
    assert "25% of items answered differently is assumed" in out
    import pandas as pd
    frame = pd.read_csv(tmp_path / "plan.csv")
    assert len(frame[frame["task"] == "belebele"]) == 9
    assert np.all(frame.loc[frame["task"] == "belebele", "items_needed"] > 0)
    assert plan_cli.main(["--params", str(TINY_GRID), "--discordance", "0"]) == 2


def test_after_the_run_each_comparison_shows_what_it_could_not_detect():
    from babeleval.analysis.significance import correct, pairwise
    from babeleval.cli.compare import compare_sides, render
    from babeleval.core.paths import Combo

    # 200 items; b gets 10 of a's right answers wrong and 6 of its wrong ones right: 16 discordant, not significant
    a = [{"id": str(i), "correct": i % 2 == 0} for i in range(200)]
    b = [{"id": str(i), "correct": (i % 2 == 0 and i >= 20) or i in (1, 3, 5, 7, 9, 11)} for i in range(200)]
    combo = Combo("m", "belebele", "eng_Latn", "paper")
    frame = compare_sides(({combo: a}, {}), ({combo: b}, {}), seed=0, n_samples=200)
    [row] = frame.itertuples(index=False)
    assert not row.significant
    assert row.mde == pytest.approx(100 * power.observed_mde(200, 10, 6, 0.05, 1))
    text = render(frame, "before", "after", 0.05)
    assert f"m/belebele/eng_Latn/paper: {row.delta:+.1f}, not significant; this design could not detect less than " \
           f"{row.mde:.1f} points" in text

    # the analysis's significance tables carry it too, on the share scale (written in points for readers)
    other = Combo("m", "belebele", "eng_Latn", "instruct")
    tables = pairwise({combo: a, other: b}, seed=0, n_samples=200)
    row = tables["templates"].iloc[0]
    assert row["mde"] == pytest.approx(power.observed_mde(200, 6, 10, 0.05, int(row["family_size"])))
    assert correct(tables["templates"], 0.05)["mde"].notna().all()


def test_a_graded_metric_says_what_its_bootstrap_test_could_not_detect_and_that_holds_in_simulation():
    """A paired bootstrap test (chrF, BLEU, F1) gets an MDE from its resampled difference's standard error; a
    difference that large is found about 80% of the time."""
    import numpy as np
    import pandas as pd
    from scipy import stats

    from babeleval.analysis.bootstrap import ItemData
    from babeleval.analysis.significance import compare_data, correct

    n, noise = 300, 0.2
    ids = [str(i) for i in range(n)]
    rng = np.random.default_rng(0)
    a = rng.uniform(0, 1, n)
    b = a + rng.normal(0, noise, n)
    row = compare_data(ItemData("f1", ids, a), ItemData("f1", ids, b), "f1", seed=0, n_samples=500)
    assert row["test"].startswith("paired bootstrap") and row["a_only"] is None
    assert row["diff_se"] == pytest.approx(np.std(a - b, ddof=1) / np.sqrt(n), rel=0.15)
    frame = correct(pd.DataFrame([{**row, "comparison": "template vs template", "task": "jsquad",
                                   "language": "jpn_Jpan", "fixed": "m", "a": "x", "b": "y"}]), 0.05)
    z = stats.norm.ppf(0.95) + stats.norm.ppf(0.8)  # the test's p-value is one tail (power.bootstrap_mde)
    assert frame["mde"][0] == pytest.approx(z * row["diff_se"])
    assert power.made_test_mde(n, None, None, float("nan"), 0.05, 1, 1000) is None  # no spread, no MDE
    # a test at 0.05 / 30 on 1,000 resamples rests on its most extreme one or two: its MDE would be optimistic
    # (bench/graded_power_check.py: 70% power at it), so none is given; 10,000 resamples give one
    assert power.resamples_needed(0.05 / 30) == 6000
    assert power.made_test_mde(n, None, None, 0.01, 0.05, 30, 1000) is None
    assert power.made_test_mde(n, None, None, 0.01, 0.05, 30, 10_000) == pytest.approx(
        (stats.norm.ppf(1 - 0.05 / 30) + stats.norm.ppf(0.8)) * 0.01)

    # 200 studies with a true difference of the MDE: the test finds it in about 80% of them
    shift = z * noise / np.sqrt(n)
    found = 0
    for study in range(200):
        rng = np.random.default_rng(1000 + study)
        a = rng.uniform(0, 1, n)
        b = a + shift + rng.normal(0, noise, n)
        test = compare_data(ItemData("f1", ids, b), ItemData("f1", ids, a), "f1", seed=study, n_samples=200)
        found += test["p_value"] < 0.05
    assert 0.7 <= found / 200 <= 0.9, found


def test_a_graded_comparison_is_planned_from_a_pilots_spread_and_never_from_an_assumption(tmp_path, monkeypatch):
    """SQuAD F1 (a paired bootstrap test) planned before a run: without a pilot the row names what it needs; with
    one, the MDE and the items needed follow from the pilot's per-item spread, extrapolated as 1 / sqrt(n)."""
    import yaml

    from babeleval.grid.power_plan import NO_PILOT_SPREAD

    monkeypatch.chdir(ROOT)
    params = yaml.safe_load(TINY_GRID.read_text(encoding="utf-8"))
    params["tasks"]["jsquad"]["templates"] = ["0.1", "0.2"]
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")
    grid = load_params(tmp_path / "params.yaml")
    ids = {key: [str(r["id"]) for r in rows] for key, rows in plan_cli.rendered_requests(grid).items()}
    pilot = tmp_path / "pilot"

    def planned(difference=None):
        rows = plan(grid, ids, plan_cli.pilot_reader(pilot), difference=difference,
                    spread=plan_cli.spread_reader(pilot, seed=0, samples=400))
        [row] = [p for p in rows if p.task == "jsquad"]
        return row

    row = planned()
    assert (row.metric, row.mde, row.spread, row.reason) == ("f1", None, None, NO_PILOT_SPREAD)

    # a pilot of both templates on 40 items: 0.2's per-item F1 is 0.1's plus noise of sd 0.25 (25 points)
    rng = np.random.default_rng(3)
    first = rng.uniform(0, 1, 40)
    for template, values in (("0.1", first), ("0.2", first + rng.normal(0, 0.25, 40))):
        path = pilot / paths.OUTCOMES.format(model="tiny-llama", task="jsquad", language="jpn_Jpan", template=template)
        path.parent.mkdir(parents=True, exist_ok=True)
        outcomes.write(path, [{"id": str(i), "f1": float(v)} for i, v in enumerate(values)])
    row = planned(difference=0.05)  # 5 points
    assert (row.spread.source, row.spread.items) == ("pilot", 40)
    assert row.spread.sd == pytest.approx(25.0, rel=0.25)  # F1 on its 0-100 scale
    # Student's t at the pilot's 39 degrees of freedom: its spread is itself an estimate
    assert row.mde == power.graded_mde(row.items, row.spread, row.alpha) == pytest.approx(
        (stats.t.ppf(1 - row.alpha, 39) + stats.t.ppf(0.8, 39)) * row.spread.sd / math.sqrt(row.items))
    assert power.graded_mde(row.needed, row.spread, row.alpha) <= 5.0 < power.graded_mde(row.needed - 1, row.spread,
                                                                                           row.alpha)
    frame = plan_cli.power_frame([row])
    assert frame["mde_points"][0] == pytest.approx(row.mde) and frame["spread_source"][0] == "pilot"

    # too few resamples for the test's level: no MDE, and what to set instead
    params["analysis"] = {**params.get("analysis", {}), "bootstrap_samples": 100}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")
    grid = load_params(tmp_path / "params.yaml")
    row = planned()
    assert row.mde is None and row.spread is not None
    assert row.reason.endswith("set analysis.bootstrap_samples to at least 200")


@pytest.mark.slow  # renders 24 variants in four languages, twice: about 40 s
def test_a_budgeted_variant_set_is_planned_on_its_designs_cells_not_on_every_item(tmp_path, monkeypatch):
    """A budgeted variant renders only the cells its set's design keeps (``render.budgeted_requests``, as the rendering
    job does): `plan` counts a pair's items, and forecasts its tokens, on those cells."""
    import yaml

    from babeleval.prompts.render import budgeted_requests

    monkeypatch.chdir(ROOT)
    params = yaml.safe_load((ROOT / "examples/prompt_budget.yaml").read_text(encoding="utf-8"))
    params["tasks"]["belebele"]["variants"]["formatspread"]["budget"] = {"fraction": 0.1, "parallel": True}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")
    grid = load_params(tmp_path / "params.yaml")
    requests = plan_cli.rendered_requests(grid)
    languages = params["tasks"]["belebele"]["languages"]
    variants = sorted({template for (_, _, template), record in grid.prompts.items() if record.budget is not None})
    assert len(variants) == 23 and "formatspread" not in variants  # the base runs in full
    assert all(len(requests["belebele", language, "formatspread"]) == 24 for language in languages)
    for template in variants:
        design = grid.prompts["belebele", languages[0], template].budget
        full = {language: requests_for_every_item(grid, language, template) for language in languages}
        kept = budgeted_requests(design, template, full)
        for language in languages:
            assert requests["belebele", language, template] == kept[language]
            assert 1 <= len(kept[language]) <= 4  # 2 or 3 items a variant at 10% of 24
    ids = {key: [str(r["id"]) for r in rows] for key, rows in requests.items()}
    planned = [p for p in plan(grid, ids, plan_cli.pilot_reader(tmp_path)) if p.a in variants and p.b in variants]
    assert planned and max(p.items for p in planned) <= 4


def requests_for_every_item(grid, language, template):
    from babeleval.cli.show import task_rows
    from babeleval.prompts.render import requests_for

    return requests_for(grid.tasks["belebele"].templates[template], grid.prompts["belebele", language, template],
                        task_rows(grid, "belebele"))
