"""What a model's settings are: one typed config per backend, each setting declared once with its default.

A params.yaml model entry becomes a frozen config of its backend's class (``model_config`` in
``babeleval.generate.backends``); the backends read their settings from it and from nowhere else, so the
defaults below are the ones they use. Each field is a ``setting`` (``babeleval.generate.fingerprint``): its
default, its role (changes outputs, changes requests, changes speed) and, for a setting that changes
outputs, how its value enters the model fingerprint. A setting of another backend is ignored by this one.

- ``ModelConfig``: what every backend reads (the model, chat, the cap on new tokens);
- ``LocalConfig``: a model run in the job from a hub id or a checkpoint directory (hf, vllm);
- ``APIConfig``: a model behind an HTTP API (concurrency, timeouts, retries, the rate-limit resource);
- one concrete class per built-in backend: ``HFConfig``, ``VLLMConfig``, ``OpenAIConfig``.

This module never imports torch.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core.errors import ConfigError
from ...core.paths import BUILT_MODEL, CONVERTED_GGUF
from .. import gguf
from ..spend import Cap
from ..fingerprint import (OUTPUT, REQUEST, SPEED, declared_settings, directory_hash, file_sha256, if_set,
                           nothing, served_name, setting, without_trailing_slash)


def chat_off(config: "ModelConfig") -> bool:
    """Chat settings are read only for chat models."""
    return not config.chat


def local_weights(config: "LocalConfig") -> bool:
    """A built model, a GGUF file or a local directory: identified by its content, so a hub revision does not
    apply."""
    return config.builtin is not None or config.gguf_source() is not None or Path(config.model).is_dir()


def weights(name: str, config: "ModelConfig", model_path: str) -> dict[str, Any]:
    """A local directory or a built model by its content, and the GGUF file it was converted from (its SHA-256
    and quantization); a hub id with its revision."""
    if Path(model_path).is_dir():
        fingerprint: dict[str, Any] = {"weights_sha256": directory_hash(Path(model_path))}
        source = gguf.source_of(model_path)
        if source is not None:
            fingerprint["gguf"] = {"sha256": source["sha256"], "quantization": source["quantization"]}
        return fingerprint
    return {name: model_path, "revision": "main" if config.revision is None else config.revision}


@dataclass(frozen=True)
class ModelConfig:
    """The settings every backend reads."""

    backend: str = setting("", OUTPUT)
    model: str | None = setting(None, OUTPUT, enters=served_name)  # what the backend loads or asks for
    builtin: str | None = setting(None, OUTPUT, enters=nothing)  # the built weights: the model path names them
    revision: str | None = setting(None, OUTPUT, enters=if_set)
    chat: bool = setting(False, OUTPUT, enters=if_set)
    system_prompt: str | None = setting(None, REQUEST, ignored_if=chat_off)  # in the messages
    fewshot_as_turns: bool = setting(False, REQUEST, ignored_if=chat_off)  # in the messages
    max_new_tokens: int | None = setting(None, REQUEST)  # in each request's generation settings
    # What its jobs ask a scheduler for (babeleval.grid.resources decides, from workflow/resources.yaml):
    # the model's size in billions of parameters, and overrides of its jobs' GPUs, CPUs, memory and time
    params_b: float | None = setting(None, SPEED)
    resources: dict[str, int] | None = setting(None, SPEED)
    # The settings the params.yaml entry gives, in its order: the rescoring decision lists them as written
    # (fingerprint.output_settings). A config made in code gives those that differ from their defaults.
    given: tuple[str, ...] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self.backend:
            raise ConfigError("backend: missing")
        if (self.model is None) == (self.builtin is None):
            raise ConfigError("give exactly one of 'model' (hub id or directory) or 'builtin'")
        if self.given is None:
            changed = [f.name for f in declared_settings(self) if getattr(self, f.name) != f.default]
            object.__setattr__(self, "given", tuple(dict.fromkeys(["backend", *changed])))

    def model_path(self) -> str:
        """What the backend loads or asks for: a builtin model where the workflow builds it, else ``model``."""
        return BUILT_MODEL.format(builtin=self.builtin) if self.builtin is not None else self.model

    def gguf_source(self) -> str | None:
        """The GGUF file the workflow converts for this model (local backends only: ``LocalConfig``)."""
        return None


# Settings a config holds besides its declared settings (none of them is a params.yaml key).
NOT_SETTINGS = ("given",)


@dataclass(frozen=True)
class LocalConfig(ModelConfig):
    """A model the job runs itself, from a hub id or a checkpoint directory."""

    model: str | None = setting(None, OUTPUT, enters=weights)
    revision: str | None = setting(None, OUTPUT, enters=nothing, ignored_if=local_weights)  # enters with the id
    dtype: str = setting("auto", OUTPUT)
    add_bos_token: bool | None = setting(None, OUTPUT)  # None: the tokenizer's default (a chat template's)
    max_length: int | None = setting(None, OUTPUT)  # left truncation of long prompts; None: the model's own
    trust_remote_code: bool = setting(False, OUTPUT, enters=if_set)  # may select the model's own implementation
    chat_template: str | None = setting(None, OUTPUT, enters=file_sha256, ignored_if=chat_off)  # its content
    device: str = setting("auto", SPEED)
    batch_size: int = setting(8, SPEED)
    # a GGUF file in the folder ``model`` names (``model`` may also name the file itself): it enters the
    # fingerprint with the weights converted from it (``weights``)
    gguf_file: str | None = setting(None, OUTPUT, enters=nothing)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.gguf_file is not None:
            if self.builtin is not None or self.model.endswith(gguf.SUFFIX):
                raise ConfigError("gguf_file: names a file in the folder 'model' names; give it with a folder, "
                                  "or name the file in 'model' alone")
            if "/" in self.gguf_file or not self.gguf_file.endswith(gguf.SUFFIX):
                raise ConfigError(f"gguf_file: {self.gguf_file!r} is not a file name ending in {gguf.SUFFIX}")
        source = self.gguf_source()
        if source is not None and not re.fullmatch(r"[A-Za-z0-9._-]+", Path(source).name):
            raise ConfigError(f"model: the GGUF file name {Path(source).name!r} has characters other than letters, "
                              "digits, '.', '_' and '-': rename the file (its converted copy is named after it)")

    def gguf_source(self) -> str | None:
        """The GGUF file the entry names: ``model: <file>.gguf``, or ``model: <folder>`` with ``gguf_file``."""
        if self.gguf_file is not None:
            return str(Path(self.model) / self.gguf_file)
        if self.model is not None and self.model.endswith(gguf.SUFFIX):
            return self.model
        return None

    def model_path(self) -> str:
        """What the backend loads: a builtin model where the workflow builds it, a GGUF file's float copy where the
        workflow converts it, else ``model``."""
        source = self.gguf_source()
        if source is not None:
            return CONVERTED_GGUF.format(gguf=Path(source).name[: -len(gguf.SUFFIX)])
        return super().model_path()


@dataclass(frozen=True)
class HFConfig(LocalConfig):
    """transformers (``backend: hf``)."""

    backend: str = setting("hf", OUTPUT)
    torch_compile: bool = setting(False, SPEED)  # the log-likelihood passes through torch.compile (hf.py)


@dataclass(frozen=True)
class VLLMConfig(LocalConfig):
    """vLLM's offline engine (``backend: vllm``)."""

    backend: str = setting("vllm", OUTPUT)
    tensor_parallel_size: int | None = setting(None, SPEED)  # None: vLLM's default
    gpu_memory_utilization: float | None = setting(None, SPEED)  # None: vLLM's default


@dataclass(frozen=True)
class APIConfig(ModelConfig):
    """A model behind an HTTP API; its jobs hold ``concurrency`` units of its rate-limit resource."""

    base_url: str | None = setting(None, OUTPUT, enters=without_trailing_slash)
    api_key_env: str | None = setting(None, SPEED)  # whose account, never what it answers (nor a secret in a key)
    concurrency: int = setting(4, SPEED)  # requests in flight per job
    timeout: float = setting(60.0, SPEED)  # seconds for each connect and socket read
    max_retries: int = setting(6, SPEED)
    backoff_base: float = setting(1.0, SPEED)  # seconds, doubled per retry
    backoff_max: float = setting(60.0, SPEED)
    request_deadline: float = setting(900.0, SPEED)  # seconds for a whole request, retries included
    max_retry_after: float = setting(600.0, SPEED)  # the longest server Retry-After honoured
    rate_limit_resource: str | None = setting(None, SPEED)  # None: api_<host> (rate_limit_resource below)
    # A hard cap over every run of the checkout (babeleval.generate.spend): prompt and completion tokens, and cost in
    # the currency of ``prices`` (per million tokens, {prompt: ..., completion: ...}), which plan's forecast uses too
    max_tokens: int | None = setting(None, SPEED)
    max_cost: float | None = setting(None, SPEED)
    prices: dict[str, float] | None = setting(None, SPEED)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.base_url:
            raise ConfigError("base_url: missing (the API root, e.g. https://api.openai.com/v1)")
        if self.prices is not None and (not isinstance(self.prices, dict) or set(self.prices) != {"prompt", "completion"}
                                        or not all(_positive(v) or v == 0 for v in self.prices.values())):
            raise ConfigError(f"prices: {self.prices!r}: give {{prompt: <price>, completion: <price>}}, each per "
                              "million tokens, 0 or more")
        if self.max_cost is not None and (not _positive(self.max_cost) or self.prices is None):
            raise ConfigError(f"max_cost: {self.max_cost!r}: a positive amount, with the model's prices "
                              "({prompt: ..., completion: ...} per million tokens) to count it in")
        if self.max_tokens is not None and (not _positive(self.max_tokens) or not isinstance(self.max_tokens, int)):
            raise ConfigError(f"max_tokens: {self.max_tokens!r}: a positive whole number of tokens (prompt and "
                              "completion together, over every run)")

    def cap(self) -> Cap | None:
        """The spending cap the entry sets, if any."""
        if self.max_tokens is None and self.max_cost is None:
            return None
        return Cap(self.max_tokens, self.max_cost, self.prices)


def _positive(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def rate_limit_resource(config: APIConfig) -> str:
    """The Snakemake resource an API model's jobs hold: ``rate_limit_resource`` or ``api_<host>``.

    The host alone, as docs/models.md writes it: no port, no user name. Servers on two ports of one host share
    the name; a model entry gives its own (``rate_limit_resource``) where they should be limited apart.
    """
    if config.rate_limit_resource:
        return config.rate_limit_resource
    host = urlsplit(config.base_url.lower()).hostname or config.base_url.lower()
    return "api_" + re.sub(r"[^a-z0-9]+", "_", host).strip("_")


def resolved_endpoint(name: str, config: "OpenAIConfig", model_path: str) -> dict[str, Any]:
    """The endpoint kind, the default included (chat for a chat model)."""
    return {name: config.endpoint_kind}


@dataclass(frozen=True)
class OpenAIConfig(APIConfig):
    """An OpenAI-compatible server (``backend: openai``): OpenAI, OpenRouter, ``vllm serve``."""

    backend: str = setting("openai", OUTPUT)
    endpoint: str | None = setting(None, OUTPUT, enters=resolved_endpoint)  # chat or completions; None: endpoint_kind

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.chat and self.endpoint_kind != "chat":
            raise ConfigError("chat: true needs endpoint: chat (a completions endpoint takes plain text)")

    @property
    def endpoint_kind(self) -> str:
        """``/chat/completions`` (messages) or ``/completions`` (text): chat for a chat model unless set."""
        return self.endpoint or ("chat" if self.chat else "completions")
