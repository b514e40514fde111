"""A logistic model with random effects, fitted by penalised Newton steps (IRLS) and empirical Bayes.

The model is logit P(correct) = sum of one effect from each of several *groups* (a language's intercept, a
variant's effect, an item's effect, ...). Every group but the intercepts has a normal prior with a variance
of its own, estimated from the data (where the Laplace approximation of the marginal likelihood is highest:
a group's variance is then the mean of its effects' squares plus their posterior variances), so that the
data decide how far variants and items are shrunk. The result is the posterior mode and the Cholesky factor of the posterior precision, from which
``draw`` samples parameters for the predictive distribution of the cells not evaluated.

numpy and scipy only; the precision matrix is dense, so the cost grows as the cube of the parameter count.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg, sparse
from scipy.special import expit

# the intercepts' prior precision: practically flat, only keeps the Newton system positive definite
FLAT = 1e-6
# a group's variance never falls below this (a group without any effect would otherwise make EM stall at 0)
MIN_VARIANCE = 1e-4


@dataclass(frozen=True)
class Group:
    """One factor of the model: per observation the index of its effect, and whether the effects share a prior."""
    name: str
    index: np.ndarray  # int, one per observation
    size: int
    random: bool = True  # False: an unpenalised intercept


@dataclass(frozen=True)
class Fit:
    theta: np.ndarray  # posterior mode, the groups' effects one after another
    spans: dict[str, slice]  # where each group's effects sit in theta
    variances: dict[str, float]  # the prior variance estimated for each random group
    chol: np.ndarray  # lower Cholesky factor of the posterior precision at the mode

    def effects(self, name: str, theta: np.ndarray | None = None) -> np.ndarray:
        """A group's effects (rows of ``theta``: one parameter vector, or one column per draw)."""
        return (self.theta if theta is None else theta)[self.spans[name]]

    def covariance_root(self) -> np.ndarray:
        """W with W^T W the posterior covariance (the inverse of the precision L L^T): W = L^-1."""
        return _inverse_factor(self.chol)

    def draw(self, count: int, rng: np.random.Generator) -> np.ndarray:
        """``count`` parameter vectors (columns) from the Laplace approximation of the posterior."""
        noise = rng.standard_normal((len(self.theta), count))
        return self.theta[:, None] + linalg.solve_triangular(self.chol, noise, lower=True, trans="T")


def design_matrix(groups: list[Group], rows: int) -> sparse.csr_matrix:
    """Observations x parameters, one 1 per group in each row."""
    offsets = np.cumsum([0] + [g.size for g in groups])[:-1]
    columns = np.stack([g.index + start for g, start in zip(groups, offsets)], axis=1)
    data = np.ones(columns.size)
    indptr = np.arange(0, columns.size + 1, len(groups))
    return sparse.csr_matrix((data, columns.ravel(), indptr), shape=(rows, int(sum(g.size for g in groups))))


def _curvature(x: sparse.csr_matrix, theta: np.ndarray, precision: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The fitted probabilities at ``theta`` and the lower Cholesky factor of the penalised Hessian there."""
    p = expit(x @ theta)
    weighted = x.multiply((p * (1 - p))[:, None]).tocsr()
    return p, linalg.cholesky((x.T @ weighted).toarray() + np.diag(precision), lower=True)


def _newton(x: sparse.csr_matrix, y: np.ndarray, precision: np.ndarray, theta: np.ndarray,
            steps: int = 50) -> tuple[np.ndarray, np.ndarray]:
    """The penalised log-likelihood's mode from ``theta``, and the Cholesky factor of its Hessian there."""
    for _ in range(steps):
        p, chol = _curvature(x, theta, precision)
        step = linalg.cho_solve((chol, True), x.T @ (y - p) - precision * theta)
        theta = theta + step
        if np.max(np.abs(step)) < 1e-7:
            break
    return theta, _curvature(x, theta, precision)[1]


def _precision(size: int, spans: dict[str, slice], variances: dict[str, float]) -> np.ndarray:
    """The prior precision of every parameter: 1/variance of its group, nearly flat for intercepts."""
    precision = np.full(size, FLAT)
    for name, variance in variances.items():
        precision[spans[name]] = 1 / variance
    return precision


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


def _posterior_variances(chol: np.ndarray) -> np.ndarray:
    """The diagonal of the inverse of the precision L L^T: column sums of the squares of L^-1."""
    return np.sum(_inverse_factor(chol) ** 2, axis=0)


def _inverse_factor(chol: np.ndarray) -> np.ndarray:
    """L^-1 of the precision's lower Cholesky factor L: the posterior covariance is (L^-1)^T L^-1."""
    return linalg.solve_triangular(chol, np.eye(len(chol)), lower=True)


def fit(groups: list[Group], y: np.ndarray, rounds: int = 100, tolerance: float = 1e-4) -> Fit:
    """Posterior mode and prior variances of the model: Newton steps inside rounds of variance updates."""
    x = design_matrix(groups, len(y))
    starts = np.cumsum([0] + [g.size for g in groups]).tolist()
    spans = {g.name: slice(start, start + g.size) for g, start in zip(groups, starts)}
    variances = {g.name: 1.0 for g in groups if g.random}
    theta = np.zeros(x.shape[1])
    for _ in range(rounds):
        theta, chol = _newton(x, y, _precision(len(theta), spans, variances), theta)
        posterior_var = _posterior_variances(chol)
        updated = {name: _updated_variance(theta[spans[name]], posterior_var[spans[name]], variance)
                   for name, variance in variances.items()}
        change = max((abs(updated[n] - variances[n]) / variances[n] for n in variances), default=0.0)
        variances = updated
        if change < tolerance:
            break
    return at_variances(groups, y, variances, theta)


def at_variances(groups: list[Group], y: np.ndarray, variances: dict[str, float],
                 start: np.ndarray | None = None) -> Fit:
    """The posterior mode and its precision with the groups' prior variances given (from ``start``, if given)."""
    x = design_matrix(groups, len(y))
    firsts = np.cumsum([0] + [g.size for g in groups]).tolist()
    spans = {g.name: slice(first, first + g.size) for g, first in zip(groups, firsts)}
    theta, chol = _newton(x, y, _precision(x.shape[1], spans, variances),
                          np.zeros(x.shape[1]) if start is None else start)
    return Fit(theta=theta, spans=spans, variances=variances, chol=chol)
