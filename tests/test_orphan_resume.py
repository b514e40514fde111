"""No orphans, end to end: Snakemake alone is killed with SIGKILL while a generation job runs (its job is left
running, as after an out-of-memory kill or a closed terminal), and the documented resume is started at once. The
orphaned job stops by itself; the resumed job of the same outputs starts computing only after it stopped; model
loads and computed requests are counted."""

from __future__ import annotations

import datetime
import os
import re
import signal
import threading
import time
from pathlib import Path

import pytest

from test_crash_recovery import cached_requests, generate_logs, make_workflow, mid_generation, resume, start

pytestmark = [pytest.mark.slow, pytest.mark.workflow, pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")]
LOG_TIME = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) ")


def descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        current = todo.pop()
        for task in Path(f"/proc/{current}/task").glob("*"):
            try:
                children = [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue
            out += children
            todo += children
    return out


def generation_jobs(pid: int) -> list[int]:
    """The generation scripts running below ``pid`` (Snakemake runs a copy of workflow/scripts/generate.py)."""
    jobs = []
    for child in descendants(pid):
        try:
            args = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(arg.endswith(b"generate.py") for arg in args):
            jobs.append(child)
    return jobs


def running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def logged_at(line: str) -> float:
    return datetime.datetime.strptime(LOG_TIME.match(line).group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()


def test_snakemake_killed_mid_generation_leaves_no_job_computing_beside_the_resume(tmp_path):
    workdir = make_workflow(tmp_path / "wf")
    proc = start(workdir)
    deadline = time.monotonic() + 600
    while not mid_generation(workdir):
        assert proc.poll() is None and time.monotonic() < deadline, "the run ended before a generation job ran"
        time.sleep(0.02)
    [orphan] = generation_jobs(proc.pid)
    os.kill(proc.pid, signal.SIGKILL)  # Snakemake alone: its generation job is left running
    killed = time.time()
    held_at_kill = cached_requests(workdir)
    before = {path: path.stat().st_mtime_ns for path in generate_logs(workdir)}

    resumed: dict = {}
    thread = threading.Thread(target=lambda: resumed.update(proc=resume(workdir)), daemon=True)
    thread.start()  # at once, as docs/troubleshooting.md says
    while running(orphan):
        assert time.time() - killed < 30, "the orphaned generation job is still running 30 s after the kill"
        time.sleep(0.01)
    orphan_stopped = time.time()
    held_at_stop = cached_requests(workdir)  # before any resumed job computes: each reads the cache after this
    thread.join(900)
    proc.stdout.close()
    assert resumed["proc"].returncode == 0, resumed["proc"].stdout[-3000:] + resumed["proc"].stderr[-3000:]

    # the resumed generation jobs: when each read the cache, how many requests it found and computed, its loads
    logs = [p.read_text(encoding="utf-8") for p in generate_logs(workdir) if p.stat().st_mtime_ns != before.get(p)]
    reads = [(logged_at(line), int(m.group(1)), int(m.group(2)), int(m.group(3)))
             for log in logs for line in log.splitlines()
             if (m := re.search(r"cache: (\d+) of (\d+) requests answered, (\d+) to compute", line))]
    loads = [logged_at(line) for log in logs for line in log.splitlines() if re.search(r"model load \d+ for", line)]
    assert reads and all(read_at > orphan_stopped for read_at, *_ in reads), (orphan_stopped, reads)
    assert all(load_at > orphan_stopped for load_at in loads)  # never two copies of the model at once
    computed_by_resume = sum(to_compute for *_, to_compute in reads)
    found_by_resume = sum(found for _, found, _, _ in reads)
    # every request the resume computed was new to the cache: none was computed by the orphan too
    assert cached_requests(workdir) == held_at_stop + computed_by_resume
    assert len(loads) == len(reads)  # one model load per resumed generation job
    print(f"the orphaned job stopped {orphan_stopped - killed:.2f} s after the kill, having computed "
          f"{held_at_stop - held_at_kill} more requests; resumed generation jobs {len(reads)}, their model loads "
          f"{len(loads)} (after the orphan stopped; the orphan's own load was before the kill); requests the resumed "
          f"jobs found in the cache {found_by_resume}, computed {computed_by_resume}; cache {cached_requests(workdir)} "
          f"= {held_at_stop} + {computed_by_resume}: none computed twice")
