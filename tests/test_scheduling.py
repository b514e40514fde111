"""Snakemake's default job rate limit is taken off its scheduler; a limit the user set is kept."""

from types import SimpleNamespace

import pytest
from snakemake.scheduling.job_scheduler import JobRateLimiter
from snakemake.settings.types import MaxJobsPerTimespan

from babeleval.grid.scheduling import drop_default_rate_limit


def scheduler_with(limit: str | None) -> SimpleNamespace:
    """A stand-in for Snakemake's scheduler holding Snakemake's own rate limiter, parsed as its CLI parses it."""
    return SimpleNamespace(job_rate_limiter=None if limit is None else JobRateLimiter(MaxJobsPerTimespan.parse_choice(limit)))


def test_the_default_limit_is_dropped():
    scheduler = scheduler_with("100/1s")
    assert drop_default_rate_limit(scheduler) is True
    assert scheduler.job_rate_limiter is None


@pytest.mark.parametrize("limit", ["50/1s", "100/10s", "10/1m"])
def test_a_limit_the_user_set_is_kept(limit):
    scheduler = scheduler_with(limit)
    limiter = scheduler.job_rate_limiter
    assert drop_default_rate_limit(scheduler) is False
    assert scheduler.job_rate_limiter is limiter


def test_no_limit_stays_none():
    scheduler = scheduler_with(None)
    assert drop_default_rate_limit(scheduler) is False
    assert scheduler.job_rate_limiter is None
