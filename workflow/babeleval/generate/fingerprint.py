"""Fingerprints: what identifies a model's outputs, for the response cache and provenance.

A hub model is identified by its id and revision (pin a commit: a branch name
moves). A local directory is identified by its content: small files are hashed
whole; weight shards over 64 MiB by size plus their first and last MiB, which
tells apart any two checkpoints in practice without reading gigabytes at every
job start.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from ..core.jsonl import dumps

WHOLE_FILE_LIMIT = 64 * 2**20
EDGE = 2**20


def digest(obj: Any) -> str:
    return hashlib.sha256(dumps(obj).encode("utf-8")).hexdigest()


def directory_hash(path: Path) -> str:
    h = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        size = file.stat().st_size
        h.update(f"{file.relative_to(path).as_posix()}\0{size}\0".encode())
        with file.open("rb") as handle:
            if size <= WHOLE_FILE_LIMIT:
                h.update(handle.read())
            else:
                h.update(handle.read(EDGE))
                handle.seek(size - EDGE)
                h.update(handle.read(EDGE))
    return h.hexdigest()


# Which model settings change a model's outputs, per backend. The response cache key (model_fingerprint) and
# the rescoring decision (output_settings) are both computed from this table, and a test checks that every
# model key params.schema.yaml allows is classified here, so a new setting cannot be forgotten.
#   OUTPUT:  part of the model fingerprint (cache key) and of the rescoring decision
#   REQUEST: changes outputs through each request itself (its messages or generation settings), which the
#            cache keys on; part of the rescoring decision, not of the fingerprint
#   SPEED:   changes only speed or robustness, never an output (kept out of both)
#   IGNORED: this backend does not read the setting (kept out of both)
OUTPUT, REQUEST, SPEED, IGNORED = "output", "request", "speed", "ignored"
BACKENDS = ("hf", "vllm", "openai")


def _roles(hf: str, vllm: str, openai: str) -> dict[str, str]:
    return {"hf": hf, "vllm": vllm, "openai": openai}


_LOCAL_ONLY_OUTPUT = _roles(OUTPUT, OUTPUT, IGNORED)
_LOCAL_ONLY_SPEED = _roles(SPEED, SPEED, IGNORED)
_API_ONLY_SPEED = _roles(IGNORED, IGNORED, SPEED)

MODEL_SETTINGS: dict[str, dict[str, str]] = {
    "backend": _roles(OUTPUT, OUTPUT, OUTPUT),
    "model": _roles(OUTPUT, OUTPUT, OUTPUT),  # weights (local directory: their content) or the served name
    "builtin": _roles(OUTPUT, OUTPUT, OUTPUT),  # the built weights' content
    "revision": _roles(OUTPUT, OUTPUT, OUTPUT),
    "dtype": _LOCAL_ONLY_OUTPUT,
    "add_bos_token": _LOCAL_ONLY_OUTPUT,
    "max_length": _LOCAL_ONLY_OUTPUT,  # left truncation of long prompts
    "trust_remote_code": _LOCAL_ONLY_OUTPUT,  # may select the model's own implementation over the library's
    "chat": _roles(OUTPUT, OUTPUT, OUTPUT),
    "chat_template": _LOCAL_ONLY_OUTPUT,  # chat models only; the file's content
    "system_prompt": _roles(REQUEST, REQUEST, REQUEST),  # chat models only; in the messages
    "fewshot_as_turns": _roles(REQUEST, REQUEST, REQUEST),  # chat models only; in the messages
    "max_new_tokens": _roles(REQUEST, REQUEST, REQUEST),  # in each request's generation settings
    "device": _LOCAL_ONLY_SPEED,
    "batch_size": _LOCAL_ONLY_SPEED,
    "tensor_parallel_size": _roles(IGNORED, SPEED, IGNORED),
    "gpu_memory_utilization": _roles(IGNORED, SPEED, IGNORED),
    "base_url": _roles(IGNORED, IGNORED, OUTPUT),
    "endpoint": _roles(IGNORED, IGNORED, OUTPUT),
    "api_key_env": _API_ONLY_SPEED,  # whose account, never what it answers (and never a secret in a cache key)
    "concurrency": _API_ONLY_SPEED,
    "timeout": _API_ONLY_SPEED,
    "max_retries": _API_ONLY_SPEED,
    "backoff_base": _API_ONLY_SPEED,
    "backoff_max": _API_ONLY_SPEED,
    "request_deadline": _API_ONLY_SPEED,
    "max_retry_after": _API_ONLY_SPEED,
    "rate_limit_resource": _API_ONLY_SPEED,
}

# Settings read only for chat models: ignored by every backend when ``chat`` is off.
CHAT_ONLY_SETTINGS = frozenset({"chat_template", "system_prompt", "fewshot_as_turns"})


def setting_role(spec: dict[str, Any], key: str) -> str:
    """OUTPUT, REQUEST, SPEED or IGNORED: what a model entry's setting does under its backend."""
    if key not in MODEL_SETTINGS:
        # params.schema.yaml refuses unknown model keys at validation, so only a new schema key reaches here
        raise KeyError(f"model setting {key!r} is not classified in babeleval.fingerprint.MODEL_SETTINGS")
    if key in CHAT_ONLY_SETTINGS and not spec.get("chat"):
        return IGNORED
    if key == "revision" and spec["backend"] != "openai" and _local_weights(spec):
        return IGNORED  # local weights are identified by their content; a hub revision does not apply
    return MODEL_SETTINGS[key][spec["backend"]]


def _local_weights(spec: dict[str, Any]) -> bool:
    return "builtin" in spec or Path(spec.get("model", "")).is_dir()


def output_settings(spec: dict[str, Any]) -> dict[str, Any]:
    """The settings of a model entry that change its outputs: a change to any of them must rescore."""
    return {key: value for key, value in spec.items() if setting_role(spec, key) in (OUTPUT, REQUEST)}


def _fingerprint_fields(spec: dict[str, Any], key: str, model_path: str) -> dict[str, Any]:
    """How one OUTPUT setting enters the fingerprint (absent settings at their default, as the backends read them)."""
    backend = spec["backend"]
    if key in ("model", "builtin"):
        if backend == "openai":
            return {"model": model_path}
        if Path(model_path).is_dir():  # a local directory or a built model: identified by its content
            return {"weights_sha256": directory_hash(Path(model_path))}
        return {"model": model_path, "revision": spec.get("revision", "main")}
    if key == "revision":
        if backend == "openai":
            return {"revision": spec["revision"]} if spec.get("revision") else {}
        return {}  # a hub model's revision enters with its id above; a local directory is its content
    if key == "base_url":
        return {"base_url": spec["base_url"].rstrip("/")}
    if key == "endpoint":
        return {"endpoint": spec.get("endpoint", "chat" if spec.get("chat") else "completions")}
    if key == "dtype":
        return {"dtype": spec.get("dtype", "auto")}
    if key in ("add_bos_token", "max_length"):
        return {key: spec.get(key)}
    if key in ("chat", "trust_remote_code"):
        return {key: True} if spec.get(key) else {}  # off, the default, leaves the fingerprint as it was
    if key == "chat_template":
        if not spec.get("chat_template"):
            return {}
        template = Path(spec["chat_template"])
        return {"chat_template_sha256": hashlib.sha256(template.read_bytes()).hexdigest() if template.is_file()
                else None}
    if key == "backend":
        return {"backend": backend}
    raise KeyError(f"model setting {key!r} is classified as changing outputs but has no fingerprint field")


def model_fingerprint(spec: dict[str, Any], model_path: str) -> dict[str, Any]:
    """What identifies a model's outputs: every setting MODEL_SETTINGS marks OUTPUT for the entry's backend.

    Speed-only settings (batch size, device, concurrency, timeouts, retries) are left out, so changing them
    keeps the cache. A chat model adds ``chat`` and, when its entry overrides the tokenizer's template, that
    file's hash; the system prompt and exemplar turns enter the cache key through the messages themselves.
    An API model is identified by its server, endpoint kind and model name (use a dated snapshot name: an
    alias moves), never by anything secret.
    """
    fingerprint: dict[str, Any] = {}
    # every OUTPUT setting of the backend, present in the entry or not: an absent one enters at its default
    for key, roles in MODEL_SETTINGS.items():
        if key == "builtin" or roles[spec["backend"]] != OUTPUT:
            continue  # builtin: model_path already names the built model ("model" below)
        if key in CHAT_ONLY_SETTINGS and not spec.get("chat"):
            continue
        fingerprint.update(_fingerprint_fields(spec, key, model_path))
    return fingerprint
