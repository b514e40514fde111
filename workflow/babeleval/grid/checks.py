"""Checks made once while the run is planned, before any job: every local data file the grid reads is read,
and each template is rendered on a real item, so a broken row or a misspelt variable stops the run here.
"""

from __future__ import annotations

from pathlib import Path

from ..core import paths
from ..core.errors import DataError
from ..generate.preflight import check_response_caches
from ..prompts.fewshot import check_pool
from ..prompts.record import PromptRecord
from ..prompts.render import check_query, continuations, prompt_variables, target_variables
from ..tasks import get_task
from ..tasks.base import EVAL, is_local
from .records import Grid


def local_parts(languages: tuple[str, ...], records: list[PromptRecord]) -> list[tuple[str, str]]:
    """(language, part) of every data file a task's combinations read, as their prompt records say:
    the evaluated rows of each language, then the exemplar pools."""
    parts = {(language, EVAL): None for language in languages}
    for record in records:
        parts.update(dict.fromkeys(record.reads()))
    return list(parts)


def check_local_data(grid: Grid, root: str | Path = ".") -> None:
    """Read every local data file the grid uses, and render each template on a real item.

    Called once at start-up by the workflow (before any job, so before any model
    is built or loaded): a broken row, an empty file or invalid UTF-8 in a local
    dataset, and a template that names a variable the items do not have, stop the
    run here with the file and the row, line or key. Hub datasets cannot be read
    without a download; their rows are checked by the prepare_data job, which every
    generation job of that task waits for.
    """
    for task in grid.tasks.values():
        if not is_local(task.source):
            continue
        loader = get_task(task.name)
        first_item = None
        pools: dict[tuple[str, str], int] = {}  # rows exemplars can be drawn from, per (language, part)
        records = [record for key, record in grid.prompts.items() if key[0] == task.name]
        for language, part in local_parts(task.languages, records):
            items = loader.load(task.source, language, root, part=part, options=task.options)  # DataError: file, row
            if part == EVAL:
                first_item = first_item or (items[0] if items else None)
            pools[language, part] = len(items)
        if first_item is None:
            raise DataError(f"{grid.source_file}: tasks.{task.name}: the local data has no items")
        for name, template in task.templates.items():
            pool_keys = {(lang, record.exemplar_part) for record in records if record.template == name
                         for lang in record.exemplar_languages}
            for language, part in sorted(pool_keys):
                check_pool(template, pools[language, part], f"{task.name} {language}")
            # Strict undefined variables: a misspelt field fails here, naming the template file and key.
            variables = prompt_variables(first_item, template)
            template.render_preamble(variables)
            check_query(template, template.render_prompt(variables), first_item["id"])
            template.render_target(target_variables(first_item, template))
            if template.mode == "loglikelihood" and "choices" in first_item:
                continuations(template, first_item)


def check_caches(grid: Grid, root: str | Path = ".") -> None:
    """Each model's response cache, where one exists, can be opened (``babeleval.generate.preflight``)."""
    check_response_caches(grid.models if grid.cache_enabled else (), paths.CACHE, root)
