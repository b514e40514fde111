"""A budgeted variant set through the real workflow: only the design's cells are generated, the estimates table
and the report's section, the leaderboard keeps subsets out, and an edited template reruns only its own jobs."""

import csv
import json

import pytest
import yaml

from conftest import copy_workflow, snakemake

from babeleval.prompts.budget_design import StudyPlan

pytestmark = [pytest.mark.slow, pytest.mark.workflow]

LANGUAGES = ["eng_Latn", "hin_Deva", "jpn_Jpan"]
ITEMS = 8
BUDGET = {"fraction": 0.5, "parallel": True}


@pytest.fixture(scope="module")
def finished(tmp_path_factory, built_tiny_model):
    workdir = copy_workflow(tmp_path_factory.mktemp("budget") / "wf", tasks=("belebele",), built=built_tiny_model)
    params = yaml.safe_load((workdir / "params.yaml").read_text(encoding="utf-8"))
    params["tasks"]["belebele"].update(languages=LANGUAGES, limit=ITEMS, templates=["paper"], variants={
        "formatspread": {"sample": "all", "axes": {"enum": ["upper", "num", "lower"], "sep": ["colon", "dash"]},
                         "budget": BUDGET}})
    (workdir / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")
    snakemake(workdir)  # the default target: the report includes the budgeted sets' section
    return workdir


def raw_lines(workdir, language, template):
    path = workdir / "results/raw/tiny-llama/belebele" / language / f"{template}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_only_the_designs_cells_are_generated(finished):
    scores = json.loads((finished / "results/scores/tiny-llama/belebele/eng_Latn/formatspread~enum=num~sep=dash.json")
                        .read_text(encoding="utf-8"))
    assert scores["budgeted"] is True and scores["n_full"] == ITEMS and scores["n"] == ITEMS // 2
    plan = StudyPlan.from_json(scores["budget"])
    assert len(plan.variants) == 6
    items = [str(r["id"]) for r in raw_lines(finished, "eng_Latn", "paper")]  # a full template: every item
    assert len(items) == ITEMS
    design = plan.cells({language: items for language in LANGUAGES})
    for language in LANGUAGES:
        total = 0
        for variant in plan.variants:
            generated = (finished / "results/generations/tiny-llama/belebele" / language / f"{variant}.jsonl"
                         ).read_text(encoding="utf-8").splitlines()
            ids = sorted(str(r["id"]) for r in raw_lines(finished, language, variant))
            assert len(generated) == len(ids) == ITEMS // 2 and ids == design[language][variant], (language, variant)
            total += len(generated)
        assert total == len(plan.variants) * ITEMS * BUDGET["fraction"]


def test_the_estimates_table_and_the_reports_section(finished):
    with open(finished / "results/tables/variation_budget.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert {"model", "task", "family", "language", "statistic", "estimate", "low", "high", "cells", "grid_cells",
            "fraction", "scale"} <= set(rows[0])
    assert {r["language"] for r in rows} == set(LANGUAGES) and {r["family"] for r in rows} == {"formatspread"}
    assert {r["metric"] for r in rows} == {"acc"} and {r["scale"] for r in rows} == {"percent"}  # the headline's
    assert {r["statistic"] for r in rows} == {"mean", "q05", "q25", "q50", "q75", "q95", "best", "worst", "spread"}
    assert all(r["cells"] == "24" and r["grid_cells"] == "48" and float(r["fraction"]) == 0.5 for r in rows)
    # 4 items a variant: below what the method supports, flagged on every row, in the CSV and the report; the
    # tails not estimated at all, each row naming the budget that would (10 of 8 items: the whole grid)
    assert {r["items_per_variant"] for r in rows} == {"4"}
    tails = [r for r in rows if r["statistic"] in {"q05", "q95", "best", "worst", "spread"}]
    body = [r for r in rows if r not in tails]
    assert {r["method"] for r in body} <= {"model", "plain mean"} and {r["method"] for r in tails} == {"refused"}
    assert all(0 <= float(r["low"]) <= float(r["high"]) <= 100 for r in body)
    assert all(r["estimate"] == r["low"] == r["high"] == "" for r in tails)
    assert all("few items per variant (4 < 10)" in r["check"] for r in body)
    assert all(r["check"].startswith("refused: 4 items a variant cannot place a variant in the tails (fewer than "
                                     "10): a budget of 100% of the grid gives 10") for r in tails)
    with open(finished / "results/tables/variation_budget_sensitivity.csv", encoding="utf-8") as handle:
        tests = list(csv.DictReader(handle))
    # the cross-lingual test reads the spread, refused in every language: no test, and the row says why
    assert [t["n_languages"] for t in tests] == ["0"] and {"rho_low", "rho_high"} <= set(tests[0])
    assert "no spread in eng_Latn, hin_Deva, jpn_Jpan: left out" in tests[0]["note"]
    report = (finished / "results/report.html").read_text(encoding="utf-8")
    assert '<section id="variation-budget">' in report and "24 of 48 cells (50%)" in report
    assert "few items per variant (4 &lt; 10) (mean, q25, q50, q75)" in report
    assert ">refused<" in report and "(q05, q95, best, worst, spread)" in report


def test_the_leaderboard_shows_no_subset_as_a_score(finished):
    with open(finished / "results/leaderboard.csv", encoding="utf-8") as handle:
        templates = {r["template"] for r in csv.DictReader(handle)}
    assert templates == {"paper"}
    markdown = (finished / "results/leaderboard.md").read_text(encoding="utf-8")
    assert "## Budgeted variant sets (not in the tables above)" in markdown
    assert "formatspread~" not in markdown.split("## Budgeted variant sets")[0]
    metrics = json.loads((finished / "results/metrics.json").read_text(encoding="utf-8"))
    assert set(metrics["tiny-llama"]) == {"belebele"}


def test_an_edited_template_reruns_only_its_own_jobs(finished):
    template = finished / "prompts/belebele/paper.yaml"
    template.write_text(template.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    out = snakemake(finished, "-n", "--", "results/leaderboard.csv").stdout
    jobs = {}
    for line in out.split("Job stats:")[1].splitlines()[3:]:
        name, count = line.split()
        jobs[name] = int(count)
        if name == "total":
            break
    assert jobs == {"render_prompts_belebele": 1, "generate_belebele": 1, "score_belebele": 1, "leaderboard": 1,
                    "total": 4}
