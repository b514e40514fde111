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


@pytest.mark.slow
def test_no_key_in_anything_a_run_writes_or_prints(tmp_path):
    workdir = copy_workflow(tmp_path / "wf", tasks=("belebele",))
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
