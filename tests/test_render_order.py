"""Rendering jobs start longest first: a few-shot template's job before a zero-shot one's (grid.rules.render_priority)."""

import re

import pytest

from conftest import copy_workflow, snakemake

from babeleval.grid import rules
from babeleval.grid.params import load_params

pytestmark = pytest.mark.workflow


def test_the_few_shot_templates_are_rendered_first(tmp_path):
    workdir = copy_workflow(tmp_path / "wf", tasks=("belebele",))
    grid = load_params(workdir / "params.yaml", workdir)
    shots = {name: rules.render_priority(grid, "belebele", name) for name in grid.tasks["belebele"].templates}
    assert shots == {"paper": 5, "blog": 5, "instruct": 0}
    # one core: the jobs run one at a time, in the order the scheduler picks them
    proc = snakemake(workdir, "--cores", "1", "--until", "render_prompts_belebele")
    started = re.findall(r"rule render_prompts_belebele:\n(?:    .*\n)*?    wildcards: template=(\S+)", proc.stdout + proc.stderr)
    assert sorted(started) == sorted(shots)
    assert started[-1] == "instruct"
