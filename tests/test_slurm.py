"""The SLURM profile against a real single-node SLURM cluster started by the test.

munged, slurmctld and slurmd (Debian's `munge` and `slurm-wlm`, which .ci/run installs) run on
localhost from a generated configuration in a temporary directory: a private munge key and socket,
no accounting database (so the plugin runs with --slurm-no-account and polls squeue), and a node
named `localhost` in two partitions, `cpu` and `gpu`, as workflow/profiles/slurm/partitions.yaml
names them.

The node is declared as large as the profile's partitions.yaml says a node is (its largest memory, its
GPU partition's GPUs and their CPUs), larger than the machine the test runs on (read at test time):
`SlurmdParameters=config_overrides` lets slurmd accept that, and with no cgroup plugin SLURM enforces no
limit, so jobs asking for a real node's share run on a small machine. The GPUs are a generic resource
with stand-in device files (gres.conf `File=/dev/null` and the like): SLURM schedules them like real GPUs
(a job gets CUDA_VISIBLE_DEVICES), while the tiny model runs on the CPU. A job or group asking for more than the node has would pend forever, so the run finishing is
itself a check, besides what SLURM recorded of each job (its start and end included).

Where SLURM cannot be started (not installed, not root, a daemon fails) the test is skipped and
says why.
"""

from __future__ import annotations

import json
import re
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import pytest
import yaml

from babeleval.generate.backends import model_config
from babeleval.grid import resources
from conftest import ROOT, SHIPPED, copy_workflow, snakemake

pytestmark = [pytest.mark.slow, pytest.mark.workflow, pytest.mark.waits]

DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "srun", "scontrol")
# the daemons live in /usr/sbin, which a non-login PATH may lack
SEARCH_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])


def which(name: str) -> str | None:
    return shutil.which(name, path=SEARCH_PATH)
PROFILE = ROOT / "workflow/profiles/slurm"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def machine_size() -> tuple[int, int]:
    """(CPUs, MB of memory) of this machine."""
    total_kb = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                    if line.startswith("MemTotal:"))
    return os.cpu_count() or 1, total_kb // 1024


PARTITIONS = yaml.safe_load((PROFILE / "partitions.yaml").read_text(encoding="utf-8"))["partitions"]
# one node as large as the profile says nodes are: its largest memory, its GPU partition's GPUs and their CPUs
NODE_GPUS = PARTITIONS["gpu"]["max_gpu"]
NODE_CPUS = max(PARTITIONS["cpu"]["max_cpus_per_task"], NODE_GPUS * PARTITIONS["gpu"]["max_cpus_per_gpu"])
NODE_MEM_MB = max(partition["max_mem_mb"] for partition in PARTITIONS.values())
# device files that stand in for the GPUs (slurmd counts a GPU per file; nothing opens them)
STAND_IN_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class Cluster:
    """munged + slurmctld + slurmd on localhost, everything under one temporary directory."""

    def __init__(self, base: Path):
        self.base = base
        self.conf = base / "slurm.conf"
        # The jobstep plugin strips SLURM_* (SLURM_CONF included) from the environment of the `srun` it
        # runs inside each job; on a real cluster srun then finds /etc/slurm/slurm.conf. This cluster's
        # configuration lives here instead, so an `srun` first on PATH puts SLURM_CONF back.
        shim = base / "bin"
        shim.mkdir(parents=True, exist_ok=True)
        srun = shim / "srun"
        srun.write_text(f'#!/bin/sh\nSLURM_CONF="{self.conf}" exec {which("srun")} "$@"\n')
        srun.chmod(0o755)
        self.env = {**os.environ, "SLURM_CONF": str(self.conf), "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}"}
        self.pidfiles = [base / "slurmd.pid", base / "slurmctld.pid", base / "munge/munged.pid"]

    def logs(self) -> str:
        out = []
        for log in sorted(self.base.glob("log/*.log")) + [self.base / "munge/munged.log"]:
            if log.exists():
                out.append(f"--- {log.name}\n" + "\n".join(log.read_text(errors="replace").splitlines()[-15:]))
        return "\n".join(out)

    def start(self) -> None:
        base = self.base
        for d in ("munge", "state", "spool", "log"):
            (base / d).mkdir(parents=True, exist_ok=True)
        base.chmod(0o755)
        (base / "munge").chmod(0o755)
        key = base / "munge/munge.key"
        key.write_bytes(os.urandom(128))
        key.chmod(0o600)
        sock = base / "munge/munge.sock"
        subprocess.run([which("munged"), "--force", f"--socket={sock}", f"--key-file={key}",
                        f"--pid-file={base}/munge/munged.pid", f"--log-file={base}/munge/munged.log",
                        f"--seed-file={base}/munge/seed"], check=True, capture_output=True, timeout=30)
        self.conf.write_text(f"""\
ClusterName=babeleval-test
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={sock}
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
StateSaveLocation={base}/state
SlurmdSpoolDir={base}/spool
SlurmctldPidFile={base}/slurmctld.pid
SlurmdPidFile={base}/slurmd.pid
SlurmctldLogFile={base}/log/slurmctld.log
SlurmdLogFile={base}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
SlurmdParameters=config_overrides
GresTypes=gpu
MinJobAge=600
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
NodeName=localhost NodeAddr=127.0.0.1 CPUs={NODE_CPUS} RealMemory={NODE_MEM_MB} Gres=gpu:{NODE_GPUS} State=UNKNOWN
PartitionName=cpu Nodes=localhost Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=localhost MaxTime=INFINITE State=UP
""")
        (base / "gres.conf").write_text("".join(f"NodeName=localhost Name=gpu File={device}\n"
                                                for device in STAND_IN_DEVICES[:NODE_GPUS]))
        subprocess.run([which("slurmctld"), "-c"], env=self.env, check=True, capture_output=True, timeout=30)
        subprocess.run([which("slurmd"), "-N", "localhost"], env=self.env, check=True, capture_output=True, timeout=30)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            state = subprocess.run(["sinfo", "-h", "-N", "-o", "%t"], env=self.env, capture_output=True, text=True)
            if state.returncode == 0 and state.stdout.split() and all(s == "idle" for s in state.stdout.split()):
                return
            time.sleep(1)
        raise RuntimeError(f"the node did not become idle within 60 s (sinfo: {state.stdout.strip()!r} "
                           f"{state.stderr.strip()!r})")

    def jobs(self) -> list[dict[str, str]]:
        out = subprocess.run(["scontrol", "show", "job", "--oneliner"], env=self.env, capture_output=True, text=True,
                             check=True, timeout=30).stdout
        return [dict(field.split("=", 1) for field in line.split() if "=" in field) for line in out.splitlines()
                if line.startswith("JobId=")]  # none: "No jobs in the system"

    def stop(self) -> None:
        subprocess.run(["scancel", "--full", "--user", "root"], env=self.env, capture_output=True, timeout=30)
        pids = []
        for pidfile in self.pidfiles:  # only the daemons this cluster started, by their pid files
            try:
                pid = int(pidfile.read_text().strip())
                os.kill(pid, 15)
                pids.append(pid)
            except (FileNotFoundError, ValueError, ProcessLookupError):
                pass
        deadline = time.monotonic() + 20  # slurmctld saves its state on the way out: let it finish
        while pids and time.monotonic() < deadline:
            pids = [pid for pid in pids if _alive(pid)]
            time.sleep(0.2)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    missing = [name for name in DAEMONS if which(name) is None]
    if missing:
        pytest.skip(f"SLURM cannot be started here: {', '.join(missing)} not found "
                    "(Debian: apt-get install slurm-wlm munge; .ci/run installs them)")
    if os.geteuid() != 0:
        pytest.skip("SLURM cannot be started here: slurmd must run as root")
    pytest.importorskip("snakemake_executor_plugin_slurm", reason="the Snakemake SLURM executor plugin is not "
                        "installed (pip install -e '.[workflow]')")
    # a short path: unix socket paths are limited to 108 bytes
    cluster = Cluster(Path(tempfile.mkdtemp(prefix="slurm-", dir="/tmp")))
    try:
        cluster.start()
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, RuntimeError, OSError) as exc:
        detail = getattr(exc, "stderr", None) or ""
        cluster.stop()
        pytest.skip(f"SLURM could not be started on this machine: {exc} {detail!s}\n{cluster.logs()}")
    yield cluster
    cluster.stop()
    shutil.rmtree(cluster.base, ignore_errors=True)


def profile_run(cluster: Cluster, workdir: Path, *args: str) -> subprocess.CompletedProcess:
    """Snakemake with the SLURM profile as a cluster's users run it (no accounting database here: no account,
    job states from squeue)."""
    cmd = [sys.executable, "-m", "snakemake", "--workflow-profile", str(PROFILE), "--slurm-no-account",
           "--slurm-status-command", "squeue", "--slurm-init-seconds-before-status-checks", "2",
           "--slurm-keep-successful-logs", *args]
    env = {**cluster.env, "PATH": str(Path(sys.executable).parent) + os.pathsep + cluster.env["PATH"]}
    proc = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, f"{proc.stdout[-6000:]}{proc.stderr[-6000:]}\n{cluster.logs()}"
    return proc


def set_params(workdir: Path, change) -> dict:
    params = yaml.safe_load((workdir / "params.yaml").read_text(encoding="utf-8"))
    change(params)
    (workdir / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return params


def limit_items(params: dict, n: int = 4) -> None:
    for task in params["tasks"].values():
        task["limit"] = n


def expected_request(params: dict, model: str) -> dict:
    """What babeleval.grid.resources decides a Belebele generation job of ``model`` asks for, capped at the
    profile's cores."""
    table = resources.load(ROOT / "workflow/resources.yaml")
    cores = yaml.safe_load((PROFILE / "config.yaml").read_text(encoding="utf-8"))["cores"]
    return resources.for_generation(table, model_config(params["models"][model]), "belebele", model_where=model,
                                    max_cores=cores)


def test_profile_runs_the_default_workflow_to_the_leaderboard(cluster, tmp_path, built_tiny_model):
    workdir = copy_workflow(tmp_path / "wf", tasks=("belebele",), generation_job=SHIPPED)
    # the default grid (builtin model, all languages and templates), 4 items per combination for time
    params = set_params(workdir, limit_items)
    local = copy_workflow(tmp_path / "local", tasks=("belebele",), built=built_tiny_model,
                          generation_job=SHIPPED)
    (local / "params.yaml").write_bytes((workdir / "params.yaml").read_bytes())

    profile_run(cluster, workdir)

    board = (workdir / "results/leaderboard.csv").read_text(encoding="utf-8").splitlines()
    assert board[0].startswith("model,task,language,template,metric,scale,value,n")
    assert len({tuple(line.split(",")[:4]) for line in board[1:]}) == 9
    scores = json.loads((workdir / "results/scores/tiny-llama/belebele/hin_Deva/instruct.json").read_text())
    assert scores["n"] == 4

    # the same grid run locally gives the same results, byte for byte (run up to the files compared)
    compared = ("results/metrics.json", "results/leaderboard.csv", "results/tables/by_template.csv")
    snakemake(local, "--", *compared)
    for name in compared:
        assert (workdir / name).read_bytes() == (local / name).read_bytes(), name

    # what SLURM itself recorded (jobs stay in the controller for MinJobAge=600 s after they end)
    jobs = cluster.jobs()
    assert jobs and all(j["JobState"] == "COMPLETED" for j in jobs), jobs
    for job in jobs:  # no submission asks for more than the node has
        assert int(job["NumCPUs"]) <= NODE_CPUS, job
        assert memory_mb(job["MinMemoryNode"]) <= NODE_MEM_MB, job
    generation = [j for j in jobs if j["Comment"].startswith("rule_generate_belebele")]
    assert len(generation) == 3, [j["Comment"] for j in jobs]  # one per template, all languages in each
    # the default grid's model runs on the CPU (device: cpu): its jobs ask for no GPU and go to the CPU partition
    request = expected_request(params, "tiny-llama")
    assert request["gpu"] == 0
    for job in generation:
        assert (job["Partition"], job.get("TresPerJob"), int(job["NumCPUs"]), memory_mb(job["MinMemoryNode"])) == \
            ("cpu", None, request["threads"], request["mem_mb"]), job
    cpu_jobs = [j for j in jobs if j not in generation]
    for job in cpu_jobs:
        assert job["Partition"] == "cpu" and "gpu" not in job.get("TresPerJob", ""), job
    # short CPU jobs are bundled: the 3 preparation and 3 rendering jobs and the 3 scoring jobs went in
    # one submission each (group jobs: their comment names the group's rules, no wildcards), within one node
    comments = [j["Comment"] for j in cpu_jobs]
    assert not [c for c in comments if re.match(r"rule_(prepare_data|render_prompts_belebele|score_belebele)_wildcards_",
                                                 c)], comments
    assert sorted(c for c in comments if re.search(r"prepare_data|render_prompts|score", c)) == \
        ["rule_prepare_prepare_data_render_prompts_belebele", "rule_score_score_belebele"], comments
    # the analysis after scoring (leaderboard, tables, plots, report) is one submission, none of its rules alone
    assert len([c for c in comments if c.startswith("rule_analysis_")]) == 1, comments
    assert not [c for c in comments if re.fullmatch(r"rule_(leaderboard|summary_tables|plots|report)", c)], comments
    for job in cpu_jobs:
        assert int(job["NumCPUs"]) <= PARTITIONS["cpu"]["max_cpus_per_task"], job
        assert memory_mb(job["MinMemoryNode"]) <= PARTITIONS["cpu"]["max_mem_mb"], job


def test_gpu_jobs_run_side_by_side_as_the_partition_allows(cluster, tmp_path, built_tiny_model):
    """Six GPU-kind generation jobs of 64 GB each (two models x three templates) on a node with four GPUs:
    the profile submits them all and SLURM runs four at once (all its GPUs). Given the node's memory as a
    global sum (`--resources mem_mb=128000`, as the profile once declared it, in the scope `global` that makes
    it a sum over running jobs), Snakemake would hold them back to two at once on the whole cluster."""
    assert NODE_MEM_MB > machine_size()[1] and NODE_CPUS > machine_size()[0]  # a node larger than the machine

    def two_gpu_models(params):
        limit_items(params, 2)
        # device left to the backend: the models ask for a GPU (and run on this machine's CPU); each job asks
        # for what the resources table gives a model of unknown size, as an 8B one
        gpu_model = {"backend": "hf", "builtin": "tiny-llama", "dtype": "float32", "batch_size": 8,
                     "max_new_tokens": 4, "resources": {"mem_mb": 64000}}
        params["models"] = {"m1": gpu_model, "m2": dict(gpu_model)}

    runs = {}
    node_memory_as_a_sum = ("--set-resource-scopes", "mem_mb=global", "--resources", "mem_mb=128000")
    for name, extra in (("profile", ()), ("node memory as a global sum", node_memory_as_a_sum)):
        # both models' builtin is the tiny model, built before: what is timed is the generation jobs alone
        workdir = copy_workflow(tmp_path / name.replace(" ", "_"), tasks=("belebele",), built=built_tiny_model,
                                generation_job=SHIPPED)
        params = set_params(workdir, two_gpu_models)
        before = {job["JobId"] for job in cluster.jobs()}
        targets = [f"results/generations/{m}/belebele/eng_Latn/{t}.jsonl" for m in params["models"]
                   for t in params["tasks"]["belebele"]["templates"]]
        profile_run(cluster, workdir, *targets, *extra)  # --resources takes every word after it
        runs[name] = [j for j in cluster.jobs() if j["JobId"] not in before
                      and j["Comment"].startswith("rule_generate_belebele")]

    request = expected_request(params, "m1")
    assert (request["gpu"], request["mem_mb"]) == (1, 64000)
    for name, jobs in runs.items():
        assert len(jobs) == 6 and all(j["JobState"] == "COMPLETED" for j in jobs), (name, jobs)
        for job in jobs:  # GPU jobs: the GPU partition, one GPU each, the table's CPUs and the model's memory
            assert (job["Partition"], job.get("TresPerJob"), job.get("CpusPerTres"),
                    memory_mb(job["MinMemoryNode"])) == \
                ("gpu", "gres:gpu:1", f"gres:gpu:{request['cpus_per_gpu']}", 64000), job
    at_once = {name: most_at_once(jobs) for name, jobs in runs.items()}
    print(f"generation jobs running at once: {at_once}")
    assert at_once == {"profile": NODE_GPUS, "node memory as a global sum": 2}, (
        at_once, {name: [(j["SubmitTime"], j["StartTime"], j["EndTime"]) for j in jobs] for name, jobs in runs.items()})


def most_at_once(jobs: list[dict[str, str]]) -> int:
    """The most jobs running at one instant, from the start and end times SLURM recorded (whole seconds)."""
    spans = [(datetime.fromisoformat(j["StartTime"]), datetime.fromisoformat(j["EndTime"])) for j in jobs]
    return max(sum(start <= instant < end for start, end in spans) for instant, _ in spans)


def memory_mb(value: str) -> float:
    """scontrol's MinMemoryNode ("2000M", "62.50G") in MB."""
    number, unit = float(value[:-1]), value[-1]
    return number * {"M": 1, "G": 1024, "T": 1024 * 1024}[unit]
