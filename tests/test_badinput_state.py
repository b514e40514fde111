"""Catalogue of bad inputs, part 6: the machine and the files a run keeps (tests/README.md).

A damaged or full response cache, invalid cache entries, a model path that is a file, a hub id while offline,
``device: cuda`` without CUDA and a full disk are each a named error with the path or key and what to do,
found before any model loads; none is called a bug.
"""

from __future__ import annotations

import errno
import logging
import sqlite3
import sys

import pytest

from babeleval.core import joblog
from babeleval.generate import preflight
from babeleval.generate.backends import model_config
from babeleval.generate.cache import NoCache, ResponseCache
from babeleval.grid.params import validate
from babeleval.core.errors import BabelevalError, ConfigError, MachineError, StateError
from babeleval.core.jsonl import write_jsonl
from babeleval.core.redact import MASK

from conftest import TINY_GRID

GEN = {"response": "La respuesta es (B)", "prompt_tokens": 12, "completion_tokens": 5, "finish_reason": "stop"}
LL = {"loglikelihoods": [-1.5, -0.25], "greedy": [False, True], "continuation_tokens": [1, 1], "prompt_tokens": 9}


def reported(exc: BaseException, caplog) -> str:
    """What a job's log says for ``exc`` escaping the job script."""
    with caplog.at_level(logging.ERROR):
        try:
            raise exc
        except BaseException:
            joblog._report(*sys.exc_info())
    return caplog.text


# -- the response cache --------------------------------------------------------------------------------------


@pytest.mark.parametrize("content", [b"this is not a database, just text" * 40, b"SQLite format 3\x00" + b"\xff" * 200],
                         ids=["text-file", "truncated-header"])
def test_a_damaged_cache_file_names_its_path_and_the_remedy(content, tmp_path, caplog):
    path = tmp_path / "cache" / "model.sqlite"
    path.parent.mkdir()
    path.write_bytes(content)
    with pytest.raises(StateError) as caught:
        cache = ResponseCache(path)
        cache.get_many(["k"])
    message = str(caught.value)
    assert message.startswith(f"{path}: the response cache cannot be read (")
    assert "delete it and run again (only cached responses are lost" in message
    assert "a bug" not in reported(caught.value, caplog)


def test_invalid_entries_are_misses_and_counted(tmp_path, caplog):
    path = tmp_path / "model.sqlite"
    cache = ResponseCache(path)
    cache.put_many({"good-gen": dict(GEN), "good-ll": dict(LL)})
    with sqlite3.connect(path) as db:  # what a hand edit, an old version or a bad disk may leave
        db.executemany("INSERT INTO responses VALUES (?, ?)",
                       [("empty", "{}"), ("null", "null"), ("list", "[1]"), ("cut", '{"response": "B'),
                        ("no-text", '{"finish_reason": "stop", "response": null}'),
                        ("bad-scores", '{"loglikelihoods": ["x"], "greedy": [true]}')])
    with caplog.at_level(logging.WARNING):
        found = cache.get_many(["good-gen", "good-ll", "empty", "null", "list", "cut", "no-text", "bad-scores"])
    assert found == {"good-gen": GEN, "good-ll": LL}
    assert f"cache: 6 entries in {path} are not a valid response (empty or damaged) and will be asked for again" \
        in caplog.text


def test_a_full_disk_while_caching_names_the_cache_file(tmp_path, caplog, monkeypatch):
    path = tmp_path / "model.sqlite"
    cache = ResponseCache(path)
    connect = ResponseCache._connect

    def small(self):
        db = connect(self)
        db.execute("PRAGMA max_page_count = 8")  # SQLite then answers exactly as on a full disk
        return db

    monkeypatch.setattr(ResponseCache, "_connect", small)
    with pytest.raises(MachineError) as caught:
        cache.put_many({f"k{i}": {**GEN, "response": "x" * 4000} for i in range(40)})
    assert str(caught.value).startswith(f"{path}: cannot write the response cache: database or disk is full; "
                                        "free space on that disk")
    assert "a bug" not in reported(caught.value, caplog)


def test_a_cache_in_a_directory_that_cannot_be_written_is_named(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(sqlite3, "connect", refuse)
    with pytest.raises(StateError, match=r"model\.sqlite: cannot open the response cache for writing"):
        ResponseCache(tmp_path / "model.sqlite")


def test_secrets_are_masked_before_storing_and_failures_are_not_stored(tmp_path, monkeypatch):
    monkeypatch.setenv("BABELEVAL_STATE_TOKEN", "tok-Δ-secret-91827364")
    cache = ResponseCache(tmp_path / "model.sqlite")
    record = {**GEN, "response": "答え: tok-Δ-secret-91827364 (B)"}
    failed = {"response": "", "prompt_tokens": None, "completion_tokens": None,
              "finish_reason": "error: malformed answer: 'usage' is str \"n/a\", not an object (after 3 attempts)"}
    cache.put_many({"ok": record, "failed": failed})
    assert record["response"] == f"答え: {MASK} (B)"  # masked in place: the generations file gets this copy
    assert cache.get_many(["ok", "failed"]) == {"ok": record}  # the failed item is asked for again next run
    assert b"tok-" not in (tmp_path / "model.sqlite").read_bytes()
    uncached = {**GEN, "response": "tok-Δ-secret-91827364"}
    NoCache().put_many({"k": uncached})
    assert uncached["response"] == MASK


# -- the model and the machine -------------------------------------------------------------------------------

PARAMS_MODEL = {"backend": "hf", "dtype": "float32"}


def check(model, root):
    preflight.check_model_location("mine", model_config({**PARAMS_MODEL, "model": model}), "params.yaml", root)


def test_a_model_path_that_is_a_file(tmp_path, caplog):
    (tmp_path / "model.safetensors").write_bytes(b"\0" * 64)
    with pytest.raises(ConfigError) as caught:
        check("./model.safetensors", tmp_path)
    assert str(caught.value) == ("params.yaml: models.mine.model: ./model.safetensors is a file, not a model "
                                 "directory: give the directory that holds the model's config.json and weights")
    assert "a bug" not in reported(caught.value, caplog)


def test_a_model_directory_without_config_and_a_missing_one(tmp_path):
    (tmp_path / "ckpt").mkdir()
    with pytest.raises(ConfigError, match=r"models\.mine\.model: directory \./ckpt has no config\.json"):
        check("./ckpt", tmp_path)
    with pytest.raises(ConfigError, match=r"models\.mine\.model: directory \./nowhere does not exist"):
        check("./nowhere", tmp_path)
    (tmp_path / "ckpt" / "config.json").write_text("{}")
    check("./ckpt", tmp_path)


def test_a_hub_id_while_offline_is_found_at_planning(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(MachineError) as caught:
        check("babeleval-org/llama-ja-7b", tmp_path)
    assert str(caught.value).startswith(
        f"params.yaml: models.mine.model: hub id 'babeleval-org/llama-ja-7b' is not in the local hub cache "
        f"({tmp_path / 'hub'}) and the hub is switched off")
    assert "huggingface-cli download babeleval-org/llama-ja-7b" in str(caught.value)
    assert "a bug" not in reported(caught.value, caplog)
    # once downloaded (a snapshot in the cache) it passes; online it is never checked
    (tmp_path / "hub" / "models--babeleval-org--llama-ja-7b" / "snapshots" / "0123abc").mkdir(parents=True)
    check("babeleval-org/llama-ja-7b", tmp_path)
    monkeypatch.delenv("HF_HUB_OFFLINE")
    check("babeleval-org/other", tmp_path)


def test_the_planning_check_runs_in_validate(tmp_path, repo_root):
    import yaml

    params = yaml.safe_load(TINY_GRID.read_text(encoding="utf-8"))
    (tmp_path / "weights.bin").write_bytes(b"\0")
    params["models"] = {"mine": {"backend": "hf", "model": "./weights.bin"}}
    with pytest.raises(ConfigError, match=r"models\.mine\.model: \./weights\.bin is a file"):
        validate(params, root=tmp_path)


def test_device_cuda_without_cuda_stops_before_the_weights_load(monkeypatch, caplog):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    loads = []
    load = preflight.checked_loader(lambda config, path: loads.append(path))
    with pytest.raises(MachineError) as caught:
        load(model_config({"backend": "hf", "model": "./checkpoints/tiny", "device": "cuda"}), "./checkpoints/tiny")
    assert str(caught.value).startswith("model ./checkpoints/tiny: device: cuda, but torch sees no CUDA device on "
                                        "this machine")
    assert "set device: auto" in str(caught.value) and loads == []
    assert "a bug" not in reported(caught.value, caplog)
    load(model_config({"backend": "hf", "model": "./checkpoints/tiny", "device": "cpu"}), "./checkpoints/tiny")
    api = {"backend": "openai", "model": "gpt-4o-mini-2024-07-18", "base_url": "https://api.openai.com/v1"}
    load(model_config({**api, "device": "cuda"}), "gpt-4o-mini-2024-07-18")  # an API model has no device
    assert loads == ["./checkpoints/tiny", "gpt-4o-mini-2024-07-18"]


def test_device_cuda_index_beyond_the_devices(monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    load = preflight.checked_loader(lambda config, path: path)
    assert load(model_config({"backend": "vllm", "model": "m", "device": "cuda:1"}), "m") == "m"
    with pytest.raises(MachineError, match=r"device: cuda:2, but torch sees 2 CUDA devices"):
        load(model_config({"backend": "vllm", "model": "m", "device": "cuda:2"}), "m")


def test_offline_hub_id_in_the_job_stops_before_loading(tmp_path, monkeypatch):
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    load = preflight.checked_loader(lambda config, path: pytest.fail("loaded"))
    with pytest.raises(MachineError, match=rf"model org/m: not in the local hub cache \({tmp_path / 'hf' / 'hub'}\)"):
        load(model_config({"backend": "hf", "model": "org/m"}), "org/m")


# -- a full disk ---------------------------------------------------------------------------------------------


def test_a_full_disk_while_writing_results_names_the_file(tmp_path, monkeypatch, caplog):
    import builtins
    import os

    real_fdopen = os.fdopen

    class Full:
        def __init__(self, handle):
            self.handle = handle

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.handle.close()

        def write(self, text):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fdopen", lambda *a, **k: Full(real_fdopen(*a, **k)))
    target = tmp_path / "results" / "generations" / "eng_Latn.jsonl"
    target.parent.mkdir(parents=True)
    with pytest.raises(OSError) as caught:
        write_jsonl(target, [{"id": "1", "response": "B"}])
    monkeypatch.setattr(os, "fdopen", real_fdopen)
    assert not builtins.any(target.parent.iterdir())  # no partial file left behind
    with caplog.at_level(logging.ERROR):
        joblog._report(type(caught.value), caught.value, caught.tb)
    assert f"cannot write {target}: No space left on device; the disk is full: free space on it and run again" \
        in caplog.text
    assert "a bug" not in caplog.text


def test_a_real_bug_is_still_called_a_bug(caplog):
    assert "unexpected KeyError (a bug, not a problem with your inputs)" in reported(KeyError("x"), caplog)
    assert issubclass(MachineError, BabelevalError) and issubclass(StateError, BabelevalError)


def test_a_hub_model_that_cannot_be_fetched_in_the_job_is_named(caplog):
    errors = pytest.importorskip("huggingface_hub.errors")
    try:
        try:
            raise errors.LocalEntryNotFoundError("Cannot find the requested files in the disk cache and outgoing "
                                                 "traffic has been disabled.")
        except Exception as inner:
            raise OSError("We couldn't connect to 'https://huggingface.co' to load the files") from inner
    except OSError as exc:
        text = reported(exc, caplog)
    assert ("the model could not be fetched from the Hugging Face hub (LocalEntryNotFoundError: Cannot find the "
            "requested files in the disk cache") in text
    assert "huggingface-cli download" in text and "a bug" not in text


@pytest.mark.workflow
@pytest.mark.slow
def test_a_damaged_cache_stops_the_run_while_it_is_planned(tmp_path):
    from conftest import copy_workflow, snakemake

    workdir = copy_workflow(tmp_path / "wf", tasks=("belebele",))
    cache = workdir / "results" / "cache" / "tiny-llama.sqlite"
    cache.parent.mkdir(parents=True)
    cache.write_text("model,answer\ntiny-llama,B\n", encoding="utf-8")  # a CSV saved over the cache
    proc = snakemake(workdir, check=False, timeout=300)
    seen = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert ("results/cache/tiny-llama.sqlite: the response cache cannot be read (not an SQLite database): it is "
            "damaged or not a cache file; delete it and run again") in seen
    assert "a bug" not in seen
    assert not (workdir / "results" / "models").exists() and not (workdir / "results" / "generations").exists()
