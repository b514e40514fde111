"""Crash recovery: a run SIGKILLed at many instants over its whole length, then resumed with the documented
command, ends byte-identical to an uninterrupted run; finished generation work is reused; a resume exits 0 only
when every target exists; no truncated file is ever taken as complete.

The instants come from the job timeline of the run (each line where Snakemake starts or finishes a job), spread
evenly over it, plus the instants that are easy to miss: inside a generation job after a first chunk was
committed to the response cache, just after a generation job wrote its outputs (before Snakemake marked it
finished), and during aggregation. The grid is Belebele in two languages and two templates (log-likelihood and
sampled generation) on a dataset twice the bundled sample, so that a generation job commits more than one chunk.

What a kill leaves is taken from one run, stopped at each instant while its directory is copied
(``run_with_snapshots``): each case resumes its copy, and the run, finished, is the uninterrupted reference.
"""

from __future__ import annotations

import base64
import json
import math
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from babeleval.generate import job as generate
from babeleval.generate.backends import load_backend
from babeleval.generate.backends.config import HFConfig
from babeleval.core.jsonl import read_jsonl, write_jsonl
from conftest import copy_workflow, snakemake

LANGUAGES = ["eng_Latn", "jpn_Jpan"]
TEMPLATES = ["paper", "blog"]
COPIES = 2  # 24 sample rows x 2 = 48 items a language: 96 requests a generation job, 2 chunks of at most 64
EVENLY_SPACED = 7  # kill points taken at even intervals of the uninterrupted run's job timeline
# Not compared: logs (timestamps), the response cache (its contents are what the logs check) and the usage
# files (what each run paid: a resumed run pays less, by design).
NOT_COMPARED = ("results/logs/", "results/cache/", "results/usage/")
TARGETS = ["results/leaderboard.csv", "results/leaderboard.md", "results/metrics.json", "results/report.html",
           "results/tables/by_template.csv", "results/tables/by_language.csv"]
# Snakemake's lines that open and close a job
JOB_EVENT = re.compile(r"^(?:(?:local)?rule (\S+):|Finished jobid: \d+ \(Rule: (\S+)\))$")
CACHE = "results/cache/tiny-llama.sqlite"


def make_workflow(dest: Path, generation_job: str = "template") -> Path:
    """The grid, with one generation job per template, or one for the whole task (workflow/resources.yaml)."""
    workdir = copy_workflow(dest, tasks=("belebele",), generation_job=generation_job)
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


def start(workdir: Path, *args: str) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "snakemake", "--cores", "2", "--resources", "gpu=1", *args]
    return subprocess.Popen(cmd, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def resume(workdir: Path) -> subprocess.CompletedProcess:
    """The documented resume command (docs/troubleshooting.md): unlock, then the run with --rerun-incomplete."""
    snakemake(workdir, "--unlock")
    return snakemake(workdir, "--rerun-incomplete", check=False)


def job_events(lines) -> list[str]:
    """'start <rule>' / 'finish <rule>' for each job line of a Snakemake log, in order."""
    events = []
    for line in lines:
        found = JOB_EVENT.match(line.strip())
        if found:
            events.append(f"start {found.group(1)}" if found.group(1) else f"finish {found.group(2)}")
    return events


class KillPoint:
    """An instant of a run: once ``due(events)`` holds for the job lines printed so far (checked on each line as it
    is printed), or once ``condition(workdir)`` first holds (checked every 10 ms)."""

    def __init__(self, name: str, due=None, condition=None):
        self.name, self.due, self.condition = name, due, condition

    def __repr__(self) -> str:
        return self.name


def run_with_snapshots(workdir: Path, points: dict[str, KillPoint], copies: Path, timeout: float = 900) -> list[str]:
    """Run the grid once without a kill, and at each point copy the directory to ``copies / name`` with the run
    stopped: Snakemake and every job get SIGSTOP (the whole process group at once, as a kill would take it), the
    directory is copied, and SIGCONT lets them go on. What a SIGKILL at that instant leaves on disk is exactly what
    the copy holds: a stopped process writes nothing more, and a killed one writes nothing at all. The run's job
    lines are returned; its finished directory is the uninterrupted reference.

    One run serves all its points, instead of one partial run each: the kill cases then only resume."""
    proc = start(workdir)
    events: list[str] = []
    pending = dict(points)
    guard = threading.Lock()

    def snapshot(name: str) -> None:
        os.killpg(proc.pid, signal.SIGSTOP)
        try:
            shutil.copytree(workdir, copies / name, symlinks=True)
        finally:
            os.killpg(proc.pid, signal.SIGCONT)

    def take(check) -> None:
        with guard:
            for name in [n for n, point in pending.items() if check(point)]:
                del pending[name]
                snapshot(name)

    def follow_the_log():  # the job lines are read as Snakemake prints them; the copy comes on the very line
        for line in proc.stdout:
            events.extend(job_events([line]))
            take(lambda point: point.due is not None and point.due(events))

    reader = threading.Thread(target=follow_the_log, daemon=True)
    reader.start()
    deadline = time.monotonic() + timeout
    while proc.poll() is None:
        take(lambda point: point.condition is not None and point.condition(workdir))
        if time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            raise AssertionError(f"the run with kill points timed out; not reached: {sorted(pending)}")
        time.sleep(0.01)
    reader.join()
    assert proc.returncode == 0, f"the run with kill points failed ({proc.returncode}): {events}"
    assert not pending, f"the run ended before the kill points {sorted(pending)}: {events}"
    return events


def generate_logs(workdir: Path) -> list[Path]:
    """The generation jobs' logs: one a template, or one for the task."""
    return sorted((workdir / "results/logs/generate").rglob("*.log"))


def mid_generation(workdir: Path) -> bool:
    """A generation job has committed a first chunk to the response cache and has more to compute."""
    for path in generate_logs(workdir):
        found = re.findall(r"computed (\d+)/(\d+)", path.read_text(encoding="utf-8"))
        if found and int(found[-1][0]) < int(found[-1][1]):
            return True
    return False


def generation_written(workdir: Path) -> bool:
    """A generation job has written its last output (its usage file); Snakemake has not yet marked it finished."""
    return any((workdir / f"results/usage/tiny-llama/belebele/{template}.json").exists() for template in TEMPLATES)


def aggregating(workdir: Path) -> bool:
    return (workdir / "results/logs/leaderboard.log").exists()


def reporting(workdir: Path) -> bool:
    return (workdir / "results/logs/analysis/report.log").exists()


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


def cached_requests(workdir: Path) -> int:
    path = workdir / CACHE
    if not path.exists():
        return 0
    with sqlite3.connect(path) as db:
        return db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]


def usage_files(workdir: Path) -> dict[str, tuple[int, dict]]:
    return {p.name: (p.stat().st_mtime_ns, json.loads(p.read_text(encoding="utf-8")))
            for p in (workdir / "results/usage").rglob("*.json")}


def first_difference(expected: bytes, got: bytes, name: str) -> str:
    """Where two versions of a file first differ: the line, and for JSON lines the keys whose values differ."""
    for number, (a, b) in enumerate(zip(expected.splitlines(), got.splitlines()), 1):
        if a != b:
            try:
                old, new = json.loads(a), json.loads(b)
                keys = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
                return f"{name}: line {number}: " + "; ".join(f"{k}: {old.get(k)!r:.200} -> {new.get(k)!r:.200}"
                                                              for k in keys)
            except (ValueError, AttributeError):
                return f"{name}: line {number}: {a[:200]!r} -> {b[:200]!r}"
    return f"{name}: {len(expected.splitlines())} lines -> {len(got.splitlines())} lines"


# A log-likelihood the resume computed again: its float32 sum may come out an ulp apart from the uninterrupted
# run's. In CI, a from-scratch recomputation gave 2 of 576 choices one float32 ulp apart (-7.798345089 against
# -7.798345566), 3 times over about 60 cases; here 93 recomputations (40 in one process under load, 33 in fresh
# processes at 1 and 2 threads, 20 whole runs two at a time) were bitwise alike. Everything else is held to the byte, and so are the scores' numbers.
RECOMPUTED = ("results/generations/", "results/raw/")
LOGLIKELIHOOD_ULPS = 1e-6  # relative: a float32 ulp is 1.2e-7, a choice's sum a few of them


def same_result(name: str, expected: bytes, got: bytes) -> bool:
    """The same bytes; for recomputed answers, the same records with log-likelihoods equal to float32 rounding,
    and for a scores file, the same content but for the hash of such a generations file."""
    if expected == got:
        return True
    if name.startswith(RECOMPUTED) and name.endswith(".jsonl"):
        old, new = expected.splitlines(), got.splitlines()
        return len(old) == len(new) and all(_same_answer(json.loads(a), json.loads(b)) for a, b in zip(old, new))
    if name.startswith("results/scores/") and name.endswith(".json"):
        old, new = json.loads(expected), json.loads(got)
        for record in (old, new):
            record.get("provenance", {}).pop("generations_sha256", None)
        return old == new
    return False


def _same_answer(old: dict, new: dict) -> bool:
    a, b = old.pop("loglikelihoods", None), new.pop("loglikelihoods", None)
    if old != new or (a is None) != (b is None):
        return False
    return a is None or (len(a) == len(b) and all(math.isclose(x, y, rel_tol=LOGLIKELIHOOD_ULPS) for x, y in zip(a, b)))


def tree(workdir: Path) -> dict[str, bytes]:
    return {p.relative_to(workdir).as_posix(): p.read_bytes() for p in sorted((workdir / "results").rglob("*"))
            if p.is_file() and not p.relative_to(workdir).as_posix().startswith(NOT_COMPARED)}


def kill_points(total_events: int) -> dict[str, KillPoint]:
    """The instants, by name: inside a generation job, its outputs written, each generation job line, ``EVENLY_SPACED``
    job lines at even intervals of the run's ``total_events`` (a dry run counts its jobs), aggregation, the report."""
    step = total_events / (EVENLY_SPACED + 1)

    def after_line(index: int):
        return lambda events: len(events) > index

    def after_generation_line(k: int):
        return lambda events: sum(e.endswith("generate_belebele") for e in events) > k

    return {"mid-generation": KillPoint("inside a generation job, after a first chunk was committed",
                                        condition=mid_generation),
            "generation-written": KillPoint("a generation job's outputs written, the job not yet marked finished",
                                            condition=generation_written),
            **{f"generation-line-{k}": KillPoint(f"after generation job line {k}", due=after_generation_line(k))
               for k in range(2 * len(TEMPLATES))},
            **{f"even-{k - 1}": KillPoint(f"after job line {round(step * k)} of {total_events}",
                                          due=after_line(round(step * k))) for k in range(1, EVENLY_SPACED + 1)},
            "aggregation": KillPoint("during aggregation (the leaderboard job started)", condition=aggregating),
            "report": KillPoint("while the report is written", condition=reporting)}


# The kill points are parametrised by name; a run's own timeline gives each its instant.
POINTS = ["mid-generation", "generation-written", *[f"generation-line-{k}" for k in range(2 * len(TEMPLATES))],
          *[f"even-{k}" for k in range(EVENLY_SPACED)], "aggregation", "report"]
# One generation job for both templates: killed inside it, and after it wrote the first template's files.
TASK_JOB_POINTS = ["mid-generation", "generation-written"]
CASES = [("template", name) for name in POINTS] + [("task", name) for name in TASK_JOB_POINTS]
IDS = [f"{job}-{name}" for job, name in CASES]


@pytest.fixture(scope="module")
def killed_runs(tmp_path_factory) -> dict[tuple[str, str], tuple[Path, dict]]:
    """For each case, the directory a kill at its point left, and the uninterrupted run it was copied from: its
    results, job lines and the requests it computed. One snapshot run for each kind of generation job serves every
    case of that kind (`make test`'s --dist loadscope keeps a file's tests on one worker)."""
    found = {}
    for generation_job in sorted({job for job, _ in CASES}):
        base = tmp_path_factory.mktemp(f"crash-{generation_job}")
        workdir = make_workflow(base / "run", generation_job)
        total = 2 * int(re.search(r"^total\s+(\d+)$", snakemake(workdir, "-n").stdout, re.M).group(1))
        points = {name: point for name, point in kill_points(total).items() if (generation_job, name) in CASES}
        events = run_with_snapshots(workdir, points, base / "killed")
        assert len(events) == total and events.count("finish generate_belebele") == (
            len(TEMPLATES) if generation_job == "template" else 1), events
        reference = {"tree": tree(workdir), "requests": cached_requests(workdir), "events": events}
        found.update({(generation_job, name): (base / "killed" / name, reference) for name in points})
    return found


@pytest.mark.workflow
@pytest.mark.parametrize("generation_job, point_name", CASES, ids=IDS)
def test_a_run_killed_here_resumes_to_the_same_bytes(generation_job, point_name, killed_runs):
    killed_and_resumed(point_name, *killed_runs[generation_job, point_name])


def killed_and_resumed(point: str, workdir: Path, reference: dict) -> None:
    """Resume a run killed at the point (a copy of the stopped run), and compare with the run it was copied from."""
    expected, total_requests = reference["tree"], reference["requests"]
    check_nothing_truncated_looks_complete(workdir)
    held = cached_requests(workdir)
    usage_before = usage_files(workdir)

    resumed = time.time_ns()
    proc = resume(workdir)
    assert proc.returncode == 0, f"{point}: the resume failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    missing = [t for t in TARGETS if not (workdir / t).exists()]
    assert not missing, f"{point}: the resume exited 0 without {missing}"
    got = tree(workdir)
    assert (workdir / "results/metrics.json").read_bytes() == expected["results/metrics.json"], point
    assert sorted(got) == sorted(expected), f"{point}: files differ: {set(got) ^ set(expected)}"
    different = [name for name in expected if not same_result(name, expected[name], got[name])]
    assert not different, (f"{point}: not byte-identical to the uninterrupted run: {different}\n"
                           + "\n".join(first_difference(expected[name], got[name], name) for name in different))
    assert not list((workdir / "results").rglob("*.tmp")), point

    # finished generation reused: the resume computed exactly the requests the cache did not hold
    rerun = {name: usage for name, (mtime, usage) in usage_files(workdir).items()
             if usage_before.get(name, (None,))[0] != mtime}
    computed = sum(usage["computed"] for usage in rerun.values())
    assert held + computed == total_requests == cached_requests(workdir), (point, held, rerun)
    # and its generation logs say so: `cache: N of M requests answered`, N the cache hits of each usage file
    logs = [path.read_text(encoding="utf-8") for path in generate_logs(workdir) if path.stat().st_mtime_ns >= resumed]
    answered = [int(n) for log in logs for n in re.findall(r"cache: (\d+) of \d+ requests answered", log)]
    assert sorted(answered) == sorted(usage["cache_hits"] for usage in rerun.values()), (point, logs)
    assert "Nothing to be done" in snakemake(workdir, "-n").stdout, point


def test_a_recomputed_log_likelihood_an_ulp_apart_is_the_same_result_and_nothing_else_is():
    """The CI case: two choices of one item one float32 ulp apart, and the scores file's hash of that file."""
    name = "results/generations/m/belebele/eng_Latn/paper.jsonl"
    record = {"id": "p01#2", "loglikelihoods": [-7.79834508895874, -15.443966388702393, -7.43], "greedy": [False] * 3}
    apart = {**record, "loglikelihoods": [-7.798345565795898, -15.443965911865234, -7.43]}
    line = lambda r: (json.dumps(r) + "\n").encode()
    assert same_result(name, line(record), line(apart))
    assert not same_result(name, line(record), line({**record, "loglikelihoods": [-7.7983, -15.443966388702393, -7.43]}))
    assert not same_result(name, line(record), line({**apart, "greedy": [True, False, False]}))
    assert not same_result("results/leaderboard.csv", b"acc,25.0\n", b"acc,25.1\n")
    scores = {"accuracy": 25.0, "provenance": {"generations_sha256": "d79e", "prompts_sha256": "03db"}}
    rehashed = {**scores, "provenance": {**scores["provenance"], "generations_sha256": "0c6a"}}
    assert same_result("results/scores/m/belebele/eng_Latn/paper.json", json.dumps(scores).encode(),
                       json.dumps(rehashed).encode())
    assert not same_result("results/scores/m/belebele/eng_Latn/paper.json", json.dumps(scores).encode(),
                           json.dumps({**rehashed, "accuracy": 25.1}).encode())


class Crash(Exception):
    pass


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["loglikelihood", "generate-sampled"])
def test_resumed_generation_answers_like_an_uninterrupted_one(mode, tmp_path, tiny_model_dir):
    """Chunks commit whole, so what a resumed job still has to do is the uninterrupted job's last chunks, batched
    (and sampled) alike: sampled outputs and padded-batch log-likelihoods come out byte-identical."""
    config = HFConfig(builtin="tiny-llama", dtype="float32", device="cpu", batch_size=3)
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
        return generate.run(generate.JobModel(config, str(tiny_model_dir), loader=loader), settings["mode"], settings,
                            generate.JobFiles({"eng_Latn": str(tmp_path / "prompts.jsonl")},
                                              {"eng_Latn": str(tmp_path / name / "out.jsonl")},
                                              str(tmp_path / name / "cache.sqlite")),
                            generate.Batching(chunk_size=5))

    run("uninterrupted")

    class Dying:
        """The real backend, killed after two chunks."""

        def __init__(self, config, path):
            self.backend, self.calls = load_backend(config, path), 0

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
