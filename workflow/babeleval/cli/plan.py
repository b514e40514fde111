"""Plan a study before paying for it: what each comparison can detect, and what each model will cost.

    python -m babeleval plan                      # params.yaml: power of every comparison, cost of every model
    python -m babeleval plan --difference 2       # and the items each comparison needs to find 2 points
    python -m babeleval plan --csv plan.csv       # every planned comparison as a row

Power: for every pair the analysis will compare (templates of one model and language, models of one template and
language; ``babeleval.grid.power_plan``) on the task's headline metric, the items both sides answer, the minimum
difference the pair's test finds with 80% power at the configured ``analysis.alpha`` after the Holm correction
over its family (``babeleval.analysis.power``), and with ``--difference`` the items that difference needs. A
right/wrong metric's test is the exact McNemar test: its discordance (the share of items two sides answer
differently) comes from an earlier run's outcome tables under ``results/outcomes/`` where they hold the pair (a
pilot), else from the pilot's other pairs of the task, else from ``--discordance`` (an assumption, printed as
one). A graded metric's (chrF, BLEU, F1) is a paired bootstrap: the spread of its per-item difference comes from
the pilot's outcome tables the same way (resampled as the analysis resamples them), and without a pilot the row
says so: there is no assumed spread.

Cost: per model, the requests, prompt tokens (its own tokenizer where it is on disk, else estimated), expected
completion tokens (a pilot's average, else ``max_new_tokens``), the answers its response cache already holds and,
with ``prices`` in its entry, the cost (``babeleval.cli.forecast``); beside it, where the grid has run, what that
run's usage files report. Nothing is run and no model is loaded (a tokenizer is).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Mapping

import numpy as np
import pandas as pd

from ..analysis import power
from ..analysis.bootstrap import item_data
from ..analysis.records import metric_options
from ..analysis.significance import difference_spread
from ..core import paths
from ..core.errors import BabelevalError
from ..grid.params import load_params
from ..grid.power_plan import PlannedComparison, plan
from ..grid.records import Grid
from ..score.metrics import get_metric
from ..prompts.render import budgeted_requests, requests_for
from ..score import outcomes
from . import forecast
from .show import task_rows

SHOWN_ROWS = 20  # rows of one family printed; --csv writes them all


def rendered_requests(grid: Grid) -> dict[tuple[str, str, str], list[dict]]:
    """(task, language, template) -> the requests its prompts hold, rendered from the task's source as the rendering
    job renders them (``show`` does the same): a budgeted variant's only its set's design's cells, drawn from
    every language's items at once."""
    out = {}
    for name, entry in grid.tasks.items():
        rows = task_rows(grid, name)
        for (task, language, template), record in grid.prompts.items():
            if task == name:
                out[task, language, template] = requests_for(entry.templates[template], record, rows)
    budgeted: dict[tuple[str, str], list[str]] = {}
    for (task, language, template), record in grid.prompts.items():
        if record.budget is not None:
            budgeted.setdefault((task, template), []).append(language)
    for (task, template), languages in budgeted.items():
        design = grid.prompts[task, languages[0], template].budget
        kept = budgeted_requests(design, template, {language: out[task, language, template] for language in languages})
        out.update({(task, language, template): requests for language, requests in kept.items()})
    return out


def pilot_reader(root: Path):
    """Reads a combination's right/wrong outcomes from an earlier run's outcome table, where there is one."""
    def read(combo: tuple[str, str, str, str], column: str) -> Mapping[str, bool] | None:
        model, task, language, template = combo
        path = root / paths.OUTCOMES.format(model=model, task=task, language=language, template=template)
        if not path.exists():
            return None
        rows = outcomes.read(path, columns=["id", column])
        return {str(r["id"]): bool(r[column]) for r in rows if r.get(column) is not None}
    return read


def spread_reader(root: Path, seed: int, samples: int):
    """Reads two combinations' per-item spread on a graded metric from an earlier run's outcome tables (and the
    metric options their scores files record), where it has both."""
    def read(combo_a: tuple[str, str, str, str], combo_b: tuple[str, str, str, str], metric: str) -> power.Spread | None:
        data = []
        for model, task, language, template in (combo_a, combo_b):
            names = dict(model=model, task=task, language=language, template=template)
            table, scores = root / paths.OUTCOMES.format(**names), root / paths.SCORES.format(**names)
            if not table.exists():
                return None
            options = metric_options(json.loads(scores.read_text(encoding="utf-8"))) if scores.exists() else {}
            data.append(item_data(metric, outcomes.read(table, without=outcomes.TEXT_ONLY), options))
        if None in data:
            return None
        found = difference_spread(*data, seed=seed, n_samples=samples)
        return None if found is None else power.Spread(found[0], "pilot", found[1])
    return read


def _points(value: float | None, metric: str) -> str:
    """A difference on the metric's scale as the points readers see (accuracy in %, chrF/BLEU/F1 0-100)."""
    return "–" if value is None else f"{get_metric(metric).shown(value):.1f}"


def power_frame(planned: list[PlannedComparison]) -> pd.DataFrame:
    return pd.DataFrame([{
        "comparison": f"{p.kind} vs {p.kind}", "task": p.task, "language": p.language, "fixed": p.fixed, "a": p.a,
        "b": p.b, "metric": p.metric, "items": p.items, "family_size": p.family_size, "alpha_per_test": p.alpha,
        "discordance": None if p.discordance is None else p.discordance.share,
        "discordance_source": None if p.discordance is None else p.discordance.source,
        "spread_sd_points": None if p.spread is None else get_metric(p.metric).shown(p.spread.sd),
        "spread_source": None if p.spread is None else p.spread.source,
        "mde_points": None if p.mde is None else get_metric(p.metric).shown(p.mde), "items_needed": p.needed,
        "reason": p.reason,
    } for p in planned])


def power_lines(planned: list[PlannedComparison], alpha: float, difference: float | None) -> list[str]:
    """Per task and comparison kind: the family, the spread of its MDEs, then its pairs (the first few)."""
    if not planned:
        return ["Power: nothing to compare: no model runs two templates of a (task, language), and no template runs on two "
                "models."]
    lines = [f"Power: the smallest difference each comparison finds with 80% power (MDE, points: accuracy in %, "
             f"chrF/BLEU/F1 0-100), at alpha {alpha:g} after Holm over its family (alpha / family size per test); "
             "exact McNemar for right/wrong metrics, paired bootstrap (from a pilot's per-item spread) for graded ones"
             + (f"; items needed for {100 * difference:g} points" if difference else "") + ".", ""]
    by_family: dict[tuple[str, str], list[PlannedComparison]] = {}
    for p in planned:
        by_family.setdefault((p.task, p.kind), []).append(p)
    for (task, kind), rows in sorted(by_family.items()):
        metric = rows[0].metric
        mdes = [p.mde for p in rows if p.mde is not None]
        spread = (f"MDE {_points(min(mdes), metric)} to {_points(max(mdes), metric)} points (median "
                  f"{_points(float(np.median(mdes)), metric)})" if mdes else "no MDE")
        graded = any(p.spread is not None for p in rows)
        sources = sorted({p.discordance.source for p in rows if p.discordance is not None}
                         | {p.spread.source for p in rows if p.spread is not None})
        lines.append(f"## {task}: {kind} vs {kind} on {metric}: {len(rows)} tests, alpha {rows[0].alpha:.2g} "
                     f"per test; {spread}; {'spread' if graded else 'discordance'}: {', '.join(sources) or '–'}")
        table = pd.DataFrame({
            "language": [p.language for p in rows], kind if kind == "model" else "model": [p.fixed for p in rows],
            "pair": [f"{p.a} vs {p.b}" for p in rows], "items": [str(p.items) for p in rows],
            "discordance" if not graded else "spread (sd)": [_basis(p) for p in rows],
            "MDE": [_points(p.mde, p.metric) if p.mde is not None else f"none: {p.reason}" for p in rows],
        })
        if kind == "model":
            table = table.rename(columns={"model": "template"})
        if difference:
            table[f"items for {100 * difference:g}"] = ["–" if p.needed is None else f"{p.needed:,}" for p in rows]
        lines.append(table.head(SHOWN_ROWS).to_markdown(index=False, disable_numparse=True))
        if len(rows) > SHOWN_ROWS:
            lines.append(f"... and {len(rows) - SHOWN_ROWS} more (--csv writes every row)")
        lines.append("")
    if any(p.discordance is not None and p.discordance.source == "assumed" for p in planned):
        lines.append(f"Assumed discordance: no earlier run's outcome tables hold these pairs, so {planned_assumption(planned)} "
                     "of items answered differently is assumed (--discordance sets it; a pilot run measures it).")
    return lines


def _basis(p: PlannedComparison) -> str:
    """What a pair is planned from: its discordance (right/wrong) or its per-item spread (graded), and its source."""
    if p.discordance is not None:
        return f"{p.discordance.share:.0%} ({p.discordance.source})"
    if p.spread is not None:
        return f"{_points(p.spread.sd, p.metric)} ({p.spread.source}, {p.spread.items} items)"
    return "–"


def planned_assumption(planned: list[PlannedComparison]) -> str:
    shares = {p.discordance.share for p in planned if p.discordance is not None and p.discordance.source == "assumed"}
    return ", ".join(f"{s:.0%}" for s in sorted(shares))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m babeleval plan", description=__doc__.split("\n\n")[0])
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--pilot", default=".", help="the checkout whose results/outcomes/ hold an earlier run to "
                        "measure discordance on (default: this one)")
    parser.add_argument("--difference", type=float, help="points (accuracy in %%, chrF/BLEU/F1 0-100): the items "
                        "each comparison needs to find it")
    parser.add_argument("--discordance", type=float, default=power.ASSUMED_DISCORDANCE,
                        help="the share of items two sides answer differently, where no pilot measured it "
                             f"(default {power.ASSUMED_DISCORDANCE})")
    parser.add_argument("--csv", help="write every planned comparison to this CSV file")
    parser.add_argument("--no-cost", action="store_true", help="power only: no token counts (no tokenizer loads)")
    args = parser.parse_args(argv)
    if not 0 < args.discordance <= 1:
        print(f"error: --discordance {args.discordance}: a share of items, above 0 and at most 1", file=sys.stderr)
        return 2
    if args.difference is not None and not 0 < args.difference <= 100:
        print(f"error: --difference {args.difference}: points, above 0 and at most 100", file=sys.stderr)
        return 2
    difference = None if args.difference is None else args.difference / 100
    try:
        grid = load_params(args.params)
        requests = rendered_requests(grid)
        ids = {key: [str(r["id"]) for r in rows] for key, rows in requests.items()}
        planned = plan(grid, ids, pilot_reader(Path(args.pilot)), difference=difference, assumed=args.discordance,
                       spread=spread_reader(Path(args.pilot), grid.analysis.seed, grid.analysis.samples))
    except BabelevalError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print("\n".join(power_lines(planned, grid.analysis.alpha, difference)))
    if not args.no_cost:
        forecasts = [forecast.forecast(grid, model, requests, Path(args.pilot)) for model in grid.models
                     if grid.runs_something(model)]
        print("\n".join(["", *forecast.lines(forecasts, grid, Path(args.pilot))]))
    if args.csv:
        power_frame(planned).to_csv(args.csv, index=False, float_format="%.6g")
    return 0
