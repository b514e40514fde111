"""The backend registry: what each backend is, decided here and read everywhere else.

A backend is registered with ``register``: its name (params.yaml's ``backend``), its config class (its
settings, ``babeleval.generate.backends.config``), its loader, whether its generation jobs hold a GPU, the
conda environment they run in, whether it calls an API (then the Snakemake resource its jobs hold), and
whether it answers a variant set's log-likelihood requests with shared prefixes in one call, whether it
constrains a template's answer slot (``babeleval.prompts.answer_slot``), and which template
modes a model of it cannot answer (and why: the planner leaves those combinations out). The
schema's list of backends and of model settings, the preflight checks, the rules' resources and conda
environments, the shared-prefix jobs and the generation job all read it.

A backend can also live outside the package, in an extension file params.yaml names under ``modules``
(``babeleval.core.extensions``; docs/extending.md): the file calls ``register``.

Loaders import their libraries only when a model selects them, so the rest of the package never imports
torch, transformers or vllm.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Callable, Mapping

from ...core.gc_pause import collector_paused, imports_done
from ...core.errors import BackendError, ConfigError
from ...core.registry import Registry
from ..fingerprint import ROLE, declared_settings
from .base import Backend
from .config import NOT_SETTINGS, APIConfig, HFConfig, ModelConfig, OpenAIConfig, VLLMConfig, rate_limit_resource


@dataclass(frozen=True)
class BackendType:
    """What a backend is, for everything that decides something from a model entry's ``backend``."""

    name: str
    config: type[ModelConfig]  # its settings, with their defaults and roles
    load: Callable[[ModelConfig, str], Backend]  # (config, model path) -> a backend ready to answer
    gpu: bool  # its generation jobs hold gpu=1
    conda_env: str  # the environment file of its generation jobs, relative to the repository
    # an API backend: the Snakemake resource its jobs hold, ``concurrency`` units each; None: runs in the job
    api_resource: Callable[[Any], str] | None = None
    # answers a variant set's log-likelihood requests in one call, storing their shared prefixes once
    shared_prefix: bool = False
    # config -> {template mode: why a model so configured cannot answer it}; the planner leaves such
    # (model, template) pairs out of the grid with that reason (babeleval.grid.holes)
    unsupported_modes: Callable[[Any], Mapping[str, str]] = lambda config: {}
    # honours a request's answer_slot (constrained answers); a job of a backend that does not is refused them
    constrains_answers: bool = False

    @property
    def calls_api(self) -> bool:
        """Whether the model answers over an API (a client per template) rather than loaded in the job."""
        return self.api_resource is not None


BACKENDS: Registry[BackendType] = Registry("backend")


def register(name: str, config: type[ModelConfig], load: Callable[[ModelConfig, str], Backend], *, gpu: bool,
             conda_env: str, api_resource: Callable[[Any], str] | None = None,
             shared_prefix: bool = False,
             unsupported_modes: Callable[[Any], Mapping[str, str]] | None = None,
             constrains_answers: bool = False) -> BackendType:
    """Add a backend (from the package or an extension file); a name taken or an unclassified setting is refused."""
    if name in BACKENDS:
        raise ConfigError(f"backend '{name}' is already registered; rename it")
    if not (isinstance(config, type) and issubclass(config, ModelConfig)):
        raise ConfigError(f"backend '{name}': its config must be a dataclass deriving from ModelConfig")
    unclassified = [f.name for f in fields(config) if ROLE not in f.metadata and f.name not in NOT_SETTINGS]
    if unclassified:
        raise ConfigError(f"backend '{name}': {config.__name__} has setting{'s' if len(unclassified) > 1 else ''} "
                          f"{', '.join(unclassified)} without a role: declare each with "
                          "babeleval.generate.fingerprint.setting(default, role)")
    if api_resource is not None and not issubclass(config, APIConfig):
        raise ConfigError(f"backend '{name}': an API backend's config derives from APIConfig (its jobs hold "
                          "'concurrency' units of its resource)")
    return BACKENDS.add(name, BackendType(name, config, load, gpu, conda_env, api_resource, shared_prefix,
                                          unsupported_modes or (lambda config: {}), constrains_answers))


def get_backend(name: str) -> BackendType:
    return BACKENDS[name]


# Keys of a model entry that the grid reads, not the backend: which tasks (and templates) the model runs.
GRID_KEYS = ("tasks",)


def model_settings() -> tuple[str, ...]:
    """Every model setting some registered backend declares, in registration order: the keys a model entry may hold."""
    return tuple(dict.fromkeys(f.name for backend in BACKENDS.values() for f in declared_settings(backend.config)))


def model_config(entry: Mapping[str, Any]) -> ModelConfig:
    """The typed config of a params.yaml model entry; a ConfigError says what is wrong (the caller names the entry).

    A setting another backend declares is accepted and ignored, as the schema accepts it; one no backend
    declares is refused.
    """
    backend = get_backend(entry.get("backend"))
    known = model_settings()
    unknown = [key for key in entry if key not in known and key not in GRID_KEYS]
    if unknown:
        raise ConfigError(f"{', '.join(unknown)}: not a setting of any backend (settings: {', '.join(known)})")
    own = {f.name for f in declared_settings(backend.config)}
    return backend.config(**{key: value for key, value in entry.items() if key in own},
                          given=tuple(key for key in entry if key not in GRID_KEYS))


def load_backend(model: ModelConfig | Mapping[str, Any], model_path: str) -> Backend:
    """Load the backend a model's config (or its params.yaml entry) names; ``model_path``: a hub id, a local
    directory or a served model name. The loader's imports run with the garbage collector paused
    (``babeleval.core.gc_pause``)."""
    config = model if isinstance(model, ModelConfig) else model_config(model)
    with collector_paused():
        return get_backend(config.backend).load(config, model_path)


def _load_hf(config: HFConfig, model_path: str) -> Backend:
    try:
        from .hf import HFBackend
    except ImportError as exc:
        raise BackendError(f"backend 'hf' needs torch and transformers ({exc.name} is missing): "
                           "pip install 'babeleval[hf]'") from None
    imports_done()  # torch and transformers: their garbage frozen, not walked again (core.gc_pause)
    return HFBackend(config, model_path)


def _load_vllm(config: VLLMConfig, model_path: str) -> Backend:
    from .vllm import VLLMBackend  # imports vllm itself, with a clear message when it is not installed

    return VLLMBackend(config, model_path)


def _load_openai(config: OpenAIConfig, model_path: str) -> Backend:
    from .openai_api import OpenAIBackend  # standard library only

    return OpenAIBackend(config, model_path)


register("hf", HFConfig, _load_hf, gpu=True, conda_env="envs/gpu.yaml", shared_prefix=True, constrains_answers=True)
register("vllm", VLLMConfig, _load_vllm, gpu=True, conda_env="envs/vllm.yaml")
def _openai_unsupported(config: OpenAIConfig) -> dict[str, str]:
    """A chat endpoint returns no log-probabilities of the prompt's tokens: no log-likelihood template on it."""
    if config.endpoint_kind == "completions":
        return {}
    return {"loglikelihood": "log-likelihood template on a chat endpoint (it returns no prompt log-probabilities; "
                             "endpoint: completions on a server that echoes them can score it)"}


register("openai", OpenAIConfig, _load_openai, gpu=False, conda_env="envs/api.yaml",
         api_resource=rate_limit_resource, unsupported_modes=_openai_unsupported, constrains_answers=True)
