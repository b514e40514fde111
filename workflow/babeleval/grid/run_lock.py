"""Who holds this directory, what a second command is told, and what DVC knows at the end of a run.

Snakemake's lock (``.snakemake/locks/``) says nothing of who holds it, and its advice, ``--unlock``, is wrong
while the other run is alive. So a run started here records itself (pid, host, command, start time) in
``.snakemake/babeleval-run.json``, and a second Snakemake that would lock the directory (a run, or a dry
run, whose plan would count the running jobs as incomplete) is told instead whether that run is alive (wait)
or was killed (the resume command).

In a DVC repository a plain run also holds DVC's repository lock (``.dvc/tmp/lock``) while it runs: ``dvc exp
run`` checks the outputs ``dvc.lock`` records out before its stage starts, deleting the files the running
Snakemake is writing; holding the lock makes it refuse instead. At the end of a run that built the whole grid
the outputs are recorded in ``dvc.lock`` (``dvc commit``), so that a later ``dvc exp run`` reuses them rather
than deleting what it does not know. Neither happens inside a DVC stage (DVC sets ``DVC_STAGE`` and holds the
lock itself).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

SNAKEMAKE_LOCKS = Path(".snakemake/locks")
OWNER_FILE = Path(".snakemake/babeleval-run.json")
DVC_LOCK = Path(".dvc/tmp/lock")
DVC_STAGE = "evaluate"  # dvc.yaml's stage that runs the workflow
# what makes a run the baseline: dvc.lock and the files git keeps for DVC (.gitignore)
BASELINE = ("git add dvc.lock results/metrics.json results/headline.json results/template_hashes.yaml results/tables "
            "&& git commit -m 'baseline run'")
RESUME = "snakemake --unlock && snakemake --cores all --resources gpu=1 --rerun-incomplete"

# Snakemake options under which it does not lock the directory: they need no protection from a running run.
_NOT_LOCKING = {"--unlock", "--nolock", "--lint", "--summary", "-S", "--detailed-summary", "-D", "--list-rules",
                "--list", "-l", "--list-target-rules", "--lt", "--dag", "--rulegraph", "--filegraph", "--d3dag",
                "--report", "--cleanup-metadata", "--cm", "--cleanup-shadow", "--list-changes", "--lc",
                "--list-input-changes", "--li", "--list-params-changes", "--lp", "--list-code-changes",
                "--list-untracked", "--lu", "--print-compilation", "--version", "-v", "--help", "-h",
                "--containerize", "--archive", "--export-cwl", "--generate-unit-tests"}

_held_dvc_lock = None  # the open DVC lock of this run, released at its end


def takes_lock(argv: list[str]) -> bool:
    """Whether a Snakemake command line runs (or dry-runs) the workflow, as opposed to unlocking, linting, listing.

    Read from the command line because nothing else tells a Snakefile, while it is read, what it was read for.
    """
    return not any(arg.split("=", 1)[0] in _NOT_LOCKING for arg in argv[1:])


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process holds that pid
    cmdline = Path(f"/proc/{pid}/cmdline")
    # a reused pid is not the run: where /proc says what the process is, it must be a Snakemake
    return not cmdline.exists() or b"snakemake" in cmdline.read_bytes()


def owner(root: Path = Path(".")) -> dict | None:
    """The run recorded as holding ``root``, or None."""
    try:
        return json.loads((root / OWNER_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def held_message(root: Path = Path(".")) -> str | None:
    """What a command that would lock ``root`` is told while Snakemake's lock is there; None when it is not."""
    locks = root / SNAKEMAKE_LOCKS
    if not locks.is_dir() or not any(locks.iterdir()):
        return None
    run = owner(root)
    if run is None:
        return (f"this directory is locked by a Snakemake run ({SNAKEMAKE_LOCKS}/) that did not say who it is. If a "
                "Snakemake is still running here (`ps -u $USER -f | grep snakemake`), wait for it to finish: two "
                f"runs would write the same files. If none is, it was killed: resume with\n  {RESUME}\n"
                "(docs/troubleshooting.md)")
    who = (f"pid {run['pid']} on {run['host']}, started {run['started']}: `{run['command']}`")
    here = run["host"] == socket.gethostname()
    if here and _pid_alive(int(run["pid"])):
        return (f"another Snakemake is running in this directory ({who}). Wait for it to finish: two runs would "
                "write the same files, and until it ends the jobs it runs count as incomplete. "
                "(Do not `--unlock` while it runs.)")
    if here:
        return (f"the Snakemake run that last worked here was stopped before it finished ({who}; that process no "
                f"longer runs) and left its lock. Resume it, keeping every finished answer:\n  {RESUME}\n"
                "(docs/troubleshooting.md)")
    return (f"a Snakemake on another machine holds this directory ({who}). If it still runs, wait for it; if not, "
            f"resume with\n  {RESUME}\n(docs/troubleshooting.md)")


def claim(root: Path = Path(".")) -> None:
    """At the start of a run: record who holds the directory, and hold DVC's lock outside a DVC stage."""
    global _held_dvc_lock
    record = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.strftime("%Y-%m-%d %H:%M:%S"),
              "command": " ".join(["snakemake", *sys.argv[1:]])}
    (root / OWNER_FILE).parent.mkdir(parents=True, exist_ok=True)
    (root / OWNER_FILE).write_text(json.dumps(record), encoding="utf-8")
    if os.environ.get("DVC_STAGE") or not (root / ".dvc").is_dir():
        return
    try:
        import zc.lockfile  # DVC's own lock implementation: the same file and the same kind of lock

        (root / DVC_LOCK).parent.mkdir(parents=True, exist_ok=True)
        _held_dvc_lock = zc.lockfile.LockFile(str(root / DVC_LOCK))
    except ImportError:
        return
    except zc.lockfile.LockError:
        print(f"babeleval: a DVC command holds {DVC_LOCK}: this run goes on, but do not start `dvc exp run` "
              "until it ends", file=sys.stderr)


def release(root: Path = Path(".")) -> None:
    """At the end of a run (finished or failed): let DVC and other runs in."""
    global _held_dvc_lock
    if _held_dvc_lock is not None:
        _held_dvc_lock.close()
        _held_dvc_lock = None
    (root / OWNER_FILE).unlink(missing_ok=True)


def record_outputs(root: Path = Path("."), whole_grid: bool = True) -> str | None:
    """After a run outside DVC: record its outputs in ``dvc.lock`` (``dvc commit``), so that ``dvc exp run``
    reuses them. A line for the console, or None where there is no DVC repository or DVC runs the stage.

    Only a run that built the whole grid is recorded: a partial one would make DVC take stale outputs for
    current ones.
    """
    if os.environ.get("DVC_STAGE") or not (root / ".dvc").is_dir() or not (root / "dvc.yaml").is_file():
        return None
    command = f"dvc commit --force {DVC_STAGE}"
    if not whole_grid:
        return (f"babeleval: dvc.lock not updated (this run built only part of the grid): run the whole grid before "
                f"`dvc exp run`, which removes outputs dvc.lock does not record")
    dvc = shutil.which("dvc", path=str(Path(sys.executable).parent)) or shutil.which("dvc")
    if dvc is None:
        return f"babeleval: dvc is not installed here: record this run's outputs with `{command}` before `dvc exp run`"
    proc = subprocess.run([dvc, "commit", "--force", "--quiet", DVC_STAGE], cwd=root, capture_output=True, text=True)
    if proc.returncode != 0:
        reason = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        return (f"babeleval: could not record the outputs in dvc.lock ({reason}): run `{command}` before "
                "`dvc exp run`, which removes outputs dvc.lock does not record")
    status = subprocess.run(["git", "status", "--porcelain", "--", "dvc.lock"], cwd=root, capture_output=True,
                            text=True)
    if status.returncode == 0 and not status.stdout.strip():  # dvc.lock is as the last commit has it
        return "babeleval: outputs recorded in dvc.lock (as committed)"
    return (f"babeleval: outputs recorded in dvc.lock. To make this run the baseline that `python -m babeleval "
            f"compare` and `dvc exp show` compare against, commit it:\n  {BASELINE}")
