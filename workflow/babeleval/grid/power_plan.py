"""The comparisons a grid's analysis will make, each with the smallest difference it can detect.

The pairs are the analysis's own (``significance.comparison_groups``: templates of one model and language, models
of one template and language), on each task's headline metric, and each family is the analysis's Holm family:
one comparison kind of one task (and metric). A pair is planned on the items both sides will answer (its prompts'
ids, which the caller renders), at ``alpha / m`` for its family of ``m`` pairs (``power.corrected_alpha``), with
the discordance a pilot measured on that very pair, else pooled over the pilot's pairs of the same kind and task,
else ``power.ASSUMED_DISCORDANCE``; each row says which.

A right/wrong headline metric (accuracy) is tested by the exact McNemar test, whose power follows from items and
discordance alone. A graded metric (chrF, BLEU, F1) is tested by a paired bootstrap, whose power follows from the
spread of the per-item difference (``power.Spread``): measured by a pilot on that very pair, else pooled over the
pilot's pairs of the same kind and task. There is no assumed spread: without a pilot, a graded row says so instead
of a number.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from ..analysis import power
from ..analysis.significance import comparison_groups
from ..score.metrics import get_metric
from .records import Grid

# what a pilot reader returns for a combination: item id -> right/wrong, or None where the pilot lacks it
PilotOutcomes = Callable[[tuple[str, str, str, str], str], Mapping[str, bool] | None]
# what a pilot reader returns for two combinations and a graded metric: the spread of their difference, or None
PilotSpread = Callable[[tuple[str, str, str, str], tuple[str, str, str, str], str], power.Spread | None]
POOLED = "pilot, pooled over the task"
NO_PILOT_SPREAD = ("no pilot run holds this task's pairs: a graded metric's power needs the spread of its per-item "
                   "differences, which a pilot measures (run the grid with a small limit first, then plan with --pilot)")


@dataclass(frozen=True)
class PlannedComparison:
    kind: str  # "template" or "model": what differs between a and b
    task: str
    language: str
    fixed: str  # the model (template comparisons) or the template (model comparisons)
    a: str
    b: str
    metric: str
    items: int  # the items both sides answer
    family_size: int  # the Holm family's tests
    alpha: float  # the level one test must clear (alpha / family size)
    discordance: power.Discordance | None  # a right/wrong metric's
    mde: float | None  # the minimum detectable difference at 80% power, on the metric's scale; None: see reason
    needed: int | None  # the items needed for the difference asked for (``--difference``)
    reason: str | None = None  # why there is no MDE
    spread: power.Spread | None = None  # a graded metric's


def headline_metric_of(grid: Grid, task: str) -> str | None:
    """The task's headline metric, as its combinations' records name it."""
    for (_, name, _, _), record in grid.records.items():
        if name == task:
            return next((m.name for m in record.metrics if m.headline), None)
    return None


def plan(grid: Grid, ids: Mapping[tuple[str, str, str], Sequence[str]], pilot: PilotOutcomes, *,
         difference: float | None = None, assumed: float = power.ASSUMED_DISCORDANCE,
         spread: PilotSpread | None = None) -> list[PlannedComparison]:
    """Every pair the analysis will compare, planned. ``ids``: (task, language, template) -> the ids of the items
    its prompts ask; ``difference``: points on the metric's 0-100 scale, as a share (accuracy's), to find the items
    needed for; ``spread``: a graded metric's pilot."""
    groups = comparison_groups(grid.combinations())
    pairs = [(key, a, b) for key, members in sorted(groups.items())
             for a, b in itertools.combinations(sorted(members), 2)]
    family: dict[tuple[str, str], int] = {}
    for (kind, _, task, _), _, _ in pairs:
        family[kind, task] = family.get((kind, task), 0) + 1
    measured = {}
    for key, a, b in pairs:
        measured[key, a, b] = _pilot_discordance(grid, groups[key][a], groups[key][b], pilot)
    pooled = _pooled(measured)
    spreads = {(key, a, b): _pilot_spread(grid, groups[key][a], groups[key][b], spread) for key, a, b in pairs}
    pooled_spreads = _pooled_spreads(spreads)
    out = []
    for key, a, b in pairs:
        kind, fixed, task, language = key
        ca, cb = groups[key][a], groups[key][b]
        shared = len(set(ids.get((task, language, ca.template), ())) & set(ids.get((task, language, cb.template), ())))
        metric = headline_metric_of(grid, task) or ""
        alpha = power.corrected_alpha(grid.analysis.alpha, family[kind, task])
        row = dict(kind=kind, task=task, language=language, fixed=fixed, a=a, b=b, metric=metric, items=shared,
                   family_size=family[kind, task], alpha=alpha)
        if not metric:
            out.append(PlannedComparison(**row, discordance=None, mde=None, needed=None, reason="no metric"))
            continue
        if not get_metric(metric).right_or_wrong:
            out.append(_graded(row, spreads[key, a, b] or pooled_spreads.get((kind, task)), difference,
                               grid.analysis.samples))
            continue
        discordance = (measured[key, a, b] or pooled.get((kind, task))
                       or power.Discordance(assumed, "assumed"))
        mde = power.minimum_detectable(shared, discordance.share, alpha)
        needed = power.items_needed(difference, discordance.share, alpha) if difference else None
        reason = None if mde is not None else (
            "no items in common" if not shared else
            f"{shared} items too few at this level and discordance")
        out.append(PlannedComparison(**row, discordance=discordance, mde=mde, needed=needed, reason=reason))
    return out


def _graded(row: dict, spread: power.Spread | None, difference: float | None, samples: int) -> PlannedComparison:
    """A graded pair planned from its pilot spread (a paired bootstrap test of ``samples`` resamples), or the reason
    it cannot be."""
    items, level = row["items"], row["alpha"]
    if spread is None:
        return PlannedComparison(**row, discordance=None, mde=None, needed=None, reason=NO_PILOT_SPREAD)
    if samples < power.resamples_needed(level):
        return PlannedComparison(**row, discordance=None, mde=None, needed=None, spread=spread, reason=(
            f"{samples:,} resamples are too few for a paired bootstrap test at level {level:.2g} (its p-value rests "
            f"on the most extreme few): set analysis.bootstrap_samples to at least {power.resamples_needed(level):,}"))
    metric = get_metric(row["metric"])
    needed = (power.graded_items_needed(metric.stored(100 * difference), spread, level) if difference else None)
    mde = power.graded_mde(items, spread, level)
    return PlannedComparison(**row, discordance=None, mde=mde, needed=needed, spread=spread,
                             reason=None if mde is not None else "no items in common")


def _pilot_spread(grid: Grid, ca, cb, spread: PilotSpread | None) -> power.Spread | None:
    metric = headline_metric_of(grid, ca.task)
    if spread is None or not metric or get_metric(metric).right_or_wrong:
        return None
    return spread(tuple(ca), tuple(cb), metric)


def _pooled_spreads(measured: Mapping[tuple, power.Spread | None]) -> dict[tuple[str, str], power.Spread]:
    """The spread over every piloted graded pair of one comparison kind and task (the root of the item-weighted mean
    variance): for the pairs the pilot did not run."""
    return _pooled_over_task(measured, lambda found: found.sd ** 2, lambda variance, items: power.Spread(
        float(variance ** 0.5), POOLED, items))


def _pilot_discordance(grid: Grid, ca, cb, pilot: PilotOutcomes) -> power.Discordance | None:
    metric = headline_metric_of(grid, ca.task)
    column = get_metric(metric).outcome_column if metric else None
    if column is None:
        return None
    a, b = pilot(tuple(ca), column), pilot(tuple(cb), column)
    if not a or not b:
        return None
    shared = sorted(set(a) & set(b))
    if not shared:
        return None
    share = power.measured([a[i] for i in shared], [b[i] for i in shared])
    # no discordant item in the pilot would plan a perfect test: the pair is planned like an unpiloted one
    return power.Discordance(share, "pilot", len(shared)) if share > 0 else None


def _pooled(measured: Mapping[tuple, power.Discordance | None]) -> dict[tuple[str, str], power.Discordance]:
    """The discordance over every piloted pair of one comparison kind and task, weighted by their items: for the
    pairs the pilot did not run. A pilot that found no discordant item at all is not pooled (it would plan a
    perfect test)."""
    return _pooled_over_task(measured, lambda found: found.share,
                             lambda share, items: power.Discordance(share, POOLED, items))


def _pooled_over_task(measured: Mapping[tuple, Any], value: Callable[[Any], float], build: Callable[[float, int], Any]
                      ) -> dict[tuple[str, str], Any]:
    """Per comparison kind and task, ``build`` of the item-weighted mean of ``value`` over the piloted pairs (those
    with a finding), and their items; none where that mean is 0."""
    sums: dict[tuple[str, str], list[float]] = {}
    for ((kind, _, task, _), _, _), found in measured.items():
        if found is not None:
            total = sums.setdefault((kind, task), [0.0, 0])
            total[0] += value(found) * found.items
            total[1] += found.items
    return {key: build(weighted / items, int(items)) for key, (weighted, items) in sums.items()
            if items and weighted > 0}
