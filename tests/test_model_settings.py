"""One table says which model settings change outputs: the cache key and the rescoring decision agree on it."""

from __future__ import annotations

import pytest
import yaml

from babeleval.generate.backends.chat import build_messages
from babeleval.generate.cache import request_key
from babeleval.generate.fingerprint import (BACKENDS, IGNORED, MODEL_SETTINGS, OUTPUT, REQUEST, SPEED, model_fingerprint,
                                   output_settings, setting_role)
from babeleval.generate.job import _payload


def schema_model_keys(repo_root) -> tuple[set[str], list[str]]:
    schema = yaml.safe_load((repo_root / "workflow/schemas/params.schema.yaml").read_text(encoding="utf-8"))
    model = schema["properties"]["models"]["additionalProperties"]
    return set(model["properties"]), model["properties"]["backend"]["enum"]


def test_every_model_key_the_schema_allows_is_classified_for_every_backend(repo_root):
    keys, backends = schema_model_keys(repo_root)
    assert sorted(backends) == sorted(BACKENDS)
    unclassified = keys - set(MODEL_SETTINGS)
    assert not unclassified, f"add these model settings to babeleval.generate.fingerprint.MODEL_SETTINGS: {sorted(unclassified)}"
    assert set(MODEL_SETTINGS) == keys, f"settings the schema no longer allows: {sorted(set(MODEL_SETTINGS) - keys)}"
    for key, roles in MODEL_SETTINGS.items():
        assert set(roles) == set(BACKENDS), key
        assert set(roles.values()) <= {OUTPUT, REQUEST, SPEED, IGNORED}, key


def test_a_setting_missing_from_the_table_is_an_error_not_a_guess():
    with pytest.raises(KeyError, match="quantization"):
        output_settings({"backend": "vllm", "model": "org/m", "quantization": "awq"})


# A second, schema-valid value for every model setting (the base entries below hold the first).
CHANGED = {
    "model": "org/other-model", "builtin": "tiny-llama", "revision": "0123abcd", "dtype": "bfloat16",
    "device": "cuda:1", "batch_size": 64, "max_length": 512, "add_bos_token": True, "trust_remote_code": True,
    "max_new_tokens": 7, "chat": False, "system_prompt": "Réponds en une lettre. 一文字で答えてください。",
    "fewshot_as_turns": True, "chat_template": "other.jinja", "tensor_parallel_size": 2,
    "gpu_memory_utilization": 0.5, "base_url": "https://llm.example.org/v1", "endpoint": "completions",
    "api_key_env": "OTHER_KEY", "concurrency": 16, "timeout": 5, "max_retries": 0, "backoff_base": 0.5,
    "backoff_max": 9, "request_deadline": 30, "max_retry_after": 3, "rate_limit_resource": "api_other",
}
OTHER_BACKEND = {"hf": "vllm", "vllm": "hf", "openai": "hf"}


def base_entries(tmp_path) -> list[dict]:
    (tmp_path / "base.jinja").write_text("{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}")
    (tmp_path / "other.jinja").write_text("{% for m in messages %}<{{ m.role }}>{{ m.content }}\n{% endfor %}")
    chat = {"chat": True, "system_prompt": "Answer with one letter.", "fewshot_as_turns": False,
            "chat_template": str(tmp_path / "base.jinja")}
    local = {"model": "org/hub-model", "revision": "main", "dtype": "float16", "device": "cpu", "batch_size": 4,
             "max_length": 256, "add_bos_token": False, "trust_remote_code": False, "max_new_tokens": 32}
    api = {"model": "served-model-2024-01-01", "base_url": "https://api.example.com/v1", "endpoint": "chat",
           "api_key_env": "EXAMPLE_KEY", "concurrency": 4, "timeout": 60, "max_retries": 6, "backoff_base": 1,
           "backoff_max": 60, "request_deadline": 900, "max_retry_after": 600, "rate_limit_resource": "api_example",
           "max_new_tokens": 32}
    entries = []
    weights = tmp_path / "weights"  # a local directory: identified by its content, whatever the revision
    weights.mkdir()
    (weights / "config.json").write_text('{"model_type": "llama"}')
    for extra in ({}, chat):
        entries.append({"backend": "hf", **local, **extra})
        entries.append({"backend": "hf", **local, "model": str(weights), **extra})
        entries.append({"backend": "vllm", **local, "tensor_parallel_size": 1, "gpu_memory_utilization": 0.9,
                        **extra})
        entries.append({"backend": "openai", **api, **({**extra, "chat_template": None} if extra else {})})
    return [{k: v for k, v in entry.items() if v is not None} for entry in entries]


def model_path(spec: dict) -> str:
    # as workflow/rules/common.smk places a builtin model
    return f"results/models/{spec['builtin']}" if "builtin" in spec else spec["model"]


def cache_key(spec: dict, request: dict) -> str:
    """The response cache key of one request, as babeleval.generate.job computes it."""
    # the model's cap on new tokens enters the request's generation settings (generation_settings in common.smk)
    settings = {"mode": "generate", "max_new_tokens": min(32, spec.get("max_new_tokens") or 32), "stop": ["\n"]}
    messages = build_messages(request, spec) if spec.get("chat") else None
    return request_key(model_fingerprint(spec, model_path(spec)), "generate", settings,
                       _payload("generate", request, messages))


REQUEST_ROW = {"id": "q1", "prompt": "Q: 2+2?\nA: 3\n\nQ: Hauptstadt?\nA:", "exemplar_ids": ["e1"],
               "exemplar_turns": [{"user": "Q: 2+2?", "assistant": "A: 3"}], "query": "Q: Hauptstadt?\nA:"}


def changed(spec: dict, key: str, tmp_path) -> dict:
    if key == "backend":
        return {**spec, "backend": OTHER_BACKEND[spec["backend"]]}
    if key == "builtin":
        return {**{k: v for k, v in spec.items() if k != "model"}, "builtin": CHANGED["builtin"]}
    if key == "chat_template":
        return {**spec, "chat_template": str(tmp_path / CHANGED["chat_template"])}
    if key == "chat":
        return {**spec, "chat": not spec.get("chat")}
    return {**spec, key: CHANGED[key]}


def test_each_setting_changes_the_cache_key_exactly_when_it_changes_the_rescoring_decision(tmp_path):
    seen = {backend: set() for backend in BACKENDS}
    for base in base_entries(tmp_path):
        for key in MODEL_SETTINGS:
            role = setting_role(base, key)
            after = changed(base, key, tmp_path)
            fingerprint_moved = model_fingerprint(after, model_path(after)) != model_fingerprint(base, model_path(base))
            key_moved = cache_key(after, REQUEST_ROW) != cache_key(base, REQUEST_ROW)
            rescored = output_settings(after) != output_settings(base)
            where = f"{base['backend']} (chat: {bool(base.get('chat'))}) {key} [{role}]"
            assert key_moved == rescored, where
            assert fingerprint_moved == (role == OUTPUT), where
            assert rescored == (role in (OUTPUT, REQUEST)), where
            seen[base["backend"]].add(key)
    assert all(keys == set(MODEL_SETTINGS) for keys in seen.values())


def test_speed_settings_keep_the_fingerprint_and_the_default_run_keeps_its_fingerprint():
    api = {"backend": "openai", "model": "gpt-x-2024", "base_url": "https://api.example.com/v1/", "chat": True}
    assert model_fingerprint(api, "gpt-x-2024") == {"backend": "openai", "model": "gpt-x-2024", "chat": True,
                                                    "base_url": "https://api.example.com/v1", "endpoint": "chat"}
    hub = {"backend": "hf", "model": "org/m", "batch_size": 8}
    # the fingerprint of an entry without the newer output settings is what it always was (caches stay valid)
    assert model_fingerprint(hub, "org/m") == {"backend": "hf", "model": "org/m", "revision": "main",
                                               "dtype": "auto", "add_bos_token": None, "max_length": None}
    assert model_fingerprint({**hub, "trust_remote_code": True}, "org/m")["trust_remote_code"] is True
