"""Task registry: each task turns its dataset's official files into canonical items.

The interface every task offers, and the canonical item of each task family,
are described in ``babeleval.tasks.base``; every task is an object of a
``base.Task`` subclass. Every subclass with a ``NAME`` defined in a module of
this package is registered (modules in name order, classes in the order they
are defined), so adding a task is adding its module. The schema's list of task
names is this registry's (filled in at validation, ``babeleval.grid.params``).

A task can also live outside the package, in an extension file params.yaml
names under ``modules`` (``babeleval.core.extensions``; docs/extending.md):
every ``Task`` subclass with a ``NAME`` the file defines is registered.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

from ..core import extensions
from ..core.errors import ConfigError
from ..core.registry import Registry
from .base import Task
from .families import FAMILIES


def _task_classes(module: ModuleType) -> list[type[Task]]:
    """The tasks a module defines (not those it imports): ``Task`` subclasses with a ``NAME``."""
    return [obj for obj in vars(module).values()
            if isinstance(obj, type) and issubclass(obj, Task) and obj.__module__ == module.__name__ and obj.NAME]


TASKS: Registry[Task] = Registry("task", (
    (task_class.NAME, task_class())
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name)
    for task_class in _task_classes(importlib.import_module(f"{__name__}.{info.name}"))))


def _register_extension(module: ModuleType) -> None:
    for task_class in _task_classes(module):
        if task_class.FAMILY not in FAMILIES:
            raise ConfigError(f"task '{task_class.NAME}': {FAMILIES.unknown(task_class.FAMILY)}")
        TASKS.add(task_class.NAME, task_class())


extensions.on_load(_register_extension)


def get_task(name: str) -> Task:
    return TASKS[name]
