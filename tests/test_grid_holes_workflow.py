"""A grid with holes in a real Snakemake run: a chat API model beside a local one on the Belebele grid, and a run
whose job fails under --keep-going."""

import csv
import json
import re

import pytest
import yaml
from conftest import copy_workflow, snakemake
from fake_openai import FakeOpenAI

pytestmark = [pytest.mark.slow, pytest.mark.workflow]

KEY_ENV = "BABELEVAL_HOLES_WF_KEY"


def write_params(workdir, change):
    params = yaml.safe_load((workdir / "params.yaml").read_text(encoding="utf-8"))
    change(params)
    (workdir / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")


def test_a_chat_api_model_joins_the_grid_and_every_output_says_what_it_left_out(tmp_path, monkeypatch, built_tiny_model):
    workdir = copy_workflow(tmp_path / "wf", tasks=("belebele",), built=built_tiny_model)
    with FakeOpenAI() as server:
        def change(params):
            params["models"]["api-chat"] = {"backend": "openai", "model": "chat-model", "base_url": server.base_url,
                                            "api_key_env": KEY_ENV, "chat": True}
            params["tasks"]["belebele"].update(languages=["eng_Latn", "jpn_Jpan"], limit=6)
        write_params(workdir, change)
        monkeypatch.setenv(KEY_ENV, "sk-holes")
        proc = snakemake(workdir)
    said = proc.stdout + proc.stderr
    # planning: on the console before any job
    assert ("babeleval: 2 combinations left out of the grid (results/plan/omitted.tsv):\n"
            "  api-chat: belebele/paper: log-likelihood template on a chat endpoint") in said
    first_job = re.search(r"^(?:local)?rule \S+:$", said, re.M)
    assert first_job and said.index("left out of the grid") < first_job.start(), said[:3000]

    with (workdir / "results/plan/omitted.tsv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    assert [(r["model"], r["task"], r["language"], r["template"]) for r in rows] == [
        ("api-chat", "belebele", "eng_Latn", "paper"), ("api-chat", "belebele", "jpn_Jpan", "paper")]
    assert all("chat endpoint" in r["reason"] for r in rows)

    with (workdir / "results/leaderboard.csv").open(encoding="utf-8") as handle:
        board = list(csv.DictReader(handle))
    assert {r["template"] for r in board if r["model"] == "api-chat"} == {"instruct", "blog"}
    assert {r["template"] for r in board if r["model"] == "tiny-llama"} == {"paper", "instruct", "blog"}
    md = (workdir / "results/leaderboard.md").read_text(encoding="utf-8")
    section = md[md.index("## Left out of the grid"):]
    [row] = [line for line in section.splitlines() if "api-chat" in line]
    assert [cell.strip() for cell in row.strip("|").split("|")][:4] == ["belebele", "paper", "api-chat",
                                                                       "2: eng_Latn, jpn_Jpan"]
    assert "log-likelihood template on a chat endpoint" in row
    # like with like: tiny-llama's headline leaves its paper template out, as api-chat has none to compare it with
    assert "belebele, tiny-llama: left out of the headline, so that every model is averaged over the same cells: " \
           "template paper (2 languages)" in md
    board_means = {}
    for r in board:
        if r["metric"] == "acc" and r["template"] in ("instruct", "blog"):
            board_means.setdefault(r["model"], []).append(float(r["value"]))
    headline = json.loads((workdir / "results/headline.json").read_text(encoding="utf-8"))
    assert {model: round(sum(v) / len(v), 2) for model, v in board_means.items()} == \
        {model: tasks["belebele"] for model, tasks in headline.items()}
    report = (workdir / "results/report.html").read_text(encoding="utf-8")
    assert 'id="omitted-table"' in report and "2: eng_Latn, jpn_Jpan" in report

    # the run summary: finished, and how many were left out
    assert "babeleval: run finished" in said
    assert "left out of the grid: 2 combinations, each with its reason in results/plan/omitted.tsv" in said
    assert (workdir / "results/report.html").exists()


def test_a_failed_job_under_keep_going_exits_non_zero_naming_it_and_the_stale_outputs(tmp_path, built_tiny_model):
    workdir = copy_workflow(tmp_path / "wf", tasks=("belebele",), built=built_tiny_model)
    write_params(workdir, lambda params: params["tasks"]["belebele"].update(languages=["eng_Latn", "jpn_Jpan"],
                                                                            templates=["paper", "instruct"], limit=4))
    snakemake(workdir)
    # three passages of two questions: too few exemplar candidates for the paper template's five shots; found by its
    # rendering job, while the instruct template's jobs run on (--keep-going)
    sample = workdir / "data/samples/belebele/eng_Latn.jsonl"
    sample.write_text("".join(sample.read_text(encoding="utf-8").splitlines(keepends=True)[:6]), encoding="utf-8")
    proc = snakemake(workdir, "--keep-going", check=False)
    said = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "babeleval: run FAILED" in said
    assert "  failed: rule render_prompts_belebele" in said
    stale = said[said.index("not brought up to date"):].splitlines()[0]
    for target in ("results/leaderboard.csv", "results/leaderboard.md", "results/report.html"):
        assert target in stale
