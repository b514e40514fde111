"""A job stops when the Snakemake that started it dies, and two jobs of the same outputs never run at once.

Snakemake starts a job as a child process. Killed with SIGKILL (an out-of-memory kill, a closed terminal, ``kill
-9``), it cannot stop its jobs: they run on, re-parented, and the documented immediate resume starts the same job
again. A generation job would then compute the same requests in two processes, with two copies of the model in
memory (on one GPU, the second load competes for its memory). Two guards:

- **the job watches its Snakemake** (``watch_snakemake``): at start-up it finds the Snakemake process among its
  ancestors (``/proc``; the first whose command line runs snakemake) and checks once a second that it still exists
  (the same process: its start time is compared too, so a reused pid does not count). When it is gone, the job
  interrupts its main thread (``KeyboardInterrupt``: open files are closed and temporary ones removed as on
  Ctrl-C; raised by a handler of ``STOP_SIGNAL``, since a job may run with SIGINT ignored) and exits after
  ``GRACE_SECONDS`` if the main thread is still inside a long call. Where there is no
  ``/proc`` (not Linux) or no Snakemake ancestor (a job run by hand), nothing is watched.
- **a job holds a lock on its outputs** (``outputs_lock``): an exclusive ``flock`` on a file named after its output
  paths, held for the job's life and released by the kernel when its process ends, however it ends. A resumed job of
  the same outputs waits for it, saying so, so that the orphan's last chunk is in the cache before the resumed job
  reads it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import signal
import threading
import time
from pathlib import Path
from typing import Iterable, Iterator

log = logging.getLogger(__name__)

POLL_SECONDS = 1.0
GRACE_SECONDS = 10.0
STOP_SIGNAL = signal.SIGUSR1
LOCK_DIR = ".snakemake/babeleval-job-locks"


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, start time in clock ticks) of a running process, from /proc; None where it is gone, unreadable
    or dead and not yet reaped (a zombie: killed Snakemake whose parent has not waited for it)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # after the command name, which may hold spaces and parentheses
    if fields[0] in ("Z", "X"):
        return None
    return int(fields[1]), int(fields[19])


def is_snakemake(pid: int) -> bool:
    """Whether a process runs Snakemake: ``snakemake ...`` or ``python -m snakemake ...``."""
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    names = [os.path.basename(arg.decode(errors="replace")) for arg in args[:3]]
    return "snakemake" in names


def snakemake_ancestor(pid: int | None = None) -> tuple[int, int] | None:
    """(pid, start time) of the nearest Snakemake process above ``pid`` (this process by default)."""
    current = os.getpid() if pid is None else pid
    for _ in range(64):  # a process tree is never this deep; the bound keeps a malformed /proc from looping
        stat = _stat(current)
        if stat is None or stat[0] <= 1:
            return None
        parent = stat[0]
        if is_snakemake(parent):
            parent_stat = _stat(parent)
            return (parent, parent_stat[1]) if parent_stat else None
        current = parent
    return None


def identity(pid: int | None = None) -> tuple[int, int] | None:
    """(pid, start time) of a running process (this one by default): what ``alive`` checks, a reused pid not
    passing for it."""
    pid = os.getpid() if pid is None else pid
    stat = _stat(pid)
    return (pid, stat[1]) if stat else None


def alive(process: tuple[int, int]) -> bool:
    stat = _stat(process[0])
    return stat is not None and stat[1] == process[1]


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"the Snakemake that started this job is gone (signal {signum})")


def watch_snakemake(poll: float = POLL_SECONDS, grace: float = GRACE_SECONDS) -> threading.Thread | None:
    """Stop this job when its Snakemake dies (module docstring); the watching thread, or None when nothing is
    watched."""
    parent = snakemake_ancestor()
    if parent is None:
        return None
    # A job may inherit SIGINT ignored (so Ctrl-C reaches Snakemake, which stops its jobs itself), and a signal
    # Python does not handle cannot interrupt the main thread: the watch uses a signal of its own, whose handler
    # (set here, in the main thread) raises KeyboardInterrupt there.
    signal.signal(STOP_SIGNAL, _interrupt)

    def watch() -> None:
        while alive(parent):
            time.sleep(poll)
        log.error("the Snakemake that started this job (pid %d) is gone: stopping, so that a resumed run does not "
                  "compute the same work in a second process", parent[0])
        os.kill(os.getpid(), STOP_SIGNAL)
        time.sleep(grace)
        os._exit(1)

    thread = threading.Thread(target=watch, name="snakemake-watch", daemon=True)
    thread.start()
    return thread


def lock_path(outputs: Iterable[str], root: str | Path = ".") -> Path:
    key = hashlib.sha256("\0".join(sorted(map(str, outputs))).encode()).hexdigest()[:24]
    return Path(root) / LOCK_DIR / f"{key}.lock"


@contextlib.contextmanager
def outputs_lock(outputs: Iterable[str], root: str | Path = ".") -> Iterator[None]:
    """Hold an exclusive lock on these outputs for the block; wait (saying so) while another process holds it."""
    outputs = list(outputs)
    path = lock_path(outputs, root)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            log.info("waiting for an earlier job of the same outputs (%s) to stop: %s", holder, outputs[0])
            started = time.monotonic()
            fcntl.flock(handle, fcntl.LOCK_EX)
            log.info("it stopped after %.1f s; going on", time.monotonic() - started)
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}\n")
        handle.flush()
        yield
