"""Which figures a task gets (the plots rule's outputs; babeleval.analysis.plots draws them).

A heatmap always; a template spread only with two templates or more (one template has no spread, and a
single dot per panel says nothing: the report gives the reason instead); parse failures only where a
template generates text for a parser to read.
"""

from __future__ import annotations

from typing import Any

from ..core import paths



def figure_names(templates: dict[str, Any]) -> list[str]:
    """``templates``: the task's templates by name (objects with a ``mode``)."""
    names = ["heatmap"]
    if len(templates) > 1:
        names.append("template_spread")
    if any(t.mode == "generate" for t in templates.values()):
        names.append("parse_failures")
    return names


def figure_targets(templates: dict[str, dict[str, Any]]) -> list[str]:
    """Every figure of the grid; ``templates``: task name -> the templates the leaderboard shows, by name."""
    return [paths.PLOT.format(task=task, name=name) for task, shown in sorted(templates.items())
            for name in figure_names(shown)]
