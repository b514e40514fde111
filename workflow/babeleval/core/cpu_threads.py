"""The CPU threads a job was given (Snakemake's ``threads``): what a model computing on the CPU may use.

torch and the tokenizers library otherwise start a thread per core, whatever the job was given. On a 2-core
machine running another job beside it, a generation job of two threads ran about 5x slower than one of one
thread: threads past the job's grant only contend. The job records its grant here once, before its model loads;
the hf backend, on a CPU, sets torch's threads to it (``babeleval.generate.backends.hf``).
"""

from __future__ import annotations

import os

_granted: int | None = None


def grant(threads: int | None) -> None:
    """Record the job's threads; the tokenizers library reads its pool size from the environment when it starts."""
    global _granted
    if threads is None or threads < 1:
        return
    _granted = threads
    os.environ["RAYON_NUM_THREADS"] = str(threads)


def granted() -> int | None:
    """The threads the job was given, or None where nothing was recorded (a library call, a benchmark)."""
    return _granted
