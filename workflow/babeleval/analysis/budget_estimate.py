"""Prompt sensitivity from a budget: the score distribution over a variant set, estimated from some of its cells.

After PromptEval (Polo et al. 2024): the outcomes of the evaluated (variant, item) cells fit a logistic model
with a variant effect and an item effect (``budget_fit``); with several languages, a language intercept, the
variant's deviation in each language (a language's own sensitivity, shrunk towards the shared one) and, for
item-parallel data, an item effect shared by every language plus its deviation in each (so an item answered in
one language tells about it in the others). A variant's score in a language is its accuracy over all of the
language's items: the observed outcomes where the cell was evaluated, the model's prediction elsewhere.

Intervals are the model's own: parameters drawn from the posterior (Laplace approximation), then every
unevaluated cell's outcome drawn from its probability, so an interval covers both what the model does not know
and the coin flips the cells not evaluated would have made. Each cell's drawn logits are centred where their mean
probability is the mode's (``_moderation``): the symmetric Laplace draws would otherwise pull every cell towards
0.5 once more. Every statistic (the mean over variants, the
5/25/50/75/95% quantiles of the variants' scores, the best, the worst and the spread) is computed on each draw;
the estimate is the mean of the draws, the interval their central quantiles. With every cell evaluated the
draws agree and the estimate is the exhaustive value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.special import expit

from ..core.errors import DataError
from .budget_fit import Fit, Group, at_variances, fit

QUANTILES = {"q05": 0.05, "q25": 0.25, "q50": 0.50, "q75": 0.75, "q95": 0.95}
STATISTICS = ("mean", *QUANTILES, "best", "worst", "spread")
# how the variance of the variants' effects is estimated (``estimate``), the default first
VARIANT_VARIANCES = ("resampled", "moments", "laplace")


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
    table: pd.DataFrame  # language, statistic, estimate, low, high, cells, grid_cells, fraction
    variant_scores: pd.DataFrame  # language, variant, estimate, low, high, items_evaluated
    variances: dict[str, float]  # the model's estimated prior variances (logit scale), for the record


def statistics_of(scores: np.ndarray) -> dict[str, float]:
    """Every statistic of one set of variant scores."""
    best, worst = float(np.max(scores)), float(np.min(scores))
    return {"mean": float(np.mean(scores)),
            **{name: float(np.quantile(scores, q)) for name, q in QUANTILES.items()},
            "best": best, "worst": worst, "spread": best - worst}


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
              Group("item", itm, n_items)]
    if count > 1:
        groups.append(Group("variant x language", var * count + lang, n_variants * count))
        if study.parallel:
            groups.append(Group("item x language", itm * count + lang, n_items * count))
    return groups, y


def _parts(model: Fit, theta: np.ndarray, study: Study, position: int) -> tuple[np.ndarray, np.ndarray]:
    """One language's logits under ``theta`` (one parameter vector, or one column per vector) as a variant part
    and an item part: the logit of (variant v, item i) is ``rows[v] + columns[i]``."""
    count = len(study.items)
    n_items = len(study.items[study.languages[position]])
    first = 0 if study.parallel else sum(len(study.items[lang]) for lang in study.languages[:position])
    rows = model.effects("language", theta)[position] + model.effects("variant", theta)
    columns = model.effects("item", theta)[first:first + n_items]
    if count > 1:
        rows = rows + model.effects("variant x language", theta).reshape(-1, count, *theta.shape[1:])[:, position]
        if study.parallel:
            columns = columns + model.effects("item x language", theta).reshape(-1, count,
                                                                                 *theta.shape[1:])[:, position]
    return rows, columns


def _logits(model: Fit, theta: np.ndarray, study: Study, position: int) -> np.ndarray:
    """One language's variants x items of logits under one parameter vector."""
    rows, columns = _parts(model, theta, study, position)
    return rows[:, None] + columns[None, :]


def _moderation(model: Fit, root: np.ndarray, study: Study, position: int) -> np.ndarray:
    """One language's variants x items of logit offsets that keep each cell's probability, averaged over the
    posterior draws, at its probability at the posterior mode.

    The Laplace approximation draws a cell's logit from a normal around the mode, symmetric, where the
    posterior of a logit is skewed outwards (a cell at 70% has its logit's mean beyond its mode); at the mode
    the probability is already about the posterior mean of the probability (as a beta posterior's logit mode
    is its mean), so averaging over the normal draws pulls every cell towards 0.5 a second time, the more the
    less its effects are known (an item answered under ten variants) and the further from 0.5 it is. The pull
    differs between variants: one below the mean loses less of its level than one above it, so a shift of
    all cells alike leaves the variants' scores pulled together. The mean of the normal draws is instead put
    where the logistic-normal integral (probit approximation: the mean of expit over N(m, s^2) is about
    expit(m / sqrt(1 + pi s^2 / 8))) gives back the mode's probability: m = mode x sqrt(1 + pi s^2 / 8), with s^2
    the cell's posterior variance (from ``root``: ``model.covariance_root()``).
    """
    rows, columns = _parts(model, root.T, study, position)
    variance = (rows ** 2).sum(axis=1)[:, None] + (columns ** 2).sum(axis=1)[None, :] + 2 * rows @ columns.T
    return _logits(model, model.theta, study, position) * (np.sqrt(1 + np.pi * variance / 8) - 1)


def _level_shift(observed_logits: np.ndarray, accuracy: float, steps: int = 30) -> float:
    """The constant that, added to every draw's logits, makes their mean probability on the evaluated cells the
    accuracy observed there.

    The evaluated cells are a balanced random share of the grid, so on average over the draws their probability
    must be the accuracy observed. Each cell's own offset (``_moderation``) already keeps its mean probability at
    the mode's, and at the mode the evaluated cells' mean probability is the observed accuracy (the intercept is
    not shrunk); this takes up what the probit approximation behind the offsets leaves (in
    bench/prompt_budget_sim.py at most a few hundredths of a logit). One shift for all draws keeps the draws' own
    spread, and with it the uncertainty of the level.
    """
    shift = 0.0
    for _ in range(steps):
        p = expit(observed_logits + shift)
        step = (accuracy - p.mean()) / max(float((p * (1 - p)).mean()), 1e-9)
        shift += float(np.clip(step, -5, 5))
        if abs(step) < 1e-9:
            break
    return shift


def _draw_scores(models: Sequence[Fit], grids: dict[str, np.ndarray], study: Study, draws: int,
                 rng: np.random.Generator) -> dict[str, np.ndarray]:
    """language -> draws x variants of scores: observed outcomes kept, the rest drawn from the posterior.

    ``models``: fits of the same model at different variances (``drawn_variance_fits``), sharing the draws
    equally, so that the draws also cover what is not known about the variances.
    """
    shares = np.diff(np.linspace(0, draws, len(models) + 1).round().astype(int))
    thetas = np.concatenate([model.draw(int(share), rng) for model, share in zip(models, shares)], axis=1)
    owner = np.repeat(np.arange(len(models)), shares)  # the fit each draw comes from
    offsets = []  # per fit, per language: each cell's offset (``_moderation``)
    for model in models:  # one fit's covariance root at a time: parameters squared, large for many languages
        root = model.covariance_root()
        offsets.append([_moderation(model, root, study, position) for position in range(len(grids))])
    scores = {}
    for position, (language, grid) in enumerate(grids.items()):
        missing = np.isnan(grid)
        known = np.where(missing, 0.0, grid).sum(axis=1)
        if not missing.any():  # nothing left to predict: every draw is the exhaustive value
            scores[language] = np.tile(known / grid.shape[1], (draws, 1))
            continue

        def drawn(draw: int) -> np.ndarray:  # recomputed, not kept: all draws' grids would not fit in memory
            return _logits(models[0], thetas[:, draw], study, position) + offsets[owner[draw]][position]

        shift = _level_shift(np.stack([drawn(draw)[~missing] for draw in range(draws)]),
                             float(grid[~missing].mean())) if (~missing).any() else 0.0
        simulated = np.stack([((rng.random(grid.shape) < expit(drawn(draw) + shift)) & missing).sum(axis=1)
                              for draw in range(draws)])
        scores[language] = (known + simulated) / grid.shape[1]
    return scores


def accuracy_spreads(grids: dict[str, np.ndarray], rows: np.ndarray | None = None) -> list[float | None]:
    """Per language, the variance of the variants' accuracies over all items that their observed accuracies
    imply (``rows``: over these variants, a resample); None where a variant has fewer than two cells.

    Each variant's items are a random share of the language's, so its observed accuracy varies around its
    accuracy on all of them by p(1 - p) / (n - 1) x (1 - n / I) (a sample of n of the I items, without
    replacement); what the observed accuracies vary by beyond that is the variants' own spread.
    """
    chosen = slice(None) if rows is None else rows
    found: list[float | None] = []
    for grid in grids.values():
        evaluated = ~np.isnan(grid)
        n = evaluated.sum(axis=1)
        if (n < 2).any():
            found.append(None)
            continue
        accuracy = np.where(evaluated, grid, 0.0).sum(axis=1) / n
        noise = accuracy * (1 - accuracy) / (n - 1) * (1 - n / grid.shape[1])
        found.append(max(0.0, float(np.var(accuracy[chosen], ddof=1) - noise[chosen].mean())))
    return found


def slopes(model: Fit, grids: dict[str, np.ndarray], study: Study, rng: np.random.Generator,
           draws: int = 20) -> list[float]:
    """Per language, the mean slope p(1 - p) of the probabilities on the evaluated cells over posterior draws:
    how much a variant's accuracy moves with its effect on the logit scale, as the draws move it.

    Over draws rather than at the mode: the draws spread the items' effects out from the mode's shrunken ones,
    which puts more cells near 0 or 1, where the slope is flatter (by about 5% in bench/prompt_budget_sim.py).
    """
    thetas = model.draw(draws, rng)
    found = []
    for position, grid in enumerate(grids.values()):
        evaluated = ~np.isnan(grid)
        p = np.stack([expit(_logits(model, thetas[:, draw], study, position)[evaluated]) for draw in range(draws)])
        found.append(max(float(np.mean(p * (1 - p))), 1e-6))
    return found


def moment_variance(spreads: Sequence[float | None], slope: Sequence[float]) -> float:
    """The variance of the variants' effects (logit scale, variant plus variant x language) that their spread
    on the accuracy scale (``accuracy_spreads``) implies through each language's ``slope``, averaged over the
    languages."""
    implied = [spread / language_slope ** 2 for spread, language_slope in zip(spreads, slope) if spread is not None]
    return float(np.mean(implied)) if implied else 0.0


def with_variant_variance(model: Fit, groups: list[Group], y: np.ndarray, target: float) -> Fit:
    """The fit again with the variant variances (variant, variant x language) scaled by one factor to sum to
    ``target`` (keeping their ratio), where the empirical Bayes estimate is smaller; else the fit itself."""
    names = [name for name in ("variant", "variant x language") if name in model.variances]
    fitted = sum(model.variances[name] for name in names)
    if target <= fitted:
        return model
    scaled = {**model.variances, **{name: model.variances[name] * target / fitted for name in names}}
    return at_variances(groups, y, scaled, model.theta)


@dataclass(frozen=True)
class MomentFit:
    """The fit at the moment variance (``with_moment_variance``) and the slopes that took it to the logit scale."""
    model: Fit
    slope: list[float]


def with_moment_variance(model: Fit, groups: list[Group], y: np.ndarray, grids: dict[str, np.ndarray],
                         study: Study, rng: np.random.Generator, rounds: int = 2, check_draws: int = 50
                         ) -> MomentFit:
    """The fit again with the variant variances scaled up to what the observed accuracies' spread implies
    (``accuracy_spreads``, ``moment_variance``), where the empirical Bayes estimate is smaller.

    The Laplace approximation under-estimates the variance of binary random effects (here: by a third to a
    half in bench/prompt_budget_sim.py), which shrinks the variants towards their mean and pulls the quantiles,
    the best, the worst and the spread in; the moment estimate on the accuracy scale does not lean on that
    approximation. A larger variance spreads the draws' probabilities out and flattens the slope, so the slope
    is taken again at each round's variance; a last check draws the variants' scores at the result and scales
    the slopes by how far the draws' spread of scores still falls short of (or exceeds) the observed one.
    """
    spreads = accuracy_spreads(grids)
    slope = slopes(model, grids, study, rng)
    for _ in range(rounds):
        slope = slopes(with_variant_variance(model, groups, y, moment_variance(spreads, slope)), grids, study, rng)
    scaled = with_variant_variance(model, groups, y, moment_variance(spreads, slope))
    drawn = _draw_scores([scaled], grids, study, check_draws, rng)
    ratios = [spread / got for spread, got in zip(spreads, (float(np.mean(np.var(scores, axis=1, ddof=1)))
                                                           for scores in drawn.values()))
              if spread and got > 0]
    slope = [value / np.sqrt(np.mean(ratios)) for value in slope] if ratios else slope
    return MomentFit(with_variant_variance(model, groups, y, moment_variance(spreads, slope)), slope)


def drawn_variance_fits(model: Fit, groups: list[Group], y: np.ndarray, grids: dict[str, np.ndarray],
                        study: Study, count: int, rng: np.random.Generator) -> list[Fit]:
    """The fit at ``count`` variant variances, each the moment variance (``with_moment_variance``) of a
    resample of the variants (with replacement; the same variants in every language), where larger than the
    empirical Bayes estimate.

    A plug-in variance treats the variants' spread as known, though it is estimated from as many variants as
    the set has: the shrinkage of every variant, and with it the quantiles, the best, the worst and the spread,
    then vary less over the draws than they are uncertain. Resampling the variants gives the variance
    estimate's own uncertainty, and the draws are shared among the fits at the resampled variances. Each is a
    refit of the posterior mode at given variances (Newton steps from the fit's mode), not a new empirical
    Bayes fit.
    """
    slope = with_moment_variance(model, groups, y, grids, study, rng).slope
    variants = len(study.variants)
    targets = [moment_variance(accuracy_spreads(grids, rng.integers(0, variants, variants)), slope)
               for _ in range(count)]
    return [with_variant_variance(model, groups, y, target) for target in targets]


def estimate(observed: pd.DataFrame, study: Study, confidence: float = 0.9, draws: int = 400,
             seed: int = 0, variant_variance: str = "resampled", variance_draws: int = 20) -> Estimate:
    """The score distribution over the study's variants in each language, from the evaluated cells.

    ``variant_variance``: "resampled" (``drawn_variance_fits``: ``variance_draws`` variances, each from a
    resample of the variants), "moments" (one, ``with_moment_variance``) or "laplace" (the fit's own empirical
    Bayes variances, which pull the tails in); bench/prompt_budget_sim.py compares them.
    """
    if variant_variance not in VARIANT_VARIANCES:
        raise ValueError(f"variant_variance {variant_variance!r} is not one of {VARIANT_VARIANCES}")
    grids = outcome_grids(observed, study)
    groups, y = _groups(grids, study)
    if not len(y):
        raise DataError("outcomes: no evaluated cell to estimate from")
    model = fit(groups, y)
    rng = np.random.default_rng(seed)
    models = [model]
    if variant_variance == "moments":
        models = [with_moment_variance(model, groups, y, grids, study, rng).model]
    elif variant_variance == "resampled":
        models = drawn_variance_fits(model, groups, y, grids, study, variance_draws, rng)
    scores = _draw_scores(models, grids, study, draws, rng)
    tail = (1 - confidence) / 2
    rows, variant_rows = [], []
    for language, drawn in scores.items():
        per_draw = pd.DataFrame([statistics_of(row) for row in drawn])
        cells = int((~np.isnan(grids[language])).sum())
        for name in STATISTICS:
            low, high = np.quantile(per_draw[name], [tail, 1 - tail])
            rows.append({"language": language, "statistic": name, "estimate": float(per_draw[name].mean()),
                         "low": float(low), "high": float(high), "cells": cells,
                         "grid_cells": grids[language].size, "fraction": cells / grids[language].size})
        low, high = np.quantile(drawn, [tail, 1 - tail], axis=0)
        evaluated = (~np.isnan(grids[language])).sum(axis=1)
        variant_rows += [{"language": language, "variant": v, "estimate": float(drawn[:, k].mean()),
                          "low": float(low[k]), "high": float(high[k]), "items_evaluated": int(evaluated[k])}
                         for k, v in enumerate(study.variants)]
    return Estimate(pd.DataFrame(rows), pd.DataFrame(variant_rows), models[0].variances)


def exhaustive(observed: pd.DataFrame, study: Study) -> pd.DataFrame:
    """language, statistic, value: the statistics of a fully evaluated grid (what ``--validate`` compares with)."""
    rows = []
    for language, grid in outcome_grids(observed, study).items():
        missing = int(np.isnan(grid).sum())
        if missing:
            raise DataError(f"outcomes: {language} lacks {missing} of its {grid.size} cells; "
                            "the exhaustive values need every variant on every item")
        rows += [{"language": language, "statistic": name, "value": value}
                 for name, value in statistics_of(grid.mean(axis=1)).items()]
    return pd.DataFrame(rows)
