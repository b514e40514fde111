"""The whole workflow on the tiny model, in a temporary copy: outputs, incrementality, a new language."""

import csv
import json
import re

import pytest
import yaml

from conftest import snakemake

pytestmark = [pytest.mark.slow, pytest.mark.workflow]


def planned_jobs(workdir):
    """(rule, wildcards) of every job a dry run plans."""
    out = snakemake(workdir, "-n").stdout
    jobs = []
    for block in re.split(r"\n(?=\[.*\]\n(?:local)?rule )", out):
        rule = re.search(r"^(?:local)?rule (\S+):", block, re.M)
        if rule:
            wildcards = re.search(r"^\s+wildcards: (.*)$", block, re.M)
            jobs.append((rule.group(1), dict(kv.split("=", 1) for kv in wildcards.group(1).split(", ")) if wildcards else {}))
    return jobs


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    from conftest import SHIPPED, copy_workflow

    # the shipped layout: one generation job a template, so that an edited template reruns only its own
    workdir = copy_workflow(tmp_path_factory.mktemp("e2e") / "wf", generation_job=SHIPPED)
    snakemake(workdir)
    return workdir


def test_outputs(finished_run):
    results = finished_run / "results"
    rows = list(csv.DictReader((results / "leaderboard.csv").open(encoding="utf-8")))
    assert list(rows[0])[:8] == ["model", "task", "language", "template", "metric", "scale", "value", "n"]
    combos = {(r["model"], r["task"], r["language"], r["template"]) for r in rows if r["task"] == "belebele"}
    assert len(combos) == 9  # 1 model x 3 languages x 3 templates
    metrics = {(r["template"], r["metric"]) for r in rows}
    assert {("paper", "acc"), ("paper", "acc_norm"), ("instruct", "parse_failure_rate"), ("blog", "acc")} <= metrics
    headline = json.loads((results / "metrics.json").read_text())  # what `dvc exp show` lays out
    assert set(headline["tiny-llama"]["belebele"]) == {"acc"}
    assert {r["language"] for r in rows if r["task"] == "belebele"} == {"eng_Latn", "jpn_Jpan", "hin_Deva"}
    assert "| model" in (results / "leaderboard.md").read_text()

    raw = [json.loads(line) for line in (results / "raw/tiny-llama/belebele/hin_Deva/instruct.jsonl").open()]
    assert len(raw) == 24
    for key in ["id", "response", "parsed_answer", "gold", "correct", "parsed", "parse_error"]:
        assert key in raw[0]
    paper = [json.loads(line) for line in (results / "raw/tiny-llama/belebele/jpn_Jpan/paper.jsonl").open()]
    assert len(paper[0]["loglikelihoods"]) == 4 and "prompt" not in paper[0]
    # the prompt's text is in the generations file, under the same id
    generated = json.loads((results / "generations/tiny-llama/belebele/jpn_Jpan/paper.jsonl").open().readline())
    assert generated["id"] == paper[0]["id"] and generated["prompt"].startswith("P: ")
    blog = json.loads((results / "scores/tiny-llama/belebele/eng_Latn/blog.json").read_text())
    assert blog["n"] == 19 and blog["settings"]["temperature"] == 0.7  # first five rows are exemplars


FAMILY_METRICS = {
    ("jcommonsenseqa", "jpn_Jpan", "0.6"): {"acc", "acc_norm"},
    ("jnli", "jpn_Jpan", "0.2"): {"acc", "acc_norm", "balanced_acc", "macro_f1"},
    ("jsquad", "jpn_Jpan", "0.1"): {"exact_match", "f1", "parse_failure_rate"},
    ("translation_to", "hin_Deva", "en_zeroshot"): {"bleu", "chrf", "parse_failure_rate"},
    ("topic_classification", "jpn_Jpan", "en_zeroshot"): {"acc", "balanced_acc", "macro_f1", "parse_failure_rate"},
    ("mmlu", "jpn_Jpan", "en_zeroshot"): {"acc", "parse_failure_rate"},
    ("mgsm", "eng_Latn", "en_zeroshot"): {"acc", "parse_failure_rate"},
}


@pytest.mark.parametrize("combination", sorted(FAMILY_METRICS))
def test_every_task_family_is_scored(finished_run, combination):
    task, language, template = combination
    scores = json.loads((finished_run / f"results/scores/tiny-llama/{task}/{language}/{template}.json").read_text())
    assert set(scores["metrics"]) == FAMILY_METRICS[combination]
    assert scores["n"] >= 3 and scores["parse_failures"] == sum(
        not json.loads(line)["parsed"]
        for line in (finished_run / f"results/raw/tiny-llama/{task}/{language}/{template}.jsonl").open())
    if task == "translation_to":
        assert "tok:" in scores["signatures"]["bleu"] and "chrf" in scores["signatures"]
        raw = json.loads((finished_run / f"results/raw/tiny-llama/{task}/{language}/{template}.jsonl").open().readline())
        assert raw["correct"] is None


def test_nothing_to_do_after_a_complete_run(finished_run):
    assert "Nothing to be done" in snakemake(finished_run, "-n").stdout


def test_editing_a_template_reruns_only_its_jobs(finished_run):
    template = finished_run / "prompts/belebele/instruct.yaml"
    original = template.read_text(encoding="utf-8")
    template.write_text(original.replace("output the letter", "output only the letter"), encoding="utf-8")
    try:
        jobs = planned_jobs(finished_run)
    finally:
        template.write_text(original, encoding="utf-8")
    per_combination = [(rule, wc) for rule, wc in jobs if wc]
    assert per_combination and all(wc["template"] == "instruct" for _, wc in per_combination)
    # one job each: rendering every language, generating, scoring every language (workflow/rules/score.smk)
    assert sorted(rule for rule, _ in per_combination) == ["generate_belebele", "render_prompts_belebele",
                                                            "score_belebele"]


@pytest.mark.parametrize("setting, value, reruns", [("batch_size", 3, False), ("device", "auto", False),
                                                     ("add_bos_token", True, True)])
def test_a_model_setting_reruns_generation_exactly_when_it_changes_outputs(finished_run, setting, value, reruns):
    # which settings change outputs: their roles in babeleval.generate.backends.config (tests/test_model_settings.py)
    params_file = finished_run / "params.yaml"
    original = params_file.read_text(encoding="utf-8")
    params = yaml.safe_load(original)
    params["models"]["tiny-llama"][setting] = value
    params_file.write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")
    try:
        jobs = planned_jobs(finished_run)
    finally:
        params_file.write_text(original, encoding="utf-8")
    rules = {rule for rule, _ in jobs}
    assert any(rule.startswith("generate_") for rule in rules) == reruns, sorted(rules)
    assert any(rule.startswith("score_") for rule in rules) == reruns


def test_adding_a_language_runs_only_what_it_needs(finished_run):
    params_file = finished_run / "params.yaml"
    params = yaml.safe_load(params_file.read_text(encoding="utf-8"))
    params["tasks"]["belebele"]["languages"].append("fra_Latn")
    params_file.write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")
    old_raw = finished_run / "results/raw/tiny-llama/belebele/eng_Latn/paper.jsonl"
    before = old_raw.read_bytes()

    jobs = planned_jobs(finished_run)
    for rule, wc in jobs:
        if rule == "prepare_data":
            assert wc["language"] == "fra_Latn", (rule, wc)
    # each template's rendering, generation and scoring job covers every language: rerun once per template; the
    # earlier languages' prompts are rendered to the same bytes and answered from the cache
    assert sorted(rule for rule, wc in jobs if wc.get("template")) == sorted(
        ["render_prompts_belebele", "generate_belebele", "score_belebele"] * 3)

    snakemake(finished_run, "--", "results/leaderboard.csv")  # what the test reads; the analysis after it aside
    assert old_raw.read_bytes() == before  # earlier languages: rescored to the same bytes, nothing regenerated
    log = (finished_run / "results/logs/generate/tiny-llama/belebele/paper.log").read_text()
    assert "cache: 72 of 96 requests answered, 24 to compute" in log
    rows = list(csv.DictReader((finished_run / "results/leaderboard.csv").open(encoding="utf-8")))
    assert "fra_Latn" in {r["language"] for r in rows if r["task"] == "belebele"}


def belebele_grid(dest, generation_job, built):
    from conftest import copy_workflow

    workdir = copy_workflow(dest, tasks=("belebele",), built=built, generation_job=generation_job)
    params = yaml.safe_load((workdir / "params.yaml").read_text(encoding="utf-8"))
    params["tasks"]["belebele"].update(languages=["eng_Latn", "hin_Deva"], limit=3)
    (workdir / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return workdir


# what the comparison reads: the analysis after the leaderboard is the same in both layouts
SCORED = ("--", "results/metrics.json", "results/leaderboard.csv")


def test_one_generation_job_per_model_and_task_loads_the_model_once(tmp_path, built_tiny_model):
    per_template = belebele_grid(tmp_path / "per_template", "template", built_tiny_model)
    per_task = belebele_grid(tmp_path / "per_task", "task", built_tiny_model)
    snakemake(per_template, *SCORED)
    assert sum(rule == "generate_belebele" for rule, _ in planned_jobs(per_task)) == 1
    snakemake(per_task, *SCORED)
    log = per_task / "results/logs/generate/tiny-llama/belebele.log"
    assert log.read_text(encoding="utf-8").count("model load 1 for 3 template(s)") == 1
    # the same files, per combination, byte for byte
    for name in ("results/metrics.json", "results/leaderboard.csv"):
        assert (per_task / name).read_bytes() == (per_template / name).read_bytes(), name
    generations = sorted(p.relative_to(per_task) for p in (per_task / "results/generations").rglob("*.jsonl"))
    assert len(generations) == 6
    for path in generations:
        assert (per_task / path).read_bytes() == (per_template / path).read_bytes(), path

    # an edited template: the job reruns, the model is asked only for that template's prompts
    template = per_task / "prompts/belebele/instruct.yaml"
    template.write_text(template.read_text(encoding="utf-8").replace("output the letter", "output only the letter"),
                        encoding="utf-8")
    paper = (per_task / "results/generations/tiny-llama/belebele/eng_Latn/paper.jsonl").read_bytes()
    snakemake(per_task, *SCORED)
    answered = re.findall(r"cache: (\d+) of (\d+) requests answered", log.read_text(encoding="utf-8"))
    [blog, instruct, paper_answered] = answered
    assert blog[0] == blog[1] and instruct[0] == "0" and paper_answered[0] == paper_answered[1], answered
    assert (per_task / "results/generations/tiny-llama/belebele/eng_Latn/paper.jsonl").read_bytes() == paper
