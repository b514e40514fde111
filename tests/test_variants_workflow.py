"""Prompt variants through the real workflow: per-variant targets, one shared-prefix job per family, the
variation tables, and a new variant costing only its own jobs."""

import csv

import pytest
import yaml

from conftest import copy_workflow, snakemake

pytestmark = [pytest.mark.slow, pytest.mark.workflow]

@pytest.fixture(scope="module")
def finished(tmp_path_factory, built_tiny_model):
    workdir = copy_workflow(tmp_path_factory.mktemp("variants") / "wf", tasks=("belebele",), built=built_tiny_model)
    params = yaml.safe_load((workdir / "params.yaml").read_text(encoding="utf-8"))
    params["tasks"]["belebele"].update(languages=["eng_Latn", "hin_Deva", "jpn_Jpan"], limit=4,
                                       templates=["formatspread", "formatspread~enum=native~order=rev"],
                                       variants={"formatspread": {"sample": 2, "axes": {"enum": ["upper", "num"],
                                                                                       "sep": ["colon", "dash"]}}})
    (workdir / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")
    snakemake(workdir)  # the default target: the report includes the variation section
    return workdir


def test_each_variant_has_its_own_files_and_reads_the_familys_answers(finished):
    raw = finished / "results/raw/tiny-llama/belebele/jpn_Jpan"
    names = sorted(p.stem for p in raw.glob("formatspread*.jsonl"))
    assert "formatspread" in names and "formatspread~enum=native~order=rev" in names and len(names) == 4
    prompts = (finished / "results/prompts/belebele/jpn_Jpan/formatspread~enum=native~order=rev.jsonl").read_text(
        encoding="utf-8")
    assert '" ア"' in prompts  # the script's own enumerators, scored as continuations
    shared = finished / "results/usage/tiny-llama/belebele/shared_prefix/formatspread.json"
    assert shared.is_file()
    for log in (finished / "results/logs/generate/tiny-llama/belebele").glob("formatspread*.log"):
        text = log.read_text(encoding="utf-8")
        assert "cache: 12 of 12 requests answered, 0 to compute" in text, log.name
        assert "model loaded" not in text


def test_variation_tables(finished):
    with open(finished / "results/tables/variation_spread.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert {r["language"] for r in rows} == {"eng_Latn", "hin_Deva", "jpn_Jpan"}
    assert all(r["n_variants"] == "4" and r["n_items"] == "4" for r in rows)
    with open(finished / "results/tables/variation_sensitivity.csv", encoding="utf-8") as handle:
        assert [r["n_languages"] for r in csv.DictReader(handle)] == ["3"]
    assert (finished / "results/plots/variation.png").stat().st_size > 0
    report = (finished / "results/report.html").read_text(encoding="utf-8")
    assert '<section id="variation">' in report and 'href="#variation"' in report


def test_a_speed_only_model_setting_reruns_nothing(finished):
    """The shared-prefix and generation jobs read the model's entry from the run's config, their params hold only
    the settings that change outputs: a new batch size reruns no job."""
    params_file = finished / "params.yaml"
    before = params_file.read_text(encoding="utf-8")
    params = yaml.safe_load(before)
    params["models"]["tiny-llama"]["batch_size"] = 3
    params_file.write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")
    try:
        out = snakemake(finished, "-n").stdout
    finally:
        params_file.write_text(before, encoding="utf-8")
    assert "Nothing to be done" in out, out


def test_a_new_variant_runs_only_its_own_jobs(finished):
    params_file = finished / "params.yaml"
    params = yaml.safe_load(params_file.read_text(encoding="utf-8"))
    params["tasks"]["belebele"]["templates"].append("formatspread~choice=paren")
    params_file.write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")
    out = snakemake(finished, "-n", "--", "results/tables/variation_spread.csv").stdout
    jobs = {}
    for line in out.split("Job stats:")[1].splitlines()[3:]:  # the table under the header, up to its total
        name, count = line.split()
        jobs[name] = int(count)
        if name == "total":
            break
    # one job of each kind for the new variant (every language), then the leaderboard, through which the
    # variation analysis waits for every raw file (workflow/rules/analysis.smk)
    assert jobs == {"render_prompts_belebele": 1, "shared_prefix_belebele": 1, "generate_belebele": 1,
                    "score_belebele": 1, "leaderboard": 1, "variation_analysis": 1, "total": 6}
