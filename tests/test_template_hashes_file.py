"""``results/template_hashes.yaml`` is committed (DVC's params of the evaluate stage, so a fresh clone's first
``dvc exp run`` has them): it must hold the hashes of the default grid's templates as they are now, or the first
experiment shows every template as changed."""

from __future__ import annotations

import subprocess
from types import SimpleNamespace

import yaml

from babeleval.grid import headline, template_hashes
from babeleval.grid.params import validate
from conftest import ROOT


def test_the_committed_hashes_are_the_default_grids(monkeypatch):
    monkeypatch.chdir(ROOT)  # the grid's sources and templates are named relative to the repository
    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    grid = validate(params, source_file="params.yaml")
    committed = yaml.safe_load((ROOT / "results/template_hashes.yaml").read_text(encoding="utf-8"))
    assert committed == template_hashes.template_hashes(grid), (
        "results/template_hashes.yaml is stale: a run rewrites it at its start (`make run`); commit it after")


HASHES = {"belebele": {"instruct": "6648f138", "paper": "5bdd7b3d"}, "jnli": {"0.2": "35388247"},
          "translation_to": {"en_zeroshot": "1657789b", "few_shot": "0c0ffee0"}}


def test_the_edited_template_and_its_task_come_first_and_without_a_baseline_the_order_is_alphabetical():
    committed = {**HASHES, "translation_to": {"en_zeroshot": "1657789b", "few_shot": "aaaaaaaa"}}
    ordered = template_hashes.edited_first(HASHES, committed)
    assert list(ordered) == ["translation_to", "belebele", "jnli"]
    assert list(ordered["translation_to"]) == ["few_shot", "en_zeroshot"]
    assert ordered == HASHES  # the same hashes, only their order changes
    assert list(template_hashes.edited_first(HASHES, HASHES)) == ["belebele", "jnli", "translation_to"]
    assert list(template_hashes.edited_first(HASHES, {})) == ["belebele", "jnli", "translation_to"]
    assert list(template_hashes.edited_first(HASHES, {**HASHES, "mgsm": {"x": "1"}, "jnli": {}})) == [
        "jnli", "belebele", "translation_to"]  # a template new since the baseline is edited too


def test_a_run_reads_the_baseline_from_git_head_and_the_headline_follows_its_task_order(tmp_path):
    assert template_hashes.baseline(tmp_path) == {}  # no git repository: no baseline
    results = tmp_path / "results"
    results.mkdir()
    (results / "template_hashes.yaml").write_text(yaml.safe_dump(HASHES), encoding="utf-8")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "baseline run"]):
        subprocess.run(git + command, cwd=tmp_path, check=True, capture_output=True)
    assert template_hashes.baseline(tmp_path) == HASHES
    edited = {name: dict(templates) for name, templates in HASHES.items()}
    edited["translation_to"]["en_zeroshot"] = "0badf00d"
    grid = SimpleNamespace(tasks={name: SimpleNamespace(templates={n: SimpleNamespace(sha256=v + "0" * 56)
                                                                   for n, v in templates.items()})
                                  for name, templates in edited.items()})
    template_hashes.write(grid, tmp_path)
    assert template_hashes.task_order(tmp_path) == ["translation_to", "belebele", "jnli"]
    metrics = {model: {task: {"acc": 1.0} for task in ("belebele", "jnli", "translation_to")}
               for model in ("a", "b")}
    shown = headline.headline(metrics, template_hashes.task_order(tmp_path))
    assert [list(tasks) for tasks in shown.values()] == [["translation_to", "belebele", "jnli"]] * 2
