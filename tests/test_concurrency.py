"""Two runs on one directory: the second refuses with a clear message while the first runs (and after it was
killed, until unlocked); jobs of one model, in parallel processes, share the response cache under its lock
(babeleval.generate.cache_lock, which holds on NFS) and lose nothing."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from babeleval.core.errors import StateError
from babeleval.generate import cache_lock
from babeleval.generate.cache import ResponseCache
from babeleval.grid.run_lock import RESUME
from babeleval.core.jsonl import read_jsonl, write_jsonl
from conftest import copy_workflow, snakemake
from fake_openai import FakeOpenAI
from test_cache_resume import KEY, KEY_ENV, api_model, chat_requests, run_child

# the project's messages (babeleval.grid.run_lock), not Snakemake's advice to --unlock a live run's lock
RUNNING = ["another Snakemake is running in this directory", "Wait for it to finish"]
KILLED = ["was stopped before it finished", "that process no longer runs", RESUME]


def small_workflow(dest: Path) -> Path:
    workdir = copy_workflow(dest, tasks=("belebele",))
    params = yaml.safe_load((workdir / "params.yaml").read_text(encoding="utf-8"))
    params["tasks"]["belebele"].update(languages=["eng_Latn"], templates=["instruct", "paper"], limit=4)
    (workdir / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    return workdir


def wait_for(condition, proc, what, timeout=600.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert proc.poll() is None, f"the first run ended before {what}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def refused(workdir: Path, expected: list[str]) -> str:
    proc = snakemake(workdir, check=False)
    seen = proc.stdout + proc.stderr
    assert proc.returncode != 0, seen[-3000:]
    for pattern in expected:
        assert pattern in seen, seen[-3000:]
    assert "--cleanup-metadata" not in seen and "the --unlock argument" not in seen, seen[-3000:]
    return seen


@pytest.mark.workflow
@pytest.mark.slow
def test_second_run_refuses_while_the_first_runs_and_after_it_was_killed(tmp_path):
    workdir = small_workflow(tmp_path / "wf")
    first = subprocess.Popen([sys.executable, "-m", "snakemake", "--cores", "2", "--resources", "gpu=1"], cwd=workdir,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        wait_for(lambda: (workdir / "results/logs/build_builtin_model/tiny-llama.log").exists(), first, "the first job")
        before = sorted(p.relative_to(workdir) for p in (workdir / "results").rglob("*"))
        assert f"(pid {first.pid} on" in refused(workdir, RUNNING)  # while the first run works, naming it
        assert first.poll() is None, "the second run stopped the first"
        # the refusal touched nothing of the first run's
        assert set(before) <= {p.relative_to(workdir) for p in (workdir / "results").rglob("*")}
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    # a killed run leaves its lock: the next run refuses, naming the killed run and giving the resume command, which
    # resumes it (--rerun-incomplete: the kill may have come in the middle of a job, the model's build on a busy machine)
    refused(workdir, KILLED)
    snakemake(workdir, "--unlock")
    snakemake(workdir, "--rerun-incomplete")
    assert (workdir / "results/leaderboard.csv").exists()
    assert "Nothing to be done" in snakemake(workdir, "-n").stdout


def _writer(path: str, worker: int, rounds: int) -> None:
    cache = ResponseCache(path)
    for r in range(rounds):
        # overlapping keys between the workers, and keys of their own
        cache.put_many({f"shared-{r}-{k}": {"response": str(k), "finish_reason": "stop"} for k in range(20)}
                       | {f"w{worker}-{r}-{k}": {"response": f"{worker}/{r}", "finish_reason": "stop"}
                          for k in range(20)})
        assert cache.get_many([f"w{worker}-{r}-0"]) == {f"w{worker}-{r}-0": {"response": f"{worker}/{r}",
                                                                             "finish_reason": "stop"}}
    cache.close()


def test_concurrent_jobs_share_the_response_cache(tmp_path):
    """Writers of one model's cache (two runs, or one run's parallel jobs) each hold the cache's lock in turn."""
    path = str(tmp_path / "cache" / "model.sqlite")
    ResponseCache(path).close()
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(path, w, 40)) for w in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
        assert w.exitcode == 0
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert db.execute("SELECT COUNT(*) FROM responses").fetchone() == (40 * 20 + 4 * 40 * 20,)
    assert not Path(f"{path}.lock").exists()


@pytest.mark.workflow
def test_parallel_generation_jobs_of_one_model_lose_no_answer(tmp_path):
    """Six generation jobs of one API model in six processes at once, committing every two answers into one
    cache: each job's own prompts and prompts all of them share. Every answer is in the cache, the file is
    intact, and each job run again asks for nothing."""
    cache = str(tmp_path / "results/cache/gpt.sqlite")
    shared = chat_requests("shared", 12)
    with FakeOpenAI(delay=0.01) as server:
        jobs = []
        for n in range(6):
            prompts = tmp_path / "prompts" / f"job{n}.jsonl"
            write_jsonl(prompts, chat_requests(f"lang{n}", 10) + shared)
            model = api_model(server, concurrency=2)
            jobs.append({**model, "request_files": {"all": str(prompts)}, "cache_path": cache, "flush_every": 2,
                         "output_files": {"all": str(tmp_path / "out" / f"job{n}.jsonl")}})
        procs = [run_child(args, env={KEY_ENV: KEY}, wait=False) for args in jobs]
        for proc in procs:
            out, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, err[-3000:]
        asked = len(server.requests)
        db = sqlite3.connect(cache)
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert db.execute("SELECT COUNT(*) FROM responses").fetchone() == (6 * 10 + 12,)
        db.close()
        assert 6 * 10 + 12 <= asked <= 6 * 10 + 6 * 12  # a shared prompt is asked at most once per job
        for args in jobs:
            again = run_child(args, env={KEY_ENV: KEY})
            assert json.loads(again.stdout) == {"requests": 22, "cache_hits": 22, "computed": 0}, again.stderr
            assert len(read_jsonl(args["output_files"]["all"])) == 22
        assert len(server.requests) == asked


def test_a_lock_whose_holder_is_gone_is_taken_over_and_a_live_one_is_waited_for(tmp_path):
    path = tmp_path / "model.sqlite"
    ResponseCache(path).put_many({"k": {"response": "x", "finish_reason": "stop"}})
    lock = Path(f"{path}.lock")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    lock.write_text(f"{socket.gethostname()} {dead.stdout.strip()} token")  # a holder killed while holding it
    assert ResponseCache(path).get_many(["k"]) == {"k": {"response": "x", "finish_reason": "stop"}}
    assert not lock.exists()

    lock.write_text(f"{socket.gethostname()} {os.getpid()} token")  # a live holder (this process)
    with pytest.raises(StateError, match=r"model\.sqlite\.lock: the response cache stayed locked by another "
                                         r"process for 0 s; wait for the other run to finish, or, if no run"):
        with cache_lock.CacheLock(path, wait=0.3).held():
            pass
    lock.write_text("another-node 1 token")  # a holder on another host, gone long ago
    os.utime(lock, (time.time() - cache_lock.STALE_SECONDS - 1,) * 2)
    with cache_lock.CacheLock(path, wait=5).held():
        assert lock.read_text().startswith(socket.gethostname())
    assert not lock.exists()
