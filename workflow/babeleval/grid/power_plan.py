"""The comparisons a grid's analysis will make, each with the smallest difference it can detect.

The pairs are the analysis's own (``significance.comparison_groups``: templates of one model and language, models
of one template and language), on each task's headline metric, and each family is the analysis's Holm family:
one comparison kind of one task (and metric). A pair is planned on the items both sides will answer (its prompts'
ids, which the caller renders), at ``alpha / m`` for its family of ``m`` pairs (``power.corrected_alpha``), with
the discordance a pilot measured on that very pair, else pooled over the pilot's pairs of the same kind and task,
else ``power.ASSUMED_DISCORDANCE``; each row says which.

Only a right/wrong headline metric (accuracy) is planned: its test is the exact McNemar test, whose power follows
from items and discordance alone. A graded metric (chrF, F1) is tested by a paired bootstrap whose power needs the
spread of per-item differences; its rows say so instead of a number.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from ..analysis import power
from ..analysis.significance import comparison_groups
from ..score.metrics import get_metric
from .records import Grid

# what a pilot reader returns for a combination: item id -> right/wrong, or None where the pilot lacks it
PilotOutcomes = Callable[[tuple[str, str, str, str], str], Mapping[str, bool] | None]


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
    discordance: power.Discordance | None
    mde: float | None  # the minimum detectable difference at 80% power, a share; None: see reason
    needed: int | None  # the items needed for the difference asked for (``--difference``)
    reason: str | None = None  # why there is no MDE


def headline_metric_of(grid: Grid, task: str) -> str | None:
    """The task's headline metric, as its combinations' records name it."""
    for (_, name, _, _), record in grid.records.items():
        if name == task:
            return next((m.name for m in record.metrics if m.headline), None)
    return None


def plan(grid: Grid, ids: Mapping[tuple[str, str, str], Sequence[str]], pilot: PilotOutcomes, *,
         difference: float | None = None, assumed: float = power.ASSUMED_DISCORDANCE) -> list[PlannedComparison]:
    """Every pair the analysis will compare, planned. ``ids``: (task, language, template) -> the ids of the items
    its prompts ask; ``difference``: a share to find the items needed for."""
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
    out = []
    for key, a, b in pairs:
        kind, fixed, task, language = key
        ca, cb = groups[key][a], groups[key][b]
        shared = len(set(ids.get((task, language, ca.template), ())) & set(ids.get((task, language, cb.template), ())))
        metric = headline_metric_of(grid, task) or ""
        alpha = power.corrected_alpha(grid.analysis.alpha, family[kind, task])
        row = dict(kind=kind, task=task, language=language, fixed=fixed, a=a, b=b, metric=metric, items=shared,
                   family_size=family[kind, task], alpha=alpha)
        if not metric or not get_metric(metric).right_or_wrong:
            out.append(PlannedComparison(**row, discordance=None, mde=None, needed=None,
                                         reason=f"{metric or 'no metric'} is not right/wrong per item: its paired "
                                                "bootstrap's power needs the per-item spread, not planned"))
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
    sums: dict[tuple[str, str], list[float]] = {}
    for ((kind, _, task, _), _, _), found in measured.items():
        if found is not None:
            total = sums.setdefault((kind, task), [0.0, 0])
            total[0] += found.share * found.items
            total[1] += found.items
    return {key: power.Discordance(disc / items, "pilot, pooled over the task", int(items))
            for key, (disc, items) in sums.items() if items and disc > 0}
