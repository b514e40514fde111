"""One registry of named things (tasks, task families, metrics, parsers, backends, scorers), built one way.

A ``Registry`` is a dict from a name to what it names, with the three decisions every registry of the
package shares made once:

- ``add`` refuses a name already taken (only an extension file can take one twice: the built-in names are
  unique) and tells ``babeleval.core.extensions`` what the file being loaded added, so a file that adds
  nothing is still named;
- an unknown name (``registry[name]``) is one ``ConfigError`` naming the known names and the closest one;
- a value can be a ``"module:attribute"`` target (``lazy``), imported the first time it is asked for: a
  stage can name code of a later stage (a task family its scorer) without importing it, and a loader's
  heavy libraries load only when a model selects it.

Built-ins are given to the constructor, not added: importing a registry's module while an extension file
is loaded must not count them as that file's. Asking whether (``in``, ``get``, ``values``) gives what was
registered, a target not yet imported as its ``Lazy``; only ``registry[name]`` imports it.
"""

from __future__ import annotations

import difflib
import importlib
from dataclasses import dataclass
from typing import Any, Iterable, TypeVar

from . import extensions
from .errors import ConfigError

T = TypeVar("T")


@dataclass(frozen=True)
class Lazy:
    """A ``"module:attribute"`` target, imported when first asked for."""

    target: str

    def load(self) -> Any:
        module, _, attribute = self.target.partition(":")
        try:
            return getattr(importlib.import_module(module), attribute)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(f"cannot load '{self.target}' ({exc})") from None


def lazy(target: str) -> Lazy:
    """A value a registry imports the first time it is asked for; ``target``: ``"module:attribute"``."""
    module, colon, attribute = target.partition(":")
    if not (module and colon and attribute):
        raise ConfigError(f"'{target}': a lazy target is written 'module:attribute'")
    return Lazy(target)


class Registry(dict[str, T]):
    """Names of one kind (``what``: "task", "metric" ...) and what they name, in the order they were added."""

    def __init__(self, what: str, builtins: Iterable[tuple[str, T | Lazy]] = ()):
        super().__init__()
        self.what = what
        for name, value in builtins:
            self._take(name, value)

    def add(self, name: str, value: T | Lazy) -> T | Lazy:
        """Register ``value`` as ``name`` (from the package or an extension file); a taken name is refused."""
        self._take(name, value)
        extensions.added(f"{self.what} {name}")
        return value

    def _take(self, name: str, value: T | Lazy) -> None:
        if name in self:
            raise ConfigError(f"{self.what} '{name}' is already registered; rename it")
        super().__setitem__(name, value)

    def __getitem__(self, name: str) -> T:
        value = super().__getitem__(name)
        if isinstance(value, Lazy):
            try:
                value = value.load()
            except ConfigError as exc:
                raise ConfigError(f"{self.what} '{name}': {exc}") from None
            super().__setitem__(name, value)
        return value

    def __missing__(self, name: str) -> T:
        raise ConfigError(self.unknown(name))

    def unknown(self, name: object) -> str:
        """The message for a name not registered: the known names, and the closest one where one is close."""
        known = sorted(self)
        closest = difflib.get_close_matches(str(name), known, n=1)
        hint = f"; did you mean '{closest[0]}'?" if closest else ""
        return f"unknown {self.what} '{name}' (known: {', '.join(known)}{hint})"
