"""The resources table (workflow/resources.yaml): what each kind of job asks a scheduler for.

Capping is a pure function: the rules pass in the run's caps (--cores and `--resources mem_mb=`), so that no
job, and no group of jobs Snakemake submits together, asks for more CPUs or memory than one node has.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ..core.errors import ConfigError

KINDS = ("cpu", "build_model", "generate_gpu", "generate_api")
GENERATION_JOBS = ("template", "task")  # what one generation job covers: see workflow/rules/generate.smk
KEYS = {"threads", "cpus_per_gpu", "mem_mb", "runtime"}


def _check_entry(source: str, where: str, entry: Any) -> dict[str, int]:
    if not isinstance(entry, dict):
        raise ConfigError(f"{source}: {where}: expected a mapping of {', '.join(sorted(KEYS))}")
    for key, value in entry.items():
        if key not in KEYS:
            raise ConfigError(f"{source}: {where}.{key}: unknown key; allowed: {', '.join(sorted(KEYS))}")
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigError(f"{source}: {where}.{key}: must be a whole number >= 1, got {value!r}")
    return dict(entry)


def load_raw(path: str | Path) -> dict[str, Any]:
    source = str(path)
    try:
        table = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{source}: cannot be read as YAML: {exc}") from None
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: expected a mapping with {', '.join(KINDS)}")
    return table


def load(path: str | Path) -> dict[str, Any]:
    """The table, checked: every kind present, per-task entries under the generation kinds, and what one
    generation job covers (``generation_job``, read with ``generation_job()``)."""
    source = str(path)
    table = load_raw(path)
    unknown = sorted(set(table) - set(KINDS) - {"generation_job"})
    if unknown:
        raise ConfigError(f"{source}: unknown kind {unknown[0]!r}; allowed: generation_job, {', '.join(KINDS)}")
    if table.get("generation_job", "template") not in GENERATION_JOBS:
        raise ConfigError(f"{source}: generation_job: {table['generation_job']!r} is not one of "
                          f"{', '.join(GENERATION_JOBS)}")
    checked: dict[str, Any] = {"generation_job": table.get("generation_job", "template")}
    for kind in KINDS:
        if kind not in table:
            raise ConfigError(f"{source}: missing {kind!r}")
        if kind.startswith("generate_"):
            per_task = table[kind]
            if not isinstance(per_task, dict) or "default" not in per_task:
                raise ConfigError(f"{source}: {kind}: needs a 'default' entry (and optional per-task entries)")
            checked[kind] = {task: _check_entry(source, f"{kind}.{task}", entry) for task, entry in per_task.items()}
        else:
            checked[kind] = _check_entry(source, kind, table[kind])
    return checked


def for_job(table: dict[str, Any], kind: str, task: str | None = None, *, max_cores: int | None = None,
            max_mem_mb: int | None = None) -> dict[str, int]:
    """The resources of one job of ``kind`` (of ``task`` for generation), capped at one node's CPUs and memory."""
    if kind.startswith("generate_"):
        entry = {**table[kind]["default"], **table[kind].get(task, {})}
    else:
        entry = dict(table[kind])
    if max_cores:
        for key in ("threads", "cpus_per_gpu"):
            if key in entry:
                entry[key] = min(entry[key], max_cores)
    if max_mem_mb and "mem_mb" in entry:
        entry["mem_mb"] = min(entry["mem_mb"], max_mem_mb)
    return entry


def generation_job(table: dict[str, Any]) -> str:
    """What one generation job covers: 'template' (one model, task and template) or 'task' (all its templates)."""
    return table["generation_job"]
