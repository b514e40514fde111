"""The console of a run: one line when a job starts and one when it ends (the default profile's logger plugin,
workflow/snakemake_logger_plugin_babeleval), Snakemake's full job blocks in its log file only; errors and the run
summary on the console as they are; the blocks back with --logger-babeleval-full, and in a dry run.

Real Snakemake on a small grid (Belebele, two languages, one template, four items), with the repository's
profiles/ as a clone has it.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, SHIPPED, copy_workflow, snakemake

pytestmark = [pytest.mark.slow, pytest.mark.workflow]

BLOCK = re.compile(r"^(local)?rule \S+:$", re.M)  # the first line of a job block
PROGRESS = re.compile(r"^\[(\d+)/(\d+)\] (start|done) (\S+)(?: (\S+))?$", re.M)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, built_tiny_model) -> Path:
    # the shipped layout: the console lines name each template's generation and scoring job
    workdir = copy_workflow(tmp_path_factory.mktemp("console") / "wf", tasks=("belebele",), built=built_tiny_model,
                            generation_job=SHIPPED)
    shutil.copytree(ROOT / "profiles", workdir / "profiles")
    params = yaml.safe_load((workdir / "params.yaml").read_text(encoding="utf-8"))
    params["tasks"]["belebele"].update(languages=["eng_Latn", "jpn_Jpan"], templates=["paper"], limit=4)
    (workdir / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    return workdir


@pytest.fixture(scope="module")
def first_run(workdir) -> dict:
    proc = snakemake(workdir)
    [log] = sorted((workdir / ".snakemake/log").glob("*.snakemake.log"))
    return {"console": proc.stdout + proc.stderr, "log": log.read_text(encoding="utf-8")}


def test_one_line_per_job_start_and_end_and_no_blocks(first_run):
    console = first_run["console"]
    assert not BLOCK.search(console), console
    assert "Finished jobid" not in console and "steps (" not in console and "Workflow ID" not in console, console
    lines = PROGRESS.findall(console)
    [total] = {int(line[1]) for line in lines}
    starts = [line for line in lines if line[2] == "start"]
    ends = [line for line in lines if line[2] == "done"]
    assert len(starts) == len(ends) == total, console
    # each job once, numbered in order; a start and its end name the same rule and combination
    assert [int(line[0]) for line in starts] == [int(line[0]) for line in ends] == list(range(1, total + 1)), console
    assert sorted(line[3:] for line in starts) == sorted(line[3:] for line in ends), console
    assert ("score_belebele", "tiny-llama/paper") in {line[3:] for line in starts}, console
    assert f"{total} jobs to run" in console
    assert "babeleval: run finished" in console  # the run summary
    # the package's own lines name their combination
    assert re.search(r"\[prepare_data belebele/eng_Latn\] INFO \S+: \d+ items", console), console


def test_the_log_file_keeps_every_block(first_run):
    blocks = BLOCK.findall(first_run["log"])
    total = int(PROGRESS.search(first_run["console"]).group(2))
    assert len(blocks) == total, first_run["log"][:3000]
    assert len(re.findall(r"^Finished jobid: \d+", first_run["log"], re.M)) == total


def test_full_blocks_on_request_and_in_a_dry_run(workdir, first_run):
    dry = snakemake(workdir, "-n", "--forcerun", "item_difficulty")
    assert BLOCK.search(dry.stdout + dry.stderr), dry.stdout + dry.stderr  # the plan is the blocks
    full = snakemake(workdir, "--forcerun", "item_difficulty", "--until", "item_difficulty", "--logger-babeleval-full")
    console = full.stdout + full.stderr
    assert BLOCK.search(console) and "Finished jobid" in console and not PROGRESS.search(console), console


def test_a_failed_job_reaches_the_console(workdir, first_run):
    script = workdir / "workflow/scripts/leaderboard.py"
    script.write_text('raise SystemExit("leaderboard broken on purpose")\n' + script.read_text(encoding="utf-8"))
    (workdir / "results/leaderboard.csv").unlink()
    proc = snakemake(workdir, check=False)
    console = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "[1/" in console and "start leaderboard" in console, console
    assert "leaderboard broken on purpose" in console and "Error in rule leaderboard:" in console, console
    assert "babeleval: run FAILED" in console and "failed: rule leaderboard" in console, console
    assert "done leaderboard" not in console
