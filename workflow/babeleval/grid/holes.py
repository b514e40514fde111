"""A grid with holes: which (model, task, template) runs, and why each one that does not is left out.

A model entry may name the tasks it runs (``tasks: [belebele]``) or the templates of each
(``tasks: {belebele: [instruct]}``); without ``tasks`` it runs the whole grid; with ``tasks: []`` none of it (a model
that only extracts answers for the templates naming it, ``babeleval.score.extraction``). Of what it is asked to run,
a template whose mode the model's backend cannot answer (its registry entry says which and why:
``babeleval.generate.backends``) is left out too. Every pair left out carries its reason; the planner prints
them, writes them to ``results/plan/omitted.tsv`` (``paths.PLAN_OMITTED``), and the leaderboard and run summary say them.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..core import paths
from ..core.errors import ConfigError
from ..generate.backends import get_backend
from ..generate.backends.config import ModelConfig
from .records import Omission, TaskEntry

# columns of results/plan/omitted.tsv
OMITTED_COLUMNS = ("model", "task", "language", "template", "reason")


def asked_templates(model: str, entry: Mapping[str, Any], tasks: Mapping[str, TaskEntry],
                    source_file: str) -> dict[str, tuple[str, ...]]:
    """task -> the templates a model entry asks for (every task and template where it names none)."""
    wanted = entry.get("tasks")
    if wanted is None:
        return {name: tuple(task.templates) for name, task in tasks.items()}
    if isinstance(wanted, list):
        wanted = dict.fromkeys(wanted)
    where = f"{source_file}: models.{model}.tasks"
    asked = {}
    for name, templates in wanted.items():
        if name not in tasks:
            raise ConfigError(f"{where}: task '{name}' is not in the grid's tasks ({', '.join(tasks)}); add it under "
                              "tasks, or leave it out here")
        known = tasks[name].templates
        unknown = [t for t in templates or () if t not in known]
        if unknown:
            raise ConfigError(f"{where}.{name}: template{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
                              f"not in tasks.{name} (its templates and drawn variants: {', '.join(known)})")
        asked[name] = tuple(t for t in known if templates is None or t in templates)
    return asked


def plan_runs(models: Mapping[str, ModelConfig], entries: Mapping[str, Mapping[str, Any]],
              tasks: Mapping[str, TaskEntry], source_file: str
              ) -> tuple[dict[str, dict[str, tuple[str, ...]]], tuple[Omission, ...]]:
    """model -> task -> the templates it runs (tasks it runs nothing of left out), and every pair left out."""
    runs: dict[str, dict[str, tuple[str, ...]]] = {}
    omitted = []
    for model, config in models.items():
        asked = asked_templates(model, entries[model], tasks, source_file)
        cannot = get_backend(config.backend).unsupported_modes(config)
        runs[model] = {}
        if entries[model].get("tasks") == []:
            continue  # an extractor model only (babeleval.grid.entries.check_extractors): nothing of the grid is its
        for name, task in tasks.items():
            chosen = []
            for template_name, template in task.templates.items():
                if template_name not in asked.get(name, ()):
                    omitted.append(Omission(model, name, template_name, f"not asked for (models.{model}.tasks)"))
                elif template.mode in cannot:
                    omitted.append(Omission(model, name, template_name, cannot[template.mode]))
                else:
                    chosen.append(template_name)
            if chosen:
                runs[model][name] = tuple(chosen)
    if not any(runs.values()):
        raise ConfigError(f"{source_file}: no model runs any template: "
                          + "; ".join(f"{o.model} {o.task}/{o.template}: {o.reason}" for o in omitted[:5]))
    return runs, tuple(omitted)


def omitted_rows(omitted: tuple[Omission, ...], tasks: Mapping[str, TaskEntry]) -> list[tuple[str, ...]]:
    """The rows of results/plan/omitted.tsv: one per (model, task, language, template) left out."""
    return [(o.model, o.task, language, o.template, o.reason) for o in omitted for language in tasks[o.task].languages]


def omitted_lines(omitted: tuple[Omission, ...], tasks: Mapping[str, TaskEntry]) -> list[str]:
    """What the planner prints: one line per (model, reason), with the task/templates it covers."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for o in omitted:
        grouped.setdefault((o.model, o.reason), []).append(f"{o.task}/{o.template}")
    count = sum(len(tasks[o.task].languages) for o in omitted)
    lines = [f"babeleval: {count} combination{'s' if count != 1 else ''} left out of the grid ({paths.PLAN_OMITTED}):"]
    for (model, reason), pairs in grouped.items():
        shown = ", ".join(pairs[:6]) + (f" and {len(pairs) - 6} more" if len(pairs) > 6 else "")
        lines.append(f"  {model}: {shown}: {reason}")
    return lines
