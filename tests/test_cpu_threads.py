"""A job's CPU threads (babeleval.core.cpu_threads): torch's idle OpenMP threads sleep in a job rather than spin."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from babeleval.core import cpu_threads
from conftest import ROOT

# The job scripts that load a model: each calls a job function that grants the job's threads before any model loads.
MODEL_JOB_SCRIPTS = ("generate.py", "shared_prefix.py", "extract.py")


@pytest.fixture
def clean_grant(monkeypatch):
    monkeypatch.setattr(cpu_threads, "_granted", None)
    monkeypatch.delenv("RAYON_NUM_THREADS", raising=False)  # restored afterwards: grant sets both
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)


def test_a_grant_makes_idle_threads_sleep(clean_grant):
    cpu_threads.grant(2)
    assert (os.environ["OMP_WAIT_POLICY"], os.environ["RAYON_NUM_THREADS"]) == ("PASSIVE", "2")


def test_the_users_own_wait_policy_is_kept(clean_grant, monkeypatch):
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    cpu_threads.grant(2)
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"


def test_no_grant_no_policy(clean_grant):
    cpu_threads.grant(None)  # a library call: the environment is the caller's
    assert "OMP_WAIT_POLICY" not in os.environ and cpu_threads.granted() is None


@pytest.mark.parametrize("script", MODEL_JOB_SCRIPTS)
def test_a_model_job_loads_torch_only_after_its_grant(script):
    """OpenMP reads its wait policy once, when torch loads: what a job script imports before its job function
    (which grants first) must not load torch."""
    source = (ROOT / "workflow/scripts" / script).read_text(encoding="utf-8")
    imports = [line for line in source.splitlines() if re.match(r"(from \S+ )?import ", line)]
    assert imports, script
    code = "\n".join([*imports, "import sys", "print('torch' in sys.modules)"])
    env = {**os.environ, "PYTHONPATH": str(ROOT / "workflow")}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "False", (script, proc.stdout)
