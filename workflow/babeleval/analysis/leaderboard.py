"""Aggregate per-combination scores into the leaderboard and DVC's metrics.json.

``leaderboard.csv`` is the long table for machines (one row per model, task, language, template and metric),
its values, intervals and chance levels on the scale readers see (``scale``: ``percent`` or ``points_0_100``, the
metric's own, ``babeleval.score.metrics``), so one column never mixes a 0-1 share with a 0-100 score;
``read_leaderboard`` reads it back onto the scale the package computes on. ``leaderboard.md`` holds the pivoted tables a paper prints (babeleval.analysis.paper_tables).
``metrics.json`` is what ``dvc exp show`` and ``dvc exp diff`` lay out: one headline number per model and
task, so that an experiment table fits a terminal (a column per model, task, language, template and metric
made 123 columns on the default grid). Per-language and per-template deltas: ``python -m babeleval compare``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from ..core.jsonl import atomic_open, write_json
from ..core.paths import PLAN_OMITTED, VARIATION_BUDGET
from ..score.metrics import get_metric, headline_metric
from .bootstrap import leaderboard_intervals
from .comparable import NOT_COMPARABLE, comparable_task, headline_cells, rows_of
from .headline import add_headline_columns
from .paper_tables import markdown
from .records import metric_options, off_reader_scale, on_reader_scale, read_table
from .settings import DEFAULT_SETTINGS, AnalysisSettings

COLUMNS = ["model", "task", "language", "template", "metric", "value", "n"]
# the columns on a metric's scale (the leaderboard's value and interval, the chance level)
SCALED = ("value", "ci_low", "ci_high", "chance")


def leaderboard(scores: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """One row per (model, task, language, template, metric), sorted so reruns give identical files.

    A budgeted variant's scores (``budgeted``: a subset of the items, ``babeleval.score.job.budget_fields``) are no
    score of the variant and have no row: their set is estimated as a whole (results/tables/variation_budget.csv).
    """
    rows = [
        {"model": s["model"], "task": s["task"], "language": s["language"], "template": s["template"],
         "metric": metric, "value": value, "n": s["n"]}
        for s in scores if not s.get("budgeted") for metric, value in s["metrics"].items()
    ]
    frame = pd.DataFrame(rows, columns=COLUMNS)
    return frame.sort_values(COLUMNS[:5], kind="stable").reset_index(drop=True)


def headline_metrics(frame: pd.DataFrame) -> dict[str, Any]:
    """model -> task -> {headline metric: mean over the task's headline cells}, on the scale the leaderboard shows
    (accuracy in %, chrF and BLEU 0-100: each metric's scale, ``babeleval.score.metrics``).

    The headline metric is chosen per task from the metrics the models report for it, so one task's column keeps
    its name across models and experiments. The cells are the same for every model (``babeleval.analysis.comparable``);
    where the models share none, each mean is over the model's own cells and its name says so:
    ``<metric>_not_comparable``.
    """
    out: dict[str, Any] = {}
    for task, rows in frame.groupby("task", sort=True):
        metric = headline_metric(set(rows["metric"]))
        if metric is None:
            continue
        metric_rows = rows[rows["metric"] == metric]
        cells = headline_cells(metric_rows)
        name = metric if comparable_task(cells) else metric + NOT_COMPARABLE
        for model, held in cells.items():
            mean = get_metric(metric).shown(float(rows_of(metric_rows, held)["value"].mean()))
            out.setdefault(str(model), {})[str(task)] = {name: round(mean, 2)}
    return out


def for_readers(frame: pd.DataFrame) -> pd.DataFrame:
    """The leaderboard as ``leaderboard.csv`` holds it: ``SCALED`` columns on each metric's shown scale, named in a
    ``scale`` column after ``metric``."""
    return on_reader_scale(frame, SCALED)


def read_leaderboard(path: str | Path) -> pd.DataFrame:
    """``leaderboard.csv`` back on the scale the package computes on (shares 0-1), by its own ``scale`` column."""
    return off_reader_scale(read_table(path), SCALED)


def write_outputs(score_files: Iterable[str | Path], csv_path: str | Path, md_path: str | Path,
                  metrics_path: str | Path, outcome_files: Iterable[str | Path] | None = None,
                  settings: AnalysisSettings = DEFAULT_SETTINGS, omitted: str | Path | None = None) -> pd.DataFrame:
    """Write the leaderboard; with ``outcome_files`` (``babeleval.score.outcomes``), add seeded bootstrap intervals (``ci_low``, ``ci_high``),
    accuracy over parsed items (``acc_parsed``), the chance level and the truncated-prompt count, with the
    analysis settings' seed, resamples and confidence; with ``omitted`` (the plan's ``omitted.tsv``), a table of
    what the grid left out and why."""
    score_files = list(score_files)
    scores = [json.loads(Path(p).read_text(encoding="utf-8")) for p in score_files]
    frame = leaderboard(scores)
    metrics = headline_metrics(frame)  # the scores' own metrics only: what `dvc exp show` compares
    if outcome_files is not None:
        outcome_files = list(outcome_files)
        options = {(summary["model"], summary["task"], summary["language"], summary["template"]): metric_options(summary)
                   for summary in scores}
        frame = leaderboard_intervals(frame, outcome_files, seed=settings.seed, n_samples=settings.samples,
                                      confidence=settings.confidence, options=options)
        frame = add_headline_columns(frame, outcome_files, score_files, seed=settings.seed, n_samples=settings.samples,
                                     confidence=settings.confidence)
    with atomic_open(csv_path) as handle:
        for_readers(frame).to_csv(handle, index=False, float_format="%.6f", lineterminator="\n")
    with atomic_open(md_path) as handle:
        handle.write(markdown(frame, settings.confidence) + "\n" + omitted_section(omitted) + budgeted_section(scores))
    write_json(metrics_path, metrics)
    return frame


def omitted_table(path: str | Path | None) -> pd.DataFrame:
    """The (model, task, template) pairs the plan's ``omitted.tsv`` says the grid left out, each with its languages
    (``2: eng_Latn, jpn_Jpan``) and why; empty when none was (or no file is given)."""
    columns = ["task", "template", "model", "languages", "why"]
    if path is None or not Path(path).exists():
        return pd.DataFrame(columns=columns)
    left_out = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    if left_out.empty:
        return pd.DataFrame(columns=columns)
    table = (left_out.groupby(["task", "template", "model", "reason"], sort=True)["language"]
             .agg(lambda names: f"{len(names)}: {', '.join(sorted(names))}")
             .reset_index().rename(columns={"language": "languages", "reason": "why"}))
    return table[columns]


def omitted_section(path: str | Path | None) -> str:
    """leaderboard.md's table of the (model, task, template) pairs the grid left out, each with why (its cells in
    the tables above are absent, not blank); nothing when none was."""
    table = omitted_table(path)
    if table.empty:
        return ""
    return "\n".join(["", "## Left out of the grid", "",
                      "These (model, template) pairs were not run; their cells above are absent for this reason "
                      f"(also in `{PLAN_OMITTED}`):", "", table.to_markdown(index=False), ""])


def budgeted_section(scores: Iterable[dict[str, Any]]) -> str:
    """leaderboard.md's note on the budgeted variants left out of its tables: each answered a subset of the items,
    so its number is not the variant's score (their set's estimate is in ``VARIATION_BUDGET``)."""
    subsets = pd.DataFrame([{"task": s["task"], "set": s["budget"]["base"], "model": s["model"], "variant": s["template"],
                             "language": s["language"], "n": s["n"], "n_full": s["n_full"]}
                            for s in scores if s.get("budgeted")])
    if subsets.empty:
        return ""
    table = (subsets.groupby(["task", "set", "model"], sort=True)
             .agg(variants=("variant", "nunique"), languages=("language", "nunique"), cells=("n", "sum"),
                  grid_cells=("n_full", "sum")).reset_index())
    return "\n".join(["", "## Budgeted variant sets (not in the tables above)", "",
                      "Each variant of these sets answered only the items of a seeded design, so its number is not "
                      f"its score; the estimates over each set, with their intervals, are in `{VARIATION_BUDGET}`:", "",
                      table.to_markdown(index=False), ""])
