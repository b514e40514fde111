"""Names that YAML or pandas would read as something else (`0.2`, `1e3`, `true`, `null`, `007`) stay the same
text in every table, plot and report of a whole run.

The grid: Belebele with templates named `0.2`, `007`, `true` and `null` (copies of the bundled templates) and a
model named `1e3`, quoted in params.yaml as a user writes such names.
"""

from __future__ import annotations

import csv
import json
import shutil

import pytest
import yaml

from conftest import copy_workflow, snakemake

pytestmark = [pytest.mark.slow, pytest.mark.workflow]

TEMPLATES = {"0.2": "paper", "007": "instruct", "true": "blog", "null": "paper"}
MODEL = "1e3"


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory, built_tiny_model):
    workdir = copy_workflow(tmp_path_factory.mktemp("names") / "wf", tasks=("belebele",), built=built_tiny_model)
    for name, source in TEMPLATES.items():
        shutil.copy2(workdir / f"prompts/belebele/{source}.yaml", workdir / f"prompts/belebele/{name}.yaml")
    params = yaml.safe_load((workdir / "params.yaml").read_text(encoding="utf-8"))
    params["models"] = {MODEL: params["models"]["tiny-llama"]}
    params["tasks"]["belebele"].update(templates=list(TEMPLATES), languages=["eng_Latn", "jpn_Jpan"], limit=2)
    text = yaml.safe_dump(params, sort_keys=False, allow_unicode=True)
    assert "'0.2'" in text and "'null'" in text  # quoted where YAML would read another type
    (workdir / "params.yaml").write_text(text, encoding="utf-8")
    snakemake(workdir)
    return workdir


def names_in(path, column):
    with open(path, encoding="utf-8", newline="") as f:
        return {row[column] for row in csv.DictReader(f)}


def test_leaderboard_and_metrics_keep_the_names(finished_run):
    results = finished_run / "results"
    assert names_in(results / "leaderboard.csv", "template") == set(TEMPLATES)
    assert names_in(results / "leaderboard.csv", "model") == {MODEL}
    metrics = json.loads((results / "metrics.json").read_text(encoding="utf-8"))
    assert set(metrics) == {MODEL} and set(metrics[MODEL]) == {"belebele"}
    board = (results / "leaderboard.md").read_text(encoding="utf-8")
    for name in TEMPLATES:  # a table per template, headed by its name as written
        assert f"### template `{name}`" in board, name
    assert f"| {MODEL} " in board and "| 1000" not in board  # the model's row, not tabulate's number


@pytest.mark.parametrize("table", ["tables/by_template.csv", "analysis/template_sensitivity.csv",
                                   "analysis/significance_templates.csv", "analysis/parse_failures.csv"])
def test_summary_and_analysis_tables_keep_the_names(finished_run, table):
    path = finished_run / "results" / table
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows, table
    for column in ("model", "template", "template_a", "template_b"):
        if column in rows[0]:
            values = {row[column] for row in rows}
            allowed = {MODEL} if column == "model" else set(TEMPLATES)
            assert values <= allowed, (table, column, values)


def test_report_and_plots_show_the_names(finished_run):
    report = (finished_run / "results/report.html").read_text(encoding="utf-8")
    for name in [*TEMPLATES, MODEL]:
        assert f">{name}<" in report or f" {name} " in report or f"'{name}'" in report, name
    assert list((finished_run / "results/plots/belebele").glob("*.png"))
