# The lines every run ends with: combinations run / reused / failed, parse failures, tokens and generation time
# per model, and where to look next (babeleval.run_summary).

import time as _time

RUN_STARTED = _time.time()


def print_run_summary(succeeded, snakemake_log):
    from babeleval import run_summary

    found = run_summary.collect(Path("."), GRID.combinations(), RUN_STARTED)
    text = run_summary.lines(found, succeeded=succeeded, wall_seconds=_time.time() - RUN_STARTED, log=snakemake_log)
    print("\n".join(text), file=sys.stderr)


onsuccess:
    print_run_summary(True, log)


onerror:
    print_run_summary(False, log)
