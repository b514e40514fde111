"""``results/template_hashes.yaml`` is committed (DVC's params of the evaluate stage, so a fresh clone's first
``dvc exp run`` has them): it must hold the hashes of the default grid's templates as they are now, or the first
experiment shows every template as changed."""

from __future__ import annotations

import yaml

from babeleval.grid import template_hashes
from babeleval.grid.params import validate
from conftest import ROOT, TINY_GRID

def test_the_committed_hashes_are_the_default_grids(monkeypatch):
    monkeypatch.chdir(ROOT)  # the grid's sources and templates are named relative to the repository
    params = yaml.safe_load(TINY_GRID.read_text(encoding="utf-8"))
    grid = validate(params, source_file="params.yaml")
    committed = yaml.safe_load((ROOT / "results/template_hashes.yaml").read_text(encoding="utf-8"))
    assert committed == template_hashes.template_hashes(grid), (
        "results/template_hashes.yaml is stale: a run rewrites it at its start (`make run`); commit it after")
