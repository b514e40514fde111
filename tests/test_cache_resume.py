"""The response cache under crashes: a job SIGKILLed half-way keeps what it finished, and the rerun computes
only the rest and writes byte-identical outputs. API jobs, their usage file, and keys that never reach disk."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI

from babeleval.generate import job as generate
from babeleval.generate.backends import load_backend, model_config
from babeleval.core.jsonl import read_jsonl, write_jsonl

KEY = "sk-test-NEVER-ON-DISK-fedcba9876543210"
KEY_ENV = "BABELEVAL_TEST_KEY"
LANGS = [("eng_Latn", 7), ("jpn_Jpan", 5)]

# Runs generate.run in a child process (the model given by its params.yaml entry); with kill_at=K it SIGKILLs
# itself when the backend is asked for its K-th chunk, i.e. after K-1 chunks were computed and committed and
# while the K-th is under way.
CHILD = r"""
import json, logging, os, signal, sys
sys.path.insert(0, sys.argv[2])
from test_cache_resume import run
from babeleval.core import joblog
from babeleval.generate.backends import load_backend
args = json.loads(sys.argv[1])
kill_at = args.pop("kill_at", None)
joblog.setup(args.pop("log_file", None))
def loader(config, path):
    backend = load_backend(config, path)
    for name in ("loglikelihood", "generate"):
        real, calls = getattr(backend, name), [0]
        def wrapped(*a, real=real, calls=calls):
            calls[0] += 1
            if calls[0] == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
            return real(*a)
        setattr(backend, name, wrapped)
    return backend
print(json.dumps(run(args, loader)))
"""


def run(args: dict, loader=load_backend) -> dict:
    """generate.run on the arguments a child gets as JSON (the model given by its entry), in this process."""
    model = generate.JobModel(model_config(args["entry"]), args["model_path"], args.get("model_name", ""),
                              args.get("spend_file"), loader)
    files = generate.JobFiles(args["request_files"], args["output_files"], args["cache_path"], args.get("usage_file"))
    batching = generate.Batching(**{key: args[key] for key in ("chunk_size", "flush_every", "flush_seconds")
                                    if key in args})
    return generate.run(model, args["mode"], args["settings"], files, batching)


def run_child(args: dict, env: dict | None = None, wait: bool = True):
    cmd = [sys.executable, "-c", CHILD, json.dumps(args), str(Path(__file__).parent)]
    full_env = {**os.environ, **(env or {})}
    if wait:
        return subprocess.run(cmd, capture_output=True, text=True, env=full_env, timeout=300)
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env)


def cache_rows(path: Path) -> int:
    if not path.exists():
        return 0
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    except sqlite3.OperationalError:  # table not created yet
        return 0
    finally:
        db.close()


def outputs(out_dir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out_dir.iterdir())}


def ll_requests(lang, n):
    return [{"id": f"{lang}-{i}", "language": lang, "prompt": f"[{lang}] passage {i} " + "word " * (i % 5) + "\nAnswer:",
             "continuations": [" A", " B", " C", " D"], "choices": ["a", "b", "c", "d"], "answer": i % 4,
             "exemplar_ids": []} for i in range(n)]


def chat_requests(lang, n):
    turns = [{"user": "Example passage.\nQuestion: which?\nAnswer:", "assistant": " B"}]
    rows = []
    for i in range(n):
        query = f"[{lang}] passage {i}.\nQuestion: which?\nAnswer:"
        rows.append({"id": f"{lang}-{i}", "language": lang, "prompt": turns[0]["user"] + turns[0]["assistant"]
                     + "\n\n" + query, "exemplar_ids": ["ex-1"], "exemplar_turns": turns, "query": query,
                     "choices": ["a", "b", "c", "d"], "answer": i % 4})
    return rows


def job_args(tmp_path: Path, name: str, make_rows, **overrides) -> dict:
    inputs = {}
    for lang, n in LANGS:
        inputs[lang] = str(tmp_path / "prompts" / f"{lang}.jsonl")
        if not Path(inputs[lang]).exists():
            write_jsonl(inputs[lang], make_rows(lang, n))
    args = dict(request_files=inputs, output_files={lang: str(tmp_path / name / "out" / f"{lang}.jsonl")
                                                    for lang in inputs},
                cache_path=str(tmp_path / name / "cache.sqlite"), usage_file=str(tmp_path / name / "usage.json"))
    args.update(overrides)
    return args


# -- a local model, SIGKILLed between chunks -----------------------------------------------------------


@pytest.mark.workflow
def test_sigkilled_hf_job_resumes_with_byte_identical_outputs(tmp_path, tiny_model_dir):
    model = dict(entry={"backend": "hf", "builtin": "tiny-llama", "dtype": "float32", "device": "cpu", "batch_size": 2},
                 model_path=str(tiny_model_dir), mode="loglikelihood", settings={"mode": "loglikelihood"},
                 chunk_size=3)
    reference = job_args(tmp_path, "reference", ll_requests, **model)
    assert run(reference)["computed"] == 12

    resumed = job_args(tmp_path, "resumed", ll_requests, **model)
    proc = run_child({**resumed, "kill_at": 3})
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    assert cache_rows(Path(resumed["cache_path"])) == 6  # two chunks of three were committed
    out_dir = Path(resumed["output_files"]["eng_Latn"]).parent
    assert not out_dir.exists() or not list(out_dir.iterdir())  # no output, not even a temporary file

    assert run(resumed) == {"requests": 12, "cache_hits": 6, "computed": 6}
    assert outputs(out_dir) == outputs(Path(reference["output_files"]["eng_Latn"]).parent)
    usage = json.loads(Path(resumed["usage_file"]).read_text())
    assert usage["computed"] == 6 and usage["cache_hits"] == 6 and usage["cache"] == "on"
    assert usage["tokens_computed"]["prompt"] < usage["tokens_all_requests"]["prompt"]


# -- an API model, SIGKILLed while the server holds requests ----------------------------------------------


@pytest.fixture
def server():
    with FakeOpenAI() as srv:
        yield srv


def api_model(server, **extra):
    spec = {"backend": "openai", "model": "chat-model-2024-01-01", "base_url": server.base_url,
            "api_key_env": KEY_ENV, "chat": True, "system_prompt": "Answer with a letter.",
            "fewshot_as_turns": True, "concurrency": 2, "max_retries": 3, "backoff_base": 0.01, **extra}
    settings = {"mode": "generate", "do_sample": True, "temperature": 0.7, "top_p": 0.9, "max_new_tokens": 8,
                "stop": ["\n"], "seed": 1234}
    return dict(entry=spec, model_path=spec["model"], mode="generate", settings=settings)


def wait_for(condition, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.01)


def test_sigkilled_api_job_resumes_paying_only_for_the_rest(tmp_path, server, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    model = api_model(server)
    reference = job_args(tmp_path, "reference", chat_requests, **model)
    assert run(reference)["computed"] == 12
    calls_reference = len(server.requests)
    assert calls_reference == 12

    resumed = job_args(tmp_path, "resumed", chat_requests, **model, flush_every=4, log_file=str(tmp_path / "job.log"))
    base = server.admitted
    server.hold_after(10)  # ten answers, then the server stalls: the job is stuck mid-run
    proc = run_child(resumed, wait=False)
    try:
        wait_for(lambda: server.admitted == base + 10 and cache_rows(Path(resumed["cache_path"])) == 8)
        time.sleep(0.2)
        assert cache_rows(Path(resumed["cache_path"])) == 8  # committed every 4 answers; 2 still buffered
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    server.release()
    sent_before = len(server.requests)

    resumed.pop("log_file")
    counts = run(resumed)
    assert counts == {"requests": 12, "cache_hits": 8, "computed": 4}
    assert len(server.requests) - sent_before == 4  # the rerun paid only for prompts never answered
    out_dir = Path(resumed["output_files"]["eng_Latn"]).parent
    assert outputs(out_dir) == outputs(Path(reference["output_files"]["eng_Latn"]).parent)

    record = read_jsonl(out_dir / "jpn_Jpan.jsonl")[0]
    assert record["messages"][0] == {"role": "system", "content": "Answer with a letter."}
    assert record["messages"][1:3] == [{"role": "user", "content": "Example passage.\nQuestion: which?\nAnswer:"},
                                       {"role": "assistant", "content": "B"}]
    assert record["response"].startswith("The correct answer is (")
    assert record["settings"]["seed"] == 1234
    usage = json.loads(Path(resumed["usage_file"]).read_text())
    assert usage["api"]["http_calls"] == 4 and usage["api"]["retries"] == 0
    assert usage["tokens_computed"]["completion"] == 4 * 5

    # sampled decoding is cached per seed: another seed pays again, the same seed does not
    other_seed = {**resumed, "settings": {**model["settings"], "seed": 99}}
    assert run(other_seed)["computed"] == 12
    assert run(resumed)["computed"] == 0


def test_api_errors_keep_what_finished(tmp_path, server, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    model = api_model(server, concurrency=1)
    args = job_args(tmp_path, "job", chat_requests, **model, flush_every=100, flush_seconds=100)
    server.script(*[("status", 200, {}, {"choices": [{"message": {"content": "(A)"}, "finish_reason": "stop"}]})] * 5,
                  ("status", 401, {}, {"error": {"message": "invalid key"}}))
    from babeleval.core.errors import BackendError
    with pytest.raises(BackendError, match="HTTP 401"):
        run(args)
    assert cache_rows(Path(args["cache_path"])) >= 5  # flushed on the way out, though no flush was due
    assert not Path(args["output_files"]["eng_Latn"]).exists()


def test_the_key_never_reaches_a_file_the_run_writes(tmp_path, server):
    model = api_model(server)
    args = job_args(tmp_path, "job", chat_requests, **model, log_file=str(tmp_path / "job" / "job.log"))
    (tmp_path / "job").mkdir()
    # a retried error whose message echoes the key, as OpenAI's 401 text does, goes to the log
    server.script(("status", 500, {}, {"error": {"message": f"upstream rejected {KEY}"}}))
    proc = run_child(args, env={KEY_ENV: KEY})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "retry 1/3" in (tmp_path / "job" / "job.log").read_text()
    assert server.requests[0]["headers"]["Authorization"] == f"Bearer {KEY}"  # it was used
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(written) >= 5
    for path in written:
        data = path.read_bytes()
        assert KEY.encode() not in data and b"NEVER-ON-DISK" not in data, path
    assert KEY not in proc.stdout + proc.stderr
