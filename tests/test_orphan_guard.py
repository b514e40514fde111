"""No orphans: a job stops when the Snakemake that started it is killed with SIGKILL, and a resumed job of the same
outputs waits for an earlier one still running. In-process and with small stand-in processes; the whole workflow
killed mid-generation and resumed at once is in ``test_orphan_resume.py``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from babeleval.core import orphan_guard

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
WORKFLOW = str(Path(__file__).resolve().parents[1] / "workflow")


def fake_snakemake(tmp_path: Path, job: str) -> subprocess.Popen:
    """A process whose command line runs ``snakemake`` (a script of that name) and starts ``job`` as its child, the
    way Snakemake starts a script job (through a shell)."""
    script = tmp_path / "snakemake"
    (tmp_path / "job.py").write_text(textwrap.dedent(job), encoding="utf-8")
    script.write_text(textwrap.dedent(f"""
        import subprocess, sys, time
        child = subprocess.Popen(["/bin/sh", "-c", "{sys.executable} {tmp_path / 'job.py'}; true"])
        print(child.pid, flush=True)
        time.sleep(600)
        """), encoding="utf-8")
    return subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": WORKFLOW})


@pytest.mark.workflow
def test_a_job_finds_its_snakemake_through_the_shell_between(tmp_path):
    proc = fake_snakemake(tmp_path, f"""
        from babeleval.core import orphan_guard
        found = orphan_guard.snakemake_ancestor()
        open({str(tmp_path / 'found')!r}, "w").write(str(found[0]) if found else "none")
        """)
    try:
        deadline = time.monotonic() + 20
        while not (tmp_path / "found").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (tmp_path / "found").read_text() == str(proc.pid)
    finally:
        proc.kill()
        proc.wait()
    assert orphan_guard.snakemake_ancestor() is None  # pytest has no Snakemake above it: nothing is watched
    assert orphan_guard.watch_snakemake() is None


@pytest.mark.workflow
def test_a_job_stops_within_seconds_of_its_snakemake_being_killed(tmp_path):
    proc = fake_snakemake(tmp_path, f"""
        import time
        from babeleval.core import orphan_guard
        orphan_guard.watch_snakemake(poll=0.2, grace=5)
        try:
            while True:  # a generation loop that never ends by itself
                time.sleep(0.05)
        except KeyboardInterrupt:
            open({str(tmp_path / 'interrupted')!r}, "w").write("yes")
            raise
        """)
    job_shell = int(proc.stdout.readline())
    time.sleep(1.5)  # the job has started and found its Snakemake
    job = next(int(p) for p in Path(f"/proc/{job_shell}/task/{job_shell}/children").read_text().split())
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    killed = time.monotonic()
    while Path(f"/proc/{job}").exists() and Path(f"/proc/{job}/stat").read_text().split(") ")[1][0] != "Z":
        assert time.monotonic() - killed < 10, "the job outlived its Snakemake"
        time.sleep(0.05)
    print(f"the job stopped {time.monotonic() - killed:.2f} s after its Snakemake was killed")
    assert (tmp_path / "interrupted").read_text() == "yes"  # as on Ctrl-C: its cleanup ran


def holding(outputs: list[str], root: Path, seconds: float) -> subprocess.Popen:
    """Another process holding the lock of ``outputs`` for ``seconds``, returned once it holds it."""
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {WORKFLOW!r})
        from babeleval.core import orphan_guard
        with orphan_guard.outputs_lock({outputs!r}, {str(root)!r}):
            print("held", flush=True)
            time.sleep({seconds})
        """)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


def test_a_second_job_of_the_same_outputs_waits_for_the_first(tmp_path, caplog):
    outputs = ["results/generations/m/belebele/eng_Latn/paper.jsonl"]
    holder = holding(outputs, tmp_path, seconds=1.5)
    started = time.monotonic()
    with caplog.at_level("INFO"), orphan_guard.outputs_lock(outputs, tmp_path):
        waited = time.monotonic() - started
    holder.wait()
    assert waited > 0.5
    assert f"waiting for an earlier job of the same outputs (pid {holder.pid}) to stop" in caplog.text
    # other outputs do not wait, and a lock whose holder is gone is free at once
    started = time.monotonic()
    with orphan_guard.outputs_lock(outputs, tmp_path), orphan_guard.outputs_lock(["other.jsonl"], tmp_path):
        assert time.monotonic() - started < 0.5


def test_the_lock_is_released_when_its_holder_is_killed(tmp_path):
    outputs = ["a.jsonl"]
    holder = holding(outputs, tmp_path, seconds=600)
    done = threading.Event()

    def take():
        with orphan_guard.outputs_lock(outputs, tmp_path):
            done.set()

    threading.Thread(target=take, daemon=True).start()
    assert not done.wait(0.5)
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    assert done.wait(5)
