"""The budgeted sensitivity estimate (babeleval.analysis.budget_estimate) against simulated ground truths.

A scripted "model" answers every (variant, item, language) cell of a variant set with a known probability:

    logit p = mu_language + a_variant + d_variant,language + b_item + e_item,language
              + g_variant * c_item          (a variant that helps on some kinds of item and hurts on others)
              + noise_variant,item,language  (the rest of the interaction)

The last two terms are interactions the fitted model does not have. ``a_variant`` is normal, or (heavy tails) a
few catastrophic variants far below the rest. Every cell is drawn once: that is the exhaustive run, whose
statistics (mean over variants, 5..95% quantiles, best, worst, spread of the variants' accuracies) are the truth.
The budgeted design picks a fraction of the cells; the estimator sees only those, and so does the plain
per-variant mean (each variant's observed accuracy), the comparison on the same cells.

    .venv/bin/python bench/prompt_budget_suite.py --studies 100            # every scenario x budget
    .venv/bin/python bench/prompt_budget_suite.py --studies 100 --only heavy-50x300 --budgets 0.05
    .venv/bin/python bench/prompt_budget_suite.py --studies 20 --only promptEval-100x900x10 --separate
    .venv/bin/python bench/prompt_budget_suite.py --summarise rows.csv

Prints, per scenario, budget and statistic (points of accuracy): how often the estimate refused the statistic
(a tail seen through too few items a variant), and over the rows it estimated: its bias and RMSE, the share of
its intervals covering the truth (nominal: --confidence), its mean width, the plain mean's RMSE on the same
cells, how often the estimate chose the plain mean, how often it flagged the row, and the coverage of the rows
it did not flag. ``--summarise`` prints the tables again from rows saved with ``--csv``.
"""

from __future__ import annotations

import os

# one BLAS thread: the machine is shared, and the fits are small
for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass, replace  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "workflow"))

from babeleval.prompts.budget_design import Budget, choose_study  # noqa: E402
from babeleval.analysis.budget_estimate import (STATISTICS, Study, estimate, exhaustive, outcome_grids,  # noqa: E402
                                                plain_statistics)


@dataclass(frozen=True)
class Truth:
    """The simulated study: its grid, and the spread of each term of the model (logit scale)."""
    variants: int = 100
    items: int = 900  # Belebele's items a language
    languages: int = 1

    intercept: float = 0.5  # about 60% right on an average item
    variant_sd: float = 0.4  # a_variant: the format's effect
    catastrophic: int = 0  # heavy tails: this many variants at catastrophic_logit instead of a normal draw
    catastrophic_logit: float = -8.0  # near 0% on every item
    variant_language_sd: float = 0.2  # d_variant,language: a language's own sensitivity
    item_sd: float = 1.5  # b_item: how hard the item is (shared by the languages)
    item_language_sd: float = 0.5  # e_item,language: how hard its translation is
    language_sd: float = 0.5  # mu_language
    slope_sd: float = 0.3  # g_variant; c_item has sd 1
    noise_sd: float = 0.5  # the rest of the variant x item interaction


# the suite: name -> (truth, budgets); each name says variants x items (x languages)
SCENARIOS: dict[str, tuple[Truth, tuple[float, ...]]] = {
    # the project's additive kind of study: 6, 15 and 30 items a variant
    "additive-50x300": (Truth(variants=50, items=300), (0.02, 0.05, 0.10)),
    # 3 of 50 variants near 0%, the rest about 70%
    "heavy-50x300": (Truth(variants=50, items=300, intercept=1.2, variant_sd=0.3, catastrophic=3),
                     (0.02, 0.05, 0.10)),
    # a variant good in one language and bad in another
    "interaction-40x300x4": (Truth(variants=40, items=300, languages=4, variant_language_sd=0.8), (0.05,)),
    "few-5x900": (Truth(variants=5, items=900), (0.02, 0.05, 0.10)),
    "many-200x900": (Truth(variants=200, items=900), (0.05,)),
    # few items a language: 3 items a variant at 10% (below what the method supports; flagged)
    "few-items-10x30x4": (Truth(variants=10, items=30, languages=4), (0.10,)),
    # item difficulty shared by the languages, each with a little noise of its own
    "shared-items-40x300x4": (Truth(variants=40, items=300, languages=4, item_language_sd=0.3), (0.05,)),
    # PromptEval's budget over ten item-parallel languages (item 4; not in the default run: --only)
    "promptEval-100x900x10": (Truth(variants=100, items=900, languages=10), (0.02,)),
}
DEFAULT = tuple(name for name in SCENARIOS if not name.startswith("promptEval"))


def simulate(truth: Truth, rng: np.random.Generator) -> tuple[Study, pd.DataFrame]:
    """Every cell's outcome, drawn once from the known model: the exhaustive run of a study."""
    v, i, n = truth.variants, truth.items, truth.languages
    effect = rng.normal(0, truth.variant_sd, v)
    effect[rng.permutation(v)[:truth.catastrophic]] = truth.catastrophic_logit
    shared = truth.intercept + effect[:, None] + rng.normal(0, truth.item_sd, i)[None]
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


def designed(study: Study, full: pd.DataFrame, fraction: float, seed: int) -> pd.DataFrame:
    """The outcomes of the cells a budgeted design of ``fraction`` evaluates."""
    design = choose_study(study.variants, study.items, Budget(fraction=fraction), seed=seed, parallel=True)
    chosen = pd.DataFrame([(lang, v, i) for lang, by_variant in design.items()
                           for v, ids in by_variant.items() for i in ids], columns=["language", "variant", "item"])
    return full.merge(chosen, on=["language", "variant", "item"])


def estimate_separately(observed: pd.DataFrame, study: Study, **options) -> pd.DataFrame:
    """Each language fitted on its own (no borrowing across languages): the comparison for the joint fit."""
    return pd.concat([estimate(observed[observed["language"] == language],
                               Study.of(study.variants, {language: items}, study.parallel), **options).table
                      for language, items in study.items.items()], ignore_index=True)


def study_rows(truth: Truth, fraction: float, confidence: float, seed: int, separate: bool = False,
               replicates: int = 10) -> pd.DataFrame:
    """One simulated study, its budgeted estimate, the plain mean and the exhaustive truth: one row per
    (language, statistic)."""
    study, full = simulate(truth, np.random.default_rng(seed))
    observed = designed(study, full, fraction, seed)
    started = time.perf_counter()
    options = {"confidence": confidence, "seed": seed, "replicates": replicates}
    found = estimate_separately(observed, study, **options) if separate else estimate(observed, study,
                                                                                        **options).table
    seconds = time.perf_counter() - started
    plain = plain_statistics(outcome_grids(observed, study))
    table = found.merge(exhaustive(full, study), on=["language", "statistic"])
    position = {language: k for k, language in enumerate(study.languages)}
    table["plain"] = [plain[position[lang], STATISTICS.index(name)] for lang, name in
                      zip(table["language"], table["statistic"])]
    table["error"] = table["estimate"] - table["value"]
    table["plain_error"] = table["plain"] - table["value"]
    table["covered"] = (table["low"] <= table["value"]) & (table["value"] <= table["high"])
    table["width"] = table["high"] - table["low"]
    table["seconds"] = seconds
    table["seed"] = seed
    return table


def summary(rows: pd.DataFrame) -> pd.DataFrame:
    """Per statistic, in points of accuracy: how often the estimate refused it, and over the rows it estimated,
    bias, RMSE, coverage and width against the plain mean's RMSE on the same rows (over every row where all were
    refused: what the plain mean would have put there)."""
    answered = rows[rows["method"] != "refused"]
    grouped = answered.groupby("statistic", sort=False)
    every = rows.groupby("statistic", sort=False)
    plain = grouped["plain_error"].apply(lambda e: np.sqrt(np.mean(e ** 2)) * 100)
    table = pd.DataFrame({
        "refused": every["method"].apply(lambda m: (m == "refused").mean() * 100),
        "bias": grouped["error"].mean() * 100,
        "rmse": grouped["error"].apply(lambda e: np.sqrt(np.mean(e ** 2)) * 100),
        "plain_rmse": plain.combine_first(every["plain_error"].apply(lambda e: np.sqrt(np.mean(e ** 2)) * 100)),
        "coverage": grouped["covered"].mean() * 100,
        "width": grouped["width"].mean() * 100,
        "plain_chosen": grouped["method"].apply(lambda m: (m == "plain mean").mean() * 100),
        "flagged": grouped["check"].apply(lambda c: (c != "").mean() * 100),
        "coverage_unflagged": answered[answered["check"] == ""].groupby("statistic", sort=False)["covered"].mean()
        * 100,
    })
    return table.reindex(list(STATISTICS)).round(2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--studies", type=int, default=100)
    parser.add_argument("--only", nargs="+", choices=list(SCENARIOS), default=list(DEFAULT))
    parser.add_argument("--budgets", nargs="+", type=float, help="instead of each scenario's own")
    parser.add_argument("--confidence", type=float, default=0.9)
    parser.add_argument("--replicates", type=int, default=10, help="simulated studies behind each interval")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--separate", action="store_true", help="fit each language on its own (no borrowing)")
    parser.add_argument("--csv", type=Path, help="also append every study's rows here")
    parser.add_argument("--summarise", type=Path, nargs="+", help="print the tables of rows saved with --csv")
    args = parser.parse_args()
    if args.summarise:
        rows = pd.concat([pd.read_csv(path, keep_default_na=False, na_values=dict.fromkeys(
            ("estimate", "low", "high", "error", "width"), [""])) for path in args.summarise], ignore_index=True)
        for (name, fraction), table in rows.groupby(["scenario", "budget"], sort=False):
            print(f"\n## {name} at {fraction:.0%}: {table['seed'].nunique()} studies, "
                  f"{int(table['items_per_variant'].min())} items a variant, {table['language'].nunique()} "
                  f"language(s); {table.groupby('seed')['seconds'].first().median():.1f} s a study (median)")
            print(summary(table).to_string())
        return
    for name in args.only:
        truth, budgets = SCENARIOS[name]
        for fraction in args.budgets or budgets:
            rows = []
            for seed in range(args.first_seed, args.first_seed + args.studies):
                rows.append(study_rows(truth, fraction, args.confidence, seed, args.separate,
                                       args.replicates).assign(scenario=name, budget=fraction))
                if args.csv:  # each study's rows as soon as they are done
                    rows[-1].to_csv(args.csv, mode="a", header=not args.csv.exists(), index=False)
            table = pd.concat(rows, ignore_index=True)
            seconds = table.groupby("seed")["seconds"].first().median()
            print(f"\n## {name} at {fraction:.0%}: {args.studies} studies, {int(table['items_per_variant'].min())} "
                  f"items a variant, {table['language'].nunique()} language(s)"
                  f"{' fitted separately' if args.separate else ''}; nominal coverage {args.confidence:.0%}; "
                  f"{seconds:.1f} s a study (median)", flush=True)
            print(summary(table).to_string(), flush=True)


if __name__ == "__main__":
    main()
