"""Prompt sensitivity from a budget: the score distribution over a variant set, estimated from some of its cells.

After PromptEval (Polo et al. 2024): the outcomes of the evaluated (variant, item) cells fit a logistic model
with a variant effect and an item effect (``budget_fit``); with several languages, a language intercept, the
variant's deviation in each language (a language's own sensitivity, shrunk towards the shared one) and, for
item-parallel data, an item effect shared by every language plus its deviation in each (so an item answered in
one language tells about it in the others). The items' effects are taken from that fit; the variants' are then
estimated again under a prior the data choose (``budget_prior``: a normal, unless the cells reject it for a grid
of effects and their weights, so that a few catastrophic variants do not unshrink the ordinary ones). A variant's
score in a language is its accuracy over all of the language's items: the observed outcomes where the cell was
evaluated, the model's draws elsewhere. Each statistic (the mean over variants, the 5/25/50/75/95% quantiles of
the variants' scores, the best, the worst and the spread) is estimated by its posterior mean over draws of the
variants' scores.

Intervals are calibrated, not asymptotic (``calibrated``): studies are simulated from the fitted model (each
variant's effect drawn from the grid posterior in half of them and, in the other half, from a truth with no
atoms (``smooth_effects``), each item's from its posterior, every cell of the grid drawn from its probability), the same
design's cells are estimated again, and the errors against each simulated study's exhaustive values give the
interval's half-width (their root-mean-square, times Student's t with as many degrees of freedom as simulated
studies). The same simulations score the plain
per-variant mean (each variant's observed accuracy), and choose between the two (``method``, ``model_chosen``):
the mean over variants is the plain mean's; the median is unless the model's errors there are smaller beyond
the simulations' own noise, in both halves (``is_closer``) and in the half with no atoms on its own
(``gains_with_no_atoms``); every other statistic, which the variants' noise pushes outward in the plain mean, is
the model's unless the plain mean's errors are smaller beyond the noise and in both halves. So the
estimate is never knowingly worse than the plain mean; fewer than ``SUPPORTED_VARIANTS`` variants are estimated
by the plain mean throughout. With
every cell evaluated, every simulated error is 0 and the estimate is the exhaustive value.

Each row says how far it can be trusted (``check``): too few items a variant for the method, an interval that
rests on one simulated study, or an interval so wide that the budget cannot see the statistic. A tail (the 5 and
95% quantiles, the best, the worst, the spread) seen through fewer than ``SUPPORTED_ITEMS`` items a variant is
not estimated at all (``method`` "refused", no estimate and no interval): its check names the budget that would
estimate it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
# Student's t quantile: scipy.stats.t.ppf computes stdtrit, to the bit; importing scipy.stats would cost the estimate
# command and the variation_budget job about 0.7 s of CPU
from scipy.special import expit, stdtrit

from ..core.errors import DataError

from .budget_fit import Fit, Group, fit
from .budget_heldout import held_out
from .budget_prior import GRID, Items, VariantPosterior, variant_posterior

QUANTILES = {"q05": 0.05, "q25": 0.25, "q50": 0.50, "q75": 0.75, "q95": 0.95}
STATISTICS = ("mean", *QUANTILES, "best", "worst", "spread")
# the fewest items a variant (in a language) below which the estimate leans on the model more than on the
# variant's own cells: flagged on every statistic, and a tail is refused (``refusal``). At 6 or 3 items a variant
# the tails' 90% intervals covered 58-88% (bench/RESULTS.md: the heavy-tailed best and spread 58%, q05 69%; the
# additive best 81%; 10 variants x 30 items, q95 and the best 78-80%): with 6 items at 75%, a sixth of the
# ordinary variants get every item right, and nothing in the cells tells them from really perfect variants
SUPPORTED_ITEMS = 10
# below this many variants a tail (the 5 and 95% quantiles, the best, the worst, the spread) is an order statistic
# of a handful of noisy scores, whose simulated errors under-state the real ones (bench/RESULTS.md: the 5-variant
# scenario's tail intervals covered 60-80%); flagged. Below it, too, the variants' prior is learned from a handful
# of points, which the model's simulations cannot show to be better than each variant's own cells: every
# statistic is the plain mean's (bench/RESULTS.md: with 5 variants the model was up to 1.2 times its error)
SUPPORTED_VARIANTS = 10
TAILS = ("q05", "q95", "best", "worst", "spread")
# a statistic whose interval is wider than this (either side, a share) is one the budget cannot see
UNSEEN_HALF_WIDTH = 0.15
# an interval whose simulated errors' squares come more than this share from one simulated study rests on it
UNSTABLE_SHARE = 0.5
# the statistics the variants' own noise does not push out in the plain per-variant mean: the mean over variants,
# and the median. Each variant's plain score is its accuracy on a few items, so the plain scores are more spread
# out than the true ones, and every other statistic of them (the quantiles away from the median, the best, the
# worst, the spread) lands too far from the centre (``model_chosen``)
UNPUSHED = ("mean", "q50")
# of those, the one the plain mean always estimates where it is defined: the mean over variants averages every
# evaluated cell once, and the model moves it only through the cells not evaluated (``model_chosen``)
PLAIN_ALWAYS = ("mean",)
# the fewest simulated studies behind the intervals: the choice between the model and the plain mean compares
# their errors study by study (``is_closer``)
MIN_REPLICATES = 2


@dataclass(frozen=True)
class Study:
    """The full grid a budget was drawn from: variants x each language's items."""
    variants: tuple[str, ...]
    items: Mapping[str, tuple[str, ...]]  # language -> item ids
    parallel: bool  # the same item ids in every language name the same (translated) item

    @classmethod
    def of(cls, variants: Sequence[str], items: Mapping[str, Sequence[str]], parallel: bool) -> "Study":
        return cls(tuple(sorted(set(variants))), {lang: tuple(sorted(set(ids))) for lang, ids in sorted(items.items())},
                   parallel)

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(self.items)


@dataclass(frozen=True)
class Estimate:
    # language, statistic, estimate, low, high, method, check, items_per_variant, cells, grid_cells, fraction;
    # a refused row (method "refused") has NaN for its estimate and interval
    table: pd.DataFrame
    variances: dict[str, float]  # the model's estimated prior variances (logit scale), for the record


def statistics_of(scores: np.ndarray) -> np.ndarray:
    """Every statistic (``STATISTICS``' order, last axis) of sets of variant scores (last axis: the variants)."""
    best, worst = np.max(scores, axis=-1), np.min(scores, axis=-1)
    quantiles = np.moveaxis(np.quantile(scores, list(QUANTILES.values()), axis=-1), 0, -1)
    return np.concatenate([np.mean(scores, axis=-1)[..., None], quantiles, best[..., None], worst[..., None],
                           (best - worst)[..., None]], axis=-1)


def outcome_grids(observed: pd.DataFrame, study: Study) -> dict[str, np.ndarray]:
    """language -> variants x items of outcomes, NaN where the cell was not evaluated.

    ``observed`` has one row per evaluated cell: language, variant, item, correct (0/1 or bool). A cell
    outside the study, a cell twice, or an outcome other than 0/1 is a DataError naming it.
    """
    frame = observed.astype({"language": str, "variant": str, "item": str})
    twice = frame[frame.duplicated(["language", "variant", "item"])]
    if len(twice):
        row = twice.iloc[0]
        raise DataError(f"outcomes: cell ({row.language}, {row.variant}, {row.item}) appears twice")
    grids = {}
    for language, items in study.items.items():
        rows = frame[frame["language"] == language]
        table = rows.pivot(index="variant", columns="item", values="correct")
        stray = sorted(set(table.index) - set(study.variants)) + sorted(set(table.columns) - set(items))
        if stray:
            raise DataError(f"outcomes: {language} has variant or item {stray[0]!r} outside the study's grid")
        values = table.reindex(index=list(study.variants), columns=list(items)).to_numpy(dtype=float)
        if not np.all(np.isnan(values) | (values == 0) | (values == 1)):
            raise DataError(f"outcomes: {language} has a `correct` other than 0/1")
        grids[language] = values
    languages = set(frame["language"]) - set(study.items)
    if languages:
        raise DataError(f"outcomes: language {sorted(languages)[0]} is not in the study")
    return grids


def _groups(grids: dict[str, np.ndarray], study: Study) -> tuple[list[Group], np.ndarray]:
    """The model's factors over the evaluated cells, and their outcomes."""
    languages, variant, item, outcome = [], [], [], []
    item_base = np.cumsum([0] + [len(ids) for ids in study.items.values()])  # non-parallel: items per language
    for position, grid in enumerate(grids.values()):
        rows, cols = np.nonzero(~np.isnan(grid))
        languages.append(np.full(len(rows), position))
        variant.append(rows)
        item.append(cols if study.parallel else cols + item_base[position])
        outcome.append(grid[rows, cols])
    lang, var, itm, y = (np.concatenate(parts) for parts in (languages, variant, item, outcome))
    count, n_variants = len(grids), len(study.variants)
    n_items = len(next(iter(study.items.values()))) if study.parallel else int(item_base[-1])
    groups = [Group("language", lang, count, random=False), Group("variant", var, n_variants),
              Group("item", itm, n_items, item_side=True)]
    if count > 1:
        groups.append(Group("variant x language", var * count + lang, n_variants * count))
        if study.parallel:
            groups.append(Group("item x language", itm * count + lang, n_items * count, item_side=True))
    return groups, y


def fitted_items(model: Fit, study: Study) -> list[Items]:
    """Per language, its items' logit offsets (the language's intercept plus the items' effects) and their
    posterior variances."""
    count, first, found = len(study.items), 0, []
    for position, ids in enumerate(study.items.values()):
        span = slice(0, len(ids)) if study.parallel else slice(first, first + len(ids))
        offset = model.effects("language")[position] + model.effects("item")[span]
        variance = model.variance_of("item")[span]
        if count > 1 and study.parallel:
            offset = offset + model.effects("item x language").reshape(-1, count)[:, position]
            variance = variance + model.variance_of("item x language").reshape(-1, count)[:, position]
        first += len(ids)
        found.append(Items(offset, variance))
    return found


def variant_effects(model: Fit, study: Study) -> np.ndarray:
    """Variants x languages of the fit's variant effects (shared plus the language's deviation)."""
    count = len(study.items)
    effects = np.repeat(model.effects("variant")[:, None], count, axis=1)
    return effects + model.effects("variant x language").reshape(-1, count) if count > 1 else effects


@dataclass(frozen=True)
class Model:
    """The fitted model: the items' and variants' effects (``budget_fit``), the variants' posterior
    (``budget_prior``)."""
    fit: Fit
    items: list[Items]
    posterior: VariantPosterior


def fitted(grids: dict[str, np.ndarray], study: Study, like: Model | None = None) -> Model:
    """The model fitted to the evaluated cells; ``like``: a fit of similar data whose prior variances and
    deviations' spread are kept (not estimated again) and whose mode the fit starts from."""
    groups, y = _groups(grids, study)
    model = fit(groups, y) if like is None else fit(groups, y, variances=like.fit.variances, start=like.fit.theta)
    items, effects = fitted_items(model, study), variant_effects(model, study)
    cells = held_out(list(grids.values()), items, effects, model.variances["item"],
                     model.variances.get("item x language", 0.0), study.parallel)
    posterior = variant_posterior(list(grids.values()), items, cells, effects,
                                  model.variances.get("variant x language", 0.0),
                                  None if like is None else like.posterior.spread, prior_family(grids, like))
    return Model(model, items, posterior)


def prior_family(grids: dict[str, np.ndarray], like: Model | None) -> str | None:
    """The variants' prior family where the cells do not choose it (``budget_prior``: a normal unless they reject
    it; None: they choose): a refit's is its fit's, and below ``SUPPORTED_ITEMS`` items a variant in a language,
    or ``SUPPORTED_VARIANTS`` variants, it is the grid. There the cells cannot reject a normal prior even with a few
    catastrophic variants among the others, and a normal stretched over them leaves the ordinary variants
    unshrunk: with 3 of 50 variants at 0% seen through 6 items each, the test kept the normal in 4 of 12 studies,
    and q25's interval covered 70% (RMSE 8.02, against the grid prior's 4.76 and 97%; bench/RESULTS.md). The
    grid cannot be that wrong: on a normal truth it is the less precise of the two, not the wrong one. (With 5
    variants every statistic is the plain mean's, and the prior only shapes the simulated studies behind the
    intervals: under the normal, the 95% quantile's and the best's covered 73% of 45 studies, against 82-87%.)"""
    if like is not None:
        return like.posterior.family
    fewest = min(int((~np.isnan(grid)).sum(axis=1).min()) for grid in grids.values())
    variants = next(iter(grids.values())).shape[0]
    return GRID if fewest < SUPPORTED_ITEMS or variants < SUPPORTED_VARIANTS else None


def posterior_statistics(model: Model, draws: int, rng: np.random.Generator) -> np.ndarray:
    """Languages x statistics: each statistic's posterior mean over ``draws`` of the variants' scores."""
    return statistics_of(model.posterior.draw_scores(draws, rng)).mean(axis=0)


def plain_statistics(grids: dict[str, np.ndarray]) -> np.ndarray | None:
    """Languages x statistics of the plain per-variant mean (each variant's accuracy on its evaluated cells);
    None where a variant has no evaluated cell in a language."""
    counts = [(~np.isnan(grid)).sum(axis=1) for grid in grids.values()]
    if any((count == 0).any() for count in counts):
        return None
    return np.stack([statistics_of(np.nansum(grid, axis=1) / count) for grid, count in zip(grids.values(), counts)])


def smooth_effects(model: Model, study: Study, rng: np.random.Generator) -> np.ndarray:
    """Variants x languages of effects with no atoms, unlike the draws on the lattice (``simulated_study``): each
    variant's shared effect drawn from a normal with its posterior mean and variance under the fitted prior (so a
    variant the data put far from the others stays there), the same in every language, plus its deviation in each
    language: its posterior mean, and with several languages a normal draw of the first stage's posterior spread.

    The variance is the posterior's on the lattice, so that the simulated truths are as spread out as the variants are
    believed to be (the posterior means' spread plus the mean posterior variance: the prior's). The first stage's
    normal fit does not do for it: where the variants' cells say little (15 items a variant), its variance comes
    out at 0 and every simulated truth sat at its shrunk mean, so the simulated tails were nearer the centre than
    the real ones and the intervals too narrow (the additive q75 covered 84%); three catastrophic variants made
    it large for all, and the ordinary variants' intervals too wide (the heavy-tailed q95 covered 98-100%;
    bench/RESULTS.md)."""
    count = len(study.items)
    posterior = model.posterior
    mean = posterior.posterior @ posterior.grid  # V
    variance = np.maximum(posterior.posterior @ posterior.grid ** 2 - mean ** 2, 0.0)
    shared = mean + np.sqrt(variance) * rng.standard_normal(len(mean))  # one draw a variant, for every language
    deviation = np.einsum("vg,vlgq,q->vl", posterior.posterior, posterior.conditional, posterior.deviations)
    effects = shared[:, None] + deviation
    if count > 1:
        spread = model.fit.variance_of("variant x language").reshape(-1, count)
        effects = effects + np.sqrt(spread) * rng.standard_normal(effects.shape)
    return effects


def simulated_study(model: Model, grids: dict[str, np.ndarray], rng: np.random.Generator,
                    effect: np.ndarray | None = None) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """One study drawn from the fitted model: its outcomes on the design's cells (the cells ``grids`` evaluated),
    and its exhaustive statistics (languages x statistics). Each variant's effect is drawn from its posterior
    (or given: ``effect``, variants x languages), each item's offset from its own, and every cell of the grid
    from its probability."""
    if effect is None:
        point, node = model.posterior.draw_effects(rng)
        effect = model.posterior.grid[point][:, None] + model.posterior.deviations[node]  # variants x languages
    observed, truth = {}, []
    for position, (language, grid) in enumerate(grids.items()):
        items = model.items[position]
        offset = items.offset + np.sqrt(items.variance) * rng.standard_normal(len(items.offset))
        full = (rng.random(grid.shape) < expit(effect[:, position, None] + offset[None, :])).astype(float)
        observed[language] = np.where(np.isnan(grid), np.nan, full)
        truth.append(statistics_of(full.mean(axis=1)))
    return observed, np.stack(truth)


@dataclass(frozen=True)
class Calibration:
    """Replicates x languages x statistics of errors on studies simulated from the fit: the estimate's, and the
    plain per-variant mean's (None where it is not defined)."""
    model: np.ndarray
    plain: np.ndarray | None


def calibrated(model: Model, grids: dict[str, np.ndarray], study: Study, replicates: int, draws: int,
               rng: np.random.Generator) -> Calibration:
    """The errors of the estimate and of the plain mean on ``replicates`` studies simulated from the fit
    (``simulated_study``), each estimated again from the same design's cells.

    Half of the studies draw the variants from the grid posterior, the other half from a truth with no atoms
    (``smooth_effects``). Studies drawn only from the grid prior would take its shape for the truth: a
    truth lumped where the grid prior put its mass is one the grid prior estimates well, so the simulations
    would find the model closer, and its intervals narrower, than on a truth of another shape (200 variants:
    the median by the model 1.7 times the plain mean's error over 10 studies, chosen on such simulations).
    Where the two worlds disagree, the errors of both enter the interval and the choice.
    The refits keep the fit's prior variances, deviations' spread and prior family (normal or grid) and start
    from its mode (a few rounds); the variants' prior is fitted again on each. (Estimating the variances and the
    spread again on each refit was measured on 8 studies of bench/prompt_budget_suite.py's shared-items scenario:
    4.5 times the time, the widths 8% narrower to 6% wider, the coverage within 3 points; bench/RESULTS.md.)
    """
    errors, plain_errors = [], []
    for replicate in range(replicates):
        effect = smooth_effects(model, study, rng) if replicate % 2 else None
        observed, truth = simulated_study(model, grids, rng, effect)
        refit = fitted(observed, study, like=model)
        errors.append(posterior_statistics(refit, draws, rng) - truth)
        plain = plain_statistics(observed)
        plain_errors.append(None if plain is None else plain - truth)
    usable = all(error is not None for error in plain_errors)
    return Calibration(np.stack(errors), np.stack(plain_errors) if usable else None)


def is_closer(errors: np.ndarray, than: np.ndarray) -> bool:
    """Whether ``errors`` (of one estimator, on the simulated studies) are smaller than ``than`` (the other's, on
    the same studies) beyond the noise of so few simulations: the mean gain in squared error, study by study, is
    above zero at the one-sided 5% level of the paired t test, and there is a gain in each of the two worlds the
    studies were drawn from (``calibrated``: even studies from the grid posterior, odd ones from a truth with no
    atoms), so that a gain seen only on a truth shaped like the grid prior does not count.

    A gain above one standard error only was noise one time in six (bench/RESULTS.md: 200 variants' median)."""
    gain = than ** 2 - errors ** 2
    worlds = [gain[0::2], gain[1::2]] if len(gain) >= 4 else [gain]
    return passes_paired_t(gain) and all(float(world.mean()) > 0 for world in worlds)


def passes_paired_t(gain: np.ndarray) -> bool:
    """Whether the mean of study-by-study gains is above zero at the one-sided 5% level of the paired t test."""
    if len(gain) < 2:
        return False
    return float(gain.mean()) > stdtrit(len(gain) - 1, 0.95) * float(gain.std(ddof=1)) / np.sqrt(len(gain))


def model_chosen(statistic: str, model: np.ndarray, plain: np.ndarray) -> bool:
    """Whether the model estimates ``statistic``, given its errors and the plain mean's on the simulated studies.

    The mean over variants is the plain mean's wherever the plain mean is defined (``estimate``: where a variant has
    no evaluated cell in some language, every statistic is the model's). It averages every evaluated cell once, and
    the model's reading of the cells not evaluated moves it only as far as a design leaves some items to some
    variants: over the suite's 100-study cells the simulations overturned the plain mean there in 80 of 3,200 rows
    (at most 7% of a cell's), which moved the mean's RMSE by -0.017 to +0.004 points, the noise of the choice
    (bench/RESULTS.md).

    Every other statistic has a default that the simulations must overturn (``is_closer``), since ten simulated
    studies often cannot tell the two apart. For the median (``UNPUSHED``, as the mean is) the default is the plain
    mean, which is already good there: a model chosen on the noise of ten simulations is worse about as often as
    better. For every other statistic the plain mean is pushed outward by the variants' own noise, so the default is
    the model: in the studies of bench/RESULTS.md where the simulations did not show the model closer and the plain
    mean was used, the best of 50 variants through 15 items each came out 20 points high and its interval covered
    the truth 59% of the time (q05, q95 and the worst: 41-64%); with the model as the default, the tails' and the 25
    and 75% quantiles' RMSE fell by up to half (bench/RESULTS.md).

    The plain mean's default on the median takes more to overturn: the model must also pass the paired t test in
    the world with no atoms on its own (``gains_with_no_atoms``). The grid prior's atoms make an interior quantile
    of many variants jump between them, which the simulations drawn from the fit do not show: 200 variants'
    median, chosen on the pooled test alone, was about 2 points off in 5 of 89 studies where the plain mean was
    0.7 (bench/RESULTS.md). That test made the tails' RMSE up to a third larger when they went through it (the
    additive best's 12.1 against 9.3, 2026-11-28); they no longer do."""
    if statistic in PLAIN_ALWAYS:
        return False
    if statistic in UNPUSHED:
        return is_closer(model, than=plain) and gains_with_no_atoms(model, plain)
    return not is_closer(plain, than=model)


def gains_with_no_atoms(model: np.ndarray, plain: np.ndarray) -> bool:
    """Whether the model's errors are smaller than the plain mean's in the simulated studies drawn with no atoms
    (``calibrated``: the odd ones) on their own: their mean gain in squared error above zero at the one-sided 5%
    level of the paired t test."""
    return passes_paired_t((plain ** 2 - model ** 2)[1::2])


def checks(errors: np.ndarray, half_width: float, items_per_variant: int, variants: int, statistic: str) -> str:
    """What the row's own check says about it ("" where nothing): ``errors``, its simulated errors."""
    found = []
    if statistic in TAILS and variants < SUPPORTED_VARIANTS:
        found.append(f"few variants for a tail ({variants} < {SUPPORTED_VARIANTS})")
    if items_per_variant < SUPPORTED_ITEMS:
        found.append(f"few items per variant ({items_per_variant} < {SUPPORTED_ITEMS})")
    squares = errors ** 2
    if squares.sum() > 0 and squares.max() > UNSTABLE_SHARE * squares.sum():
        found.append("interval rests on one simulated study")
    if half_width > UNSEEN_HALF_WIDTH:
        found.append("not seen at this budget")
    return "; ".join(found)


def refusal(items_per_variant: int, items: int, variants: int) -> str:
    """Why a tail is not estimated from ``items_per_variant`` items a variant (of the language's ``items``), and
    what would estimate it: the budget that gives ``SUPPORTED_ITEMS`` a variant, or the family that the same
    cells give as many (a balanced design spreads a language's cells evenly over the variants)."""
    family = variants * items_per_variant // SUPPORTED_ITEMS
    return (f"refused: {items_per_variant} items a variant cannot place a variant in the tails (fewer than "
            f"{SUPPORTED_ITEMS}): a budget of {min(SUPPORTED_ITEMS / items, 1.0):.0%} of the grid gives "
            f"{SUPPORTED_ITEMS}" + (f", and so do this budget's cells over a family of {family} variants (`sample:` fewer)"
                                    if family >= 2 else ""))


def estimate(observed: pd.DataFrame, study: Study, confidence: float = 0.9, draws: int = 400,
             seed: int = 0, replicates: int = 10) -> Estimate:
    """The score distribution over the study's variants in each language, from the evaluated cells.

    ``draws``: posterior draws behind each estimate; ``replicates``: simulated studies behind each interval.
    """
    if replicates < MIN_REPLICATES:
        raise ValueError(f"replicates: at least {MIN_REPLICATES} simulated studies (the choice between the model and "
                         "the plain mean compares their errors study by study)")
    grids = outcome_grids(observed, study)
    if not any((~np.isnan(grid)).any() for grid in grids.values()):
        raise DataError("outcomes: no evaluated cell to estimate from")
    rng = np.random.default_rng(seed)
    model = fitted(grids, study)
    found = posterior_statistics(model, draws, rng)
    plain = plain_statistics(grids)
    calibration = calibrated(model, grids, study, replicates, max(draws // 4, 50), rng)
    # the real error over the root-mean-square of `replicates` simulated errors is Student's t with `replicates`
    # degrees of freedom where all are centred normals of one spread: the mean square is taken about 0, not about
    # their own mean, so no degree of freedom goes to a mean (with one fewer, every interval was 1.1% wider)
    spread = stdtrit(replicates, 1 - (1 - confidence) / 2)
    rows = []
    for position, (language, grid) in enumerate(grids.items()):
        evaluated = ~np.isnan(grid)
        items_per_variant = int(evaluated.sum(axis=1).min())
        for k, name in enumerate(STATISTICS):
            errors, value, method = calibration.model[:, position, k], found[position, k], "model"
            # every cell evaluated: the plain mean is the exhaustive value itself (the model's agrees only to the
            # last bits of its arithmetic)
            if calibration.plain is not None and (evaluated.all() or len(study.variants) < SUPPORTED_VARIANTS
                                                  or not model_chosen(name, errors, calibration.plain[:, position, k])):
                errors, value, method = calibration.plain[:, position, k], plain[position, k], "plain mean"
            half = spread * float(np.sqrt(np.mean(errors ** 2)))
            if not evaluated.all():  # never finer than one item of a variant's score, the score's own step
                half = max(half, spread / grid.shape[1])
            row = {"language": language, "statistic": name, "estimate": float(value),
                   "low": max(float(value) - half, 0.0), "high": min(float(value) + half, 1.0), "method": method,
                   "check": checks(errors, half, items_per_variant, len(study.variants), name)
                   if not evaluated.all() else "",  # every cell evaluated: the exact value
                   "items_per_variant": items_per_variant, "cells": int(evaluated.sum()),
                   "grid_cells": grid.size, "fraction": float(evaluated.sum()) / grid.size}
            if name in TAILS and items_per_variant < SUPPORTED_ITEMS and not evaluated.all():
                row.update(estimate=np.nan, low=np.nan, high=np.nan, method="refused",
                           check=refusal(items_per_variant, grid.shape[1], len(study.variants)))
            rows.append(row)
    return Estimate(pd.DataFrame(rows), model.fit.variances)


def exhaustive(observed: pd.DataFrame, study: Study) -> pd.DataFrame:
    """language, statistic, value: the statistics of a fully evaluated grid (what ``--validate`` compares with)."""
    rows = []
    for language, grid in outcome_grids(observed, study).items():
        missing = int(np.isnan(grid).sum())
        if missing:
            raise DataError(f"outcomes: {language} lacks {missing} of its {grid.size} cells; "
                            "the exhaustive values need every variant on every item")
        rows += [{"language": language, "statistic": name, "value": float(value)}
                 for name, value in zip(STATISTICS, statistics_of(grid.mean(axis=1)))]
    return pd.DataFrame(rows)
