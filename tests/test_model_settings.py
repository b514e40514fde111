"""Each model setting is declared once, with its role, on its backend's config: the cache key and the
rescoring decision are derived from those declarations and agree on them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

import model_entries
from babeleval.core.errors import ConfigError
from babeleval.generate.backends import BACKENDS, GRID_KEYS, model_config
from babeleval.generate.backends.chat import build_messages
from babeleval.generate.cache import request_key
from babeleval.generate.fingerprint import (IGNORED, OUTPUT, REQUEST, ROLE, SPEED, declared_settings,
                                            model_fingerprint, output_settings, setting_role)
from babeleval.generate.job import _payload
from babeleval.grid.params import load_schema

BUILT_IN = ("hf", "vllm", "openai")


def schema_model_keys(repo_root) -> set[str]:
    """The model keys the schema allows that are backend settings (``tasks`` is the grid's: GRID_KEYS)."""
    schema = yaml.safe_load((repo_root / "workflow/schemas/params.schema.yaml").read_text(encoding="utf-8"))
    return set(schema["properties"]["models"]["additionalProperties"]["properties"]) - set(GRID_KEYS)


def test_every_model_key_the_schema_allows_is_classified_for_every_backend(repo_root):
    keys = schema_model_keys(repo_root)
    assert list(BACKENDS)[:3] == list(BUILT_IN)
    settings = set(built_in_settings())
    assert keys - settings == set(), f"declare these settings on a backend's config: {sorted(keys - settings)}"
    assert settings - keys == set(), f"settings params.schema.yaml does not describe: {sorted(settings - keys)}"
    for name in BUILT_IN:  # every setting has a role for every backend: its own, or ignored
        config = model_config({"backend": name, "model": "org/m", "base_url": "https://x.example/v1"})
        assert {setting_role(config, key) for key in keys} <= {OUTPUT, REQUEST, SPEED, IGNORED}, name
    model = load_schema()["properties"]["models"]["additionalProperties"]["properties"]
    assert model["backend"]["enum"] == list(BACKENDS)  # derived from the registry


def test_a_setting_missing_from_every_config_is_an_error_not_a_guess():
    with pytest.raises(ConfigError, match="quantization: not a setting of any backend"):
        output_settings(model_config({"backend": "vllm", "model": "org/m", "quantization": "awq"}))


def test_the_roles_and_the_fingerprint_are_what_the_hand_kept_table_gave(tmp_path, monkeypatch):
    """Every entry of a wide set (tests/model_entries.py) keeps its fingerprint (so its response cache), its
    output settings in the entry's order, and the role of every setting, as the table before typed configs had
    them (tests/data/model_settings_golden.json, written by that table)."""
    golden = json.loads((Path(__file__).parent / "data/model_settings_golden.json").read_text(encoding="utf-8"))
    model_entries.make_files(tmp_path)
    monkeypatch.chdir(tmp_path)  # a builtin model is found where the workflow builds it, relative to here
    seen = {}
    for ident, raw in model_entries.entries():
        entry = model_entries.fill(raw, tmp_path)
        config = model_config(entry)
        roles = {key: setting_role(config, key) for key in built_in_settings() if key not in (*SCHEDULING, *WEIGHTS, *SPENDING)}
        seen[ident] = model_entries.outcome_digest(model_fingerprint(config, config.model_path()),
                                                   output_settings(config), roles, tmp_path)
    assert seen.keys() == golden.keys()
    assert [ident for ident in golden if seen[ident] != golden[ident]] == []


# Settings added after the hand-kept table, which only change speed: what the model's jobs ask a scheduler
# for, and hf's torch_compile (the test above checks that they change neither the cache key nor the
# rescoring decision).
SCHEDULING = ("params_b", "resources", "torch_compile")
# Spending caps and prices of API models (tests/test_spending_cap.py): they stop a job, never change an answer
SPENDING = ("max_tokens", "max_cost", "prices")
# A setting added after it that names the weights: it enters the fingerprint through them (gguf_file: the float copy
# converted from the file, with the file's SHA-256; tests/test_gguf.py)
WEIGHTS = ("gguf_file",)


def built_in_settings() -> list[str]:
    """The settings the built-in backends declare (params.schema.yaml's model keys), in declaration order."""
    return list(dict.fromkeys(f.name for backend in BUILT_IN for f in declared_settings(BACKENDS[backend].config)))


# A second, schema-valid value for every model setting (the base entries below hold the first).
CHANGED = {
    "model": "org/other-model", "builtin": "tiny-llama", "revision": "0123abcd", "dtype": "bfloat16",
    "device": "cuda:1", "batch_size": 64, "max_length": 512, "add_bos_token": True, "trust_remote_code": True,
    "max_new_tokens": 7, "chat": False, "system_prompt": "Réponds en une lettre. 一文字で答えてください。",
    "fewshot_as_turns": True, "chat_template": "other.jinja", "tensor_parallel_size": 2,
    "gpu_memory_utilization": 0.5, "base_url": "https://llm.example.org/v1", "endpoint": "completions",
    "api_key_env": "OTHER_KEY", "concurrency": 16, "timeout": 5, "max_retries": 0, "backoff_base": 0.5,
    "backoff_max": 9, "request_deadline": 30, "max_retry_after": 3, "rate_limit_resource": "api_other",
    "params_b": 70, "resources": {"mem_mb": 1000}, "torch_compile": True, "gguf_file": "other.Q8_0.gguf",
    "max_tokens": 1000, "prices": {"prompt": 1.0, "completion": 2.0},
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


def cache_key(config, request: dict) -> str:
    """The response cache key of one request, as babeleval.generate.job computes it."""
    # the model's cap on new tokens enters the request's generation settings (generation_settings in common.smk)
    settings = {"mode": "generate", "max_new_tokens": min(32, config.max_new_tokens or 32), "stop": ["\n"]}
    messages = build_messages(request, config) if config.chat else None
    return request_key(model_fingerprint(config, config.model_path()), "generate", settings,
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
    if key == "max_cost":  # counted in the model's prices
        return {**spec, "max_cost": 5.0, "prices": CHANGED["prices"]}
    return {**spec, key: CHANGED[key]}


def test_each_setting_changes_the_cache_key_exactly_when_it_changes_the_rescoring_decision(tmp_path):
    settings = built_in_settings()
    seen = {backend: set() for backend in BUILT_IN}
    for entry in base_entries(tmp_path):
        base = model_config(entry)
        for key in settings:
            role = setting_role(base, key)
            try:
                after = model_config(changed(entry, key, tmp_path))
            except ConfigError:  # a chat API model has no endpoint but chat
                assert (base.backend, base.chat, key) == ("openai", True, "endpoint")
                continue
            fingerprint_moved = (model_fingerprint(after, after.model_path())
                                 != model_fingerprint(base, base.model_path()))
            key_moved = cache_key(after, REQUEST_ROW) != cache_key(base, REQUEST_ROW)
            rescored = output_settings(after) != output_settings(base)
            where = f"{base.backend} (chat: {base.chat}) {key} [{role}]"
            assert key_moved == rescored, where
            assert fingerprint_moved == (role == OUTPUT), where
            assert rescored == (role in (OUTPUT, REQUEST)), where
            seen[base.backend].add(key)
    assert all(keys == set(settings) for keys in seen.values())


def test_speed_settings_keep_the_fingerprint_and_the_default_run_keeps_its_fingerprint():
    api = {"backend": "openai", "model": "gpt-x-2024", "base_url": "https://api.example.com/v1/", "chat": True}
    assert model_fingerprint(model_config(api), "gpt-x-2024") == {
        "backend": "openai", "model": "gpt-x-2024", "chat": True, "base_url": "https://api.example.com/v1",
        "endpoint": "chat"}
    hub = {"backend": "hf", "model": "org/m", "batch_size": 8}
    # the fingerprint of an entry without the newer output settings is what it always was (caches stay valid)
    assert model_fingerprint(model_config(hub), "org/m") == {"backend": "hf", "model": "org/m", "revision": "main",
                                                             "dtype": "auto", "add_bos_token": None, "max_length": None}
    assert model_fingerprint(model_config({**hub, "trust_remote_code": True}), "org/m")["trust_remote_code"] is True


def test_output_settings_keep_the_entry_as_written():
    entry = {"max_new_tokens": 24, "batch_size": 8, "device": "cpu", "dtype": "float32", "builtin": "tiny-llama",
             "backend": "hf", "timeout": 5}  # the API's timeout: ignored by hf
    assert list(output_settings(model_config(entry)).items()) == [
        ("max_new_tokens", 24), ("dtype", "float32"), ("builtin", "tiny-llama"), ("backend", "hf")]


def test_the_settings_table_in_docs_models_says_what_the_configs_declare(repo_root):
    text = (repo_root / "docs/models.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)` \| ([^|]+) \| ([^|]+) \| ([^|]+) \|", text, re.M)
    documented = {name: dict(zip(BUILT_IN, (cell.split()[0] for cell in cells))) for name, *cells in rows}
    assert sorted(documented) == sorted(built_in_settings())
    for name, roles in documented.items():
        for backend, role in roles.items():
            declared = {f.name: f.metadata[ROLE] for f in declared_settings(BACKENDS[backend].config)}.get(name, "–")
            if name == "builtin" and backend != "hf":
                continue  # declared by every config, but params.schema.yaml gives a builtin model to hf only
            assert role == declared, (name, backend)
