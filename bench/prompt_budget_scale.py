"""The budgeted estimate at real size: time and peak memory of one estimate, by the number of observed cells.

    .venv/bin/python bench/prompt_budget_scale.py                      # 200 variants x 10 languages x 900 items, 5%
    .venv/bin/python bench/prompt_budget_scale.py --languages 1 2 5 10  # the same budget, more languages
    /usr/bin/time -v .venv/bin/python bench/prompt_budget_scale.py     # the process's own peak RSS as well

Simulates one study (bench/prompt_budget_suite.py's generator), designs the budget, and times
``budget_estimate.estimate`` (the fit, the draws and the simulated studies behind the intervals) in this process,
one BLAS thread; prints per run the cells, the seconds, the process's peak RSS so far and the fit's Newton steps.
"""

from __future__ import annotations

import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "workflow"))

from prompt_budget_suite import Truth, designed, simulate  # noqa: E402
from babeleval.analysis.budget_estimate import estimate  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", type=int, default=200)
    parser.add_argument("--items", type=int, default=900)
    parser.add_argument("--languages", type=int, nargs="+", default=[10])
    parser.add_argument("--fraction", type=float, default=0.05)
    parser.add_argument("--replicates", type=int, default=10)
    args = parser.parse_args()
    for languages in args.languages:
        study, full = simulate(Truth(variants=args.variants, items=args.items, languages=languages),
                               np.random.default_rng(0))
        observed = designed(study, full, args.fraction, seed=0)
        del full
        started = time.perf_counter()
        found = estimate(observed, study, replicates=args.replicates)
        seconds = time.perf_counter() - started
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{args.variants} variants x {languages} languages x {args.items} items at {args.fraction:.0%}: "
              f"{len(observed)} cells, {seconds:.1f} s, peak RSS {peak:.0f} MB so far; "
              f"{(found.table['check'] != '').sum()} of {len(found.table)} rows flagged", flush=True)


if __name__ == "__main__":
    main()
