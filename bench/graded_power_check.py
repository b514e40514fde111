"""Does a graded metric's planned MDE hold? Plan from a pilot, then simulate the analysis's own test at that MDE.

    python bench/graded_power_check.py                 # the designs below, 400 simulated studies each
    python bench/graded_power_check.py --trials 1000

A graded metric (chrF, BLEU, SQuAD F1) is compared by the paired bootstrap test (``significance.paired_bootstrap``,
sacrebleu's procedure). `plan` plans it from a pilot's per-item spread (``significance.difference_spread``) and
prints ``power.graded_mde`` for the study's items at the test's Holm level. Each simulated study here does the same:

1. a pilot of ``pilot`` items, both sides with no true difference: side a's per-item score uniform on 0-1, side b's
   the same plus normal noise of sd ``noise`` (scores as F1 per item, outside 0-1 allowed: the test reads the mean);
2. the MDE planned from that pilot for ``n`` items at alpha / m (Bonferroni: Holm's strictest step, as `plan`), with
   Student's t at the pilot's degrees of freedom (``power.graded_mde``);
3. a study of ``n`` fresh items with a true difference of that MDE, tested at alpha / m.

It prints the share of studies whose test finds the difference, and beside it the share when the MDE is planned
from the true spread (no pilot noise). The plan holds where the first is 80% +- 3 points; the pilot's own noise
spreads the planned MDE, so a small pilot moves the share a little.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "workflow"))
from babeleval.analysis.bootstrap import ItemData  # noqa: E402
from babeleval.analysis.power import Spread, corrected_alpha, graded_mde, normal_mde  # noqa: E402
from babeleval.analysis.significance import difference_spread, paired_bootstrap  # noqa: E402

ALPHA = 0.05
# (study items, per-item noise sd, Holm family size, pilot items): a bundled-sample language, a FLORES devtest
# language, a family of 9 and of 30 pairs, small and large pilots
DESIGNS = [(100, 0.3, 1, 40), (300, 0.2, 1, 40), (300, 0.2, 1, 200), (1012, 0.25, 9, 100), (900, 0.15, 30, 100)]


def sides(rng: np.random.Generator, n: int, difference: float, *, noise: float) -> tuple[ItemData, ItemData]:
    ids = [str(i) for i in range(n)]
    a = rng.uniform(0, 1, n)
    return ItemData("f1", ids, a + difference + rng.normal(0, noise, n)), ItemData("f1", ids, a)


Sides = Callable[[np.random.Generator, int, float], tuple[ItemData, ItemData]]


def planned_power(study: Sides, n: int, family: int, pilot: int, trials: int, seed: int, samples: int,
                  true_mde: float | None = None) -> dict[str, float]:
    """``trials`` simulated studies of ``study(rng, items, true difference)``: each a pilot of ``pilot`` items with no
    difference, the MDE `plan` computes from it for ``n`` items at alpha / ``family``, then ``n`` fresh items with that
    difference, tested by the analysis's paired bootstrap. Returns the share found (the power), the median planned
    MDE and standard error (the pilot's ``sd / sqrt(n)``), the standard deviation over the studies of the observed
    difference less its planned one (the standard error the studies showed), their mean (the observed difference's
    bias), and with ``true_mde`` the share found at it too."""
    level = corrected_alpha(ALPHA, family)
    rng = np.random.default_rng(seed)
    found = found_true = 0
    planned, errors, residuals = [], [], []
    for trial in range(trials):
        sd, items = difference_spread(*study(rng, pilot, 0.0), seed=trial, n_samples=samples)
        mde = graded_mde(n, Spread(sd, "pilot", items), level)
        a, b = study(rng, n, mde)
        planned.append(mde)
        errors.append(sd / np.sqrt(n))
        residuals.append(a.score() - b.score() - mde)
        found += paired_bootstrap(a, b, seed=trial, n_samples=samples) < level
        if true_mde is not None:
            found_true += paired_bootstrap(*study(rng, n, true_mde), seed=trial, n_samples=samples) < level
    return {"mde_median": float(np.median(planned)), "power": found / trials,
            "power_true_spread": found_true / trials if true_mde is not None else float("nan"),
            "se_planned": float(np.median(errors)), "se_simulated": float(np.std(residuals, ddof=1)),
            "bias": float(np.mean(residuals))}


def one_design(n: int, noise: float, family: int, pilot: int, trials: int, seed: int, samples: int
               ) -> dict[str, float]:
    true_mde = normal_mde(noise / np.sqrt(n), corrected_alpha(ALPHA, family))  # the spread known: no pilot's noise
    row = planned_power(functools.partial(sides, noise=noise), n, family, pilot, trials, seed, samples, true_mde)
    return {"mde_true": true_mde, **row}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--samples", type=int, default=1000, help="resamples per test (the analysis's default 1000)")
    args = parser.parse_args(argv)
    print(f"{'items':>6} {'noise':>6} {'family':>6} {'pilot':>6} {'MDE (true sd)':>14} {'MDE (pilot, median)':>20} "
          f"{'power (pilot)':>14} {'power (true sd)':>16}")
    start = time.perf_counter()
    for k, (n, noise, family, pilot) in enumerate(DESIGNS):
        row = one_design(n, noise, family, pilot, args.trials, args.seed + k, args.samples)
        print(f"{n:>6} {noise:>6.2f} {family:>6} {pilot:>6} {100 * row['mde_true']:>14.2f} "
              f"{100 * row['mde_median']:>20.2f} {row['power']:>14.1%} {row['power_true_spread']:>16.1%}")
    print(f"{args.trials} studies per design, {args.samples} resamples per test, alpha {ALPHA} / family size; "
          f"{time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
