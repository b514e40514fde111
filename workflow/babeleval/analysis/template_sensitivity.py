"""Template sensitivity: how much a score moves with the prompt, and whether rankings survive a change of prompt.

Both tables are computed from the leaderboard (one value per model, task,
language, template and metric):

- ``template_sensitivity``: per (model, task, language, metric) reported by
  two templates or more, the mean, min, max, spread (max - min) and standard
  deviation across templates, with the best and worst template and the fewest and most items a template
  scored (``n_min``, ``n_max``); on the metric's shown scale, named in a
  ``scale`` column (``babeleval.score.metrics``), so no column mixes a 0-1 share with a 0-100 score;
- ``rank_stability``: for every pair of templates, the rank correlation
  (Kendall's tau-b and Spearman's rho, ``rank_correlation``) of the *models* per (task,
  language) -- does the prompt change which model looks best? -- and, so
  that a single-model grid still says something, of the *languages* per
  (model, task). With one model there are no model rankings, so no rows for them (the report says so once).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from ..score.metrics import get_metric
from .rank_correlation import kendall_tau_b, spearman_rho

SENSITIVITY_COLUMNS = ["model", "task", "language", "metric", "scale", "n_templates", "n_min", "n_max", "mean", "min", "max", "spread", "std",
                       "best_template", "worst_template"]
RANK_COLUMNS = ["task", "metric", "ranked", "within", "template_a", "template_b", "n", "kendall_tau",
                "spearman_rho", "note"]
TIED = "(all tied)"


def template_sensitivity(leaderboard: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (model, task, language, metric), group in leaderboard.groupby(["model", "task", "language", "metric"], sort=True):
        group = group.dropna(subset=["value"]).sort_values("template")
        if len(group) < 2:  # a metric only one template reports (acc_norm: log-likelihood templates) has no spread
            continue
        defined = get_metric(metric)
        values = np.array([defined.shown(v) for v in group["value"].astype(float)])
        best = group.iloc[int(np.argmax(values))]["template"]
        worst = group.iloc[int(np.argmin(values))]["template"]
        if values.max() == values.min():
            best = worst = TIED
        rows.append({
            "model": model, "task": task, "language": language, "metric": metric, "scale": defined.unit,
            "n_templates": len(values), "n_min": int(group["n"].min()), "n_max": int(group["n"].max()), "mean": values.mean(), "min": values.min(), "max": values.max(),
            "spread": values.max() - values.min(),
            "std": values.std(ddof=1) if len(values) > 1 else float("nan"),
            "best_template": best, "worst_template": worst,
        })
    return pd.DataFrame(rows, columns=SENSITIVITY_COLUMNS)


def rank_correlation(a: np.ndarray, b: np.ndarray) -> tuple[float, float, str]:
    """Kendall's tau-b and Spearman's rho of two score vectors over the same units, with a note when undefined."""
    if len(a) < 2:
        return float("nan"), float("nan"), "needs two units to rank"
    if np.all(a == a[0]) or np.all(b == b[0]):
        return float("nan"), float("nan"), "all scores tied under one template: no ranking"
    return kendall_tau_b(a, b), spearman_rho(a, b), ""


def _pairs(frame: pd.DataFrame, unit: str, task: str, metric: str, ranked: str, within: str) -> list[dict]:
    """Rank correlations of ``unit`` (model or language) between every pair of templates in ``frame``."""
    table = frame.pivot_table(index=unit, columns="template", values="value", aggfunc="first")
    rows = []
    if ranked == "models" and table.shape[0] < 2:
        return rows  # one model: nothing to rank
    for a, b in itertools.combinations(sorted(table.columns), 2):
        both = table[[a, b]].dropna()
        tau, rho, note = rank_correlation(both[a].to_numpy(float), both[b].to_numpy(float))
        rows.append({"task": task, "metric": metric, "ranked": ranked, "within": within, "template_a": a,
                     "template_b": b, "n": len(both), "kendall_tau": tau, "spearman_rho": rho, "note": note})
    return rows


def rank_stability(leaderboard: pd.DataFrame) -> pd.DataFrame:
    rows: list[dict] = []
    for (task, metric), group in leaderboard.groupby(["task", "metric"], sort=True):
        for language, sub in group.groupby("language", sort=True):
            rows += _pairs(sub, "model", task, metric, "models", f"language={language}")
        # models ranked by their mean over the languages every template covers
        pooled = group.groupby(["model", "template"], as_index=False)["value"].mean()
        rows += _pairs(pooled, "model", task, metric, "models", "mean over languages")
        for model, sub in group.groupby("model", sort=True):
            rows += _pairs(sub, "language", task, metric, "languages", f"model={model}")
    return pd.DataFrame(rows, columns=RANK_COLUMNS)
