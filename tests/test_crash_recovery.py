"""Crash recovery: a run SIGKILLed at several points, generation included, then rerun, ends byte-identical to an
uninterrupted run; finished generation work is reused; no truncated file is ever taken as complete.

The grid is the default one cut to two languages and two templates (log-likelihood and sampled generation), on a
dataset six times the bundled sample, so that a generation job commits several chunks to the response cache
and a kill can land between two of them.
"""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from babeleval import generate
from babeleval.backends import load_backend
from babeleval.jsonl import read_jsonl, write_jsonl
from conftest import copy_workflow, snakemake

LANGUAGES = ["eng_Latn", "jpn_Jpan"]
TEMPLATES = ["paper", "blog"]
COPIES = 6  # 24 sample rows x 6 = 144 items a language: 288 requests (5 chunks) a generation job
# Not compared: logs (timestamps), the response cache (its contents are what the logs check) and the usage
# files (what each run paid: a resumed run pays less, by design).
NOT_COMPARED = ("results/logs/", "results/cache/", "results/usage/")


def make_workflow(dest: Path) -> Path:
    workdir = copy_workflow(dest, tasks=("belebele",))
    for language in LANGUAGES:
        rows = [json.loads(line) for line in
                (workdir / "data/samples/belebele" / f"{language}.jsonl").read_text(encoding="utf-8").splitlines()]
        big = [{**row, "link": f"{row['link']}/copy{k}"} for k in range(COPIES) for row in rows]
        write_jsonl(workdir / "data/big/belebele" / f"{language}.jsonl", big)
    params = yaml.safe_load((workdir / "params.yaml").read_text(encoding="utf-8"))
    params["tasks"]["belebele"].update(languages=LANGUAGES, templates=TEMPLATES,
                                       source={"kind": "local", "path": "data/big/belebele"})
    (workdir / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    return workdir


def start(workdir: Path) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "snakemake", "--cores", "2", "--resources", "gpu=1"]
    return subprocess.Popen(cmd, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def kill_when(proc: subprocess.Popen, condition, what: str, timeout: float = 600) -> None:
    """SIGKILL the whole run (Snakemake and every job) as soon as ``condition()`` holds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return
        if proc.poll() is not None:
            raise AssertionError(f"the run ended before {what}:\n{proc.stdout.read()[-3000:]}")
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    raise AssertionError(f"timed out waiting for {what}")


def generate_log(workdir: Path, template: str) -> Path:
    return workdir / "results/logs/generate/tiny-llama/belebele" / f"{template}.log"


def progress(workdir: Path, template: str) -> tuple[int, int] | None:
    """(computed, to compute) from a running generation job's log, once it has committed a first chunk."""
    path = generate_log(workdir, template)
    found = re.findall(r"computed (\d+)/(\d+)", path.read_text(encoding="utf-8")) if path.exists() else []
    return tuple(map(int, found[-1])) if found else None


def mid_generation(workdir: Path, seen: dict):
    def condition():
        for template in TEMPLATES:
            done = progress(workdir, template)
            if done and done[0] < done[1]:
                seen[template] = done
                return True
        return False
    return condition


def incomplete_marks(workdir: Path) -> set[str]:
    """Outputs Snakemake has marked incomplete (their job started and did not finish): it reruns their jobs."""
    base = workdir / ".snakemake/incomplete"
    marks = set()
    for mark in base.rglob("*"):
        if mark.is_file():  # the URL-safe base64 of the path, cut into '@'-prefixed folders when long
            encoded = "".join(part.lstrip("@") for part in mark.relative_to(base).parts)
            marks.add(base64.urlsafe_b64decode(encoded).decode())
    return marks


def check_nothing_truncated_looks_complete(workdir: Path) -> None:
    """Every result file is whole, or Snakemake knows its job did not finish (and reruns it)."""
    marks = incomplete_marks(workdir)
    stray = [p for p in (workdir / "results").rglob("*.tmp")]
    for path in (workdir / "results").rglob("*"):
        rel = path.relative_to(workdir).as_posix()
        if not path.is_file() or rel.startswith(NOT_COMPARED) or path in stray:
            continue
        if any(rel == m or rel.startswith(m.rstrip("/") + "/") for m in marks):
            continue
        if rel.startswith("results/models/"):
            model_dir = workdir / "/".join(rel.split("/")[:3])
            assert (model_dir / ".snakemake_timestamp").exists(), f"{rel}: in an unfinished, unmarked model directory"
        elif path.suffix == ".jsonl":
            text = path.read_bytes().decode("utf-8")
            assert text.endswith("\n"), f"{rel} is truncated and not marked incomplete"
            for line in text.splitlines():
                json.loads(line)
        elif path.suffix == ".json":
            json.loads(path.read_bytes().decode("utf-8"))
    # a killed writer's temporary file is not an output: Snakemake never takes it as one, and the next write
    # of the same output removes it (checked at the end: no stray file survives the rerun)
    for path in stray:
        assert path.name.startswith("."), path


def rerun_until_killed(workdir: Path, condition, what: str) -> str:
    unlock(workdir)
    proc = start(workdir)
    kill_when(proc, condition, what)
    check_nothing_truncated_looks_complete(workdir)
    return proc.stdout.read()


def unlock(workdir: Path) -> None:
    """After a SIGKILL the run's lock stays: the rerun would refuse (see test_concurrency.py) until unlocked."""
    snakemake(workdir, "--unlock")


def tree(workdir: Path) -> dict[str, bytes]:
    return {p.relative_to(workdir).as_posix(): p.read_bytes() for p in sorted((workdir / "results").rglob("*"))
            if p.is_file() and not p.relative_to(workdir).as_posix().startswith(NOT_COMPARED)}


@pytest.mark.slow
def test_killed_runs_end_byte_identical_and_reuse_finished_work(tmp_path):
    reference = make_workflow(tmp_path / "reference")
    snakemake(reference)
    expected = tree(reference)
    assert any(name.startswith("results/generations/") for name in expected)

    workdir = make_workflow(tmp_path / "crashed")
    # 1. during the model build
    proc = start(workdir)
    kill_when(proc, lambda: (workdir / "results/logs/build_tiny_model/tiny-llama.log").exists(), "the model build")
    assert "results/models/tiny-llama" in incomplete_marks(workdir)
    check_nothing_truncated_looks_complete(workdir)

    # 2. in the middle of a generation job, after some chunks were committed to the response cache
    seen: dict[str, tuple[int, int]] = {}
    rerun_until_killed(workdir, mid_generation(workdir, seen), "a generation job's first chunks")
    [(killed_template, (computed, total))] = seen.items()
    assert f"results/generations/tiny-llama/belebele/eng_Latn/{killed_template}.jsonl" in incomplete_marks(workdir)
    assert not (workdir / "results/generations/tiny-llama/belebele/eng_Latn" / f"{killed_template}.jsonl").exists()

    # 3. during scoring, once the killed job has run again (other jobs' scoring may come before it)
    def killed_job_rerun_then_scoring():
        log = generate_log(workdir, killed_template)
        answered = re.search(r"cache: (\d+) of", log.read_text(encoding="utf-8")) if log.exists() else None
        rerun = answered is not None and int(answered.group(1)) > 0
        return rerun and any((workdir / "results/logs/score").rglob("*.log"))

    rerun_until_killed(workdir, killed_job_rerun_then_scoring, "scoring after the killed job's rerun")

    # the rerun answered the killed job's finished chunks from the cache and computed only the rest
    log = generate_log(workdir, killed_template).read_text(encoding="utf-8")
    answered = re.search(r"cache: (\d+) of (\d+) requests answered", log)
    assert answered, log
    assert int(answered.group(1)) >= computed > 0 and int(answered.group(2)) == total, log

    # 4. to the end
    unlock(workdir)
    snakemake(workdir)
    got = tree(workdir)
    assert sorted(got) == sorted(expected), "files differ: " + str(set(got) ^ set(expected))
    different = [name for name in expected if got[name] != expected[name]]
    assert not different, f"not byte-identical to the uninterrupted run: {different}"
    assert "Nothing to be done" in snakemake(workdir, "-n").stdout


class Crash(Exception):
    pass


@pytest.mark.parametrize("mode", ["loglikelihood", "generate-sampled"])
def test_resumed_generation_answers_like_an_uninterrupted_one(mode, tmp_path, tiny_model_dir):
    """Chunks commit whole, so what a resumed job still has to do is the uninterrupted job's last chunks, batched
    (and sampled) alike: sampled outputs and padded-batch log-likelihoods come out byte-identical."""
    spec = {"backend": "hf", "dtype": "float32", "device": "cpu", "batch_size": 3}
    requests = [{"id": f"q{i}", "language": "eng_Latn", "prompt": f"Question {i}: {'why ' * (i % 7)}?\nAnswer:",
                 "continuations": [" A", " B", " C", " D"], "choices": list("abcd"), "answer": i % 4}
                for i in range(23)]
    write_jsonl(tmp_path / "prompts.jsonl", requests)
    if mode == "loglikelihood":
        settings = {"mode": "loglikelihood"}
    else:
        settings = {"mode": "generate", "do_sample": True, "temperature": 0.9, "top_p": 0.95, "top_k": 40,
                    "max_new_tokens": 6, "stop": [], "seed": 7}

    def run(name, loader=load_backend):
        return generate.run(model_spec=spec, model_path=str(tiny_model_dir), mode=settings["mode"], settings=settings,
                            request_files={"eng_Latn": str(tmp_path / "prompts.jsonl")},
                            output_files={"eng_Latn": str(tmp_path / name / "out.jsonl")},
                            cache_path=str(tmp_path / name / "cache.sqlite"), chunk_size=5, backend_loader=loader)

    run("uninterrupted")

    class Dying:
        """The real backend, killed after two chunks."""

        def __init__(self, spec, path):
            self.backend, self.calls = load_backend(spec, path), 0

        def __getattr__(self, name):
            method = getattr(self.backend, name)
            if name not in ("loglikelihood", "generate"):
                return method

            def call(*args, **kwargs):
                self.calls += 1
                if self.calls > 2:
                    raise Crash()
                return method(*args, **kwargs)
            return call

    with pytest.raises(Crash):
        run("resumed", Dying)
    assert not (tmp_path / "resumed" / "out.jsonl").exists()
    assert run("resumed") == {"requests": 23, "cache_hits": 10, "computed": 13}
    assert (tmp_path / "resumed" / "out.jsonl").read_bytes() == (tmp_path / "uninterrupted" / "out.jsonl").read_bytes()
    assert read_jsonl(tmp_path / "resumed" / "out.jsonl")[0]["id"] == "q0"
