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

from .jsonl import dumps

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


# Model settings that change only speed or robustness, never an output.
SPEED_ONLY_SETTINGS = frozenset({"batch_size", "device", "concurrency", "timeout", "max_retries", "backoff_base",
                                 "backoff_max", "request_deadline", "max_retry_after", "rate_limit_resource",
                                 "tensor_parallel_size", "gpu_memory_utilization"})


def output_settings(spec: dict[str, Any]) -> dict[str, Any]:
    """A model entry without its speed-only settings: a change to what is left must rescore."""
    return {key: value for key, value in spec.items() if key not in SPEED_ONLY_SETTINGS}


def model_fingerprint(spec: dict[str, Any], model_path: str) -> dict[str, Any]:
    """The settings that change a model's outputs: backend, weights, dtype, tokenisation and length limits.

    Settings that change only speed or robustness (batch size, device, concurrency, timeouts, retries) are left
    out, so changing them keeps the cache. A chat model adds ``chat`` and, when its entry overrides the
    tokenizer's template, that file's hash; the system prompt and exemplar turns enter the cache key through
    the messages themselves. An API model is identified by its server, endpoint kind and model name (use a
    dated snapshot name: an alias moves), never by anything secret.
    """
    if spec["backend"] == "openai":
        fingerprint = {
            "backend": "openai",
            "model": model_path,
            "base_url": spec["base_url"].rstrip("/"),
            "endpoint": spec.get("endpoint", "chat" if spec.get("chat") else "completions"),
        }
        if spec.get("revision"):
            fingerprint["revision"] = spec["revision"]
    else:
        local = Path(model_path)
        identity: dict[str, Any]
        if local.is_dir():
            identity = {"weights_sha256": directory_hash(local)}
        else:
            identity = {"model": model_path, "revision": spec.get("revision", "main")}
        fingerprint = {
            "backend": spec["backend"],
            **identity,
            "dtype": spec.get("dtype", "auto"),
            "add_bos_token": spec.get("add_bos_token"),
            "max_length": spec.get("max_length"),
        }
    if spec.get("chat"):
        fingerprint["chat"] = True
        if spec.get("chat_template"):
            template = Path(spec["chat_template"])
            fingerprint["chat_template_sha256"] = (hashlib.sha256(template.read_bytes()).hexdigest()
                                                   if template.is_file() else None)
    return fingerprint
