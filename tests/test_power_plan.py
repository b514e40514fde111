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
    assert power.made_test_mde(n, None, None, float("nan"), 0.05, 1) is None  # no spread, no MDE

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
