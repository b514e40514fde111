"""Figures (PNG, matplotlib's Agg backend: no display needed), one set per task.

- ``heatmap.png``: the task's headline metric, models x languages, one panel per template;
- ``template_spread.png`` (tasks with two templates or more): per language and model, the score under each
  template with its bootstrap interval, the range the templates span, and the chance level;
- ``parse_failures.png`` (tasks with a generated template): parse-failure rate, (model, template) x language.

Every metric is drawn on the scale the tables use (its own, babeleval.score.metrics: accuracy in percent,
chrF/BLEU 0-100), colour bars and axes spanning the whole declared range (``SHOWN_RANGE``) whatever the data
holds, so chrF 0.4 is not coloured like 40% and the chance mark is always on the bar; languages are ordered by their mean headline score, best first, in every figure of a task.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ..score.metrics import SHOWN_RANGE, get_metric, headline_metric  # noqa: E402
from .paper_tables import chance_of, language_order  # noqa: E402

MARKERS = "os^Dv<>Pp*hX"
PNG_METADATA = {"Software": None}  # no matplotlib version in the file: reruns give the same bytes

__all__ = ["heatmap", "template_spread", "parse_failures", "language_order"]


def headline(leaderboard: pd.DataFrame, task: str) -> tuple[str | None, pd.DataFrame]:
    """The task's headline metric and its rows, values (and intervals) on the shown scale."""
    frame = leaderboard[leaderboard["task"] == task]
    metric = headline_metric(frame["metric"].unique())
    if metric is None:
        return None, frame.iloc[0:0]
    frame = frame[frame["metric"] == metric].copy()
    for column in ("value", "ci_low", "ci_high", "chance"):
        if column in frame.columns:
            frame[column] = [get_metric(metric).shown(v) for v in frame[column].astype(float)]
    return metric, frame


def _save(fig, path: str | Path) -> str:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight", metadata=PNG_METADATA)
    plt.close(fig)
    return str(path)


def _empty(path: str | Path, title: str, message: str) -> str:
    fig, ax = plt.subplots(figsize=(6, 1.6))
    ax.axis("off")
    ax.set_title(title)
    ax.text(0.5, 0.4, message, ha="center", va="center", fontsize=11, color="#555")
    return _save(fig, path)


def _grid(ax, table: pd.DataFrame, vmin: float, vmax: float, cmap: str, annotate: bool):
    data = table.to_numpy(dtype=float)
    image = ax.imshow(np.ma.masked_invalid(data), vmin=vmin, vmax=vmax, cmap=cmap, aspect="auto")
    ax.set_xticks(range(table.shape[1]), table.columns, rotation=45, ha="right")
    ax.set_yticks(range(table.shape[0]), table.index)
    if annotate:
        for i in range(data.shape[0]):
            for j in range(data.shape[1]):
                if np.isfinite(data[i, j]):
                    frac = (data[i, j] - vmin) / (vmax - vmin) if vmax > vmin else 0.5
                    ax.text(j, i, f"{data[i, j]:.1f}", ha="center", va="center", fontsize=8,
                            color="white" if (frac < 0.55) == (cmap == "viridis") else "black")
    return image


def heatmap(leaderboard: pd.DataFrame, task: str, path: str | Path) -> str:
    metric, frame = headline(leaderboard, task)
    title = f"{task}: {get_metric(metric).label if metric else 'no scores'}"
    if metric is None or frame.empty:
        return _empty(path, title, "no scores")
    templates = sorted(frame["template"].unique())
    languages = language_order(frame)
    models = sorted(frame["model"].unique())
    vmin, vmax = SHOWN_RANGE
    panel = min(40.0 / len(templates), 0.8 + 0.6 * len(languages))
    label_width = 0.3 + 0.08 * max(len(m) for m in models)
    fig, axes = plt.subplots(1, len(templates), sharey=True, squeeze=False, layout="constrained",
                             figsize=(label_width + panel * len(templates) + 1.2, 1.6 + 0.45 * len(models)))
    image = None
    for ax, template in zip(axes[0], templates):
        sub = frame[frame["template"] == template]
        table = sub.pivot_table(index="model", columns="language", values="value", aggfunc="first")
        table = table.reindex(index=models, columns=languages)
        image = _grid(ax, table, vmin, vmax, "viridis", annotate=len(languages) <= 30)
        ax.set_title(f"template: {template}", fontsize=10)
    chance = chance_of(frame)
    bar = fig.colorbar(image, ax=axes[0].tolist(), shrink=0.9,
                       label=get_metric(metric).axis_label + (f" (chance {chance:.1f})" if chance is not None else ""))
    if chance is not None:
        bar.ax.axhline(chance, color="red", linewidth=2.5)
    fig.suptitle(title + "; languages by mean score")
    return _save(fig, path)


def template_spread(leaderboard: pd.DataFrame, task: str, path: str | Path) -> str:
    """Needs two templates or more: with one there is no spread to draw (the report says so instead)."""
    metric, frame = headline(leaderboard, task)
    templates = sorted(frame["template"].unique())
    if len(templates) < 2:
        raise ValueError(f"{task}: a template spread needs two templates or more, found {len(templates)}")
    languages = language_order(frame)
    models = sorted(frame["model"].unique())
    colours = plt.get_cmap("tab10")
    fig, ax = plt.subplots(figsize=(min(40.0, 2.5 + 0.9 * len(languages) * max(1, len(models)) ** 0.5), 4.2))
    width = 0.8 / max(1, len(models))
    step = width / (len(templates) + 1)
    intervals = {"ci_low", "ci_high"} <= set(frame.columns)
    position = {language: li for li, language in enumerate(languages)}
    for mi, model in enumerate(models):
        sub = frame[frame["model"] == model].dropna(subset=["value"])
        for language, values in sub.groupby("language", sort=False):
            x0 = position[language] - 0.4 + width * mi
            ax.fill_between([x0 + step * 0.5, x0 + width - step * 0.5], values["value"].min(), values["value"].max(),
                            color=colours(mi % 10), alpha=0.15, linewidth=0)
        # one call per (model, template) for every language's point: a call per point took 40 s at 122 languages
        first = sub.drop_duplicates(["language", "template"])
        for ti, template in enumerate(templates):
            points = first[first["template"] == template]
            if points.empty:
                continue
            x = np.array([position[language] for language in points["language"]]) - 0.4 + width * mi + step * (ti + 1)
            y = points["value"].to_numpy(float)
            if intervals:
                shown = np.isfinite(points["ci_low"].to_numpy(float)) & np.isfinite(points["ci_high"].to_numpy(float))
                if shown.any():
                    ax.errorbar(x[shown], y[shown], yerr=[(y - points["ci_low"].to_numpy(float))[shown],
                                                          (points["ci_high"].to_numpy(float) - y)[shown]],
                                fmt="none", ecolor=colours(mi % 10), elinewidth=1, capsize=2, alpha=0.8)
            # the legend names a model and template once, as it shows at the first language
            labelled = bool((points["language"] == languages[0]).any())
            ax.scatter(x, y, marker=MARKERS[ti % len(MARKERS)], color=colours(mi % 10), s=30, zorder=3,
                       label=f"{model} / {template}" if labelled else None)
    chance = chance_of(frame)
    if chance is not None:
        ax.axhline(chance, color="red", linestyle="--", linewidth=1, label=f"chance ({chance:.1f})")
    ax.set_xticks(range(len(languages)), languages, rotation=45, ha="right")
    ax.set_ylabel(get_metric(metric).axis_label)
    low, high = SHOWN_RANGE
    pad = 0.03 * (high - low)
    ax.set_ylim(low - pad, high + pad)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), title="model / template")
    ax.set_title(f"{task}: {metric} under each template with its interval (band = range across templates)", fontsize=10)
    return _save(fig, path)


def parse_failures(rates: pd.DataFrame, task: str, path: str | Path, languages: list[str] | None = None) -> str:
    frame = rates[rates["task"] == task]
    if "generated" in frame.columns:
        frame = frame[frame["generated"].astype(str).str.lower() == "true"]
    title = f"{task}: parse-failure rate (%) by model / template and language"
    if frame.empty:
        return _empty(path, title, "no generated responses: log-likelihood templates have nothing to parse")
    frame = frame.assign(row=frame["model"] + " / " + frame["template"])
    table = frame.pivot_table(index="row", columns="language", values="rate_pct", aggfunc="first")
    order = [lang for lang in (languages or []) if lang in table.columns]
    order += sorted(set(table.columns) - set(order))
    table = table.sort_index().reindex(columns=order)
    fig, ax = plt.subplots(figsize=(min(40.0, 2.5 + 0.6 * table.shape[1]), 1.4 + 0.45 * table.shape[0]),
                           layout="constrained")
    image = _grid(ax, table, *SHOWN_RANGE, "Reds", annotate=table.shape[1] <= 30)
    fig.colorbar(image, ax=ax, label="parse-failure rate, %")
    # above the whole figure, colour bar included: an axes title as wide as the figure ran into the bar's label
    fig.suptitle(title, fontsize=10)
    return _save(fig, path)
