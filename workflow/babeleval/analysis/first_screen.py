"""The report's first screen: per task, what a reader needs to read its headline number, in one table row.

Each row holds the task's headline metric per model over its headline cells (the same for every model,
``babeleval.analysis.comparable``), with its interval and n; the chance level (or that there is none); the
parse-failure rate over the generated cells among them (or that nothing was parsed); which templates and languages
went in; and one line on what stands out, picked in this order:

1. a template whose answers a model's parser mostly could not read (its score there is mostly parsing);
2. the biggest model gap that is significant after the Holm correction;
3. a model whose interval holds the chance level (no evidence it does better than guessing), or is below it;
4. the largest template effect that is significant after the Holm correction;
5. otherwise, that no paired difference is significant (or none could be tested).

Each kind is one finding, however many models it names; at most two are said, so the line stays one line.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ..score.metrics import PARSE_FAILURE_RATE, get_metric
from .comparable import HeadlineCells, comparable_task, headline_cells, rows_of
from .paper_tables import chance_of, combined_interval, fmt, headline_cell, headline_tasks

# a template's parse-failure rate from which its score is read as mostly parsing
MOSTLY_UNPARSED = 0.5
WENT_IN = "templates × languages"
COLUMNS_BEFORE = ["task", "metric", "chance", WENT_IN]
STANDS_OUT = "what stands out"


def _unparsed(pf_rows: pd.DataFrame, cells: dict[str, HeadlineCells]) -> list[str]:
    """One finding naming every model with a template mostly unparsed (so that a second kind of finding has room)."""
    found = []
    for model, held in cells.items():
        rates = rows_of(pf_rows, held).groupby("template")["value"].mean()
        mostly = [t for t, rate in sorted(rates.items()) if rate >= MOSTLY_UNPARSED]
        if mostly:
            found.append(f"{model}: parse failures " + ", ".join(f"{t} {100.0 * rates[t]:.0f}%" for t in mostly))
    if not found:
        return []
    if len(found) == 1:
        return [f"{found[0]}, so its score there is mostly parsing, not answering"]
    return [f"{' and '.join(found)}, so their scores there are mostly parsing, not answering"]


def _at_chance(frame: pd.DataFrame, cells: dict[str, HeadlineCells], metric: str, chance: float | None) -> list[str]:
    """The models whose interval holds the chance level, then those below it: one finding each."""
    if chance is None:
        return []
    holds, below = [], []
    for model, held in cells.items():
        mean, low, high = combined_interval(rows_of(frame, held), metric)
        if not math.isnan(low) and low <= chance <= high:
            holds.append(model)
        elif mean < chance and (math.isnan(high) or high < chance):
            below.append(model)
    level = fmt(100.0 * chance)
    return ([f"{', '.join(holds)} {'is' if len(holds) == 1 else 'are'} not distinguishable from chance ({level})"]
            if holds else []) + ([f"{', '.join(below)} {'is' if len(below) == 1 else 'are'} below chance ({level})"]
                                 if below else [])


def _significant(sig: pd.DataFrame, task: str, metric: str, what: str) -> list[str]:
    if sig.empty:
        return []
    rows = sig[(sig["task"] == task) & (sig["metric"] == metric) & sig["significant"].astype(bool)]
    if rows.empty:
        return []
    row = rows.assign(size=rows["diff"].astype(float).abs()).sort_values(
        ["size", "language", "fixed", "a", "b"], ascending=[False, True, True, True, True], kind="stable").iloc[0]
    shown = get_metric(metric).shown
    diff = shown(float(row["diff"]))
    where = f"template {row['fixed']}" if what == "model gap" else str(row["fixed"])
    return [f"biggest significant {what}: {row['a']} vs {row['b']} {diff:+.1f} points ({where}, {row['language']}; "
            f"Holm-adjusted p = {float(row['p_holm']):.2g})"]


def stands_out(task: str, metric: str, frame: pd.DataFrame, pf_rows: pd.DataFrame, cells: dict[str, HeadlineCells],
               sig_templates: pd.DataFrame, sig_models: pd.DataFrame) -> str:
    """One line: at most two findings, in the module docstring's order."""
    chance = chance_of(frame)
    found = (_unparsed(pf_rows, cells) + _significant(sig_models, task, metric, "model gap")
             + _at_chance(frame, cells, metric, chance) + _significant(sig_templates, task, metric, "template effect"))
    if found:
        return "; ".join(found[:2]) + "."
    tested = any(not s.empty and ((s["task"] == task) & (s["metric"] == metric)).any()
                 for s in (sig_templates, sig_models))
    return ("No paired difference between templates or models is significant after the Holm correction." if tested
            else "One model and one template: nothing to compare.")


# languages named in full up to this many; more are counted, the first few named (the per-task tables list all)
MAX_NAMED = 6


def names(values: tuple[str, ...]) -> str:
    if len(values) <= MAX_NAMED:
        return ", ".join(values)
    return f"{len(values)}: {', '.join(values[:MAX_NAMED - 2])}, …"


def _went_in(cells: dict[str, HeadlineCells]) -> str:
    if not comparable_task(cells):
        return "differs by model (not comparable): " + " | ".join(f"{m}: {c.held()}" for m, c in cells.items())
    held = next(iter(cells.values()))
    return f"{names(held.templates)} × {names(held.languages)}"


def table(leaderboard: pd.DataFrame, sig_templates: pd.DataFrame, sig_models: pd.DataFrame) -> pd.DataFrame:
    """A row per task: metric, chance, what went in, a cell per model, what stands out (module docstring)."""
    models = sorted(leaderboard["model"].unique())
    rows: list[dict[str, Any]] = []
    for task, task_frame, metric, frame in headline_tasks(leaderboard):
        pf_rows = task_frame[task_frame["metric"] == PARSE_FAILURE_RATE]
        cells = headline_cells(frame)
        chance = chance_of(frame)
        defined = get_metric(metric)
        row = {"task": task, "metric": f"{metric}, {'%' if defined.percent else '0-100'}",
               "chance": fmt(100.0 * chance) if chance is not None else "none", WENT_IN: _went_in(cells)}
        for model, held in cells.items():
            row[model] = headline_cell(frame, held, metric, pf_rows)
        row[STANDS_OUT] = stands_out(task, metric, frame, pf_rows, cells, sig_templates, sig_models)
        rows.append(row)
    return pd.DataFrame(rows, columns=[*COLUMNS_BEFORE, *models, STANDS_OUT]).fillna("")
