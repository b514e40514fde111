# The lines every run ends with: combinations run / reused / failed, parse failures, tokens and generation time
# per model, and where to look next (babeleval.grid.run_summary). The Snakefile's onsuccess / onerror handlers call it.

import time as _time

from babeleval.grid import run_summary

RUN_STARTED = _time.time()
# the combinations scored before this run: with them the summary tells new from rescored
SCORED_BEFORE = run_summary.existing(Path("."), GRID.combinations())


def print_run_summary(succeeded, snakemake_log, targets=()):
    """``targets``: the files a failed run was asked for; those not written during it are named stale."""
    found = run_summary.collect(Path("."), GRID.combinations(), RUN_STARTED, SCORED_BEFORE)
    # Snakemake hands the handlers its log file(s): a path or a list of paths, depending on the version
    logs = ", ".join(map(str, snakemake_log)) if isinstance(snakemake_log, (list, tuple)) else snakemake_log
    if not succeeded:
        found.failed_jobs = [job for path in (snakemake_log if isinstance(snakemake_log, (list, tuple))
                                              else [snakemake_log]) for job in run_summary.failed_jobs(path)]
        found.failed_jobs = found.failed_jobs or run_summary.failed_job_logs(Path("."), RUN_STARTED)
    text = run_summary.lines(found, succeeded=succeeded, wall_seconds=_time.time() - RUN_STARTED, log=logs or None,
                             omitted=sum(len(GRID.tasks[o.task].languages) for o in GRID.omitted))
    stale = [f for f in targets if not Path(f).exists() or Path(f).stat().st_mtime < RUN_STARTED]
    text[1:1] = run_summary.stale_lines(stale)
    # one write, its newline included: the logger plugin writes job lines to the same stream from its own thread,
    # and a print's separate newline let one land mid-line
    sys.stderr.write("\n".join(text) + "\n")
    sys.stderr.flush()
