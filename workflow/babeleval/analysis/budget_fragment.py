"""The budgeted sets' section of the report (``<section id="variation-budget">``): every estimate beside the budget
it used and its interval, and the cross-lingual sensitivity test on the estimates."""

from __future__ import annotations

import html

import pandas as pd

from .budget_estimate import STATISTICS
from .report import table_html

KEYS = ["model", "task", "family", "metric", "language"]


def estimates_shown(table: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, task, set, language): each statistic as "estimate [low, high]" (the table's scale;
    a "!" where the estimate's own check flags it, "refused" where the budget cannot estimate it), the budget
    (cells evaluated of the grid's, and their share) and what the checks say."""
    if table.empty:
        return table
    checks = table["check"].fillna("")
    cells = table.assign(shown=["refused" if method == "refused" else f"{e:.1f} [{lo:.1f}, {hi:.1f}]"
                                f"{' !' if flag else ''}" for e, lo, hi, flag, method in
                                zip(table["estimate"], table["low"], table["high"], checks, table["method"])])
    wide = cells.pivot_table(index=KEYS, columns="statistic", values="shown", aggfunc="first")
    wide = wide[[name for name in STATISTICS if name in wide.columns]].reset_index()
    budget = cells.groupby(KEYS, sort=True).first().reset_index()
    wide["budget"] = [f"{int(c)} of {int(g)} cells ({f:.0%})"
                      for c, g, f in zip(budget["cells"], budget["grid_cells"], budget["fraction"])]
    wide["check"] = [check_summary(rows) for _, rows in cells.assign(check=checks).groupby(KEYS, sort=True)]
    return wide


def check_summary(rows: pd.DataFrame) -> str:
    """One set's flags in a language: each check once, with the statistics it flags ("" where none)."""
    flagged = rows[rows["check"] != ""]
    by_check: dict[str, list[str]] = {}
    for statistic, check in zip(flagged["statistic"], flagged["check"]):
        for part in check.split("; "):
            by_check.setdefault(part, []).append(statistic)
    return "; ".join(f"{part} ({', '.join(names) if len(names) < len(rows) else 'all'})"
                     for part, names in by_check.items())


def render(table: pd.DataFrame, sensitivity: pd.DataFrame, csv_names: dict[str, str]) -> str:
    """The section's HTML; ``table``: results/tables/variation_budget.csv as written (``budget_table``)."""
    confidence = f"{float(table['confidence'].iloc[0]):.0%}" if not table.empty else ""
    scale = f" ({html.escape(str(table['scale'].iloc[0]))})" if "scale" in table.columns and not table.empty else ""
    parts = ['<section id="variation-budget">', "<h2>Prompt sensitivity on a budget</h2>",
             '<p class="note">Each variant of these sets answered only the items of a seeded, balanced design; a model '
             "over variants and items (docs/variations.md, section 6) estimates the distribution of the variants' "
             f"scores{scale} from those cells. Every estimate is shown with its {confidence} interval and the budget "
             "it used; a \"!\" marks an estimate its own check flags (column check: too few items per variant for the "
             "method, an interval resting on one simulated study, or a statistic this budget cannot see); a tail seen "
             "through too few items a variant is refused, and its check names the budget that would estimate it. The "
             "variants' own numbers are of a subset of the items and are not in the leaderboard.</p>",
             table_html(estimates_shown(table), "variation-budget-table", csv_names.get("table")),
             "<h3>Is sensitivity larger in the languages a model knows least? (on the estimates)</h3>",
             '<p class="note">Spearman rho between a language\'s estimated mean and its estimated spread; rho_low and '
             "rho_high: how far the estimates' own intervals move rho.</p>",
             table_html(sensitivity, "variation-budget-sensitivity", csv_names.get("sensitivity")),
             "</section>"]
    return "\n".join(parts)
