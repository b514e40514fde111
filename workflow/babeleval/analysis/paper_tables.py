"""Leaderboard tables a paper can print: models x tasks first, then per task and headline metric, models x languages.

One table per template, and one with each model's best and mean over templates.
A cell holds the value, its interval (the method the metric declares: exact for a share of items, bootstrap
for corpus metrics) and the number of items behind it, marked where fewer than
``babeleval.analysis.intervals.SMALL_N``; beside every generated score the parse-failure rate. Scales are each
metric's own (``babeleval.score.metrics``): accuracy-type metrics (acc, balanced accuracy, macro-F1,
parse-failure rate) as **percent, 0-100**; chrF, BLEU and SQuAD exact match / F1 are on 0-100 points.
"""

from __future__ import annotations

import math
from typing import Any, Iterator

import pandas as pd

from ..score.metrics import ACCURACY, BOOTSTRAP, INTERVAL_METHODS, METRICS, PARSED_ACCURACY, SHOWN_RANGE, get_metric, headline_metric
from ..score.metrics import PARSE_FAILURE_RATE as PF
from .comparable import HeadlineCells, comparable_task, headline_cells, rows_of
from .intervals import SMALL_MARK, SMALL_N, is_small
from .settings import DEFAULT_SETTINGS


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA


def fmt(value: Any) -> str:
    return "–" if _is_missing(value) else f"{value:.1f}"


def items_text(n: Any) -> str:
    """``n=24``, marked ``n=24†`` below ``SMALL_N`` items."""
    if _is_missing(n):
        return "n=?"
    return f"n={int(n)}" + (SMALL_MARK if is_small(n) else "")


NO_SPREAD = "(no interval: every item scores alike, so the bootstrap has nothing to resample)"


def bootstrap_without_spread(metric: str, low: Any, high: Any) -> bool:
    """A bootstrap interval of zero width: every resample gave the same score. It claims a certainty the items do
    not give (an exact interval has no such case), so it is not shown as an interval."""
    return get_metric(metric).interval == BOOTSTRAP and not _is_missing(low) and low == high


def cell(row: pd.Series | None, pf: float | None = None) -> str:
    """``54.2 [48.1, 60.3] n=24†``, with ``· pf 12.5`` where the answer was generated and parsed."""
    if row is None:
        return ""
    metric = row["metric"]
    if metric == PARSED_ACCURACY and _is_missing(row["value"]):
        return "no parsed answer (n=0)"
    shown = get_metric(metric).shown
    text = fmt(shown(row["value"]))
    if bootstrap_without_spread(metric, row.get("ci_low"), row.get("ci_high")):
        text += " " + NO_SPREAD
    elif not _is_missing(row.get("ci_low")) and not _is_missing(row.get("ci_high")):
        text += f" [{fmt(shown(row['ci_low']))}, {fmt(shown(row['ci_high']))}]"
    text += " " + items_text(row.get("n"))
    if pf is not None and not _is_missing(pf):
        text += f" · pf {fmt(100.0 * pf)}"
    return text


def legend(confidence: float, metrics: Any = None) -> str:
    """What a cell holds, the interval methods of ``metrics`` (every metric when None) and the small-n mark."""
    methods = sorted({get_metric(m).interval for m in (metrics if metrics is not None else METRICS)})
    method_text = "; ".join(f"{INTERVAL_METHODS[method]} for "
                            + ", ".join(sorted(m for m in (metrics if metrics is not None else METRICS)
                                               if get_metric(m).interval == method))
                            for method in methods)
    return (f"Cells: value [{confidence:.0%} interval] n=items. Intervals: {method_text}. "
            f"{SMALL_MARK}: fewer than {SMALL_N} items (a wide interval; a bootstrap interval is itself unreliable "
            f"there). Accuracy-type metrics and parse-failure rates in percent; chrF, BLEU and SQuAD EM/F1 in points "
            f"on 0-100.")


def language_order(frame: pd.DataFrame) -> list[str]:
    """Languages by mean score over models and templates, best first (ties by name)."""
    means = frame.groupby("language")["value"].mean()
    return sorted(means.index, key=lambda lang: (-means[lang] if not math.isnan(means[lang]) else math.inf, lang))


def headline_metrics(task_frame: pd.DataFrame) -> list[str]:
    """The task's headline metric, and accuracy over parsed items where it exists."""
    primary = headline_metric(task_frame["metric"].unique())
    if primary is None:
        return []
    out = [primary]
    if primary == ACCURACY and PARSED_ACCURACY in set(task_frame["metric"]):
        out.append(PARSED_ACCURACY)
    return out


def chance_of(frame: pd.DataFrame) -> float | None:
    if "chance" not in frame.columns:
        return None
    values = frame["chance"].dropna()
    return float(values.mean()) if len(values) else None


def _lookup(frame: pd.DataFrame) -> dict[tuple, pd.Series]:
    return {(r["model"], r["language"], r["template"]): r for _, r in frame.iterrows()}


def parsed_text(row: pd.Series | None) -> str:
    """`` · parsed 25.0 n=8``: accuracy over the parsed items beside a generated cell's accuracy."""
    if row is None:
        return ""
    if _is_missing(row["value"]):
        return " · parsed: none (n=0)"
    return f" · parsed {fmt(get_metric(PARSED_ACCURACY).shown(row['value']))} {items_text(row.get('n'))}"


def template_table(task_frame: pd.DataFrame, metric: str, template: str, languages: list[str],
                   with_parsed: bool = False) -> pd.DataFrame:
    """Models x languages of one template; ``with_parsed``: accuracy over parsed items in the accuracy cells of
    generated answers (one table where the report would otherwise print a second for it)."""
    sub = task_frame[(task_frame["metric"] == metric) & (task_frame["template"] == template)]
    cells = _lookup(sub)
    pfs = {k: r["value"] for k, r in _lookup(task_frame[(task_frame["metric"] == PF)
                                                         & (task_frame["template"] == template)]).items()}
    parsed = (_lookup(task_frame[(task_frame["metric"] == PARSED_ACCURACY) & (task_frame["template"] == template)])
              if with_parsed and metric == ACCURACY else {})
    rows = []
    for model in sorted(sub["model"].unique()):
        row: dict[str, str] = {"model": model}
        for lang in languages:
            key = (model, lang, template)
            row[lang] = (cell(cells.get(key), pfs.get(key) if metric != PARSED_ACCURACY else None)
                         + (parsed_text(parsed.get(key)) if key in cells else ""))
        present = [cells[(model, lang, template)] for lang in languages if (model, lang, template) in cells]
        values = [r["value"] for r in present if not _is_missing(r["value"])]
        row["mean over languages"] = (f"{fmt(get_metric(metric).shown(sum(values) / len(values)))} "
                                      f"n={int(sum(r['n'] for r in present))}") if values else ""
        rows.append(row)
    return pd.DataFrame(rows, columns=["model", *languages, "mean over languages"])


def best_mean_table(task_frame: pd.DataFrame, metric: str, languages: list[str]) -> pd.DataFrame:
    """Per model and language: the mean over templates, and the best template's value, interval and name with the
    number of templates it was chosen from (a maximum over noisy scores: its interval is the chosen template's
    own, not one that allows for the choice; ``BEST_WARNING``)."""
    sub = task_frame[task_frame["metric"] == metric]
    pfs = {k: r["value"] for k, r in _lookup(task_frame[task_frame["metric"] == PF]).items()}
    rows = []
    for model in sorted(sub["model"].unique()):
        row: dict[str, str] = {"model": model}
        for lang in languages:
            group = sub[(sub["model"] == model) & (sub["language"] == lang)].dropna(subset=["value"])
            if group.empty:
                row[lang] = ""
                continue
            best = group.sort_values(["value", "template"], ascending=[False, True]).iloc[0]
            pf = pfs.get((model, lang, best["template"])) if metric != PARSED_ACCURACY else None
            row[lang] = (f"mean {fmt(get_metric(metric).shown(group['value'].mean()))}; "
                         f"best of {len(group)}: {cell(best, pf)} ({best['template']})")
        rows.append(row)
    return pd.DataFrame(rows, columns=["model", *languages])


BEST_WARNING = ("The best of k templates is picked after seeing the scores: a maximum over noisy scores, biased "
                "upward, and its interval is the picked template's own, which does not allow for the choice. Read the "
                "mean over templates as the estimate.")
OVERALL_NOTE = ("Per task and model: the task's headline metric, its mean over the languages and templates every model "
                "has (the same cells for every model, so a row compares like with like); "
                "n = items per language summed over languages. Interval: the cells' intervals combined, languages as "
                "independent and templates (the same items) as fully dependent, so it errs wide.")


def combined_interval(group: pd.DataFrame, metric: str) -> tuple[float, float, float]:
    """Mean over languages of the mean over templates, and a conservative interval from the cells' intervals."""
    if ({"ci_low", "ci_high"} - set(group.columns) or group[["ci_low", "ci_high"]].isna().any().any()
            or any(bootstrap_without_spread(metric, r.ci_low, r.ci_high) for r in group.itertuples(index=False))):
        by_language = group.groupby("language")["value"].mean()
        return float(by_language.mean()), math.nan, math.nan
    below = (group["value"] - group["ci_low"]).groupby(group["language"]).mean()
    above = (group["ci_high"] - group["value"]).groupby(group["language"]).mean()
    mean = float(group.groupby("language")["value"].mean().mean())
    languages, defined = len(below), get_metric(metric)
    low = max(defined.stored(SHOWN_RANGE[0]), mean - math.sqrt(float((below ** 2).sum())) / languages)
    high = min(defined.stored(SHOWN_RANGE[1]), mean + math.sqrt(float((above ** 2).sum())) / languages)
    return mean, low, high


def headline_tasks(leaderboard: pd.DataFrame) -> Iterator[tuple[str, pd.DataFrame, str, pd.DataFrame]]:
    """Per task with a headline metric, in name order: the task, its rows, its headline metric and that metric's
    rows with a value."""
    for task in sorted(leaderboard["task"].unique()):
        task_frame = leaderboard[leaderboard["task"] == task]
        metric = headline_metric(task_frame["metric"].unique())
        if metric is not None:
            yield task, task_frame, metric, task_frame[task_frame["metric"] == metric].dropna(subset=["value"])


def held_text(cells: HeadlineCells) -> str:
    """``3 × 2`` (languages × templates) where the cells are every pair of them, else the cell count too."""
    languages, templates = len(cells.languages), len(cells.templates)
    text = f"{languages} × {templates}"
    return text if languages * templates == len(cells.cells) else f"{text} ({len(cells.cells)} cells)"


def headline_cell(frame: pd.DataFrame, held: HeadlineCells, metric: str, pf_rows: pd.DataFrame | None = None) -> str:
    """``25.7 [17.6, 37.3] n=96``: a model's mean over its headline cells of ``frame`` (one task's rows of
    ``metric``), the combined interval (OVERALL_NOTE) and the items per language summed; with ``pf_rows`` (the
    task's parse-failure rows), ``· pf 12.5`` over its generated headline cells, ``· pf –`` where none is generated."""
    group = rows_of(frame, held)
    mean, low, high = combined_interval(group, metric)
    shown = get_metric(metric).shown
    n = int(group.groupby("language")["n"].max().sum())
    interval = "" if math.isnan(low) else f" [{fmt(shown(low))}, {fmt(shown(high))}]"
    small = SMALL_MARK if group["n"].map(is_small).any() else ""
    text = f"{fmt(shown(mean))}{interval} n={n}{small}"
    if pf_rows is not None:
        pf = rows_of(pf_rows, held)["value"].dropna()
        text += f" · pf {fmt(100.0 * float(pf.mean()))}" if len(pf) else " · pf –"
    return text


def overall_table(leaderboard: pd.DataFrame) -> pd.DataFrame:
    """Tasks x models: each task's headline metric over its headline cells (the same for every model:
    ``babeleval.analysis.comparable``), interval and n (OVERALL_NOTE).

    A row per task (its metric, scale and grid beside it) and a column per model: a grid has a few models and many
    tasks, and a row per task keeps the table within a laptop's width. Where the models share no cell, each cell
    names the templates and languages it holds and is marked not comparable.
    """
    models = sorted(leaderboard["model"].unique())
    rows = []
    for task, _, metric, frame in headline_tasks(leaderboard):
        cells = headline_cells(frame)
        comparable = comparable_task(cells)
        defined = get_metric(metric)
        row = {"task": task, "metric": f"{metric}, {'%' if defined.percent else '0-100'}",
               "languages × templates": held_text(next(iter(cells.values()))) if comparable else "differs: see cells"}
        for model, held in cells.items():
            row[model] = headline_cell(frame, held, metric)
            if not comparable:
                row[model] += f" (not comparable: {held.held()})"
        rows.append(row)
    return pd.DataFrame(rows, columns=["task", "metric", "languages × templates", *models]).fillna("")


def left_out_of_headline(leaderboard: pd.DataFrame) -> list[str]:
    """Per task: the cells of a model its headline leaves out so that every model is averaged over the same ones,
    and the tasks whose models share no cell (not comparable)."""
    out = []
    for task, _, _, frame in headline_tasks(leaderboard):
        cells = headline_cells(frame)
        if not comparable_task(cells):
            out.append(f"{task}: the models share no (language, template) cell, so each mean is over the model's own "
                       "cells (named in its cell) and the means are not comparable.")
            continue
        for held in cells.values():
            if held.left_out:
                out.append(f"{task}, {held.model}: left out of the headline, so that every model is averaged over "
                           f"the same cells: {held.left_out_text()} (in the per-template tables).")
    return out


def fewer_items_note(task_frame: pd.DataFrame, template: str) -> str:
    """Why ``template`` scores fewer items than the task's other templates, where it does and the leaderboard says."""
    if "fewer_items_because" not in task_frame.columns:
        return ""
    most = task_frame.groupby("language")["n"].max()
    rows = task_frame[(task_frame["template"] == template) & (task_frame["metric"] != PARSED_ACCURACY)]
    fewer = rows[rows["n"] < rows["language"].map(most)]
    if fewer.empty:
        return ""
    reasons = sorted({str(r) for r in fewer["fewer_items_because"].dropna() if str(r)})
    counts = ", ".join(f"{lang} {int(n)} of {int(most[lang])}" for lang, n in
                       fewer.drop_duplicates("language")[["language", "n"]].itertuples(index=False))
    why = "; ".join(reasons) if reasons else "the scores files record no reason"
    return f"Fewer items than the other templates ({counts}): {why}."


def markdown(leaderboard: pd.DataFrame, confidence: float = DEFAULT_SETTINGS.confidence) -> str:
    """``results/leaderboard.md``: models x tasks, then the tables for every task, headline metrics first."""
    lines = ["# Leaderboard", "",
             legend(confidence, leaderboard["metric"].unique()) + " `pf`: parse-failure rate in percent, beside "
             "every score of a generated answer. Languages ordered by mean score, best first. Every metric of every "
             "combination: `results/leaderboard.csv` (values on the same scales, named in its `scale` column).", "",
             "## Models x tasks", "", OVERALL_NOTE, "",
             overall_table(leaderboard).to_markdown(index=False, disable_numparse=True), "",
             *[f"- {line}" for line in left_out_of_headline(leaderboard)], ""]
    for task in sorted(leaderboard["task"].unique()):
        task_frame = leaderboard[leaderboard["task"] == task]
        metrics = headline_metrics(task_frame)
        # one language order per task: the headline metric's
        languages = language_order(task_frame[task_frame["metric"] == metrics[0]]) if metrics else []
        for metric in metrics:
            metric_frame = task_frame[task_frame["metric"] == metric]
            templates = sorted(metric_frame["template"].unique())
            chance = chance_of(metric_frame)
            chance_text = f"chance {fmt(100.0 * chance)}" if chance is not None else "no chance level"
            lines += [f"## {task}: {get_metric(metric).label}", "", f"{chance_text}.", ""]
            for template in templates:
                note = fewer_items_note(task_frame, template)
                lines += [f"### template `{template}`", "", *([note, ""] if note else []),
                          template_table(task_frame, metric, template, languages).to_markdown(index=False, disable_numparse=True), ""]
            best = best_mean_table(task_frame, metric, languages)
            if len(templates) > 1 and (best[languages] != "").any().any():
                lines += ["### mean and best over templates", "", BEST_WARNING, "",
                          best.to_markdown(index=False, disable_numparse=True), ""]
    truncated = truncation_lines(leaderboard)
    if truncated:
        lines += ["## Truncated prompts", "", "Prompts cut to fit the model's context window:", "", *truncated, ""]
    return "\n".join(lines)


def truncation_lines(leaderboard: pd.DataFrame) -> list[str]:
    if "truncated_prompts" not in leaderboard.columns:
        return []
    combos = leaderboard.drop_duplicates(["model", "task", "language", "template"])
    combos = combos[combos["truncated_prompts"].fillna(0).astype(int) > 0]
    return [f"- {r.model} / {r.task} / {r.language} / {r.template}: {int(r.truncated_prompts)} of {int(r.n)}"
            for r in combos.itertuples(index=False)]
