"""Prompt variation as a factor: spread over variants, variance decomposition, rank stability, and the
cross-lingual sensitivity test.

Input is per-item correctness from the raw records of every (model, task, language, template). Templates
are grouped into **variant sets** by their base template (``formatspread~enum=num`` belongs to
``formatspread``); a set with two or more members evaluated is a variation study. Per-item outcomes are
``correct`` (accuracy; items a set's variants do not all share are left out, so every comparison is paired).
The tables name a set by its base template, in their column ``family`` (``BASE``: the name published tables use).

Tables (one row per ...):

- ``spread``: (model, task, language, base): mean, min, max, spread (max - min), standard deviation and
  interquartile range of the variants' accuracies, each with a bootstrap interval over items (the same
  resampled items for every variant); the spread item noise alone gives (``spread_noise``) and a
  permutation p-value against it (``p_spread``); the best and worst variant;
- ``axes``: (model, task, language, base, axis): how far the axis's values move the mean accuracy
  (range of the marginal means over the variants with each value): which axis matters, for which language;
- ``decomposition``: (task, base, term): a sequential (type I) sums-of-squares decomposition of per-item
  correctness into model, language, each variation axis, the rest of the variant identity, and the
  language x axis, model x axis and model x language interactions, with the items (residual) last;
- ``ranks``: (task, language, base): agreement of the models' ranking across variants (Kendall's W,
  mean pairwise Kendall tau, how many variants put each model first);
- ``sensitivity``: (model, task, base, against): Spearman correlation over languages between a language's
  mean accuracy (or its resource group, where the grid gives groups) and its sensitivity (standard deviation
  over variants), with a permutation p-value. A negative rho says the model is more sensitive to the format
  in the languages it knows least.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ..core.progress import Progress
from ..score.metrics import ACCURACY, get_metric
from ..prompts.variants import AXES, AXIS_DEFAULTS, base_name, split_name
from ..core.paths import Combo
from .rank_correlation import average_ranks, kendall_tau_b, spearman_rho
from .settings import DEFAULT_SETTINGS, AnalysisSettings

# the tables' column naming a variant set by its base template (its name in published tables)
BASE = "family"
# the columns on accuracy's scale: computed as shares, written and shown in percent (``on_reader_scale``)
ACCURACY_COLUMNS = ("mean", "min", "max", "spread", "spread_low", "spread_high", "spread_noise", "sd", "sd_low",
                    "sd_high", "iqr", "iqr_low", "iqr_high", "effect_range")


def on_reader_scale(frame: pd.DataFrame) -> pd.DataFrame:
    """A variation table as it is written and shown: its accuracy columns in percent (accuracy's scale,
    ``babeleval.score.metrics``), named in a ``scale`` column; a table without such columns as it is."""
    present = [column for column in ACCURACY_COLUMNS if column in frame.columns]
    if not present:
        return frame
    frame = frame.copy()
    for column in present:
        frame[column] = [get_metric(ACCURACY).shown(v) for v in frame[column].astype(float)]
    frame.insert(frame.columns.get_loc(present[0]), "scale", get_metric(ACCURACY).unit)
    return frame


def settings_of(template: str) -> dict[str, str]:
    """Every axis's value for a template name (defaults filled in; shots left as 'base' where not set)."""
    _, settings = split_name(template)
    return {axis: settings.get(axis, AXIS_DEFAULTS.get(axis, "base")) for axis in AXES}


def outcome_matrices(raw: Mapping[Combo, list[dict[str, Any]]]) -> dict[tuple[str, str, str, str], pd.DataFrame]:
    """(model, task, language, base) -> items x variants of 0/1 correctness, on the items all variants share.

    Families with one member, and records without a per-item ``correct`` (translation), are left out.
    """
    families: dict[tuple[str, str, str, str], list[Combo]] = {}
    for combo in raw:
        families.setdefault((combo.model, combo.task, combo.language, base_name(combo.template)), []).append(combo)
    out = {}
    for key, members in sorted(families.items()):
        if len(members) < 2:  # not read at all: ``raw`` may read a combination's table only when looked up
            continue
        by_template = {}
        for combo in members:
            outcomes = {str(r["id"]): float(bool(r["correct"])) for r in raw[combo] if isinstance(r.get("correct"), bool)}
            if outcomes:
                by_template[combo.template] = outcomes
        if len(by_template) < 2:
            continue
        frame = pd.DataFrame(by_template).dropna()  # items every variant has
        if len(frame):
            out[key] = frame[sorted(frame.columns)].sort_index()
    return out


def _iqr(values: np.ndarray, axis: int = -1) -> np.ndarray:
    q75, q25 = np.percentile(values, [75, 25], axis=axis)
    return q75 - q25


def _stats(accs: np.ndarray) -> dict[str, np.ndarray]:
    """Spread statistics over the last axis (variants)."""
    return {"spread": accs.max(axis=-1) - accs.min(axis=-1),
            "sd": accs.std(axis=-1, ddof=1) if accs.shape[-1] > 1 else np.zeros(accs.shape[:-1]),
            "iqr": _iqr(accs)}


def spread_null(values: np.ndarray, samples: int, rng: np.random.Generator, chunk: int = 100) -> np.ndarray:
    """Spreads over variants when the format makes no difference: each item's outcomes shuffled over variants.

    Under that null the variants are exchangeable for every item, so the spread it gives is what item noise
    alone produces; its mean is the spread's noise floor.
    """
    n, v = values.shape
    out = []
    for start in range(0, samples, chunk):
        size = min(chunk, samples - start)
        order = rng.random((size, n, v)).argsort(axis=2)
        accs = np.take_along_axis(np.broadcast_to(values, (size, n, v)), order, axis=2).mean(axis=1)
        out.append(accs.max(axis=1) - accs.min(axis=1))
    return np.concatenate(out)


def spread_table(matrices: dict[tuple, pd.DataFrame], samples: int = DEFAULT_SETTINGS.samples,
                 confidence: float = DEFAULT_SETTINGS.confidence, seed: int = 0) -> pd.DataFrame:
    rows = []
    alpha = (1 - confidence) / 2
    progress = Progress(len(matrices), what="bootstrapped variant spreads of", unit="(model, language) cells")
    for done, ((model, task, language, base), frame) in enumerate(matrices.items(), 1):
        values = frame.to_numpy()
        n = len(values)
        accs = values.mean(axis=0)
        point = _stats(accs)
        # one generator per row, from the seed and the row's labels: a row's interval does not depend on others
        rng = np.random.default_rng([seed, *map(_stable_int, (model, task, language, base))])
        weights = rng.multinomial(n, np.full(n, 1 / n), size=samples)  # resampled item counts, paired over variants
        boot = _stats(weights @ values / n)
        row = {"model": model, "task": task, "language": language, BASE: base,
               "n_variants": values.shape[1], "n_items": n, "mean": accs.mean(), "min": accs.min(),
               "max": accs.max(), "best_variant": frame.columns[int(accs.argmax())],
               "worst_variant": frame.columns[int(accs.argmin())]}
        for name, value in point.items():
            row[name] = float(value)
            row[f"{name}_low"], row[f"{name}_high"] = (float(v) for v in np.quantile(boot[name], [alpha, 1 - alpha]))
        null = spread_null(values, samples, rng)
        row["spread_noise"] = float(null.mean())
        row["p_spread"] = float((1 + np.sum(null >= point["spread"] - 1e-12)) / (samples + 1))
        rows.append(row)
        progress.tick(done)
    columns = ["model", "task", "language", BASE, "n_variants", "n_items", "mean", "min", "max",
               "spread", "spread_low", "spread_high", "spread_noise", "p_spread", "sd", "sd_low", "sd_high",
               "iqr", "iqr_low", "iqr_high",
               "best_variant", "worst_variant"]
    return pd.DataFrame(rows, columns=columns)


def _stable_int(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:4], "big")


def axes_table(matrices: dict[tuple, pd.DataFrame]) -> pd.DataFrame:
    rows = []
    for (model, task, language, base), frame in matrices.items():
        accs = frame.mean(axis=0)
        settings = pd.DataFrame([settings_of(t) for t in accs.index], index=accs.index)
        for axis in AXES:
            if settings[axis].nunique() < 2:
                continue
            means = accs.groupby(settings[axis]).mean()
            rows.append({"model": model, "task": task, "language": language, BASE: base, "axis": axis,
                         "n_values": len(means), "effect_range": float(means.max() - means.min()),
                         "best_value": str(means.idxmax()), "worst_value": str(means.idxmin()),
                         "means": "; ".join(f"{k}={100.0 * v:.1f}%" for k, v in means.items())})
    return pd.DataFrame(rows, columns=["model", "task", "language", BASE, "axis", "n_values", "effect_range",
                                       "best_value", "worst_value", "means"])


# -- variance decomposition -----------------------------------------------------------------------


def _one_hot(values: pd.Series) -> np.ndarray:
    """Treatment coding: one column per level after the first (the intercept carries the first)."""
    levels = sorted(values.unique())
    return np.stack([(values == level).to_numpy(float) for level in levels[1:]], axis=1) if len(levels) > 1 \
        else np.zeros((len(values), 0))


def _interaction(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if not a.shape[1] or not b.shape[1]:
        return np.zeros((len(a), 0))
    return np.einsum("ni,nj->nij", a, b).reshape(len(a), -1)


def _weighted_rss(design: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[float, int]:
    sw = np.sqrt(w)
    coef, *_ = np.linalg.lstsq(design * sw[:, None], y * sw, rcond=None)
    resid = y - design @ coef
    rank = np.linalg.matrix_rank(design * sw[:, None]) if design.shape[1] else 0
    return float((w * resid ** 2).sum()), int(rank)


def decomposition_table(matrices: dict[tuple, pd.DataFrame]) -> pd.DataFrame:
    """Sequential sums of squares of per-item correctness, computed on (model, language, variant) cells.

    Cell means weighted by their item counts give the same between-cell sums of squares as a least-squares
    fit to the items; what lies within cells (items, given model, language and variant) is the residual.
    Terms enter in the order listed, so each term gets what the terms before it leave unexplained.
    """
    rows = []
    by_study: dict[tuple[str, str], list] = {}
    for (model, task, language, base), frame in matrices.items():
        by_study.setdefault((task, base), []).append((model, language, frame))
    for (task, base), parts in sorted(by_study.items()):
        cells, within, total_n, total_sum, total_sq = [], 0.0, 0, 0.0, 0.0
        for model, language, frame in parts:
            values = frame.to_numpy()
            for j, template in enumerate(frame.columns):
                column = values[:, j]
                cells.append({"model": model, "language": language, "variant": template,
                              **settings_of(template), "n": len(column), "mean": column.mean()})
                within += float(((column - column.mean()) ** 2).sum())
                total_n += len(column)
                total_sum += float(column.sum())
                total_sq += float((column ** 2).sum())
        cells = pd.DataFrame(cells)
        total = total_sq - total_sum ** 2 / total_n
        y, w = cells["mean"].to_numpy(), cells["n"].to_numpy(float)
        axes = [axis for axis in AXES if cells[axis].nunique() > 1]
        coded = {name: _one_hot(cells[name]) for name in ["model", "language", "variant", *axes]}
        terms: list[tuple[str, np.ndarray]] = [("model", coded["model"]), ("language", coded["language"])]
        terms += [(axis, coded[axis]) for axis in axes]
        terms.append(("variant (rest)", coded["variant"]))
        terms.append(("model x language", _interaction(coded["model"], coded["language"])))
        terms += [(f"language x {axis}", _interaction(coded["language"], coded[axis])) for axis in axes]
        terms += [(f"model x {axis}", _interaction(coded["model"], coded[axis])) for axis in axes]
        design = np.ones((len(cells), 1))
        rss, rank = _weighted_rss(design, y, w)
        for name, columns in terms:
            design = np.hstack([design, columns])
            new_rss, new_rank = _weighted_rss(design, y, w)
            df = new_rank - rank
            note = ("" if df else "not separable from the terms above with these variants (sample more variants, "
                    "or vary fewer axes)" if columns.shape[1] else "one level only")
            rows.append({"task": task, BASE: base, "term": name, "df": df, "ss": max(rss - new_rss, 0.0),
                         "share": max(rss - new_rss, 0.0) / total if total else math.nan, "note": note})
            rss, rank = new_rss, new_rank
        rows.append({"task": task, BASE: base, "term": "cells not explained", "df": len(cells) - rank,
                     "ss": rss, "share": rss / total if total else math.nan, "note": "higher-order interactions"})
        rows.append({"task": task, BASE: base, "term": "items (within cells)", "df": total_n - len(cells),
                     "ss": within, "share": within / total if total else math.nan,
                     "note": "item difficulty and item x factor effects"})
    return pd.DataFrame(rows, columns=["task", BASE, "term", "df", "ss", "share", "note"])


# -- rank stability ---------------------------------------------------------------------------------


def _kendall_w(scores: np.ndarray) -> float:
    """Kendall's W of raters (rows: variants) ranking objects (columns: models); ties get mean ranks."""
    m, n = scores.shape
    if n < 2 or m < 2:
        return math.nan
    ranks = np.vstack([average_ranks(-row) for row in scores])
    totals = ranks.sum(axis=0)
    s = float(((totals - totals.mean()) ** 2).sum())
    ties = sum(((counts ** 3) - counts).sum() for counts in
               (np.unique(row, return_counts=True)[1] for row in ranks))
    denominator = m ** 2 * (n ** 3 - n) - m * ties
    return 12 * s / denominator if denominator else math.nan


def ranks_table(matrices: dict[tuple, pd.DataFrame]) -> pd.DataFrame:
    rows = []
    by_cell: dict[tuple[str, str, str], dict[str, pd.Series]] = {}
    for (model, task, language, base), frame in matrices.items():
        by_cell.setdefault((task, language, base), {})[model] = frame.mean(axis=0)
    for (task, language, base), by_model in sorted(by_cell.items()):
        table = pd.DataFrame(by_model).dropna()  # variants x models
        row = {"task": task, "language": language, BASE: base, "n_models": table.shape[1],
               "n_variants": table.shape[0], "kendall_w": math.nan, "mean_kendall_tau": math.nan, "winners": "",
               "note": ""}
        if table.shape[1] < 2:
            row["note"] = "one model: rank stability needs two or more"
        else:
            scores = table.to_numpy()
            row["kendall_w"] = _kendall_w(scores)
            taus = [kendall_tau_b(scores[i], scores[j]) for i, j in itertools.combinations(range(len(scores)), 2)]
            row["mean_kendall_tau"] = float(np.nanmean(taus)) if taus and not all(t != t for t in taus) else math.nan
            winners = pd.Series(table.idxmax(axis=1)).value_counts()
            row["winners"] = "; ".join(f"{model}={count}" for model, count in winners.items())
        rows.append(row)
    return pd.DataFrame(rows, columns=["task", "language", BASE, "n_models", "n_variants", "kendall_w",
                                       "mean_kendall_tau", "winners", "note"])


# -- is sensitivity larger where the model knows the language least? -------------------------------------


def permutation_test(x: np.ndarray, y: np.ndarray, permutations: int, seed: int) -> tuple[float, float, float, int]:
    """Spearman rho, two-sided and 'rho < 0' p-values, and how many permutations were used.

    Exact (every ordering of y) when there are no more than ``permutations`` of them; else random
    orderings, counting the observed one, so the p-value is never 0.
    """
    rho = spearman_rho(x, y)
    if rho != rho:
        return rho, math.nan, math.nan, 0
    n = len(x)
    if math.factorial(n) <= permutations:
        null = np.array([spearman_rho(x, np.asarray(p)) for p in itertools.permutations(y)])
        return rho, float(np.mean(np.abs(null) >= abs(rho) - 1e-12)), float(np.mean(null <= rho + 1e-12)), len(null)
    rng = np.random.default_rng(seed)
    null = np.array([spearman_rho(x, rng.permutation(y)) for _ in range(permutations)])
    two = (1 + np.sum(np.abs(null) >= abs(rho) - 1e-12)) / (permutations + 1)
    less = (1 + np.sum(null <= rho + 1e-12)) / (permutations + 1)
    return rho, float(two), float(less), permutations


def sensitivity_table(spread: pd.DataFrame, permutations: int = DEFAULT_SETTINGS.permutations, seed: int = 0,
                      groups: dict[str, list[str]] | None = None, measure: str = "sd") -> pd.DataFrame:
    """Sensitivity (SD over variants, or the ``measure`` column) against the language's mean accuracy, and against
    its resource group.

    ``groups`` (params.yaml ``analysis.language_groups``) lists languages by resource group, the best
    resourced group first; its test is Spearman's rho between the group's rank (higher = better resourced)
    and the sensitivity, over the languages that belong to a group. In both tests a negative rho says the
    model is more sensitive to the format where it knows the language least.
    """
    rank_of = {language: -number for number, members in enumerate((groups or {}).values()) for language in members}
    rows = []
    for (model, task, base), group in spread.groupby(["model", "task", BASE], sort=True):
        group = group.sort_values("language")
        tests = [("score", group, group["mean"].to_numpy())]
        if rank_of:
            grouped = group[group["language"].isin(rank_of)]
            tests.append(("resource group", grouped, grouped["language"].map(rank_of).to_numpy(float)))
        for against, part, x in tests:
            unmeasured = part[measure].isna().to_numpy()  # e.g. a budgeted spread refused for too few items
            part, x = part[~unmeasured], x[~unmeasured]
            row = {"model": model, "task": task, BASE: base, "against": against, "n_languages": len(part),
                   "rho": math.nan, "p_two_sided": math.nan, "p_less": math.nan, "permutations": 0,
                   "most_sensitive": "", "least_sensitive": "", "note": ""}
            if len(part) < 3:
                row["note"] = "fewer than three languages: no test"
            else:
                rho, two, less, used = permutation_test(x, part[measure].to_numpy(), permutations,
                                                        seed + _stable_int(f"{model}{task}{base}{against}"))
                row.update(rho=rho, p_two_sided=two, p_less=less, permutations=used,
                           most_sensitive=part.loc[part[measure].idxmax(), "language"],
                           least_sensitive=part.loc[part[measure].idxmin(), "language"])
                if rho != rho:
                    row["note"] = f"no variation in {against} or sensitivity across languages"
            if unmeasured.any():
                missing = ", ".join(group["language"][unmeasured])
                row["note"] = "; ".join(filter(None, [row["note"], f"no {measure} in {missing}: left out"]))
            rows.append(row)
    return pd.DataFrame(rows, columns=["model", "task", BASE, "against", "n_languages", "rho", "p_two_sided",
                                       "p_less", "permutations", "most_sensitive", "least_sensitive", "note"])


def estimate_sensitivity_table(estimates: pd.DataFrame, permutations: int = DEFAULT_SETTINGS.permutations,
                               seed: int = 0, groups: dict[str, list[str]] | None = None, draws: int = 1000
                               ) -> pd.DataFrame:
    """The cross-lingual sensitivity test on budgeted estimates (``babeleval.analysis.budget_table``: per language
    the estimated mean and spread over a set's variants, each with its interval) instead of fully evaluated sets.

    Sensitivity is the estimated spread (best - worst variant); the test is ``sensitivity_table``'s on the point
    estimates, over the languages whose spread was estimated (a spread seen through too few items a variant is
    refused: ``budget_estimate.refusal``; the row's note names the languages left out). ``rho_low``/``rho_high``:
    the interval of rho when each language's mean and spread are drawn from their own intervals (as normals with
    the intervals' half-widths, independently), at the estimates' confidence: how far the estimates' uncertainty
    alone moves rho; drawn for the test against the score only (empty for the resource group's).
    """
    wide = (estimates[estimates["statistic"].isin(["mean", "spread"])]  # a refused spread kept, as NaN
            .groupby(["model", "task", BASE, "language", "statistic"])[["estimate", "low", "high", "confidence"]]
            .first().unstack("statistic"))
    frame = pd.DataFrame({"mean": wide["estimate"]["mean"], "spread": wide["estimate"]["spread"]}).reset_index()
    table = sensitivity_table(frame, permutations, seed, groups, measure="spread")
    if table.empty:
        return table.assign(sensitivity="estimated spread", rho_low=[], rho_high=[])
    from scipy.stats import norm

    z = norm.ppf(0.5 + wide["confidence"]["spread"].to_numpy(float) / 2)
    scale = {name: ((wide["high"][name] - wide["low"][name]).to_numpy(float) / (2 * z)) for name in ("mean", "spread")}
    lows, highs = [], []
    for row in table.itertuples(index=False):
        keep = ((frame["model"] == row.model) & (frame["task"] == row.task) & (frame[BASE] == getattr(row, BASE))
                & frame["spread"].notna()).to_numpy()
        if row.rho != row.rho or row.against != "score":  # drawn for the test against the score only
            lows.append(math.nan)
            highs.append(math.nan)
            continue
        rng = np.random.default_rng(seed + _stable_int(f"{row.model}{row.task}{getattr(row, BASE)}draws"))
        drawn = [spearman_rho(rng.normal(frame["mean"].to_numpy(float)[keep], scale["mean"][keep]),
                              rng.normal(frame["spread"].to_numpy(float)[keep], scale["spread"][keep]))
                 for _ in range(draws)]
        tail = (1 - float(wide["confidence"]["spread"].iloc[0])) / 2
        low, high = np.nanquantile(drawn, [tail, 1 - tail])
        lows.append(float(low))
        highs.append(float(high))
    return table.assign(sensitivity="estimated spread", rho_low=lows, rho_high=highs)


def analyse(matrices: dict[tuple[str, str, str, str], pd.DataFrame], settings: AnalysisSettings
            ) -> dict[str, pd.DataFrame]:
    """Every variation table from the outcome matrices (``outcome_matrices``)."""
    spread = spread_table(matrices, settings.samples, settings.confidence, settings.seed)
    return {"spread": spread, "axes": axes_table(matrices), "decomposition": decomposition_table(matrices),
            "ranks": ranks_table(matrices),
            "sensitivity": sensitivity_table(spread, settings.permutations, settings.seed, settings.language_groups)}
