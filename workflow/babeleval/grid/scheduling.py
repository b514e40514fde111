"""How Snakemake's scheduler is set up for this workflow's shape: many combinations, few but wide jobs."""

from __future__ import annotations

from typing import Any

# Snakemake's own default for --max-jobs-per-timespan: 100 jobs per second.
SNAKEMAKE_DEFAULT_RATE = (100, 1)


def drop_default_rate_limit(scheduler: Any) -> bool:
    """Take Snakemake's default job rate limit off its ``scheduler`` (``workflow.scheduler``, once made: in
    ``onstart``; Snakemake 9); True if it was on.

    With a rate limit, the scheduler runs another round a timespan after every round while jobs wait, so every job
    that finishes adds one more round per second, and every round reads the size of every input of every waiting
    job. A scoring job of 5 models x 122 languages has hundreds of inputs: at full size those rounds were most of
    Snakemake's own CPU time (``bench/cpu_side.py``). The limit guards a cluster's submission rate, which the
    profile's ``jobs:`` bounds already; a limit set to anything other than the default is kept.
    """
    limiter = getattr(scheduler, "job_rate_limiter", None)
    if limiter is None or (limiter.max_jobs, limiter.timespan) != SNAKEMAKE_DEFAULT_RATE:
        return False
    scheduler.job_rate_limiter = None
    return True
