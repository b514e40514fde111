"""The variants' effects under a prior the data choose (a normal, or a grid of values and their weights), given
the items'.

With the items' effects fitted (``budget_fit``), each variant's evaluated cells give its likelihood over its
effect on the logit scale; with several languages, over its shared effect, its deviation in each language
integrated out (normal, with the fitted variance; Gauss-Hermite nodes). The prior of the shared effects is one of
two (``_prior_family``):
- a normal, whose mean and standard deviation are integrated over what the cells say of them (``_normal``;
  a variant's posterior mixes its posteriors under each pair by the pairs' probabilities), unless the cells
  reject it;
- where they do, a grid of values whose weights are the maximum-likelihood mixture (EM on the weights: Kiefer and
  Wolfowitz's estimate): a few catastrophic variants among many ordinary ones get a mass of their own, far from
  the others, instead of widening one normal prior until the ordinary variants are no longer shrunk, and
  variants far from the rest keep their own level instead of being pulled to the mean, where more than one of
  them is there: each variant is read against the weights without its own share (``_held_out_posterior``).
The grid fits any shape, and on a normal truth pays for it in the tails, whose quantiles jump between its atoms.
A variant whose cells are all wrong (or all right), at a level that the cells of the variants sharing it do not
place either, is read by its own cells alone (``_by_own_cells``).

A variant's score in a language is its accuracy over all of the language's items: its evaluated outcomes,
plus the cells not evaluated, drawn from the model (their expected count and its binomial variance, at the
drawn effect). A cell's probability integrates what is not known about its item's effect (the probit
approximation of the logistic-normal integral: expit(m / sqrt(1 + pi v / 8)) for a logit N(m, v)).

Everything is tabulated once on a lattice of effects, so the cost is the evaluated cells times the lattice's
size, and a draw of every variant's score is a table look-up.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.special import expit, logsumexp

# the lattice of effects (logit scale): its points, and how far it reaches beyond the fitted effects (a
# variant that got every evaluated item wrong has its likelihood flat towards minus infinity)
LATTICE_POINTS = 161
REACH = 6.0
# Gauss-Hermite nodes over a variant's deviation in a language
NODES = 7
# the deviations' spread is chosen by the marginal likelihood among these multiples of the first fit's (whose
# Laplace variance is too small for right/wrong outcomes, the more so the fewer items a variant has)
DEVIATION_FACTORS = (0.5, 1.0, 1.5, 2.0, 3.0)
# the variants' prior: a normal, or a grid of effects where the cells reject the normal (``_prior_family``)
NORMAL, GRID = "normal", "grid"
# that test: how many sets of outcomes it draws from the fitted normal, its level, and its draws' seed
NULL_STUDIES = 19
NULL_LEVEL = 0.05
NULL_SEED = 0
# the normal prior's (``_normal``) standard deviations: how many, and how far they reach (times the grid prior's,
# and at least NORMAL_FLOOR on the logit scale); its means: how many, and how far they reach (standard errors of
# the mean either side of the grid prior's)
NORMAL_SDS = 40
NORMAL_REACH = 4.0
NORMAL_FLOOR = 1.0
NORMAL_MEANS = 41
NORMAL_MEAN_REACH = 5.0
# EM rounds on the prior's weights, from uniform: the likelihood's mixture is approached, not reached, which
# keeps the weights from collapsing onto a few spikes that the variants' few items cannot tell apart
EM_ROUNDS = 1000
# a level of the prior is placed by the cells of the variants sharing it (weighted by how far their posteriors
# overlap) only where they got at least this many items right and this many wrong: the binomial rule of thumb
# (np and n(1 - p) of 5 or more) for a proportion that its counts place, rather than only bound (``_by_own_cells``)
PLACING_OUTCOMES = 5


@dataclass(frozen=True)
class Items:
    """One language's items as the fit found them: each item's logit offset (the language's intercept plus the
    item's effects) and that offset's posterior variance."""
    offset: np.ndarray
    variance: np.ndarray

    def slope(self) -> np.ndarray:
        """How far each item's uncertain effect flattens its probability curve (the probit approximation)."""
        return 1 / np.sqrt(1 + np.pi * self.variance / 8)


@dataclass(frozen=True)
class VariantPosterior:
    """The variants' posterior over the grid of shared effects, and what each grid point means for their scores.

    Axes: V variants, L languages, G grid points (the shared effect), Q nodes (the deviation in a language).
    """
    grid: np.ndarray  # G shared effects
    family: str  # the prior's: NORMAL or GRID (``_prior_family``)
    spread: float  # the standard deviation of a variant's deviation in a language
    deviations: np.ndarray  # Q: the nodes' deviations in a language
    weights: np.ndarray  # G: the prior's weights
    posterior: np.ndarray  # V x G
    conditional: np.ndarray  # V x L x G x Q: the deviation's node given the shared effect
    expected: np.ndarray  # V x L x G x Q: expected correct among the cells not evaluated
    variance: np.ndarray  # V x L x G x Q: its binomial variance
    own_cells: np.ndarray  # V: read by its own cells alone, its score its plain mean (``_by_own_cells``)
    known: np.ndarray  # V x L: correct among the evaluated cells
    missing: np.ndarray  # V x L: cells not evaluated
    items: np.ndarray  # L: each language's item count

    def draw_effects(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """One draw of each variant's (grid point, node) per language: V and V x L indices."""
        cumulative = np.cumsum(self.posterior, axis=1)
        point = np.minimum((cumulative < rng.random((len(cumulative), 1)) * cumulative[:, -1:]).sum(axis=1),
                           cumulative.shape[1] - 1)
        chosen = self.conditional[np.arange(len(point)), :, point]  # V x L x Q
        steps = np.cumsum(chosen, axis=2)
        node = np.minimum((steps < rng.random(steps.shape[:2] + (1,)) * steps[:, :, -1:]).sum(axis=2),
                          steps.shape[2] - 1)
        return point, node

    def draw_scores(self, draws: int, rng: np.random.Generator) -> np.ndarray:
        """draws x L x V of the variants' scores: evaluated outcomes kept, the rest drawn."""
        found = np.empty((draws, len(self.items), len(self.known)))
        variants = np.arange(len(self.known))[:, None]
        languages = np.arange(len(self.items))[None, :]
        for draw in range(draws):
            point, node = self.draw_effects(rng)
            at = (variants, languages, point[:, None], node)
            correct = self.expected[at] + np.sqrt(self.variance[at]) * rng.standard_normal(node.shape)
            correct = np.clip(correct, 0, self.missing)
            found[draw] = ((self.known + correct) / self.items[None, :]).T
        if self.own_cells.any():
            plain = self.known / (self.items[None, :] - self.missing)
            found[:, :, self.own_cells] = plain[self.own_cells].T
        return found


def _lattice(center: np.ndarray) -> np.ndarray:
    return np.linspace(float(np.min(center)) - REACH, float(np.max(center)) + REACH, LATTICE_POINTS)


@dataclass(frozen=True)
class _Language:
    """One language's evaluated cells, read on the lattice of effects: V variants, C cells, T lattice points."""
    rows: np.ndarray  # C: each cell's variant
    slope: np.ndarray  # C: how far its item's uncertain effect flattens the cell's curve (``Items.slope``)
    offset: np.ndarray  # C: its item's offset, held out from the variant (``budget_heldout``)
    pick: sparse.csr_matrix  # V x C: the variants' cells
    none_right: np.ndarray  # V x T: the cells' log-likelihood, had every one been wrong
    expected: np.ndarray  # V x T: expected correct among the cells not evaluated
    variance: np.ndarray  # V x T: its binomial variance

    def loglik(self, outcome: np.ndarray, lattice: np.ndarray) -> np.ndarray:
        """V x T: the log-likelihood of ``outcome`` (C, 0/1) on these cells. A right cell adds its logit to a wrong
        one's, and a cell's logit is linear in the effect: two sums a variant, so the same cells' other outcomes
        (``_prior_family``'s simulated ones) cost no evaluation of the curve."""
        right = self.slope * outcome
        return (self.none_right + (self.pick @ right)[:, None] * lattice[None, :]
                + (self.pick @ (right * self.offset))[:, None])


def _language(grid: np.ndarray, items: Items, cells: Items, lattice: np.ndarray) -> _Language:
    """One language's cells on the lattice.

    Each evaluated cell is read against ``cells``: its item's offset without the variant's own outcomes on the
    item (``budget_heldout``), which an item fitted on them would otherwise partly explain, making the variants
    look closer to each other than they are and the prior too narrow.
    """
    rows, cols = np.nonzero(~np.isnan(grid))
    slope = cells.slope()
    logits = slope[:, None] * (lattice[None, :] + cells.offset[:, None])
    pick = sparse.csr_matrix((np.ones(len(rows)), (rows, np.arange(len(rows)))), shape=(grid.shape[0], len(rows)))
    every = expit(items.slope()[:, None] * (lattice[None, :] + items.offset[:, None]))
    at_evaluated = every[cols]  # the evaluated cells' items, as the cells not evaluated see them
    expected = every.sum(axis=0)[None, :] - pick @ at_evaluated
    variance = (every * (1 - every)).sum(axis=0)[None, :] - pick @ (at_evaluated * (1 - at_evaluated))
    return _Language(rows, slope, cells.offset, pick, pick @ -np.logaddexp(0, logits), expected,
                     np.maximum(variance, 0.0))


def _at(table: np.ndarray, lattice: np.ndarray, points: np.ndarray) -> np.ndarray:
    """V x T ``table`` read at ``points`` (any shape) by linear interpolation on the lattice: V x points."""
    step = lattice[1] - lattice[0]
    position = np.clip((points - lattice[0]) / step, 0, len(lattice) - 1)
    low = np.minimum(np.floor(position).astype(int), len(lattice) - 2)
    share = position - low
    return table[:, low] * (1 - share) + table[:, low + 1] * share


def variant_posterior(grids: list[np.ndarray], items: list[Items], cells: list[Items], effects: np.ndarray,
                      deviation_variance: float, spread: float | None = None,
                      family: str | None = None) -> VariantPosterior:
    """The variants' posterior under the prior fitted to them: a normal, or a grid of effects where the data
    reject the normal (``_prior_family``).

    ``grids``: per language, variants x items of outcomes (NaN: not evaluated); ``items``: per language, the
    fitted items; ``cells``: per language, each evaluated cell's item offset held out from the variant
    (``budget_heldout.held_out``); ``effects``: V x L of the fit's variant effects (where the lattice is put);
    ``deviation_variance``: the fit's variance of a variant's deviation in a language (the candidates' scale);
    ``spread``: the deviations' standard deviation, and ``family``: the prior's (``NORMAL`` or ``GRID``), where
    already chosen (no candidates are compared, nothing is tested).
    """
    lattice = _lattice(effects)
    languages = [_language(grid, language_items, language_cells, lattice)
                 for grid, language_items, language_cells in zip(grids, items, cells)]
    observed = [language.loglik(grid[~np.isnan(grid)], lattice) for grid, language in zip(grids, languages)]
    fitted = np.sqrt(max(deviation_variance, 0.0))
    candidates = [0.0] if len(grids) == 1 else [spread] if spread is not None else [fitted * factor for factor
                                                                                    in DEVIATION_FACTORS]
    best = max((_mixed(observed, lattice, spread) for spread in candidates), key=lambda found: found.loglik)
    normal = None if family == GRID else _normal(best, lattice)
    family = family or _prior_family(best, normal, languages, lattice)
    chosen, nodes, by_language = best.spread, best.nodes, best.by_language
    if family == GRID:
        weights = best.weights
        posterior = _held_out_posterior(by_language.sum(axis=1), weights)
    else:
        weights = normal.weights
        posterior = normal.posterior(best.likelihood, lattice)
    points = lattice[:, None] + chosen * nodes[None, :]
    evaluated = [~np.isnan(grid) for grid in grids]
    known = np.stack([np.where(mask, grid, 0.0).sum(axis=1) for grid, mask in zip(grids, evaluated)], axis=1)
    missing = np.stack([(~mask).sum(axis=1) for mask in evaluated], axis=1).astype(float)
    items = np.array([grid.shape[1] for grid in grids], dtype=float)
    return VariantPosterior(
        grid=lattice, family=family, spread=chosen, deviations=chosen * nodes, weights=weights, posterior=posterior,
        own_cells=_by_own_cells(posterior, known, items[None, :] - missing),
        conditional=np.exp(best.cells - by_language[..., None]),
        expected=np.stack([_at(language.expected, lattice, points) for language in languages], axis=1),
        variance=np.stack([_at(language.variance, lattice, points) for language in languages], axis=1),
        known=known, missing=missing, items=items)


@dataclass(frozen=True)
class _Mixed:
    """The grid prior fitted at one spread of the variants' deviations in a language."""
    spread: float
    nodes: np.ndarray  # Q standard nodes
    cells: np.ndarray  # V x L x G x Q: log-likelihood plus the node's log-weight
    by_language: np.ndarray  # V x L x G: the deviation integrated out
    likelihood: np.ndarray  # V x G: every language's, each variant's row scaled by exp(-top)
    top: np.ndarray  # V: the scale
    weights: np.ndarray  # G
    loglik: float  # the marginal log-likelihood of every variant's cells

    def loglik_under(self, weights: np.ndarray) -> float:
        """The marginal log-likelihood of every variant's cells under another prior's ``weights``."""
        return float(np.sum(np.log(np.maximum(self.likelihood @ weights, 1e-300)) + self.top))


def _mixed(logliks: list[np.ndarray], lattice: np.ndarray, spread: float) -> _Mixed:
    """The grid prior's weights with the deviations' spread given, and the marginal likelihood it reaches;
    ``logliks``: per language, V x T of the cells' log-likelihood on the lattice."""
    nodes, node_weights = np.polynomial.hermite_e.hermegauss(NODES) if spread > 0 else (np.zeros(1), np.ones(1))
    points = lattice[:, None] + spread * nodes[None, :]  # G x Q (the grid is the lattice)
    cells = np.stack([_at(loglik, lattice, points) for loglik in logliks], axis=1) + np.log(
        node_weights / node_weights.sum())
    by_language = logsumexp(cells, axis=3)
    marginal = by_language.sum(axis=1)  # V x G
    top = marginal.max(axis=1)
    likelihood = np.exp(marginal - top[:, None])
    weights = _mixture(likelihood)
    loglik = float(np.sum(np.log(likelihood @ weights) + top))
    return _Mixed(spread, nodes, cells, by_language, likelihood, top, weights, loglik)


@dataclass(frozen=True)
class _Normal:
    """A normal prior of the shared effects on the lattice, its mean and standard deviation integrated over what
    the cells say of them: the candidate (mean, standard deviation) pairs, the posterior probability of each, and
    the weights their mixture puts on the lattice."""
    means: np.ndarray  # K
    sds: np.ndarray  # K
    chance: np.ndarray  # K: each pair's posterior probability (a flat prior over both)
    weights: np.ndarray  # G

    def posterior(self, likelihood: np.ndarray, lattice: np.ndarray) -> np.ndarray:
        """V x G: each variant's posterior, from ``likelihood`` (V x G, its cells' on the lattice): its posterior
        under each (mean, standard deviation) pair, mixed by the pairs' probabilities as every variant's cells
        give them (``chance``).

        Read against the mixed prior (``weights``) instead, a variant's own cells choose the pair a second time,
        after they helped choose it in ``chance``: a variant far from the others takes the wide pairs and is hardly
        shrunk, and the variants come out more spread than they are (bench/RESULTS.md: the shared-items scenario's
        spread, 5% and 95% quantiles and worst variant, whose intervals covered 95-98%)."""
        table = _normal_table(self.means, self.sds, lattice)
        evidence = np.maximum(likelihood @ table.T, 1e-300)  # V x K: each variant's cells under each pair
        mixed = likelihood * ((self.chance[None, :] / evidence) @ table)
        return mixed / mixed.sum(axis=1, keepdims=True)

    def draw(self, count: int, rng: np.random.Generator) -> np.ndarray:
        """``count`` shared effects drawn from the prior: one pair drawn for all of them."""
        k = rng.choice(len(self.sds), p=self.chance)
        return self.means[k] + self.sds[k] * rng.standard_normal(count)


def _normal(mixed: _Mixed, lattice: np.ndarray) -> _Normal:
    """The normal prior with its mean and standard deviation integrated out, under a flat prior over both, on a
    grid of pairs: ``NORMAL_SDS`` standard deviations from half the lattice's step to ``NORMAL_REACH`` times the
    grid prior's (at least ``NORMAL_FLOOR``), by ``NORMAL_MEANS`` means within ``NORMAL_MEAN_REACH`` standard
    errors of the grid prior's mean. A plug-in of the most likely pair shrinks every variant by as much as a few
    variants that happen to look alike allow: with 40 variants through 30 items each, the most likely standard
    deviation was a third of the truth's in some studies, and the spread of the variants came out 12 points short
    (bench/RESULTS.md). One product of the likelihoods with the pairs' weights gives every pair's likelihood."""
    step = float(lattice[1] - lattice[0])
    grid_mean = float(mixed.weights @ lattice)
    grid_sd = float(np.sqrt(mixed.weights @ (lattice - grid_mean) ** 2))
    posterior = mixed.likelihood * mixed.weights[None, :]
    posterior /= np.maximum(posterior.sum(axis=1, keepdims=True), 1e-300)
    within = float(np.mean(posterior @ lattice ** 2 - (posterior @ lattice) ** 2))  # a variant's own uncertainty
    error = np.sqrt((grid_sd ** 2 + within) / len(posterior))  # of the mean
    means, sds = np.meshgrid(grid_mean + NORMAL_MEAN_REACH * error * np.linspace(-1, 1, NORMAL_MEANS),
                             np.linspace(step / 2, max(NORMAL_REACH * grid_sd, NORMAL_FLOOR), NORMAL_SDS))
    means, sds = np.clip(means.ravel(), lattice[0], lattice[-1]), sds.ravel()
    table = _normal_table(means, sds, lattice)
    logliks = np.log(np.maximum(mixed.likelihood @ table.T, 1e-300)).sum(axis=0)
    chance = np.exp(logliks - logliks.max())
    chance /= chance.sum()
    return _Normal(means, sds, chance, chance @ table)


def _normal_table(means: np.ndarray, sds: np.ndarray, lattice: np.ndarray) -> np.ndarray:
    """K x G: each (mean, standard deviation) pair's normal on the lattice, as weights."""
    return _normalised(-0.5 * ((lattice[None, :] - means[:, None]) / sds[:, None]) ** 2)


def _prior_family(mixed: _Mixed, normal: _Normal, languages: list[_Language], lattice: np.ndarray) -> str:
    """``GRID`` where the variants' cells reject ``normal``, the normal prior of their shared effects fitted to them
    (``_normal``), else ``NORMAL``.

    The grid prior fits any shape, and pays for it in the tails: on a normal truth its quantiles of the variants
    jump between its atoms (PromptEval's budget, 100 variants x 10 languages at 2%: the 5% quantile's RMSE 2.17
    points under the grid prior against 1.76 under the normal over 100 studies, and every tail a fifth to a
    quarter closer; bench/RESULTS.md). A normal prior cannot hold a few catastrophic variants apart from the
    ordinary ones (it widens until they fit, and the ordinary ones are left unshrunk), which is what the grid prior
    is for.

    The test is a parametric bootstrap of how much more likely the grid prior makes the cells than the normal
    does: ``NULL_STUDIES`` sets of the same cells' outcomes drawn from the fitted normal (each variant's shared
    effect from it, its deviation in each language from the fitted spread), each fitted both ways. The normal is
    rejected at ``NULL_LEVEL``: where the observed gain is above all of theirs. The draws are seeded, so the same
    cells always choose the same prior. Where the cells are too few for the test to see a few catastrophic
    variants, the caller gives the family (``budget_estimate.prior_family``)."""
    gain = mixed.loglik - mixed.loglik_under(normal.weights)
    rng = np.random.default_rng(NULL_SEED)
    count = len(mixed.top)
    above = 0
    for _ in range(NULL_STUDIES):
        shared = normal.draw(count, rng)
        logliks = []
        for language in languages:
            effect = (shared + mixed.spread * rng.standard_normal(count))[language.rows]
            right = rng.random(len(effect)) < expit(language.slope * (effect + language.offset))
            logliks.append(language.loglik(right.astype(float), lattice))
        simulated = _mixed(logliks, lattice, mixed.spread)
        above += simulated.loglik - simulated.loglik_under(_normal(simulated, lattice).weights) >= gain
    return GRID if (above + 1) / (NULL_STUDIES + 1) <= NULL_LEVEL else NORMAL


def _mixture(likelihood: np.ndarray) -> np.ndarray:
    """The prior's weights over the grid: ``EM_ROUNDS`` of EM from uniform on the variants x grid likelihoods
    (each row scaled by a constant of its own, which EM does not see)."""
    weights = np.full(likelihood.shape[1], 1 / likelihood.shape[1])
    for _ in range(EM_ROUNDS):
        weights = weights * (likelihood / (likelihood @ weights)[:, None]).mean(axis=0)
    return weights


def _held_out_posterior(loglik: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """V x G: each variant's posterior under the prior fitted without it.

    The grid prior's weights are, at EM's fixed point, the mean of the variants' posteriors, so a variant far from
    the others puts a mass of its own where only its own cells point (a variant that got all of its 15 items right
    gets an atom near 100%), and its posterior then keeps it there: the lucky one among 50 ordinary variants
    is taken for a perfect one, and so are the simulated studies drawn from the fit (the heavy-tailed scenario's
    best variant at 5%: 4.5 points too high and covered 75% before; with this and the calibration's two worlds,
    3.0 and 88%, bench/RESULTS.md). Each variant is read instead against the weights with its own posterior
    share taken out (one step of the fixed point: V w - p_v over V - 1), so a level is a variant's own only where
    other variants share it; a few catastrophic variants still support each other's.
    """
    count = len(loglik)
    full = _normalised(loglik + np.log(np.maximum(weights, 1e-300)))
    if count < 2:
        return full
    without = np.maximum(count * weights[None, :] - full, 0.0) / (count - 1)
    return _normalised(loglik + np.log(np.maximum(without, 1e-300)))


def _by_own_cells(posterior: np.ndarray, known: np.ndarray, evaluated: np.ndarray) -> np.ndarray:
    """V: the variants read by their own cells alone (their score: their plain mean), not by the prior.

    A variant whose evaluated cells are all wrong (or all right) has a likelihood flat over every effect below
    (above) some level: its cells bound its score and do not place it, and its posterior rests wherever the prior
    learned from the other variants puts its mass there. That is information where the variants sharing its level
    (each counted by the overlap of its posterior with the variant's, the Bhattacharyya coefficient) got
    ``PLACING_OUTCOMES`` or more items right and as many wrong, which place a rate: a variant that got all of its
    15 items right among ordinary variants at 75% is read down to their level, rightly (hundreds of their
    outcomes place it). Where they got fewer, their cells only bound the level too, and the prior's level is an
    artefact of the few outcomes behind it: three catastrophic variants with 0, 0 and 1 of 15 right pool at one
    in 45, about 2%, so the two with none right were read at about 2% where a truth of 0.1% (which gives one or
    more right in 45 one time in 23) is as consistent with their cells (bench/RESULTS.md: the worst of 50
    variants under heavy tails, put at 1.5% against a truth of 0-0.3% in each of the 8 of 100 studies where one
    catastrophic variant got one item right). The model has nothing there that the cells do not: such a variant
    is its plain mean. The studies simulated from the fit (``budget_estimate.simulated_study``) still draw it from
    its posterior: drawing it from its own cells' likelihood (a flat prior) instead made the heavy-tailed q05
    worse (RMSE 5.91 against 5.48 on the same 100 studies, bench/RESULTS.md).
    ``known``, ``evaluated``: V x L, the items right and evaluated.
    """
    right, total = known.sum(axis=1), evaluated.sum(axis=1)
    edge = ((right == 0) | (right == total)) & (evaluated > 0).all(axis=1)
    if not edge.any():
        return edge
    root = np.sqrt(posterior)
    overlap = root @ root[edge].T  # V x edge variants
    overlap[edge, np.arange(edge.sum())] = 0.0  # not its own cells
    placed = np.minimum(right @ overlap, (total - right) @ overlap) >= PLACING_OUTCOMES
    found = np.zeros(len(edge), dtype=bool)
    found[np.flatnonzero(edge)[~placed]] = True
    return found


def _normalised(logs: np.ndarray) -> np.ndarray:
    """Rows of log-weights as probabilities."""
    return np.exp(logs - logsumexp(logs, axis=1, keepdims=True))
