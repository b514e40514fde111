"""Planning a run: everything the workflow does before its first job, in one entry point, and what it says.

``start`` is what workflow/rules/common.smk calls while Snakemake plans a run: it validates params.yaml into the
grid, and, in the process that plans the run, reads the local data, renders each template on a real item, checks
caches, API keys, chat templates, model sources and GGUF files, and checks every generation job's resources. A
bad grid stops here, before any job. Tests call the same function in-process (``start_in``), so the catalogue of
bad inputs needs no Snakemake start per case.

What the planner says: what the grid leaves out, and for a big grid its size and cost; printed once, before any
job. The pairs left out are also written to ``results/plan/omitted.tsv`` (``paths.PLAN_OMITTED``) by the rule the
leaderboard reads it from.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from ..core.jsonl import atomic_open
from . import resources as resource_table
from .checks import check_api_keys, check_caches, check_chat_templates, check_gguf_sources, check_local_data
from .holes import OMITTED_COLUMNS, omitted_lines, omitted_rows
from .model_sources import check_model_sources
from .params import read_params_file, validate
from .records import Grid

# the table of what each kind of job asks for, in the workflow's folder
RESOURCE_TABLE = "workflow/resources.yaml"


@dataclass(frozen=True)
class Planned:
    """A planned run: the grid, what one generation job covers, the resource table, and the lines the planner
    prints (the planning process only)."""

    grid: Grid
    granularity: str
    resource_table: dict[str, Any]
    lines: list[str]


def start(params: Any, *, resources: str | Path, main_process: bool = True, source_file: str = "params.yaml",
          root: str | Path = ".", max_cores: int | None = None, max_mem_mb: int | None = None,
          environ: Mapping[str, str] | None = None) -> Planned:
    """Plan a run of ``params`` (params.yaml, as Snakemake's config holds it) with the resource table at
    ``resources``, or stop with a named error.

    Jobs re-read the workflow on a cluster (``main_process`` false): they validate the grid and skip the checks
    that read data, models and the environment, which the planning process made before any job started.
    """
    grid = validate(params, source_file=source_file, root=root)
    items = None
    if main_process:
        check_model_sources(grid, root, environ)
        items = check_local_data(grid, root)
        check_caches(grid, root)
        check_api_keys(grid, environ)
        check_chat_templates(grid, root)
        check_gguf_sources(grid, root)
    table = resource_table.load(resources)
    for model in grid.models:  # every model's and task's resource overrides: a bad one stops here
        for task in grid.tasks:
            generation_request(grid, table, params, model, task, max_cores=max_cores, max_mem_mb=max_mem_mb)
    granularity = resource_table.generation_job(table)
    lines = plan_lines(grid, items or {}, granularity) if main_process else []
    return Planned(grid, granularity, table, lines)


def start_in(root: str | Path, environ: Mapping[str, str] | None = None) -> Planned:
    """Plan the run of the workflow at ``root`` as ``snakemake`` started there would (its params.yaml)."""
    return start(read_params_file(Path(root) / "params.yaml"), resources=Path(root) / RESOURCE_TABLE, root=root,
                 environ=environ)


def generation_request(grid: Grid, table: dict[str, Any], params: Any, model: str, task: str | None, *,
                       max_cores: int | None = None, max_mem_mb: int | None = None) -> dict[str, int]:
    """What a generation job of (model, task) asks for (babeleval.grid.resources), capped at the run's."""
    return resource_table.for_generation(
        table, grid.models[model], task, model_where=f"{grid.source_file}: models.{model}.resources",
        task_overrides=params["tasks"].get(task, {}).get("resources") if task else None,
        task_where=f"{grid.source_file}: tasks.{task}.resources", max_cores=max_cores, max_mem_mb=max_mem_mb)

# a grid of more combinations than this says its size and cost before it starts
SIZE_NOTICE = 20_000


def size_lines(grid: Grid, items: Mapping[tuple[str, str], int], granularity: str) -> list[str]:
    """The size of a big grid: combinations, jobs per kind, and the items the models are asked (where known)."""
    combos = list(grid.combinations())
    if len(combos) <= SIZE_NOTICE:
        return []
    per_job = {(m, t, tpl if granularity != "task" else "") for m, t, _, tpl in combos}
    renders = sum(len(task.templates) for task in grid.tasks.values())
    per_model: dict[str, int] = {}
    unknown = 0  # combinations over hub datasets: their items are not counted before they are downloaded
    for model, task, language, _ in combos:
        n = items.get((task, language))
        if n is None:
            unknown += 1
        else:
            per_model[model] = per_model.get(model, 0) + min(n, grid.tasks[task].limit or n)
    lines = [f"babeleval: a big grid: {len(combos):,} combinations ({len(grid.models)} models, "
             f"{len(grid.tasks)} task{'s' if len(grid.tasks) != 1 else ''}); {renders:,} rendering, {len(per_job):,} "
             f"generation and {len(per_job):,} scoring jobs",
             f"  items the models are asked: {sum(per_model.values()):,}"
             + (f", and those of {unknown:,} combinations over hub datasets (counted once downloaded)" if unknown else "")]
    lines += [f"  {model}: {n:,} items" for model, n in per_model.items()]
    lines.append("  to look before running: snakemake -n; a smaller grid: fewer languages, `sample: k` variants, or a "
                 "model's `tasks:` (docs/models.md)")
    return lines


def plan_lines(grid: Grid, items: Mapping[tuple[str, str], int], granularity: str) -> list[str]:
    """Everything the planner prints: the grid's size (when big), then what it leaves out."""
    return size_lines(grid, items, granularity) + (omitted_lines(grid.omitted, grid.tasks) if grid.omitted else [])


def omitted_file_rows(grid: Grid) -> list[list[str]]:
    """The rows of ``results/plan/omitted.tsv``, one per (model, task, language, template) left out, with its
    reason: the plan_omitted rule's params, so that a change to what is left out (or why) rewrites the file."""
    return [list(row) for row in omitted_rows(grid.omitted, grid.tasks)]


def write_omitted(rows: list[list[str]], path: str | Path) -> None:
    """Write ``omitted_file_rows`` under the file's header."""
    with atomic_open(path) as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(OMITTED_COLUMNS)
        writer.writerows(rows)
