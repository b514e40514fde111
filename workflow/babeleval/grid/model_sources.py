"""A local model's ``model:`` names something on this machine, checked while the run is planned.

``model: checkpoints/tiny-c`` (no ``./``, and no such folder) reads as a hub id. Its generation job would then ask
the hub for it, retry, and fail a minute later, on a cluster after a queued GPU job. So at start-up a ``model:``
must be one of:

- a local folder (with or without ``./``; ``babeleval.generate.preflight`` checks what is inside one written
  with ``./``, ``/`` or ``~``), or a model file ending in ``.gguf``;
- a hub id already in the local hub cache (``HF_HUB_CACHE``, huggingface_hub's layout,
  ``preflight.hub_cache_dir``): download it first (``huggingface-cli download <id>``), where there is a network.

Anything else is refused with both readings spelt out: the ``./`` a local folder needs, and the download a hub id
needs. Nothing is fetched, so with the hub offline nothing is retried either. Builtin models are built by the
workflow, and API models name a model on their server: neither is checked here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

from ..core.errors import ConfigError
from ..generate.backends.config import LocalConfig
from ..generate.preflight import hub_cache_dir, in_hub_cache
from .records import Grid

MODEL_FILE_SUFFIXES = (".gguf",)


def on_this_machine(where: str, root: str | Path, environ: Mapping[str, str]) -> bool:
    """A local folder, a model file, or a hub id with a snapshot in the local hub cache."""
    path = Path(root) / Path(where).expanduser()
    if path.is_dir() or (path.is_file() and path.suffix.lower() in MODEL_FILE_SUFFIXES):
        return True
    return in_hub_cache(where, dict(environ))


def check_model_sources(grid: Grid, root: str | Path = ".", environ: Mapping[str, str] | None = None) -> None:
    """Every local model that runs something is on this machine (module docstring); raises ConfigError if not."""
    environ = os.environ if environ is None else environ
    for name, config in grid.models.items():
        if not isinstance(config, LocalConfig) or config.builtin is not None or not config.model:
            continue
        if not grid.runs_something(name) or on_this_machine(config.model, root, environ):
            continue
        where = config.model
        raise ConfigError(
            f"{grid.source_file}: models.{name}.model: '{where}' is neither a local folder nor in the local hub cache "
            f"({hub_cache_dir(dict(environ))}): for a folder, check the path and write it as ./{where} "
            "(a path starting with '.', '/' or '~' names a local model); for a hub model, download it first "
            f"(huggingface-cli download {where}) where there is a network")
