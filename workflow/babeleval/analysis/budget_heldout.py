"""Each evaluated cell's item offset as it would be without the variant's own outcomes on that item.

The variants' posterior (``budget_prior``) reads each variant's evaluated cells against its items' fitted offsets.
An item's fitted effect has already absorbed part of every outcome on it, the variant's own included; read
against it, the variant looks closer to the others than it is. With one language the variant has one outcome on
the item and one Newton step back removes it. With item-parallel languages the variant answered the same item
in every language, and each of those outcomes moved the item's shared effect: with two or three variants an item
(a small budget) they are a large share of what the item's effect rests on, so removing only the cell's own
outcome leaves the rest in, the variants come out closer together in every language, and the tails (the 5 and
95% quantiles, the best, the worst, the spread) are pulled in. Here all of a variant's outcomes on the item are
removed at once, by one Newton step on the item's block (its shared effect and its deviation in each language),
whose Hessian is an arrowhead: solved in closed form, per (variant, item) pair, in time linear in the cells.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from .budget_prior import Items

# a precision never falls below this after removing a cell (an item seen only by the variant itself)
MIN_PRECISION = 1e-3


def _cell_by_cell(grid: np.ndarray, items: Items, effects: np.ndarray) -> Items:
    """Offsets without the cell's own outcome: one language, or languages with items of their own."""
    rows, cols = np.nonzero(~np.isnan(grid))
    fitted = expit(effects[rows] + items.offset[cols])
    precision = np.maximum(1 / items.variance[cols] - fitted * (1 - fitted), MIN_PRECISION)
    return Items(items.offset[cols] - (grid[rows, cols] - fitted) / precision, 1 / precision)


def held_out(grids: list[np.ndarray], items: list[Items], effects: np.ndarray, item_variance: float,
             deviation_variance: float, parallel: bool) -> list[Items]:
    """Per language, per evaluated cell (in ``np.nonzero`` order): its item's offset and that offset's variance
    without the variant's outcomes on the item in any language.

    ``effects``: variants x languages of the fit's variant effects; ``item_variance``, ``deviation_variance``:
    the fit's prior variances of an item's shared effect and of its deviation in a language (item-parallel).
    """
    if not parallel or len(grids) == 1:
        return [_cell_by_cell(grid, found, effects[:, k]) for k, (grid, found) in enumerate(zip(grids, items))]
    count, n_items = len(grids), len(items[0].offset)
    cells = [np.nonzero(~np.isnan(grid)) for grid in grids]
    pair_of = [rows * n_items + cols for rows, cols in cells]  # (variant, item) pairs, one id each
    pairs, inverse = np.unique(np.concatenate(pair_of), return_inverse=True)
    where = np.split(inverse, np.cumsum([len(ids) for ids in pair_of])[:-1])
    own_weight, own_residual = np.zeros((len(pairs), count)), np.zeros((len(pairs), count))
    item_weight = np.zeros((n_items, count))  # every variant's weight on the item, per language
    for k, ((rows, cols), grid) in enumerate(zip(cells, grids)):
        fitted = expit(effects[rows, k] + items[k].offset[cols])
        own_weight[where[k], k] = fitted * (1 - fitted)
        own_residual[where[k], k] = grid[rows, cols] - fitted
        item_weight[:, k] = np.bincount(cols, fitted * (1 - fitted), n_items)
    # the item block without the pair's cells: [[a, w'], [w, diag(d)]] over (shared effect, deviations)
    w = np.maximum(item_weight[pairs % n_items] - own_weight, 0.0)
    d = 1 / deviation_variance + w
    schur = np.maximum(1 / item_variance + w.sum(axis=1) - (w ** 2 / d).sum(axis=1), MIN_PRECISION)
    # the Newton step back: the removed cells' gradient (minus their residuals) through the block's inverse
    shared = (-own_residual.sum(axis=1) + (w * own_residual / d).sum(axis=1)) / schur
    deviation = (-own_residual - w * shared[:, None]) / d
    shift = shared[:, None] + deviation
    variance = 1 / d + (1 - w / d) ** 2 / schur[:, None]
    return [Items(items[k].offset[cols] + shift[where[k], k], variance[where[k], k])
            for k, (rows, cols) in enumerate(cells)]
