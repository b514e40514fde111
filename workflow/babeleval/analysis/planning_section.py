"""The report's planning section: what the study could and could not show, and what each model cost.

- **Power**: per family of paired tests (one comparison kind, task and metric: the Holm family), the tests, the
  level each cleared (alpha / tests, Holm's strictest step), the spread of the minimum detectable differences at
  80% power (``significance`` rows' ``mde``: ``power.made_test_mde``) and how many differences
  were not significant while smaller than their MDE: those the design could not have found.
- **Cost**: per model, the requests, the tokens of all its requests and of those this run paid for (the usage
  files, as the run summary reads them) and, with ``prices`` in its entry (per million tokens), their cost.
``python -m babeleval plan`` prints the same before a run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Mapping

import numpy as np
import pandas as pd
from markupsafe import Markup

from ..score.metrics import get_metric


def power_rows(tables: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """One row per Holm family of the significance tables (as the analysis holds them: shares), MDEs in points."""
    rows = []
    for frame in tables:
        if frame.empty or "mde" not in frame:
            continue
        for (comparison, task, metric), group in frame.groupby(["comparison", "task", "metric"], sort=True):
            shown = get_metric(metric).shown
            mde = group["mde"].dropna().astype(float).map(shown)
            hidden = group[~group["significant"].astype(bool) & group["mde"].notna()
                           & (group["diff"].abs() < group["mde"])]
            rows.append({
                "comparison": comparison, "task": task, "metric": metric, "tests": len(group),
                "alpha per test": f"{_level(group):.2g}",
                "MDE, points (min / median / max)": ("none: too few items, no discordant item, no spread, or too few resamples for "
                                                     "the level (analysis.bootstrap_samples)") if mde.empty else
                f"{mde.min():.1f} / {float(np.median(mde)):.1f} / {mde.max():.1f}",
                "not significant, below their MDE": f"{len(hidden)} of {int((~group['significant'].astype(bool)).sum())}",
            })
    return pd.DataFrame(rows)


def _level(group: pd.DataFrame) -> float:
    """The level one test of the family cleared under Holm's strictest step."""
    return float(group["alpha"].iloc[0]) / len(group) if "alpha" in group else float("nan")


def usage_totals(usage_files: Iterable[str | Path]) -> dict[str, dict[str, int]]:
    """Per model (the first folder under results/usage/): requests and the tokens of all of them.

    What the study costs, the same whatever the cache held: what one run paid (cache hits, tokens computed) is
    the run summary's, and would make the report differ between a run and its resume."""
    out: dict[str, dict[str, int]] = {}
    for path in usage_files:
        path = Path(path)
        usage = json.loads(path.read_text(encoding="utf-8"))
        model = path.parent.parent.name
        total = out.setdefault(model, {"requests": 0, "in": 0, "out": 0})
        total["requests"] += int(usage.get("requests", 0))
        for key, source in (("in", "prompt"), ("out", "completion")):
            total[key] += int((usage.get("tokens_all_requests") or {}).get(source, 0))
    return out


def cost_rows(totals: Mapping[str, Mapping[str, int]], prices: Mapping[str, Mapping[str, float] | None]
              ) -> pd.DataFrame:
    rows = []
    for model, t in sorted(totals.items()):
        price = prices.get(model)
        cost = None if not price else (t["in"] * price["prompt"] + t["out"] * price["completion"]) / 1e6
        rows.append({"model": model, "requests": f"{t['requests']:,}", "tokens in": f"{t['in']:,}",
                     "tokens out": f"{t['out']:,}", "cost": "– (no prices)" if cost is None else f"{cost:.4g}"})
    return pd.DataFrame(rows)


def section(significance: Iterable[pd.DataFrame], usage_files: Iterable[str | Path],
            prices: Mapping[str, Mapping[str, float] | None], alpha: float, table_html) -> Markup:
    """The section's HTML; ``table_html(frame, id)`` draws a table as the rest of the report does."""
    frames = [frame.assign(alpha=alpha) for frame in significance]
    power = power_rows(frames)
    cost = cost_rows(usage_totals(usage_files), prices)
    parts = ['<h2 id="planning">Planning: what this study could and could not show</h2>',
             "<p>Per family of paired tests (Holm-Bonferroni over the family): the minimum difference each test "
             "could detect with 80% power at its level (an exact McNemar test at the discordance its items showed, a "
             "paired bootstrap test from its resampled difference's standard error), and how many "
             "differences were not significant while smaller than their MDE (a design that could not have found "
             "them). <code>python -m babeleval plan</code> gives these numbers before a run.</p>",
             table_html(power, "planning-power") if not power.empty else
             "<p>No paired test: the grid has no two templates of a model, nor two models on a template.</p>",
             "<p>Requests, tokens and cost per model: the whole study's, whatever the cache held (its usage files; "
             "cost from its <code>prices</code>, per million tokens). What one run paid is in its run summary.</p>",
             table_html(cost, "planning-cost") if not cost.empty else
             "<p>No usage file: these outputs were analysed without the generation jobs that made them.</p>"]
    return Markup("\n".join(str(part) if isinstance(part, Markup) else part for part in parts))

