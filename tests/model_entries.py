"""A wide set of model entries, for the test that the settings' roles and the fingerprint stay what they were.

Every backend (hf, vllm, openai), chat absent, on and off, every way of naming a model (hub id with and
without revision, a local directory, a builtin model), and then: no optional setting, every one of them (in
the schema's order and reversed), and each alone with each of its values. ``{tmp}`` in an entry stands for
the test's directory, which holds the files ``files`` names (a local model directory, chat templates), and
``results/models/tiny-llama`` (the builtin model, as the workflow places it).

``tests/data/model_settings_golden.json`` holds, per entry id, a digest of what the hand-kept table of model
settings (``fingerprint.MODEL_SETTINGS``, which the typed configs replaced) gave for it: its fingerprint (with
the model path the workflow gives it), its output settings in order and the role of every setting.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterator

FILES = {
    "weights/config.json": '{"model_type": "llama"}',
    "weights/model.bin": "0123456789" * 50,
    "results/models/tiny-llama/config.json": '{"model_type": "llama", "hidden_size": 64}',
    "base.jinja": "{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}",
}

# Each optional setting with the values it is tried with (None: an explicit null where the schema allows one).
OPTIONAL = {
    "dtype": ["bfloat16", "auto"], "device": ["cpu", "cuda:1"], "batch_size": [4],
    "max_length": [256, None], "add_bos_token": [True, False, None], "trust_remote_code": [True, False],
    "max_new_tokens": [7, None], "system_prompt": ["Be brief.", None], "fewshot_as_turns": [True, False],
    "chat_template": ["{tmp}/base.jinja", "{tmp}/missing.jinja"], "tensor_parallel_size": [2],
    "gpu_memory_utilization": [0.5], "base_url": ["https://x.example/v1/"], "endpoint": ["chat", "completions"],
    "api_key_env": ["EXAMPLE_KEY"], "concurrency": [8], "timeout": [5], "max_retries": [0], "backoff_base": [0.5],
    "backoff_max": [9], "request_deadline": [30], "max_retry_after": [3], "rate_limit_resource": ["api_x"],
}

MODELS = {
    "hf": {"hub": {"model": "org/hub-model"}, "hub-rev": {"model": "org/hub-model", "revision": "0123abcd"},
           "hub-empty-rev": {"model": "org/hub-model", "revision": ""}, "dir": {"model": "{tmp}/weights"},
           "dir-rev": {"model": "{tmp}/weights", "revision": "0123abcd"}, "builtin": {"builtin": "tiny-llama"},
           "builtin-rev": {"builtin": "tiny-llama", "revision": "0123abcd"}},
    "vllm": {"hub": {"model": "org/hub-model"}, "hub-rev": {"model": "org/hub-model", "revision": "0123abcd"},
             "dir": {"model": "{tmp}/weights"}, "dir-rev": {"model": "{tmp}/weights", "revision": "0123abcd"}},
    "openai": {"served": {"model": "served-2024-01-01", "base_url": "https://api.example.com/v1"},
               "served-slash": {"model": "served-2024-01-01", "base_url": "https://api.example.com/v1/"},
               "served-rev": {"model": "served-2024-01-01", "base_url": "https://api.example.com/v1",
                              "revision": "2024-01"}},
}
CHAT = {"no-chat-key": {}, "chat": {"chat": True}, "chat-off": {"chat": False}}


def _valid(entry: dict[str, Any]) -> bool:
    """What params.schema.yaml and the model checks accept (a chat API model needs a chat endpoint)."""
    return not (entry["backend"] == "openai" and entry.get("chat") and entry.get("endpoint") == "completions")


def entries() -> Iterator[tuple[str, dict[str, Any]]]:
    """(id, entry) for every entry of the set, ``{tmp}`` not yet filled in."""
    for backend, models in MODELS.items():
        for kind, model in models.items():
            for chat_name, chat in CHAT.items():
                base = {"backend": backend, **model, **chat}
                every = {key: values[0] for key, values in OPTIONAL.items() if key not in base}
                variants = {"base": base, "every": {**base, **every},
                            "every-reversed": dict(reversed(list({**base, **every}.items())))}
                for key, values in OPTIONAL.items():
                    for number, value in enumerate(values):
                        variants[f"{key}={number}"] = {**base, key: value}
                for variant, entry in variants.items():
                    if _valid(entry):
                        yield f"{backend}/{kind}/{chat_name}/{variant}", entry


def fill(entry: dict[str, Any], tmp: Path) -> dict[str, Any]:
    return {key: value.replace("{tmp}", str(tmp)) if isinstance(value, str) else value for key, value in entry.items()}


def make_files(tmp: Path) -> None:
    for name, text in FILES.items():
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).write_text(text, encoding="utf-8")


def outcome_digest(fingerprint: dict, output_settings: dict, roles: dict[str, str], tmp: Path) -> str:
    """One digest of what an entry gave: its fingerprint, its output settings in order, every setting's role."""
    text = json.dumps({"fingerprint": fingerprint, "output_settings": list(output_settings.items()),
                       "roles": sorted(roles.items())}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.replace(str(tmp), "{tmp}").encode("utf-8")).hexdigest()[:16]
