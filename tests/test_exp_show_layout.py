"""`dvc exp show` at 120 columns on the default grid (2 models x 8 tasks): the edited template's hash and its task's
headline numbers stay in view, whichever task was edited.

DVC keeps the first metric column and the first param column and folds the rest from the right into `…`; a run
lists the edited templates and their tasks first (``babeleval.grid.template_hashes``). The evaluate stage here
writes the default grid's template hashes and headline numbers as a run does, without computing them (the layout,
not the workflow, is tested: tests/test_experiment_loop.py runs the workflow).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import ROOT

pytestmark = pytest.mark.workflow

STAGE = """\
import json, sys
from babeleval.grid import headline, template_hashes
hashes = template_hashes.edited_first(json.load(open("fixtures/hashes.json")), template_hashes.baseline())
open("results/template_hashes.yaml", "w").write(__import__("yaml").safe_dump(hashes, sort_keys=False))
metrics = json.load(open("fixtures/metrics.json"))
json.dump(headline.headline(metrics, template_hashes.task_order()), open("results/headline.json", "w"))
"""
DVC_YAML = """\
stages:
  evaluate:
    cmd: python stage.py
    always_changed: true
    params:
      - results/template_hashes.yaml:
    metrics:
      - results/headline.json:
          cache: false
          persist: true
"""


def sh(repo: Path, *command: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "workflow"), "DVC_NO_ANALYTICS": "1", "COLUMNS": "120",
           "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    proc = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{command} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


def write_fixtures(repo: Path, hashes: dict, metrics: dict) -> None:
    (repo / "fixtures/hashes.json").write_text(json.dumps(hashes), encoding="utf-8")
    (repo / "fixtures/metrics.json").write_text(json.dumps(metrics), encoding="utf-8")


@pytest.mark.parametrize("edited_task", ["belebele", "translation_to"])
def test_the_edited_hash_and_headlines_stay_in_view_at_120_columns(edited_task, tmp_path):
    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    models, tasks = list(params["models"]), sorted(params["tasks"])
    assert len(models) == 2 and len(tasks) == 8, "the default grid changed: this test lays out its columns"
    hashes = yaml.safe_load((ROOT / "results/template_hashes.yaml").read_text(encoding="utf-8"))
    metrics = {model: {task: {"acc": 20.0 + k + m} for k, task in enumerate(tasks)} for m, model in enumerate(models)}
    repo = tmp_path / "repo"
    (repo / "fixtures").mkdir(parents=True)
    (repo / "results").mkdir()
    (repo / "stage.py").write_text(STAGE, encoding="utf-8")
    (repo / "dvc.yaml").write_text(DVC_YAML, encoding="utf-8")
    write_fixtures(repo, hashes, metrics)
    (repo / "results/template_hashes.yaml").write_text(yaml.safe_dump(hashes), encoding="utf-8")  # DVC reads it first
    sh(repo, "git", "init", "-q", "-b", "main")
    sh(repo, "dvc", "init", "-q")
    sh(repo, "dvc", "repro", "-q")
    sh(repo, "git", "add", "-A")
    sh(repo, "git", "commit", "-q", "-m", "baseline run")

    template = sorted(hashes[edited_task])[-1]
    hashes[edited_task][template] = "0badf00d"
    for model in models:
        metrics[model][edited_task]["acc"] += 7.5
    write_fixtures(repo, hashes, metrics)
    sh(repo, "dvc", "exp", "run", "-q", "-n", "edited")
    table = sh(repo, "dvc", "exp", "show", "--no-pager")

    assert max(len(line) for line in table.splitlines()) <= 120, table
    header = table.splitlines()[1].split()
    assert f"{edited_task}.{template}" in header, table
    assert f"{models[0]}.{edited_task}" in header, table
    [edited_row] = [line for line in table.splitlines() if "[edited]" in line]
    [baseline_row] = [line for line in table.splitlines() if line.split()[:1] == ["main"]]
    assert "0badf00d" in edited_row and "0badf00d" not in baseline_row, table
