"""A combination's resolved record as a scoring job gets it (``CombinationRecord.as_json``), and its prompt record as
the rendering job gets it, for tests that score or render one template outside a grid: its task entry of that
template and language alone, resolved by the planner's own rules (``babeleval.grid.resolve``) against the tests'
grid's model and decoding presets (``TINY_GRID``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from conftest import ROOT, TINY_GRID

from babeleval.generate.backends import model_config
from babeleval.generate.fingerprint import output_settings
from babeleval.grid import resolve
from babeleval.grid.records import TaskEntry
from babeleval.prompts.record import PromptRecord
from babeleval.prompts.templates import load_template
from babeleval.tasks import get_task


def record_for(task: str, language: str, template: str, root: str | Path = ROOT, *, model: str = "m",
               options: dict[str, Any] | None = None) -> dict[str, Any]:
    """The record of (``model``, task, language, template), the template read from ``root``; ``options``: the task
    entry's own keys (translation's partner), the task's defaults where not given."""
    grid = yaml.safe_load(TINY_GRID.read_text(encoding="utf-8"))
    entry = _entry(task, language, template, root, options)
    config = model_config(grid["models"]["tiny-llama"])
    prompts = resolve.prompt_record(entry, template, language, grid["seed"])
    return resolve.combination_record(model, config, output_settings(config), entry, prompts, grid["decoding"],
                                      grid["seed"]).as_json()


def prompt_record_for(task: str, language: str, template: str, root: str | Path = ROOT) -> PromptRecord:
    """The prompt record of (task, language, template) as the rendering job gets it: what a test that renders one
    template's prompts passes to ``build_requests`` (its few-shot plan), as ``requests_for`` does in the job."""
    seed = yaml.safe_load(TINY_GRID.read_text(encoding="utf-8"))["seed"]
    return resolve.prompt_record(_entry(task, language, template, root, None), template, language, seed)


def _entry(task: str, language: str, template: str, root: str | Path, options: dict[str, Any] | None) -> TaskEntry:
    """A task entry of that template and language alone."""
    return TaskEntry(name=task, languages=(language,), templates={template: load_template(task, template, root)},
                     source={}, limit=None, options=get_task(task).options(options), metric_options={})
