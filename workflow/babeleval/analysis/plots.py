"""Figures (PNG, matplotlib's Agg backend: no display needed), one set per task.

- ``heatmap.png``: the task's main metric, models x languages, one panel per template;
- ``template_spread.png``: per language and model, the score under each template and the range they span;
- ``parse_failures.png``: parse-failure rate, (model, template) x language, for templates that generate.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

# Preferred headline metric of a task, first present wins.
PRIMARY = ("acc", "chrf", "spbleu", "bleu", "f1", "exact_match", "acc_norm")
MARKERS = "os^Dv<>Pp*hX"
PNG_METADATA = {"Software": None}  # no matplotlib version in the file: reruns give the same bytes


def primary_metric(metrics) -> str | None:
    metrics = [m for m in metrics if m != "parse_failure_rate"]
    for name in PRIMARY:
        if name in metrics:
            return name
    return sorted(metrics)[0] if metrics else None


def value_range(values) -> tuple[float, float]:
    """The colour/axis range: 0-1 for rates, 0-100 for percentages (BLEU, chrF, SQuAD F1), else the data's."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return 0.0, 1.0
    low, high = float(values.min()), float(values.max())
    if low >= 0 and high <= 1:
        return 0.0, 1.0
    if low >= 0 and high <= 100:
        return 0.0, 100.0
    return low, high if high > low else low + 1


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
                    ax.text(j, i, f"{data[i, j]:.2f}", ha="center", va="center", fontsize=8,
                            color="white" if (frac < 0.55) == (cmap == "viridis") else "black")
    return image


def heatmap(leaderboard: pd.DataFrame, task: str, path: str | Path) -> str:
    frame = leaderboard[leaderboard["task"] == task]
    metric = primary_metric(frame["metric"].unique())
    title = f"{task}: {metric} by model and language"
    if metric is None:
        return _empty(path, title, "no scores")
    frame = frame[frame["metric"] == metric]
    templates = sorted(frame["template"].unique())
    languages = sorted(frame["language"].unique())
    models = sorted(frame["model"].unique())
    vmin, vmax = value_range(frame["value"])
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
    fig.colorbar(image, ax=axes[0].tolist(), shrink=0.9, label=metric)
    fig.suptitle(title)
    return _save(fig, path)


def template_spread(leaderboard: pd.DataFrame, task: str, path: str | Path) -> str:
    frame = leaderboard[leaderboard["task"] == task]
    metric = primary_metric(frame["metric"].unique())
    title = f"{task}: {metric} under each template (bar = min..max across templates)"
    if metric is None:
        return _empty(path, title, "no scores")
    frame = frame[frame["metric"] == metric]
    languages = sorted(frame["language"].unique())
    models = sorted(frame["model"].unique())
    templates = sorted(frame["template"].unique())
    colours = plt.get_cmap("tab10")
    fig, ax = plt.subplots(figsize=(min(40.0, 2.5 + 0.9 * len(languages) * max(1, len(models)) ** 0.5), 4.2))
    width = 0.8 / max(1, len(models))
    for mi, model in enumerate(models):
        sub = frame[frame["model"] == model]
        for li, language in enumerate(languages):
            values = sub[sub["language"] == language]
            if values.empty:
                continue
            x = li - 0.4 + width * (mi + 0.5)
            ax.vlines(x, values["value"].min(), values["value"].max(), color=colours(mi % 10), linewidth=3, alpha=0.35)
            for ti, template in enumerate(templates):
                point = values[values["template"] == template]["value"]
                if not point.empty:
                    ax.scatter([x], point.iloc[:1], marker=MARKERS[ti % len(MARKERS)], color=colours(mi % 10),
                               s=36, zorder=3, label=f"{model} / {template}" if li == 0 else None)
    ax.set_xticks(range(len(languages)), languages, rotation=45, ha="right")
    ax.set_ylabel(metric)
    low, high = value_range(frame["value"])
    pad = 0.03 * (high - low)
    ax.set_ylim(low - pad, high + pad)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), title="model / template")
    ax.set_title(title, fontsize=10)
    return _save(fig, path)


def parse_failures(rates: pd.DataFrame, task: str, path: str | Path) -> str:
    frame = rates[rates["task"] == task]
    if "generated" in frame.columns:
        frame = frame[frame["generated"].astype(bool)]
    title = f"{task}: parse-failure rate by model / template and language"
    if frame.empty:
        return _empty(path, title, "no generated responses: log-likelihood templates have nothing to parse")
    frame = frame.assign(row=frame["model"] + " / " + frame["template"])
    table = frame.pivot_table(index="row", columns="language", values="rate", aggfunc="first")
    table = table.sort_index().reindex(columns=sorted(table.columns))
    fig, ax = plt.subplots(figsize=(min(40.0, 2.5 + 0.6 * table.shape[1]), 1.4 + 0.45 * table.shape[0]),
                           layout="constrained")
    image = _grid(ax, table, 0.0, 1.0, "Reds", annotate=table.shape[1] <= 30)
    fig.colorbar(image, ax=ax, label="parse-failure rate")
    ax.set_title(title, fontsize=10)
    return _save(fig, path)
