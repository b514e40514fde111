"""A directory held by a Snakemake run: what a second command is told, and DVC kept out while it runs.

Real Snakemake in a copy of the workflow, with the lock a run leaves (``.snakemake/locks/``) and the record of
who holds it; real DVC in a temporary git + DVC repository. Neither runs a job.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from babeleval.grid import run_lock
from conftest import copy_workflow, snakemake


def hold(workdir: Path, pid: int) -> None:
    """What a run leaves while it runs (or after it was killed): Snakemake's lock files and the run's record."""
    locks = workdir / run_lock.SNAKEMAKE_LOCKS
    locks.mkdir(parents=True, exist_ok=True)
    (locks / "0.input.lock").write_text(str(workdir / "params.yaml") + "\n", encoding="utf-8")
    (locks / "0.output.lock").write_text(str(workdir / "results/metrics.json") + "\n", encoding="utf-8")
    (workdir / run_lock.OWNER_FILE).write_text(json.dumps({
        "pid": pid, "host": socket.gethostname(), "started": "2026-01-01 10:00:00",
        "command": "snakemake --cores 2 --resources gpu=1"}), encoding="utf-8")


@pytest.fixture
def workflow_copy(tmp_path) -> Path:
    return copy_workflow(tmp_path / "wf", tasks=("belebele",))


@pytest.fixture
def running():
    """A live process that says it is a Snakemake (as /proc/<pid>/cmdline shows it)."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", "snakemake"])
    yield proc.pid
    proc.kill()
    proc.wait()


@pytest.mark.workflow
def test_second_run_while_one_runs_is_told_to_wait(workflow_copy, running):
    hold(workflow_copy, running)
    for args in ([], ["-n"]):  # a run, and a dry run (whose plan would count the running jobs as incomplete)
        proc = snakemake(workflow_copy, *args, check=False, timeout=300)
        out = proc.stdout + proc.stderr
        assert proc.returncode != 0, out
        assert f"another Snakemake is running in this directory (pid {running} on" in out, out
        assert "Wait for it to finish" in out and "Do not `--unlock` while it runs" in out
        assert "--unlock argument" not in out and "--cleanup-metadata" not in out, out  # Snakemake's own advice


@pytest.mark.workflow
def test_after_a_killed_run_the_resume_command_is_given(workflow_copy):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    hold(workflow_copy, dead.pid)
    proc = snakemake(workflow_copy, "-n", check=False, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert f"pid {dead.pid}" in out and "that process no longer runs" in out, out
    assert run_lock.RESUME in out and "--cleanup-metadata" not in out, out
    # and the resume command's first half works with the lock there
    unlocked = subprocess.run([sys.executable, "-m", "snakemake", "--unlock"], cwd=workflow_copy, capture_output=True,
                              text=True, timeout=300)
    assert unlocked.returncode == 0, unlocked.stderr[-3000:]
    assert run_lock.held_message(workflow_copy) is None


@pytest.mark.workflow
def test_which_commands_lock():
    assert run_lock.takes_lock(["snakemake", "--cores", "2", "--resources", "gpu=1"])
    assert run_lock.takes_lock(["snakemake", "-n"])
    for args in (["--unlock"], ["--lint"], ["--cleanup-metadata", "x"], ["--list-rules"], ["--nolock", "-c1"]):
        assert not run_lock.takes_lock(["snakemake", *args]), args


def test_no_lock_no_message(tmp_path):
    assert run_lock.held_message(tmp_path) is None
    (tmp_path / run_lock.SNAKEMAKE_LOCKS).mkdir(parents=True)
    assert run_lock.held_message(tmp_path) is None  # an empty lock folder: a run that ended


def dvc_env() -> dict[str, str]:
    bindir = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", ""), "DVC_NO_ANALYTICS": "1"}


def test_a_plain_run_keeps_dvc_out_until_it_ends(tmp_path, monkeypatch):
    """`dvc exp run` checks the recorded outputs out before its stage starts: while a plain run holds DVC's lock,
    DVC refuses at once instead of deleting files under the run."""
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([sys.executable, "-m", "dvc", "init", "-q"], cwd=tmp_path, check=True, env=dvc_env())
    monkeypatch.delenv("DVC_STAGE", raising=False)
    run_lock.claim(tmp_path)
    try:
        status = subprocess.run([sys.executable, "-m", "dvc", "exp", "run"], cwd=tmp_path, capture_output=True,
                                text=True, env=dvc_env(), timeout=120)
        assert status.returncode != 0 and "Unable to acquire lock" in status.stderr, status.stderr
        assert (tmp_path / run_lock.OWNER_FILE).is_file()
    finally:
        run_lock.release(tmp_path)
    assert not (tmp_path / run_lock.OWNER_FILE).exists()
    status = subprocess.run([sys.executable, "-m", "dvc", "status"], cwd=tmp_path, capture_output=True, text=True,
                            env=dvc_env(), timeout=120)
    assert status.returncode == 0, status.stderr
