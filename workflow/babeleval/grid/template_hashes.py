"""The grid's templates as DVC parameters: ``{task: {template: short hash}}`` in ``results/template_hashes.yaml``.

DVC lists a stage's params one column each in ``dvc exp show`` (``belebele.instruct``); a template edit then shows as
the one parameter that changed, where a hash of the whole ``prompts/`` folder would not say which template it was.
Written at the start of every run (the Snakefile's ``onstart``), so DVC records the hashes of the templates the run
used when the stage ends. Eight hex digits tell a grid's templates apart; the full hash is in each scores file.

The edited templates come first: those whose hash differs from the baseline's, the version of this file in git's
``HEAD`` (the committed baseline run, ``run_lock.BASELINE``), and their tasks first among the tasks. At 120 columns
``dvc exp show`` keeps only the first column of the metrics and of the params and folds the rest from the right into
``…``: on the 8-task grid an edit to a task late in the alphabet was folded away. The headline numbers follow the same
task order (``babeleval.grid.headline``). Without a git baseline the order is alphabetical.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from ..core import paths
from ..core.jsonl import atomic_open

SHOWN_DIGITS = 8


def template_hashes(grid) -> dict[str, dict[str, str]]:
    return {task: {name: template.sha256[:SHOWN_DIGITS] for name, template in sorted(entry.templates.items())}
            for task, entry in sorted(grid.tasks.items())}


def baseline(root: Path = Path(".")) -> dict[str, dict[str, str]]:
    """The hashes of the committed baseline run, or none where there is no git repository or no such commit."""
    try:
        shown = subprocess.run(["git", "show", f"HEAD:{paths.TEMPLATE_HASHES}"], cwd=root, capture_output=True,
                               text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return {}
    committed = yaml.safe_load(shown.stdout) if shown.returncode == 0 else None
    return committed if isinstance(committed, dict) else {}


def edited_first(hashes: dict[str, dict[str, str]], committed: dict[str, dict[str, str]]
                 ) -> dict[str, dict[str, str]]:
    """``hashes`` with the templates that differ from ``committed`` first, and their tasks first."""
    def edited(task: str, name: str) -> bool:
        return (committed.get(task) or {}).get(name) != hashes[task][name]

    ordered = {task: dict(sorted(names.items(), key=lambda kv: (not edited(task, kv[0]), kv[0])))
               for task, names in hashes.items()}
    # with no baseline every template counts as edited: the order stays alphabetical
    return dict(sorted(ordered.items(), key=lambda kv: (not any(edited(kv[0], n) for n in kv[1]), kv[0])))


def task_order(root: Path = Path(".")) -> list[str]:
    """The tasks in the order this run's file lists them (the edited first), or none before a run wrote it."""
    path = root / paths.TEMPLATE_HASHES
    written = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else None
    return list(written) if isinstance(written, dict) else []


def write(grid, root: Path = Path(".")) -> None:
    """Rewrite the file only when a hash or the order changed, so that a run with the same templates leaves it
    untouched."""
    path = root / paths.TEMPLATE_HASHES
    text = ("# written by every run (babeleval.grid.template_hashes): DVC's params of the evaluate stage\n"
            + yaml.safe_dump(edited_first(template_hashes(grid), baseline(root)), sort_keys=False,
                             allow_unicode=True))
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return
    with atomic_open(path) as handle:
        handle.write(text)
