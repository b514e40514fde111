"""An API model in the workflow: Snakemake against the scripted server, a run-wide request cap, no key on disk."""

import csv
import json
import subprocess
import sys

import pytest
import yaml
from conftest import SHIPPED, copy_workflow
from fake_openai import FakeOpenAI

pytestmark = [pytest.mark.slow, pytest.mark.workflow]

KEY = "sk-wf-NEVER-ON-DISK-0123456789abcdef"
KEY_ENV = "BABELEVAL_WF_KEY"


def run_snakemake(workdir, *args, env=None):
    cmd = [sys.executable, "-m", "snakemake", "--cores", "2", *args]
    proc = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode == 0, f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def test_api_model_runs_capped_and_leaves_no_key(tmp_path, monkeypatch):
    workdir = copy_workflow(tmp_path / "wf", tasks=("belebele",), generation_job=SHIPPED)  # a log per template
    with FakeOpenAI(delay=0.05) as server:
        params = yaml.safe_load((workdir / "params.yaml").read_text(encoding="utf-8"))
        params["models"] = {"api-chat": {
            "backend": "openai", "model": "chat-model-2024-01-01", "base_url": server.base_url,
            "api_key_env": KEY_ENV, "chat": True, "system_prompt": "Answer with the letter only.",
            "concurrency": 4, "rate_limit_resource": "api_fake", "max_retries": 2, "backoff_base": 0.01,
        }}
        task = params["tasks"]["belebele"]
        task.update(languages=["eng_Latn", "jpn_Jpan"], templates=["instruct"], limit=6)
        (workdir / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
        server.script(("status", 429, {"Retry-After": "0.1"}, {"error": {"message": f"slow down {KEY}"}}))

        monkeypatch.setenv(KEY_ENV, KEY)
        # the job wants 4 requests in flight; the run allows 2 on this endpoint
        run_snakemake(workdir, "--resources", "gpu=1", "api_fake=2")

        assert 1 <= server.peak_in_flight <= 2
        assert len(server.requests) == 12 + 1
        assert all(r["headers"]["Authorization"] == f"Bearer {KEY}" for r in server.requests)
        assert server.requests[-1]["body"]["messages"][0] == {"role": "system",
                                                              "content": "Answer with the letter only."}

    results = workdir / "results"
    rows = list(csv.DictReader((results / "leaderboard.csv").open(encoding="utf-8")))
    acc = {r["language"]: r for r in rows if r["metric"] == "acc" and r["model"] == "api-chat"}
    assert set(acc) == {"eng_Latn", "jpn_Jpan"} and all(r["n"] == "6" for r in acc.values())
    parse = [r for r in rows if r["metric"] == "parse_failure_rate"]
    assert parse and all(float(r["value"]) == 0.0 for r in parse)  # "The correct answer is (X)" parses

    usage = json.loads((results / "usage/api-chat/belebele/instruct.json").read_text())
    assert usage["computed"] == 12 and usage["api"]["http_calls"] == 13 and usage["api"]["retries"] == 1
    assert usage["tokens_computed"]["completion"] == 12 * 5
    log = (results / "logs/generate/api-chat/belebele/instruct.log").read_text()
    assert "api_fake: 2 requests in flight at most" in log and "retry 1/2" in log

    # the key was used, but no file the run wrote holds it: results, logs, cache, Snakemake's metadata
    written = [p for p in workdir.rglob("*") if p.is_file()]
    assert any(".snakemake" in p.parts for p in written)
    for path in written:
        assert KEY.encode() not in path.read_bytes(), path
