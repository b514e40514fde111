"""The headline numbers ``dvc exp show`` lays out by default: ``results/headline.json``.

``results/metrics.json`` (babeleval.analysis.leaderboard) holds each model's and task's headline metric under
``<model>.<task>.<metric>``; as DVC's metrics those names alone filled a 120-column terminal. This file holds the same
numbers under the shortest names that still say what they are: ``<task>`` when the grid has one model,
``<model>.<task>`` when it has several (the metric is the task's headline metric, named in metrics.json). A mean
that is over other cells than the other models' (``babeleval.analysis.comparable``) keeps its mark:
``<task>_not_comparable``, a column of its own in ``dvc exp show``. Only this
file is the evaluate stage's metrics (dvc.yaml); metrics.json stays in git beside it with the metric names.
The tasks come in the order of this run's template hashes, the edited tasks first (``babeleval.grid.template_hashes``):
``dvc exp show`` keeps only the first metric column in view at 120 columns.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from ..analysis.comparable import NOT_COMPARABLE
from ..core.jsonl import write_json


def headline(metrics: dict[str, dict[str, dict[str, float]]], task_order: Sequence[str] = ()) -> dict[str, Any]:
    """``{model: {task: {metric: value}}}`` -> ``{task: value}`` for one model, ``{model: {task: value}}`` for more;
    the tasks of ``task_order`` first, in that order."""
    rank = {task: k for k, task in enumerate(task_order)}
    by_model = {model: {task + (NOT_COMPARABLE if metric.endswith(NOT_COMPARABLE) else ""): value
                        for task, named in sorted(tasks.items(), key=lambda kv: rank.get(kv[0], len(rank)))
                        for metric, value in named.items()}
                for model, tasks in metrics.items()}
    if len(by_model) == 1:
        return next(iter(by_model.values()))
    return by_model


def write(metrics_path: str | Path, headline_path: str | Path, task_order: Sequence[str] = ()) -> None:
    write_json(headline_path, headline(json.loads(Path(metrics_path).read_text(encoding="utf-8")), task_order))
