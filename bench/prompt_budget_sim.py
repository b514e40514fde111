"""The budgeted sensitivity estimate (babeleval.analysis.budget_estimate) against simulated ground truth.

A scripted "model" answers every (variant, item, language) cell of a variant set with a known probability:

    logit p = mu_language + a_variant + d_variant,language + b_item + e_item,language
              + g_variant * c_item          (a variant that helps on some kinds of item and hurts on others)
              + noise_variant,item,language  (the rest of the interaction)

The last two terms are interactions the fitted model does not have. Every cell is drawn once: that is the
exhaustive run, whose statistics (mean over variants, 5..95% quantiles, best, worst, spread of the variants'
accuracies) are the truth. The budgeted design picks a fraction of the cells, the estimator sees only those,
and each repetition records the estimate's error and whether its interval covers the truth.

    .venv/bin/python bench/prompt_budget_sim.py --repetitions 100
    .venv/bin/python bench/prompt_budget_sim.py --repetitions 100 --variant-variance laplace moments
    .venv/bin/python bench/prompt_budget_sim.py --repetitions 20 --languages 4 --variants 40 --items 300
    .venv/bin/python bench/prompt_budget_sim.py --repetitions 20 --languages 4 --variants 40 --items 300 --separate

Prints, per statistic: mean and 90th-percentile absolute error (points of accuracy), bias, the share of
intervals covering the truth (nominal: --confidence) and the mean interval width.
"""

from __future__ import annotations

import os

# one BLAS thread: the fits are many small dense factorisations, which threads only slow down
for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "workflow"))

from babeleval.prompts.budget_design import Budget, choose_study  # noqa: E402
from babeleval.analysis.budget_estimate import STATISTICS, VARIANT_VARIANCES, Study, estimate, exhaustive  # noqa: E402


@dataclass(frozen=True)
class Truth:
    """The simulated study: its grid, and the spread of each term of the model (logit scale)."""
    variants: int = 100
    items: int = 900  # Belebele's items a language
    languages: int = 1

    intercept: float = 0.5  # about 60% right on an average item
    variant_sd: float = 0.4  # a_variant: the format's effect
    variant_language_sd: float = 0.2  # d_variant,language: a language's own sensitivity
    item_sd: float = 1.5  # b_item: how hard the item is
    item_language_sd: float = 0.5  # e_item,language: how hard its translation is
    language_sd: float = 0.5  # mu_language
    slope_sd: float = 0.3  # g_variant; c_item has sd 1
    noise_sd: float = 0.5  # the rest of the variant x item interaction


def simulate(truth: Truth, rng: np.random.Generator) -> tuple[Study, pd.DataFrame]:
    """Every cell's outcome, drawn once from the known model: the exhaustive run of a study."""
    v, i, n = truth.variants, truth.items, truth.languages
    shared = truth.intercept + rng.normal(0, truth.variant_sd, v)[:, None] + rng.normal(0, truth.item_sd, i)[None]
    shared = shared + np.outer(rng.normal(0, truth.slope_sd, v), rng.normal(0, 1, i))
    variants = [f"v{k:03d}" for k in range(v)]
    items = [f"i{k:04d}" for k in range(i)]
    frames = []
    for language in range(n):
        logit = shared + rng.normal(0, truth.noise_sd, (v, i))
        if n > 1:
            logit = logit + rng.normal(0, truth.language_sd) + rng.normal(0, truth.variant_language_sd, v)[:, None]
            logit = logit + rng.normal(0, truth.item_language_sd, i)[None]
        outcome = (rng.random((v, i)) < 1 / (1 + np.exp(-logit))).astype(float)
        frames.append(pd.DataFrame({"language": f"l{language}", "variant": np.repeat(variants, i),
                                    "item": np.tile(items, v), "correct": outcome.ravel()}))
    study = Study.of(variants, {f"l{k}": items for k in range(n)}, parallel=True)
    return study, pd.concat(frames, ignore_index=True)


def estimate_separately(observed: pd.DataFrame, study: Study, **options) -> pd.DataFrame:
    """Each language fitted on its own (no borrowing across languages): the comparison for the joint fit."""
    return pd.concat([estimate(observed[observed["language"] == language],
                               Study.of(study.variants, {language: items}, study.parallel), **options).table
                      for language, items in study.items.items()], ignore_index=True)


def repetition(truth: Truth, fraction: float, confidence: float, draws: int, seed: int,
               separate: bool = False, variant_variance: str = "resampled") -> pd.DataFrame:
    """One simulated study, its budgeted estimate and the exhaustive truth: one row per (language, statistic)."""
    study, full = simulate(truth, np.random.default_rng(seed))
    design = choose_study(study.variants, study.items, Budget(fraction=fraction), seed=seed, parallel=True)
    chosen = pd.DataFrame([(lang, v, i) for lang, by_variant in design.items()
                           for v, ids in by_variant.items() for i in ids], columns=["language", "variant", "item"])
    observed = full.merge(chosen, on=["language", "variant", "item"])
    started = time.perf_counter()
    options = {"confidence": confidence, "draws": draws, "seed": seed, "variant_variance": variant_variance}
    found = estimate_separately(observed, study, **options) if separate else estimate(observed, study, **options).table
    seconds = time.perf_counter() - started
    table = found.merge(exhaustive(full, study), on=["language", "statistic"])
    table["error"] = table["estimate"] - table["value"]
    table["covered"] = (table["low"] <= table["value"]) & (table["value"] <= table["high"])
    table["width"] = table["high"] - table["low"]
    table["seconds"] = seconds
    table["seed"] = seed
    return table


def summary(rows: pd.DataFrame) -> pd.DataFrame:
    """Per statistic, in points of accuracy: errors, coverage and interval width over the repetitions."""
    grouped = rows.groupby("statistic", sort=False)
    table = pd.DataFrame({
        "mean_abs_error": grouped["error"].apply(lambda e: e.abs().mean() * 100),
        "p90_abs_error": grouped["error"].apply(lambda e: e.abs().quantile(0.9) * 100),
        "bias": grouped["error"].mean() * 100,
        "coverage": grouped["covered"].mean() * 100,
        "mean_width": grouped["width"].mean() * 100,
    })
    return table.reindex(list(STATISTICS)).round(2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repetitions", type=int, default=100)
    parser.add_argument("--variants", type=int, default=Truth.variants)
    parser.add_argument("--items", type=int, default=Truth.items)
    parser.add_argument("--languages", type=int, default=Truth.languages)
    parser.add_argument("--fraction", type=float, default=0.1)
    parser.add_argument("--confidence", type=float, default=0.9)
    parser.add_argument("--draws", type=int, default=400)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--separate", action="store_true", help="fit each language on its own (no borrowing)")
    parser.add_argument("--variant-variance", nargs="+", choices=VARIANT_VARIANCES,
                        default=[VARIANT_VARIANCES[0]],
                        help="how the variants' variance is estimated (budget_estimate.estimate); two: both on the "
                             "same studies, side by side")
    args = parser.parse_args()
    truth = Truth(variants=args.variants, items=args.items, languages=args.languages)
    rows = {method: [] for method in args.variant_variance}
    for seed in range(args.first_seed, args.first_seed + args.repetitions):
        for method, done in rows.items():
            done.append(repetition(truth, args.fraction, args.confidence, args.draws, seed, args.separate, method))
            print(f"repetition {seed} ({method}): {done[-1]['seconds'].iloc[0]:.1f} s", file=sys.stderr, flush=True)
    for method, done in rows.items():
        table = pd.concat(done, ignore_index=True)
        cells = int(table["cells"].iloc[0])
        grid = int(table["grid_cells"].iloc[0])
        fitted = "languages fitted separately" if args.separate else "one joint fit"
        seconds = table.groupby("seed")["seconds"].first().median()
        print(f"{args.repetitions} repetitions, {truth.variants} variants x {truth.items} items x {truth.languages} "
              f"language(s); {cells} of {grid} cells a language ({cells / grid:.1%}); nominal coverage "
              f"{args.confidence:.0%}; {fitted}; variant variance: {method}; fit and draws {seconds:.1f} s median")
        print(summary(table).to_string())


if __name__ == "__main__":
    main()
