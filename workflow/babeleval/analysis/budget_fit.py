"""A logistic model with random effects, fitted by penalised Newton steps and empirical Bayes, in blocks.

The model is logit P(correct) = sum of one effect from each of several *groups* (a language's intercept, a
variant's effect, an item's effect, ...). Every group but the intercepts has a normal prior with a variance
of its own, estimated from the data (the fixed point of the Laplace marginal likelihood: a group's variance is
its effects' squares over the number of effects the data determine), so that the data decide how far variants
and items are shrunk. The result is the posterior mode, the prior variances and each effect's posterior variance.

The algebra uses the study's structure rather than a matrix of every parameter. The random groups fall in two
*sides*: the item side (the items' effects and their per-language deviations) and the variant side (the variants'
effects and their per-language deviations). Two effects of one side share an observation only when they are of
the same item (variant), so each side's block of the Hessian is block-diagonal, one small block per item
(variant): its effect and its deviation in each language. The fit alternates exact Newton steps on each side
together with the intercepts (the intercepts' few rows are eliminated by a Schur complement of the side's small
blocks), and after each round moves every random group's mean (per language, for the deviations) into the
intercepts, which changes no prediction and only lowers the prior's penalty: the directions along which the
alternation would otherwise crawl. A round costs a few passes over the observed cells and one small inverse per
item and per variant, so time and memory grow linearly with the observed cells (bench/prompt_budget_scale.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import connected_components
from scipy.special import expit

# the intercepts' prior precision: practically flat, only keeps the Newton system positive definite
FLAT = 1e-6
# a group's variance never falls below this (a group without any effect would otherwise make EM stall at 0)
MIN_VARIANCE = 1e-4
# the variances' update stops once none moves by more than this share of itself (a 0.5% change of a standard
# deviation: below what the statistics can show; the fixed point is reached linearly, so each digit costs steps)
VARIANCE_TOLERANCE = 1e-2


@dataclass(frozen=True)
class Group:
    """One factor of the model: per observation the index of its effect, and whether the effects share a prior.

    ``item_side``: the group's effects are an item's (its effect, or its deviation in a language); the other
    random groups are the variant side. Two effects of one side meet in an observation only if they are of the
    same item (variant), which is what lets ``fit`` solve each side block by block.
    """
    name: str
    index: np.ndarray  # int, one per observation
    size: int
    random: bool = True  # False: an unpenalised intercept
    item_side: bool = False


@dataclass(frozen=True)
class Fit:
    theta: np.ndarray  # posterior mode, the groups' effects one after another
    spans: dict[str, slice]  # where each group's effects sit in theta
    variances: dict[str, float]  # the prior variance estimated (or given) for each random group
    posterior_variance: np.ndarray  # each random effect's posterior variance given the other side's (Laplace)
    steps: int  # rounds taken

    def effects(self, name: str) -> np.ndarray:
        return self.theta[self.spans[name]]

    def variance_of(self, name: str) -> np.ndarray:
        return self.posterior_variance[self.spans[name]]


def design_matrix(groups: list[Group], rows: int) -> sparse.csr_matrix:
    """Observations x parameters, one 1 per group in each row."""
    offsets = np.cumsum([0] + [g.size for g in groups])[:-1]
    columns = np.stack([g.index + start for g, start in zip(groups, offsets)], axis=1)
    data = np.ones(columns.size)
    indptr = np.arange(0, columns.size + 1, len(groups))
    return sparse.csr_matrix((data, columns.ravel(), indptr), shape=(rows, int(sum(g.size for g in groups))))


@dataclass(frozen=True)
class _Side:
    """One side's parameters, ordered block by block (a block: the effects of one item, or of one variant)."""
    positions: np.ndarray  # parameter positions, block by block
    sizes: np.ndarray  # each block's size, in order
    design: sparse.csc_matrix  # observations x the side's parameters

    @classmethod
    def of(cls, positions: np.ndarray, x: sparse.csr_matrix) -> "_Side":
        pattern = x[:, positions].tocsc()
        _, label = connected_components((pattern.T @ pattern).tocsr(), directed=False)
        order = np.argsort(label, kind="stable")
        return cls(positions[order], np.bincount(label), pattern[:, order].tocsc())


def _inverse_blocks(matrix: sparse.csr_matrix, sizes: np.ndarray) -> sparse.csr_matrix:
    """The inverse of a block-diagonal matrix (blocks of ``sizes``, in order), block by block."""
    starts = np.concatenate([[0], np.cumsum(sizes)])
    dense_rows, dense_cols, values = [], [], []
    for size in np.unique(sizes):  # blocks of one size are inverted together
        firsts = starts[:-1][sizes == size]
        positions = firsts[:, None] + np.arange(size)[None, :]
        rows = np.repeat(positions, size, axis=1)
        cols = np.tile(positions, size)
        blocks = np.asarray(matrix[rows.ravel(), cols.ravel()]).reshape(-1, size, size)
        dense_rows.append(rows.ravel())
        dense_cols.append(cols.ravel())
        values.append(np.linalg.inv(blocks).ravel())
    n = int(starts[-1])
    return sparse.csr_matrix((np.concatenate(values), (np.concatenate(dense_rows), np.concatenate(dense_cols))),
                             shape=(n, n))


def _side_step(side: _Side, border: sparse.csc_matrix, weight: np.ndarray, gradient_side: np.ndarray,
               gradient_border: np.ndarray, precision_side: np.ndarray, precision_border: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The exact Newton step of one side and the intercepts (``border``: observations x intercepts) with
    everything else held: the side's steps, the intercepts' steps and the side's posterior variances given the
    rest. The side's blocks are inverted one by one; the intercepts' system is their Schur complement."""
    weighted = side.design.multiply(weight[:, None]).tocsc()
    d_inverse = _inverse_blocks((side.design.T @ weighted).tocsr() + sparse.diags(precision_side), side.sizes)
    coupling = (weighted.T @ border).toarray()  # side x intercepts
    border_hessian = (border.T @ border.multiply(weight[:, None])).toarray() + np.diag(precision_border)
    reduced = d_inverse @ coupling
    schur = border_hessian - coupling.T @ reduced
    border_step = np.linalg.solve(schur, gradient_border - reduced.T @ gradient_side)
    side_step = d_inverse @ (gradient_side - coupling @ border_step)
    return side_step, border_step, d_inverse.diagonal()


def _updated_variance(effects: np.ndarray, posterior_var: np.ndarray, variance: float) -> float:
    """A group's prior variance at the next round: the fixed-point update of the Laplace marginal likelihood.

    The effects' squares over the effective number of effects (those the data determine, n - sum(v)/variance)
    has the EM update's fixed point, mean(effect^2 + v), and reaches it in a few rounds where EM crawls (when
    the data pin the effects down little); EM's step stands in while that number is not positive.
    """
    effective = len(effects) - float(np.sum(posterior_var)) / variance
    squares = float(np.sum(effects ** 2))
    updated = squares / effective if effective > 1e-3 else (squares + float(np.sum(posterior_var))) / len(effects)
    return max(MIN_VARIANCE, updated)


def _spans(groups: list[Group]) -> dict[str, slice]:
    starts = np.cumsum([0] + [g.size for g in groups]).tolist()
    return {g.name: slice(start, start + g.size) for g, start in zip(groups, starts)}


def _precision(size: int, spans: dict[str, slice], variances: dict[str, float]) -> np.ndarray:
    """The prior precision of every parameter: 1/variance of its group, nearly flat for intercepts."""
    precision = np.full(size, FLAT)
    for name, variance in variances.items():
        precision[spans[name]] = 1 / variance
    return precision


def _centred(theta: np.ndarray, groups: list[Group], spans: dict[str, slice], intercept: Group | None,
             observations: np.ndarray) -> np.ndarray:
    """``theta`` with each random group's mean moved into the intercepts, per intercept where the group's effects
    each belong to one (a deviation in a language), else shared by all: predictions unchanged, penalty lower.

    ``observations``: per observation, its row of every group's index (observations x groups)."""
    if intercept is None:
        return theta
    theta = theta.copy()
    column = {g.name: k for k, g in enumerate(groups)}
    home = observations[:, column[intercept.name]]
    for group in groups:
        if not group.random:
            continue
        index = observations[:, column[group.name]]
        owner = np.full(group.size, -1)
        owner[index] = home
        clash = np.zeros(group.size, dtype=bool)
        np.logical_or.at(clash, index, owner[index] != home)
        effects = theta[spans[group.name]]
        if (owner >= 0).all() and not clash.any() and len(np.unique(owner)) > 1:
            means = np.bincount(owner, effects, intercept.size) / np.maximum(np.bincount(owner, None,
                                                                                          intercept.size), 1)
            theta[spans[group.name]] = effects - means[owner]
            theta[spans[intercept.name]] += means
        else:
            theta[spans[group.name]] = effects - effects.mean()
            theta[spans[intercept.name]] += effects.mean()
    return theta


def fit(groups: list[Group], y: np.ndarray, variances: dict[str, float] | None = None,
        start: np.ndarray | None = None, rounds: int = 200, tolerance: float = 1e-4) -> Fit:
    """Posterior mode of the model, with each random group's prior variance estimated (or as given).

    Each round is a Newton step on the item side and one on the variant side (each with the intercepts),
    the groups' means moved into the intercepts, and (where estimated) a variance update; rounds stop once the
    mode moves by less than ``tolerance`` and no variance by more than ``VARIANCE_TOLERANCE`` of itself.
    ``start``: a mode to begin from (a refit of similar data converges in a few rounds). At most one
    unpenalised group (the intercepts).
    """
    x = design_matrix(groups, len(y))
    spans = _spans(groups)
    observations = np.stack([g.index for g in groups], axis=1)
    intercept = next((g for g in groups if not g.random), None)
    border_positions = np.arange(spans[intercept.name].start, spans[intercept.name].stop) if intercept else \
        np.zeros(0, dtype=int)
    border = x[:, border_positions].tocsc()
    sides = [_Side.of(np.concatenate([np.arange(spans[g.name].start, spans[g.name].stop) for g in groups
                                      if g.random and g.item_side == item_side]), x)
             for item_side in (True, False) if any(g.random and g.item_side == item_side for g in groups)]
    estimated = variances is None
    current = {g.name: 1.0 for g in groups if g.random} if variances is None else dict(variances)
    theta = np.zeros(x.shape[1]) if start is None else np.array(start, dtype=float)
    posterior_variance = np.zeros_like(theta)
    for taken in range(1, rounds + 1):
        precision = _precision(len(theta), spans, current)
        before = theta.copy()
        for side in sides:
            p = expit(x @ theta)
            gradient = x.T @ (y - p) - precision * theta
            side_step, border_step, side_variance = _side_step(
                side, border, p * (1 - p), gradient[side.positions], gradient[border_positions],
                precision[side.positions], precision[border_positions])
            theta[side.positions] += np.clip(side_step, -5, 5)  # far from the mode a full step can overshoot
            theta[border_positions] += np.clip(border_step, -5, 5)
            posterior_variance[side.positions] = side_variance
        theta = _centred(theta, groups, spans, intercept, observations)
        change = 0.0
        if estimated:
            updated = {name: _updated_variance(theta[spans[name]], posterior_variance[spans[name]], value)
                       for name, value in current.items()}
            change = max((abs(updated[n] - current[n]) / current[n] for n in current), default=0.0)
            current = updated
        if np.max(np.abs(theta - before), initial=0.0) < tolerance and change < VARIANCE_TOLERANCE:
            break
    return Fit(theta=theta, spans=spans, variances=current, posterior_variance=posterior_variance, steps=taken)
