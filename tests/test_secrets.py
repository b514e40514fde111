"""Secrets: no key a user holds in the environment appears in anything a run writes or prints.

A whole run gets keys in every variable a user might hold them in; afterwards every file the run wrote
(results/, the prepared data, Snakemake's logs, metadata and job scripts under .snakemake/) and everything it
printed is scanned for them, raw and in the encodings a leak could take (base64 and JSON escapes).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import copy_workflow

SECRETS = {
    "OPENAI_API_KEY": "sk-babeleval-test-4f1c9e0b7a2d",
    "OPENROUTER_API_KEY": "sk-or-v1-babeleval-test-77aa",
    "HF_TOKEN": "hf_babelevalTestTokenQ9x",
    "HUGGING_FACE_HUB_TOKEN": "hf_babelevalTestTokenZ3y",
    "BABELEVAL_API_KEY": "babeleval-custom-secret-0d5e",
}


def encodings(secret: str) -> list[bytes]:
    raw = secret.encode()
    return [raw, base64.b64encode(raw), base64.urlsafe_b64encode(raw), json.dumps(secret).encode()[1:-1]]


def leaks(data: bytes) -> list[str]:
    return [name for name, secret in SECRETS.items() if any(form in data for form in encodings(secret))]


def written_files(workdir: Path, before: set[Path]) -> list[Path]:
    return [p for p in workdir.rglob("*") if p.is_file() and p not in before]


@pytest.mark.workflow
@pytest.mark.slow
def test_no_key_in_anything_a_run_writes_or_prints(tmp_path, built_tiny_model):
    workdir = copy_workflow(tmp_path / "wf", tasks=("belebele",), built=built_tiny_model)
    params = yaml.safe_load((workdir / "params.yaml").read_text(encoding="utf-8"))
    params["tasks"]["belebele"].update(languages=["eng_Latn", "jpn_Jpan"], limit=3)
    (workdir / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    before = set(p for p in workdir.rglob("*") if p.is_file())

    env = {**os.environ, **SECRETS}
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2", "--resources", "gpu=1"], cwd=workdir,
                          env=env, capture_output=True, timeout=900)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-3000:]

    files = written_files(workdir, before)
    scanned = {p.relative_to(workdir).parts[0] for p in files}
    assert {"results", ".snakemake", "data"} <= scanned  # the outputs, Snakemake's records, the prepared data
    assert any(".snakemake/log" in p.as_posix() for p in files) and any("metadata" in p.as_posix() for p in files)
    found = {p.relative_to(workdir).as_posix(): leaks(p.read_bytes()) for p in files}
    assert not {path: names for path, names in found.items() if names}
    assert not leaks(proc.stdout) and not leaks(proc.stderr)


def test_scanner_finds_a_planted_key(tmp_path):
    """The scan itself works: a key written raw, base64'd or JSON-escaped is found."""
    secret = SECRETS["OPENAI_API_KEY"]
    for form in encodings(secret):
        assert leaks(b"header " + form + b" trailer") == ["OPENAI_API_KEY"]


@pytest.mark.workflow
@pytest.mark.slow
def test_no_key_on_disk_when_endpoints_echo_it(tmp_path, built_tiny_model):
    """Endpoints that echo the key in answers, retried error bodies, malformed replies and a 401: the run stops
    for the 401 (and says so) but nothing it wrote or printed holds a key."""
    from fake_openai import FakeOpenAI

    key, denied_key = SECRETS["OPENAI_API_KEY"], SECRETS["OPENROUTER_API_KEY"]
    workdir = copy_workflow(tmp_path / "wf", tasks=("belebele",), built=built_tiny_model)
    params = yaml.safe_load((workdir / "params.yaml").read_text(encoding="utf-8"))
    params["tasks"]["belebele"].update(languages=["eng_Latn", "jpn_Jpan"], templates=["instruct"], limit=3)
    before = set(p for p in workdir.rglob("*") if p.is_file())
    with FakeOpenAI(echo_auth=True) as echoing, FakeOpenAI() as denying:
        common = {"backend": "openai", "chat": True, "concurrency": 1, "max_retries": 1, "backoff_base": 0.01,
                  "backoff_max": 0.02}
        params["models"] = {
            "api-echo": {**common, "model": "echo-2024-01-01", "base_url": echoing.base_url,
                         "api_key_env": "OPENAI_API_KEY"},
            "api-denied": {**common, "model": "denied-2024-01-01", "base_url": denying.base_url,
                           "api_key_env": "OPENROUTER_API_KEY"},
        }
        (workdir / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
        echoing.script(("status", 500, {}, {"error": {"message": f"upstream rejected Bearer {key}"}}),
                       ("status", 200, {}, {"choices": f"{key}", "usage": {"prompt_tokens": 1}}),
                       ("status", 200, {}, {"choices": [{"message": f"{key}"}], "usage": "n/a"}))
        denying.script(*[("status", 401, {}, {"error": {"message": f"Incorrect API key provided: {denied_key}",
                                                        "code": "invalid_api_key"}})] * 4)
        env = {**os.environ, **SECRETS}
        proc = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2", "--keep-going"], cwd=workdir,
                              env=env, capture_output=True, timeout=900)
        assert any(f"Bearer {key}" == r["headers"].get("Authorization") for r in echoing.requests)
        assert any(f"Bearer {denied_key}" == r["headers"].get("Authorization") for r in denying.requests)

    assert proc.returncode != 0  # the 401 stops its job, and the run says it did not finish
    files = written_files(workdir, before)
    generations = [p for p in files if "generations" in p.parts and "api-echo" in p.parts]
    assert generations
    text = "\n".join(p.read_text(encoding="utf-8") for p in generations)
    assert "(heard Bearer [redacted])" in text  # the echoed key was there, masked
    assert "error: malformed answer" in text  # the item whose replies were malformed twice is recorded as failed
    denied_logs = [p for p in files if "logs" in p.parts and "api-denied" in p.parts]
    assert any("HTTP 401" in p.read_text(encoding="utf-8") for p in denied_logs)
    found = {p.relative_to(workdir).as_posix(): leaks(p.read_bytes()) for p in files}
    assert not {path: names for path, names in found.items() if names}
    assert not leaks(proc.stdout) and not leaks(proc.stderr)


# -- the masking itself ----------------------------------------------------------------------------------------


def test_every_secret_variable_is_masked_in_values(monkeypatch):
    from babeleval.core import redact

    monkeypatch.setenv("HF_TOKEN", SECRETS["HF_TOKEN"])
    monkeypatch.setenv("MY_SERVICE_PASSWORD", "pässwort-ÜBER-geheim")
    monkeypatch.setenv("FEATURE_TOKEN", "1")  # too short to be a secret: a "1" in an answer stays
    monkeypatch.setenv("BABELEVAL_RESULTS_DIR", "just-a-setting-value")
    redact.register("registered-key-under-any-name-42")
    text = (f"token {SECRETS['HF_TOKEN']}; Passwort pässwort-ÜBER-geheim; 答え 1; just-a-setting-value; "
            "registered-key-under-any-name-42")
    assert redact.redact_values(text) == "token [redacted]; Passwort [redacted]; 答え 1; just-a-setting-value; [redacted]"


def test_credential_shapes_are_masked_in_messages_only():
    from babeleval.core import redact

    message = "401: Incorrect key sk-proj-Abc123456789, header Authorization: Bearer eyJhbGciOi.J9x_y-z, hf_AbCdEfGh1234"
    assert redact.redact(message) == ("401: Incorrect key [redacted], header Authorization: Bearer [redacted], "
                                      "[redacted]")
    answer = "Die Antwort ist (B): sk-learning-rate is a made-up word"
    assert redact.redact_values(answer) == answer  # model answers keep their text unless it is a known secret


def test_job_log_masks_messages_and_tracebacks(tmp_path, monkeypatch):
    import logging

    from babeleval.core import joblog

    monkeypatch.setenv("OPENAI_API_KEY", SECRETS["OPENAI_API_KEY"])
    log_file = tmp_path / "job.log"
    joblog.setup(str(log_file))
    try:
        logging.getLogger("babeleval.test").warning("retrying with %s", SECRETS["OPENAI_API_KEY"])
        try:
            raise RuntimeError(f"server said {SECRETS['OPENAI_API_KEY']}")
        except RuntimeError:
            joblog._report(*sys.exc_info())
    finally:
        for handler in logging.getLogger().handlers:
            handler.flush()
        logging.getLogger().handlers.clear()
        sys.excepthook = sys.__excepthook__
    text = log_file.read_text(encoding="utf-8")
    assert "retrying with [redacted]" in text and "RuntimeError: server said [redacted]" in text
    assert not leaks(text.encode())
