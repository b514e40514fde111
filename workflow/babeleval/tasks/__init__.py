"""Task registry: each task turns its dataset's official files into canonical items.

The interface every task offers, and the canonical item of each task family,
are described in ``babeleval.tasks.base``; every task is an object of a
``base.Task`` subclass. Every subclass with a ``NAME`` defined in a module of
this package is registered (modules in name order, classes in the order they
are defined), so adding a task is adding its module. The schema's list of task
names is this registry's (filled in at validation, ``babeleval.config``).

A task can also live outside the package, in a Python file named under
``task_modules`` in params.yaml (docs/tasks.md, "Adding a task"): validation
registers every ``Task`` subclass with a ``NAME`` the file defines, and exports
the files in ``BABELEVAL_TASKS`` so that the workflow's jobs, which import this
module afresh, register them too.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import pkgutil
from pathlib import Path
from types import ModuleType

from ..core.errors import ConfigError
from .base import Task


def _task_classes(module: ModuleType) -> list[type[Task]]:
    """The tasks a module defines (not those it imports): ``Task`` subclasses with a ``NAME``."""
    return [obj for obj in vars(module).values()
            if isinstance(obj, type) and issubclass(obj, Task) and obj.__module__ == module.__name__ and obj.NAME]


TASKS: dict[str, Task] = {
    task_class.NAME: task_class()
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name)
    for task_class in _task_classes(importlib.import_module(f"{__name__}.{info.name}"))}


TASK_MODULES_ENV = "BABELEVAL_TASKS"
_registered_files: set[str] = set()


def register_modules(paths: list[str], root: str | Path = ".") -> None:
    """Register the tasks of the given files (params.yaml ``task_modules``), and export them to child processes."""
    files = [str((Path(root) / path).resolve()) for path in paths]
    for path in files:
        _register_file(path)
    os.environ[TASK_MODULES_ENV] = os.pathsep.join(files)


def _register_file(path: str) -> None:
    from ..score.scorers import DEFAULT_METRICS

    if path in _registered_files:
        return
    if not Path(path).is_file():
        raise ConfigError(f"task_modules: {path}: no such file")
    spec = importlib.util.spec_from_file_location(f"babeleval_task_module_{len(_registered_files)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    found = _task_classes(module)
    if not found:
        raise ConfigError(f"task_modules: {path}: defines no Task subclass with a NAME (babeleval.tasks.base)")
    for task_class in found:
        if task_class.NAME in TASKS:
            raise ConfigError(f"task_modules: {path}: task '{task_class.NAME}' is already registered; rename it")
        if task_class.FAMILY not in DEFAULT_METRICS:
            raise ConfigError(f"task_modules: {path}: task '{task_class.NAME}' has FAMILY '{task_class.FAMILY}' "
                              f"(known: {', '.join(DEFAULT_METRICS)})")
        TASKS[task_class.NAME] = task_class()
    _registered_files.add(path)


def get_task(name: str) -> Task:
    try:
        return TASKS[name]
    except KeyError:
        raise ConfigError(f"unknown task '{name}' (known: {', '.join(sorted(TASKS))})") from None


# the workflow's jobs: the task files validation registered in the process that planned the run
for _path in filter(None, os.environ.get(TASK_MODULES_ENV, "").split(os.pathsep)):
    _register_file(_path)
