"""The estimates of every budgeted variant set of a run: ``results/tables/variation_budget.csv``.

A budgeted set's variants each answered only the items of its seeded design (``babeleval.prompts.budget_design``);
per (model, task, set) the estimator (``babeleval.analysis.budget_estimate``) is fitted on those cells and gives,
per language, the mean over the set's variants, the 5/25/50/75/95% quantiles, the best and worst variant and the
spread, each with its interval, beside the cells it used and their fraction of the full grid.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import pandas as pd

from ..core.errors import DataError
from ..core.paths import Combo
from ..prompts.budget_design import StudyPlan
from ..prompts.render import evaluated_items
from ..score.metrics import ACCURACY
from .budget_estimate import Study, estimate
from .records import on_reader_scale
from .settings import AnalysisSettings

COLUMNS = ["model", "task", "family", "language", "statistic", "metric", "estimate", "low", "high", "confidence",
           "cells", "grid_cells", "fraction"]


@dataclass(frozen=True)
class BudgetedSet:
    """One (model, task, set) to estimate: the set's plan, and per language the evaluated items' order."""
    model: str
    task: str
    plan: StudyPlan
    shuffle_seed: int | None
    limit: int | None

    @classmethod
    def from_json(cls, entry: Mapping[str, Any]) -> "BudgetedSet":
        return cls(model=entry["model"], task=entry["task"], plan=StudyPlan.from_json(entry["plan"]),
                   shuffle_seed=entry["shuffle_seed"], limit=entry["limit"])


def outcomes_of(records_of: Mapping[Combo, Sequence[dict[str, Any]]]) -> pd.DataFrame:
    """language, variant, item, correct: the right/wrong outcome of every evaluated cell; an item without one
    (a metric that is not right/wrong) is a DataError."""
    rows = []
    for combo, records in records_of.items():
        for record in records:
            if not isinstance(record.get("correct"), bool):
                raise DataError(f"{combo.model}/{combo.task}/{combo.language}/{combo.template}: item "
                                f"{record.get('id')} has no right/wrong `correct`; the estimate needs a right/wrong "
                                "metric")
            rows.append((combo.language, combo.template, str(record["id"]), float(record["correct"])))
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
    observed = outcomes_of(mine)
    study = set_study(budgeted, items, sorted(set(observed["language"])))
    table = estimate(observed, study, confidence=settings.confidence, seed=settings.seed).table
    return table.assign(model=budgeted.model, task=budgeted.task, family=budgeted.plan.base, metric=ACCURACY,
                        confidence=settings.confidence)


def budget_table(sets: Sequence[BudgetedSet], outcomes: Mapping[Combo, Sequence[dict[str, Any]]],
                 items: Mapping[tuple[str, str], Mapping[str, dict]], settings: AnalysisSettings) -> pd.DataFrame:
    """Every budgeted set's estimates, one row per (model, task, set, language, statistic), the estimate and its
    interval on accuracy's shown scale (named in ``scale``)."""
    frames = [set_estimate(budgeted, outcomes, items, settings) for budgeted in sets]
    table = pd.concat(frames, ignore_index=True)[COLUMNS] if frames else pd.DataFrame(columns=COLUMNS)
    return on_reader_scale(table.sort_values(COLUMNS[:4], kind="stable"), ("estimate", "low", "high"))
