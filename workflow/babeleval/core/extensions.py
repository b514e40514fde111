"""Extension files: tasks, task families, metrics, parsers and backends defined outside the package.

params.yaml lists Python files under ``modules`` (``task_modules`` is the older name of the same key).
Validation loads each file once and each registry takes what the file adds to it: a ``Task`` subclass
with a ``NAME`` (``babeleval.tasks``), a task family, a metric, a parser or a backend registered with its
registry's ``register`` function (each registry tells ``added``: ``babeleval.core.registry``). A file that adds nothing is an error naming it.

The planning process exports the files in ``BABELEVAL_MODULES``; a workflow job loads them when it
starts (``babeleval.core.joblog.setup``), so the registries of every job hold what the grid was
validated with.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType
from typing import Callable

from .errors import ConfigError

ENV = "BABELEVAL_MODULES"
WHAT = "task, task family, metric, parser or backend"

_modules: dict[str, ModuleType] = {}
_hooks: list[Callable[[ModuleType], None]] = []
_added: list[list[str]] = []  # what each file being loaded (innermost last) has registered so far


def on_load(hook: Callable[[ModuleType], None]) -> None:
    """Call ``hook`` with every extension module, those loaded already and those loaded from now on."""
    _hooks.append(hook)
    for module in list(_modules.values()):
        hook(module)


def added(what: str) -> None:
    """A registry says it took ``what`` (e.g. "metric my_acc") from the file being loaded, if one is."""
    if _added:
        _added[-1].append(what)


def load_files(paths: list[str], root: str | Path = ".", key: str = "modules") -> list[ModuleType]:
    """Load the files params.yaml lists under ``key``, and export them to the run's jobs."""
    files = [str((Path(root) / path).resolve()) for path in paths]
    modules = [load(path, key) for path in files]
    exported = [path for path in os.environ.get(ENV, "").split(os.pathsep) if path]
    os.environ[ENV] = os.pathsep.join(dict.fromkeys(exported + files))
    return modules


def load_exported() -> None:
    """In a workflow job: load the files the planning process exported."""
    for path in filter(None, os.environ.get(ENV, "").split(os.pathsep)):
        load(path, ENV)


def load(path: str, key: str) -> ModuleType:
    """The module of one extension file, executed once per process."""
    if path in _modules:
        return _modules[path]
    if not Path(path).is_file():
        raise ConfigError(f"{key}: {path}: no such file")
    spec = importlib.util.spec_from_file_location(f"babeleval_extension_{len(_modules)}", path)
    module = importlib.util.module_from_spec(spec)
    _added.append([])
    try:
        spec.loader.exec_module(module)
        _modules[path] = module
        for hook in _hooks:
            hook(module)
    except ConfigError as exc:
        _modules.pop(path, None)
        raise ConfigError(f"{key}: {path}: {exc}") from None
    finally:
        found = _added.pop()
    if not found:
        _modules.pop(path, None)
        raise ConfigError(f"{key}: {path}: defines no {WHAT} (see docs/extending.md)")
    return module
