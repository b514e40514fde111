"""What each job asks a scheduler for: the resources table (workflow/resources.yaml) and the model it runs.

The one owner of these decisions; the rule files only read them (workflow/rules/common.smk). A generation
job's GPUs come from its model (its ``tensor_parallel_size``, none with ``device: cpu`` or for an API model),
its memory and time from the table: the default entry, or one derived from the model's size where it is
known (``params_b``, a builtin's own), then the table's per-task entry, then the task entry's ``resources``
in params.yaml, then the model entry's. Capping is a pure function: the rules pass in the run's caps
(--cores and `--resources mem_mb=` where a run gives them), so that no job asks for more than it was given.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Mapping

import yaml

from ..core.errors import ConfigError
from ..generate.builtin_models import get_builtin
from ..generate.backends import get_backend
from ..generate.backends.config import ModelConfig

KINDS = ("cpu", "build_model", "generate_gpu", "generate_cpu", "generate_api", "model_size")
GENERATION_JOBS = ("template", "task")  # what one generation job covers: see workflow/rules/generate.smk
KEYS = {"threads", "cpus_per_gpu", "mem_mb", "runtime"}
# what params.yaml may override: a model entry's `resources` (GPUs included), a task entry's (not GPUs)
MODEL_OVERRIDES = ("gpus", "threads", "cpus_per_gpu", "mem_mb", "runtime")
TASK_OVERRIDES = ("threads", "cpus_per_gpu", "mem_mb", "runtime")
SIZE_KEYS = {"reference_params_b", "mem_mb_base", "mem_mb_per_params_b", "mem_mb_min", "runtime_min", "threads_min"}


def _check_entry(source: str, where: str, entry: Any) -> dict[str, int]:
    return _whole_numbers(entry, tuple(sorted(KEYS)), f"{source}: {where}")


def _whole_numbers(entry: Any, allowed: tuple[str, ...], where: str) -> dict[str, int]:
    """A mapping of ``allowed`` keys to whole numbers >= 1; ``where`` names it in the message."""
    if not isinstance(entry, Mapping):
        raise ConfigError(f"{where}: expected a mapping of {', '.join(allowed)}")
    for key, value in entry.items():
        if key not in allowed:
            raise ConfigError(f"{where}.{key}: unknown key; allowed: {', '.join(allowed)}")
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigError(f"{where}.{key}: must be a whole number >= 1, got {value!r}")
    return dict(entry)


def _check_size(source: str, entry: Any) -> dict[str, float]:
    if not isinstance(entry, dict) or set(entry) != SIZE_KEYS:
        raise ConfigError(f"{source}: model_size: expected exactly {', '.join(sorted(SIZE_KEYS))}")
    for key, value in entry.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
            raise ConfigError(f"{source}: model_size.{key}: must be a number > 0, got {value!r}")
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
        if kind == "model_size":
            checked[kind] = _check_size(source, table[kind])
        elif kind.startswith("generate_"):
            per_task = table[kind]
            if not isinstance(per_task, dict) or "default" not in per_task:
                raise ConfigError(f"{source}: {kind}: needs a 'default' entry (and optional per-task entries)")
            checked[kind] = {task: _check_entry(source, f"{kind}.{task}", entry) for task, entry in per_task.items()}
        else:
            checked[kind] = _check_entry(source, kind, table[kind])
    return checked


def for_job(table: dict[str, Any], kind: str, *, max_cores: int | None = None,
            max_mem_mb: int | None = None) -> dict[str, int]:
    """The resources of one job of a kind that runs no model (``cpu``, ``build_model``), capped at the run's."""
    return _capped(dict(table[kind]), max_cores, max_mem_mb)


def _capped(entry: dict[str, int], max_cores: int | None, max_mem_mb: int | None) -> dict[str, int]:
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


# -- generation jobs: from the model -------------------------------------------------------------------------


def generation_kind(config: ModelConfig) -> str:
    """The table entry a model's generation jobs read: an API model's, a model on the CPU's, or a GPU model's."""
    backend = get_backend(config.backend)
    if backend.calls_api:
        return "generate_api"
    if not backend.gpu or getattr(config, "device", "auto") == "cpu":
        return "generate_cpu"
    return "generate_gpu"


def known_params_b(config: ModelConfig) -> float | None:
    """The model's size in billions of parameters where it is known: its entry's ``params_b``, a builtin's own."""
    if config.params_b is not None:
        return config.params_b
    return get_builtin(config.builtin).params_b if config.builtin is not None else None


def checked_overrides(entry: Mapping[str, Any] | None, allowed: tuple[str, ...], where: str) -> dict[str, int]:
    """A params.yaml ``resources`` mapping (``where`` names it: ``params.yaml: models.m.resources``), checked."""
    return {} if entry is None else _whole_numbers(entry, allowed, where)


def for_generation(table: dict[str, Any], config: ModelConfig, task: str, *, model_where: str,
                   task_overrides: Mapping[str, Any] | None = None, task_where: str = "",
                   max_cores: int | None = None, max_mem_mb: int | None = None) -> dict[str, int]:
    """What one generation job of ``config``'s model on ``task`` asks for: ``gpu`` (GPUs), ``threads`` or
    ``cpus_per_gpu``, ``mem_mb`` and ``runtime`` (minutes); ``*_where`` name the params.yaml entries."""
    kind = generation_kind(config)
    model = checked_overrides(config.resources, MODEL_OVERRIDES, model_where)
    given = {**checked_overrides(task_overrides, TASK_OVERRIDES, task_where), **model}
    if "gpus" in model and kind != "generate_gpu":
        raise ConfigError(f"{model_where}.gpus: this model runs without a GPU "
                          f"({'an API model' if kind == 'generate_api' else 'device: cpu or a CPU backend'}); "
                          "remove the key")
    gpus = (model.get("gpus") or getattr(config, "tensor_parallel_size", None) or 1) if kind == "generate_gpu" else 0
    entry = dict(table[kind]["default"])
    size = known_params_b(config) if kind != "generate_api" else None
    if size is not None:
        entry["mem_mb"] = sized_mem_mb(table["model_size"], size)
    entry.update(table[kind].get(task, {}))
    if size is not None:
        entry.update(sized_time_and_threads(table["model_size"], entry, size, gpus))
    entry.update({key: value for key, value in given.items() if key != "gpus"})
    entry = _capped(entry, max_cores, max_mem_mb)
    if kind == "generate_gpu":
        entry.pop("threads", None)  # a GPU job's CPUs are cpus_per_gpu for each of its GPUs
    else:
        entry.pop("cpus_per_gpu", None)
    return {"gpu": gpus, **entry}


def sized_mem_mb(size_table: Mapping[str, float], params_b: float) -> int:
    """Memory of a job of a model of ``params_b`` billion parameters (the table's ``model_size``): the weights, and
    what the job holds besides them (batches, activations, the runtime), written for the reference size and shrunk
    with a smaller model down to ``mem_mb_min``."""
    share = min(1.0, params_b / size_table["reference_params_b"])
    besides = max(size_table["mem_mb_min"], size_table["mem_mb_base"] * share)
    return math.ceil(besides + size_table["mem_mb_per_params_b"] * params_b)


def sized_time_and_threads(size_table: Mapping[str, float], entry: Mapping[str, int], params_b: float,
                           gpus: int) -> dict[str, int]:
    """A known-size model's runtime and CPU threads: the table's (written for the reference size) times
    ``params_b / (reference x GPUs)``, so a larger model takes longer, GPUs split the work, and a smaller one asks
    for less: down to ``runtime_min`` minutes and ``threads_min`` threads (never more threads than the table's)."""
    factor = params_b / (size_table["reference_params_b"] * max(gpus, 1))
    out = {"runtime": max(int(size_table["runtime_min"]), math.ceil(entry["runtime"] * factor))}
    if "threads" in entry:
        out["threads"] = min(entry["threads"], max(int(size_table["threads_min"]), math.ceil(entry["threads"] * factor)))
    return out
