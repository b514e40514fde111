"""The CPU threads a job was given (Snakemake's ``threads``): what a model computing on the CPU may use.

torch and the tokenizers library otherwise start a thread per core, whatever the job was given. On a 2-core
machine running another job beside it, a generation job of two threads ran about 5x slower than one of one
thread: threads past the job's grant only contend. The job records its grant here once, before its model loads;
the hf backend, on a CPU, sets torch's threads to it (``babeleval.generate.backends.hf``).

Within the grant, torch's OpenMP threads spin a while between parallel regions before they sleep (OpenMP's
default), holding a core that the job's own Python thread, Snakemake, or any process beside the job then waits
for. The grant makes them sleep at once (``OMP_WAIT_POLICY=PASSIVE``), unless the user's environment sets the
policy. Measured side by side (``bench/thread_wait.py``, bench/RESULTS.md), 2 threads on 2 cores: beside one busy
process the job computed 2.3x (the real model) to 5x (the tiny one) faster; alone on the machine it was 11-17%
slower. A job rarely has the machine alone: Snakemake runs other jobs beside it.
"""

from __future__ import annotations

import os

_granted: int | None = None


def grant(threads: int | None) -> None:
    """Record the job's threads; the tokenizers library reads its pool size from the environment when it starts,
    OpenMP its wait policy when torch loads (so this comes first: no job imports torch before its grant)."""
    global _granted
    if threads is None or threads < 1:
        return
    _granted = threads
    os.environ["RAYON_NUM_THREADS"] = str(threads)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def granted() -> int | None:
    """The threads the job was given, or None where nothing was recorded (a library call, a benchmark)."""
    return _granted
