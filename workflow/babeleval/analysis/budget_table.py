"""The estimates of every budgeted variant set of a run: ``results/tables/variation_budget.csv``.

A budgeted set's variants each answered only the items of its seeded design (``babeleval.prompts.budget_design``);
per (model, task, set) the estimator (``babeleval.analysis.budget_estimate``) is fitted on those cells and gives,
per language, the mean over the set's variants, the 5/25/50/75/95% quantiles, the best and worst variant and the
spread, each with its interval, beside the cells it used and their fraction of the full grid, the method that
gave it (``method``: the model, or the plain per-variant mean where the estimate's own simulations find that
closer), the fewest items a variant had (``items_per_variant``) and the estimate's own ``check`` ("" where
nothing; else few items per variant for the method, an interval resting on one simulated study, or a statistic
the budget cannot see). The cells' outcomes
are those of the set's headline metric (``BudgetedSet.metric``, validated right or wrong per item by
``babeleval.grid.variants.check_outcome``): the field its registry entry names (``Metric.outcome_column``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import pandas as pd

from ..core.errors import DataError
from ..core.paths import Combo
from ..prompts.budget_design import StudyPlan
from ..prompts.render import evaluated_items
from ..score.metrics import get_metric
from .budget_estimate import Study, estimate
from .records import on_reader_scale
from .settings import AnalysisSettings

COLUMNS = ["model", "task", "family", "language", "statistic", "metric", "estimate", "low", "high", "confidence",
           "method", "check", "items_per_variant", "cells", "grid_cells", "fraction"]


@dataclass(frozen=True)
class BudgetedSet:
    """One (model, task, set) to estimate: the set's plan, and per language the evaluated items' order."""
    model: str
    task: str
    plan: StudyPlan
    shuffle_seed: int | None
    limit: int | None
    metric: str  # the variants' headline metric, whose right/wrong outcome per item the estimate models

    @classmethod
    def from_json(cls, entry: Mapping[str, Any]) -> "BudgetedSet":
        return cls(model=entry["model"], task=entry["task"], plan=StudyPlan.from_json(entry["plan"]),
                   shuffle_seed=entry["shuffle_seed"], limit=entry["limit"], metric=entry["metric"])


def outcome_column(metric: str) -> str:
    """The record field holding ``metric``'s right/wrong outcome per item (``Metric.outcome_column``); a metric
    without one is a DataError."""
    column = get_metric(metric).outcome_column
    if column is None:
        raise DataError(f"metric {metric} is not right or wrong per item; the budgeted estimate models each cell as "
                        "right or wrong: name a metric such as acc or acc_norm")
    return column


def outcome_columns(sets: Sequence[BudgetedSet]) -> tuple[str, ...]:
    """The outcome tables' columns the sets' estimates read: the item id and each set's outcome field."""
    return ("id", *sorted({outcome_column(budgeted.metric) for budgeted in sets}))


def outcomes_of(records_of: Mapping[Combo, Sequence[dict[str, Any]]], metric: str) -> pd.DataFrame:
    """language, variant, item, correct: every evaluated cell's right/wrong outcome under ``metric`` (its
    ``outcome_column``); an item without one is a DataError."""
    column = outcome_column(metric)
    rows = []
    for combo, records in records_of.items():
        for record in records:
            if not isinstance(record.get(column), bool):
                raise DataError(f"{combo.model}/{combo.task}/{combo.language}/{combo.template}: item "
                                f"{record.get('id')} has no right/wrong `{column}` ({metric}); the estimate needs "
                                "each cell's outcome under the metric it models")
            rows.append((combo.language, combo.template, str(record["id"]), float(record[column])))
    return pd.DataFrame(rows, columns=["language", "variant", "item", "correct"])


def set_study(budgeted: BudgetedSet, items: Mapping[tuple[str, str], Mapping[str, dict]],
              languages: Sequence[str]) -> Study:
    """The full grid the set's design was drawn from: its variants x each language's evaluated items."""
    evaluated = {language: [str(row["id"]) for row in evaluated_items(list(items[budgeted.task, language].values()),
                                                                        budgeted.shuffle_seed, budgeted.limit)]
                 for language in languages}
    return Study.of(budgeted.plan.variants, evaluated, budgeted.plan.parallel)


def set_estimate(budgeted: BudgetedSet, outcomes: Mapping[Combo, Sequence[dict[str, Any]]],
                 items: Mapping[tuple[str, str], Mapping[str, dict]], settings: AnalysisSettings) -> pd.DataFrame:
    """The estimate table of one budgeted (model, task, set), its rows labelled."""
    mine = {combo: outcomes[combo] for combo in outcomes if (combo.model, combo.task) ==
            (budgeted.model, budgeted.task) and combo.template in budgeted.plan.variants}  # read only the set's
    observed = outcomes_of(mine, budgeted.metric)
    study = set_study(budgeted, items, sorted(set(observed["language"])))
    table = estimate(observed, study, confidence=settings.confidence, seed=settings.seed).table
    return table.assign(model=budgeted.model, task=budgeted.task, family=budgeted.plan.base, metric=budgeted.metric,
                        confidence=settings.confidence)


def budget_table(sets: Sequence[BudgetedSet], outcomes: Mapping[Combo, Sequence[dict[str, Any]]],
                 items: Mapping[tuple[str, str], Mapping[str, dict]], settings: AnalysisSettings) -> pd.DataFrame:
    """Every budgeted set's estimates, one row per (model, task, set, language, statistic), the estimate and its
    interval on the shown scale of each set's metric (a share of items: percent, named in ``scale``)."""
    frames = [set_estimate(budgeted, outcomes, items, settings) for budgeted in sets]
    table = pd.concat(frames, ignore_index=True)[COLUMNS] if frames else pd.DataFrame(columns=COLUMNS)
    return on_reader_scale(table.sort_values(COLUMNS[:4], kind="stable"), ("estimate", "low", "high"))
