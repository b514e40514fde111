"""Aggregate per-combination scores into the leaderboard (CSV and Markdown) and DVC's metrics.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from .jsonl import atomic_open, write_json
from .names import NAME_COLUMNS

COLUMNS = ["model", "task", "language", "template", "metric", "value", "n"]


def leaderboard(scores: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """One row per (model, task, language, template, metric), sorted so reruns give identical files."""
    rows = [
        {"model": s["model"], "task": s["task"], "language": s["language"], "template": s["template"],
         "metric": metric, "value": value, "n": s["n"]}
        for s in scores for metric, value in s["metrics"].items()
    ]
    frame = pd.DataFrame(rows, columns=COLUMNS)
    return frame.sort_values(COLUMNS[:5], kind="stable").reset_index(drop=True)


def nested_metrics(frame: pd.DataFrame) -> dict[str, Any]:
    """model -> task -> language -> template -> metric -> value, the shape ``dvc metrics`` shows."""
    out: dict[str, Any] = {}
    for row in frame.itertuples(index=False):
        out.setdefault(row.model, {}).setdefault(row.task, {}).setdefault(row.language, {}) \
           .setdefault(row.template, {})[row.metric] = round(float(row.value), 6)
    return out


def write_outputs(score_files: Iterable[str | Path], csv_path: str | Path, md_path: str | Path,
                  metrics_path: str | Path, raw_files: Iterable[str | Path] | None = None,
                  bootstrap: dict[str, Any] | None = None) -> pd.DataFrame:
    """Write the leaderboard; with ``raw_files``, add seeded bootstrap intervals (``ci_low``, ``ci_high``).

    ``bootstrap`` holds ``seed``, ``samples`` and ``confidence`` (see babeleval.analysis.bootstrap).
    """
    scores = [json.loads(Path(p).read_text(encoding="utf-8")) for p in score_files]
    frame = leaderboard(scores)
    if raw_files is not None:
        from .analysis.bootstrap import leaderboard_intervals

        settings = bootstrap or {}
        frame = leaderboard_intervals(frame, list(raw_files), seed=settings.get("seed", 0),
                                      n_samples=settings.get("samples", 1000),
                                      confidence=settings.get("confidence", 0.95))
    with atomic_open(csv_path) as handle:
        frame.to_csv(handle, index=False, float_format="%.6f", lineterminator="\n")
    with atomic_open(md_path) as handle:
        handle.write("# Leaderboard\n\n")
        # names stay text: tabulate would print a model named 1e3 as 1000.0000
        names = [i for i, column in enumerate(frame.columns) if column in NAME_COLUMNS]
        handle.write(frame.to_markdown(index=False, floatfmt=".4f", disable_numparse=names) + "\n")
    write_json(metrics_path, nested_metrics(frame))
    return frame
