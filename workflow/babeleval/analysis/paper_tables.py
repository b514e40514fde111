"""Leaderboard tables a paper can print: per task and headline metric, models x languages.

One table per template, and one with each model's best and mean over templates.
A cell holds the value and its bootstrap interval; beside every generated score
the parse-failure rate. Scales are each metric's own (``babeleval.score.metrics``):
accuracy-type metrics (acc, balanced accuracy, macro-F1, parse-failure rate) as
**percent, 0-100**; chrF, BLEU and SQuAD exact match / F1 are already on 0-100.
The long CSV (``results/leaderboard.csv``) keeps the 0-1 values for machines.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ..score.metrics import ACCURACY, PARSED_ACCURACY, get_metric, headline_metric
from ..score.metrics import PARSE_FAILURE_RATE as PF
from .settings import DEFAULT_SETTINGS


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA


def fmt(value: Any) -> str:
    return "–" if _is_missing(value) else f"{value:.1f}"


def cell(row: pd.Series | None, pf: float | None = None) -> str:
    """``54.2 [48.1, 60.3]``, with ``· pf 12.5`` where the answer was generated and parsed."""
    if row is None:
        return ""
    metric = row["metric"]
    if metric == PARSED_ACCURACY and _is_missing(row["value"]):
        return "no parsed answer"
    shown = get_metric(metric).shown
    text = fmt(shown(row["value"]))
    if not _is_missing(row.get("ci_low")) and not _is_missing(row.get("ci_high")):
        text += f" [{fmt(shown(row['ci_low']))}, {fmt(shown(row['ci_high']))}]"
    if pf is not None and not _is_missing(pf):
        text += f" · pf {fmt(100.0 * pf)}"
    return text


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


def template_table(task_frame: pd.DataFrame, metric: str, template: str, languages: list[str]) -> pd.DataFrame:
    sub = task_frame[(task_frame["metric"] == metric) & (task_frame["template"] == template)]
    cells = _lookup(sub)
    pfs = {k: r["value"] for k, r in _lookup(task_frame[(task_frame["metric"] == PF)
                                                         & (task_frame["template"] == template)]).items()}
    rows = []
    for model in sorted(sub["model"].unique()):
        row: dict[str, str] = {"model": model}
        for lang in languages:
            key = (model, lang, template)
            row[lang] = cell(cells.get(key), pfs.get(key) if metric != PARSED_ACCURACY else None)
        values = [cells[(model, lang, template)]["value"] for lang in languages if (model, lang, template) in cells]
        row["mean"] = fmt(get_metric(metric).shown(sum(values) / len(values))) if values else ""
        rows.append(row)
    return pd.DataFrame(rows, columns=["model", *languages, "mean"])


def best_mean_table(task_frame: pd.DataFrame, metric: str, languages: list[str]) -> pd.DataFrame:
    """Per model and language: the best template's value, interval and name; the mean over templates."""
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
            row[lang] = (f"best {cell(best, pf)} ({best['template']}); "
                         f"mean {fmt(get_metric(metric).shown(group['value'].mean()))}")
        rows.append(row)
    return pd.DataFrame(rows, columns=["model", *languages])


def markdown(leaderboard: pd.DataFrame, confidence: float = DEFAULT_SETTINGS.confidence) -> str:
    """``results/leaderboard.md``: the tables for every task, headline metrics first."""
    lines = ["# Leaderboard", "",
             f"Cells: value [{confidence:.0%} bootstrap interval over items]. Accuracy-type metrics in percent "
             "(0-100), chrF/BLEU and SQuAD EM/F1 on their own 0-100 scale. `pf`: parse-failure rate in percent, "
             "beside every score of a generated answer. Languages ordered by mean score, best first. "
             "Every metric of every combination, on 0-1 for rates: `results/leaderboard.csv`.", ""]
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
                lines += [f"### template `{template}`", "",
                          template_table(task_frame, metric, template, languages).to_markdown(index=False, disable_numparse=True), ""]
            best = best_mean_table(task_frame, metric, languages)
            if len(templates) > 1 and (best[languages] != "").any().any():
                lines += ["### best and mean over templates", "",
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
