"""The SLURM profile against a real single-node SLURM cluster started by the test.

munged, slurmctld and slurmd (Debian's `munge` and `slurm-wlm`, which .ci/run installs) run on
localhost from a generated configuration in a temporary directory: a private munge key and socket,
no accounting database (so the plugin runs with --slurm-no-account and polls squeue), and a node
named `localhost` in two partitions, `cpu` and `gpu`, as workflow/profiles/slurm/partitions.yaml
names them.

The node has two GPUs as a generic resource (gres.conf `Name=gpu File=/dev/null` and `/dev/zero`,
stand-in device files): SLURM schedules them like real GPUs (a job gets CUDA_VISIBLE_DEVICES), while
the tiny model runs on the CPU. The node is declared the size of the machine the test runs on (its CPU
count and its memory less a margin, read at test time), and the run is given that size as the profile
asks (`--cores`, `--resources mem_mb=`): a job or group asking for more would pend forever, so the run
finishing is itself the check, besides what SLURM recorded of each job.

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
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, copy_workflow, snakemake

pytestmark = pytest.mark.slow

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
    """(CPUs, MB of memory) of this machine, less a margin for the system and the SLURM daemons."""
    total_kb = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                    if line.startswith("MemTotal:"))
    return os.cpu_count() or 1, total_kb // 1024 - 1024


NODE_CPUS, NODE_MEM_MB = machine_size()


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
NodeName=localhost NodeAddr=127.0.0.1 CPUs={NODE_CPUS} RealMemory={NODE_MEM_MB} Gres=gpu:2 State=UNKNOWN
PartitionName=cpu Nodes=localhost Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=localhost MaxTime=INFINITE State=UP
""")
        (base / "gres.conf").write_text("NodeName=localhost Name=gpu File=/dev/null\nNodeName=localhost Name=gpu File=/dev/zero\n")
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
                if line.strip()]

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


def test_profile_runs_the_default_workflow_to_the_leaderboard(cluster, tmp_path):
    workdir = copy_workflow(tmp_path / "wf", tasks=("belebele",))
    # the default grid (builtin model, all languages and templates), 4 items per combination for time
    params = yaml.safe_load((workdir / "params.yaml").read_text(encoding="utf-8"))
    for task in params["tasks"].values():
        task["limit"] = 4
    (workdir / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")

    local = copy_workflow(tmp_path / "local", tasks=("belebele",))
    (local / "params.yaml").write_bytes((workdir / "params.yaml").read_bytes())

    cmd = [sys.executable, "-m", "snakemake", "--workflow-profile", str(PROFILE),
           # this node's size, where a cluster's users set their nodes' in the profile
           "--cores", str(NODE_CPUS), "--resources", f"mem_mb={NODE_MEM_MB}",
           # no accounting database on the test cluster: no account, job states from squeue
           "--slurm-no-account", "--slurm-status-command", "squeue",
           "--slurm-init-seconds-before-status-checks", "2", "--slurm-keep-successful-logs"]
    env = {**cluster.env, "PATH": str(Path(sys.executable).parent) + os.pathsep + cluster.env["PATH"]}
    proc = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=1500)
    log = proc.stdout[-6000:] + proc.stderr[-6000:]
    assert proc.returncode == 0, f"{log}\n{cluster.logs()}"

    board = (workdir / "results/leaderboard.csv").read_text(encoding="utf-8").splitlines()
    assert board[0].startswith("model,task,language,template,metric,value,n")
    assert len({tuple(line.split(",")[:4]) for line in board[1:]}) == 9
    scores = json.loads((workdir / "results/scores/tiny-llama/belebele/hin_Deva/instruct.json").read_text())
    assert scores["n"] == 4

    # the same grid run locally gives the same results, byte for byte
    snakemake(local)
    for name in ("results/metrics.json", "results/leaderboard.csv", "results/tables/by_template.csv"):
        assert (workdir / name).read_bytes() == (local / name).read_bytes(), name

    # what SLURM itself recorded (jobs stay in the controller for MinJobAge=600 s after they end)
    jobs = cluster.jobs()
    assert jobs and all(j["JobState"] == "COMPLETED" for j in jobs), jobs
    for job in jobs:  # no submission asks for more than the node has
        assert int(job["NumCPUs"]) <= NODE_CPUS, job
        assert memory_mb(job["MinMemoryNode"]) <= NODE_MEM_MB, job
    gpu_jobs = [j for j in jobs if j["Comment"].startswith("rule_generate_belebele")]
    assert len(gpu_jobs) == 3, [j["Comment"] for j in jobs]  # one per template, all languages in each
    table = yaml.safe_load((ROOT / "workflow/resources.yaml").read_text(encoding="utf-8"))["generate_gpu"]["default"]
    for job in gpu_jobs:  # --gpus=1 from the rule's gpu: 1; CPUs and memory from workflow/resources.yaml, capped
        cpus = min(table["cpus_per_gpu"], NODE_CPUS)
        assert (job["Partition"], job.get("TresPerJob"), job.get("CpusPerTres")) == \
            ("gpu", "gres:gpu:1", f"gres:gpu:{cpus}"), job
        assert memory_mb(job["MinMemoryNode"]) == min(table["mem_mb"], NODE_MEM_MB), job
    cpu_jobs = [j for j in jobs if j not in gpu_jobs]
    for job in cpu_jobs:
        assert job["Partition"] == "cpu" and "gpu" not in job.get("TresPerJob", ""), job
    # short CPU jobs are bundled: the 3 + 9 preparation/rendering jobs and the 9 scoring jobs went in
    # one submission each (group jobs: their comment names the group's rules, no wildcards)
    comments = [j["Comment"] for j in cpu_jobs]
    assert not [c for c in comments if re.match(r"rule_(prepare_data|render_prompts|score)_wildcards_", c)], comments
    assert sorted(c for c in comments if re.search(r"prepare_data|render_prompts|score", c)) == \
        ["rule_prepare_prepare_data_render_prompts", "rule_score_score"], comments


def memory_mb(value: str) -> float:
    """scontrol's MinMemoryNode ("2000M", "62.50G") in MB."""
    number, unit = float(value[:-1]), value[-1]
    return number * {"M": 1, "G": 1024, "T": 1024 * 1024}[unit]
