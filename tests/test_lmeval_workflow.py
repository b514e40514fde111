"""The 2026 multilingual suite through `lmeval:` in one grid, run by Snakemake on the tiny model: the study grid of
examples/local_vs_translated.yaml (Global-MMLU Lite against INCLUDE, Belebele against Global PIQA) plus the rest of
the suite (AfriMMLU, AfriXNLI, AfriMGSM, MMLU-ProX Lite), each task on its fixture. Every task is scored under its
own headline metric (log-likelihood `acc`, or for a `generate_until` task the exact match of lm-eval's own filter
pipeline), a generated reply that lm-eval's filters cannot read is a named parse failure, and the translated-vs-local
section is written.

Needs the `lmeval` extra (lm-eval 0.4); skipped where it is not installed.
"""

from __future__ import annotations

import csv
import json

import pytest
import yaml

from conftest import ROOT, TINY_GRID, copy_workflow, snakemake

pytest.importorskip("lm_eval")

pytestmark = [pytest.mark.slow, pytest.mark.workflow]

# grid task -> (lm-eval name, its fixture folder under data/samples/lmeval, language)
REST_OF_THE_SUITE = {
    "afrimmlu": ("afrimmlu_direct_yor_prompt_1", "afrimmlu", "yor_Latn"),
    "afrixnli": ("afrixnli_yor_prompt_1", "afrixnli", "yor_Latn"),
    "afrimgsm": ("afrimgsm_yor_prompt_1", "afrimgsm", "yor_Latn"),
    "mmlu_prox": ("mmlu_prox_lite_ja_math", "mmlu_prox_lite", "jpn_Jpan"),
}
GENERATED = {"afrimgsm": "exact_match,flexible-extract", "mmlu_prox": "exact_match,custom-extract"}


@pytest.fixture(scope="module")
def finished(tmp_path_factory, built_tiny_model):
    workdir = copy_workflow(tmp_path_factory.mktemp("lmeval") / "wf", built=built_tiny_model)
    params = yaml.safe_load((ROOT / "examples/local_vs_translated.yaml").read_text(encoding="utf-8"))
    tiny = yaml.safe_load(TINY_GRID.read_text(encoding="utf-8"))["models"]["tiny-llama"]
    params["models"] = {"tiny-llama": {**tiny, "max_new_tokens": 16}}  # the example's grid on the tiny model
    for task, (name, folder, language) in REST_OF_THE_SUITE.items():
        params["tasks"][task] = {"lmeval": name, "languages": [language], "templates": [name],
                                 "source": {"kind": "local", "path": f"data/samples/lmeval/{folder}"}}
    (workdir / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")
    snakemake(workdir)
    return workdir, params


def test_every_task_of_the_suite_is_scored_under_its_own_headline(finished):
    workdir, params = finished
    with open(workdir / "results/leaderboard.csv", encoding="utf-8") as handle:
        board = list(csv.DictReader(handle))
    scored: dict[tuple[str, str], set[str]] = {}
    for row in board:
        scored.setdefault((row["task"], row["language"]), set()).add(row["metric"])
    for task, spec in params["tasks"].items():
        for language in spec["languages"]:
            assert GENERATED.get(task, "acc") in scored.get((task, language), set()), (task, language, scored)
    assert {"exact_match,remove_whitespace", "parse_failure_rate"} <= scored["afrimgsm", "yor_Latn"]  # each pipeline


def test_a_generated_reply_lmevals_filters_cannot_read_is_a_named_parse_failure(finished):
    workdir, _ = finished
    for task, (name, _, language) in REST_OF_THE_SUITE.items():
        if task not in GENERATED:
            continue
        scores = json.loads((workdir / f"results/scores/tiny-llama/{task}/{language}/{name}.json")
                            .read_text(encoding="utf-8"))
        records = [json.loads(line) for line in (workdir / f"results/raw/tiny-llama/{task}/{language}/{name}.jsonl")
                   .read_text(encoding="utf-8").splitlines()]
        failed = [record for record in records if not record["parsed"]]
        # random weights write no number and no "答えは (X) です": a reply lm-eval's filters cannot read is a failure
        # with its reason, and its prediction is none (not lm-eval's "[invalid]" fallback scored as wrong)
        assert failed, records[:2]
        assert all(record["parse_error"] and record["prediction"] is None for record in failed), failed[:2]
        assert scores["metrics"]["parse_failure_rate"] == pytest.approx(len(failed) / len(records))


def test_the_translated_and_local_pairs_are_compared_in_a_table_and_the_report(finished):
    workdir, params = finished
    with open(workdir / "results/tables/local_vs_translated.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    pairs = {(row["translated"], row["local"], row["language"]) for row in rows}
    assert pairs == {("global_mmlu", "include", "jpn_Jpan"), ("belebele", "global_piqa", "jpn_Jpan"),
                     ("belebele", "global_piqa", "hin_Deva")}, pairs
    report = (workdir / "results/report.html").read_text(encoding="utf-8")
    assert "Translated and locally written tests" in report
