"""Does a corpus statistic's planned MDE hold? chrF and BLEU planned from a pilot, then the analysis's own test at it.

    python bench/corpus_power_check.py                   # the designs below, 400 simulated studies each
    python bench/corpus_power_check.py --trials 100 --only chrf
    python bench/corpus_power_check.py --trials 1000 --design bleu 100 1000 1     # one design, more studies

chrF and BLEU are corpus statistics: each is computed from n-gram counts summed over the items, not a mean of
per-item scores. `plan` plans them as it plans a mean (``significance.difference_spread``): the standard error of a
pilot's resampled difference times the square root of its items is taken as a per-item spread ``sd``, and ``n``
items are given the standard error ``sd / sqrt(n)`` (``power.graded_mde``). Nothing in that says a corpus
statistic's standard error shrinks as ``1 / sqrt(n)``, from a pilot of 40 items to a study of 1,000, nor that its
difference at ``n`` items is the population's (a ratio of sums is biased at small ``n``). This simulates it, with
the metrics' own per-item statistics (``babeleval.score.metrics``: sacrebleu's counts) and the plan's own code:

1. a population of ``--pool`` synthetic translation items: a reference of 4 + Poisson(14) words drawn from a Zipf
   vocabulary of random letter strings, and per item a difficulty ``s ~ N(0, 1)``; a system at logit level ``q``
   gets each word wrong with probability ``sigmoid(q + s)`` (dropped, replaced by a near miss, its last letter
   changed, or replaced by another word, a third each), each side with its own draws, so that the two sides agree on
   which items are hard and differ on the words. Side b is at ``logit(0.3)``; side a at levels from two steps above
   it down in steps of ``--step``, each level's per-item statistics computed once over the population. A true corpus difference ``d``
   between a and b (the metric over the whole population, a's side a mixture of two adjacent levels item by item)
   is met exactly;
2. a pilot of ``pilot`` items drawn from the population with no true difference, and the MDE that `plan` computes
   from it for ``n`` items at the analysis's alpha (0.05, one test) and resamples (``--samples``, the analysis's
   default 1,000);
3. a study of ``n`` fresh items at a true difference of that MDE, tested by the analysis's paired bootstrap
   (``significance.paired_bootstrap``, sacrebleu's procedure, at that alpha and those resamples).

It prints the share of studies whose test finds the difference (the power: 80% +- 3 points where the plan holds),
the median planned MDE, the median standard error the plan extrapolated from its pilot against the one the studies
showed (the standard deviation of each study's observed difference less its planned one), and the mean of that
residual: a corpus statistic's bias at ``n`` items, in points (``--bias-draws`` measures it more closely, drawing
items at the median MDE without a test). The loop is ``graded_power_check.planned_power``'s.
"""

from __future__ import annotations

import argparse
import string
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "workflow"))
from graded_power_check import planned_power  # noqa: E402
from babeleval.analysis.bootstrap import ItemData  # noqa: E402
from babeleval.score.metrics import get_metric  # noqa: E402

# (metric, pilot items, study items, Holm family size): small, middling and large pilots, a bundled sample's
# language (400) and a FLORES devtest language (1,012 items; 1,000 here); a family of 5 is the largest the default
# 1,000 resamples plan at alpha 0.05 (``power.resamples_needed``)
DESIGNS = [("chrf", 40, 400, 1), ("chrf", 100, 1000, 1), ("chrf", 200, 1000, 1), ("chrf", 100, 1000, 5),
           ("bleu", 40, 400, 1), ("bleu", 100, 1000, 1), ("bleu", 200, 1000, 1), ("bleu", 100, 1000, 5)]
BASE_ERROR = 0.3  # side b's share of words wrong on an item of middling difficulty
# side a's first level this many steps worse than side b: a finite population's two sides at the same level differ
# a little by chance, and a difference of 0 (the pilot's) must lie between two levels
START = 2


def _logit(p: float) -> float:
    return float(np.log(p / (1 - p)))


class Population:
    """A fixed population of translation items, each side's per-item sufficient statistics at any level."""

    def __init__(self, metric: str, size: int, step: float, seed: int):
        self.metric, self.step = get_metric(metric), step
        rng = np.random.default_rng(seed)
        vocabulary = sorted({"".join(rng.choice(list(string.ascii_lowercase), rng.integers(2, 10)))
                             for _ in range(6000)})
        zipf = 1 / np.arange(2, len(vocabulary) + 2)
        lengths = 4 + rng.poisson(14, size)
        self.references = [[vocabulary[w] for w in rng.choice(len(vocabulary), k, p=zipf / zipf.sum())]
                           for k in lengths]
        self.difficulty = rng.normal(0, 1, size)
        self.draws = {side: [(rng.uniform(size=k), rng.integers(0, 3, k), rng.choice(vocabulary, k),
                              rng.choice(list(string.ascii_lowercase), k)) for k in lengths] for side in "ab"}
        self.b, self.from_sums = self._statistics("b", _logit(BASE_ERROR))
        self.b_score = self.from_sums(self.b.sum(0))
        self.levels: list[np.ndarray] = []  # side a's statistics at logit(BASE_ERROR) + (START - k) * step
        self.sums: list[np.ndarray] = []  # and their sums over the population
        self.pool = np.arange(size)

    def _statistics(self, side: str, level: float):
        records = []
        for i, (reference, (u, kind, other, letter)) in enumerate(zip(self.references, self.draws[side])):
            wrong = u < 1 / (1 + np.exp(-(level + self.difficulty[i])))
            words = [w if not bad else (None, w[:-1] + c if w[-1] != c else w[:-1] + "q", o)[k]
                     for w, bad, k, o, c in zip(reference, wrong, kind, other, letter)]
            records.append({"id": str(i), "prediction": " ".join(w for w in words if w is not None),
                            "gold": " ".join(reference)})
        statistics = self.metric.statistics(records)
        return np.asarray(statistics.rows, dtype=float), statistics.score

    def level(self, k: int) -> np.ndarray:
        while len(self.levels) <= k:
            self.levels.append(self._statistics("a", _logit(BASE_ERROR) + (START - len(self.levels)) * self.step)[0])
            self.sums.append(self.levels[-1].sum(0))
        return self.levels[k]

    def difference(self, k: int, weight: float) -> float:
        """The population's a - b with side a's items from level k + 1 at the share ``weight``, else from level k."""
        self.level(k + 1)
        return float(self.from_sums((1 - weight) * self.sums[k] + weight * self.sums[k + 1]) - self.b_score)

    def mixture(self, difference: float) -> tuple[int, float]:
        """The level and share of the next one whose population difference is ``difference``."""
        k = 0
        if self.difference(0, 0.0) > difference:
            raise ValueError(f"side a's first level is {self.difference(0, 0.0):.2f} points above side b: raise START")
        while self.difference(k, 1.0) < difference:
            k += 1
        low, high = 0.0, 1.0
        for _ in range(40):
            middle = (low + high) / 2
            low, high = (middle, high) if self.difference(k, middle) < difference else (low, middle)
        return k, (low + high) / 2

    def sides(self, rng: np.random.Generator, n: int, difference: float) -> tuple[ItemData, ItemData]:
        return self.draw(rng, n, *self.mixture(difference))

    def draw(self, rng: np.random.Generator, n: int, k: int, weight: float) -> tuple[ItemData, ItemData]:
        items = rng.choice(self.pool, n)
        a = np.where((rng.uniform(size=n) < weight)[:, None], self.level(k + 1)[items], self.level(k)[items])
        ids = [str(i) for i in range(n)]
        return (ItemData(self.metric.name, ids, a, from_sums=self.from_sums),
                ItemData(self.metric.name, ids, self.b[items], from_sums=self.from_sums))


def mean_bias(population: Population, n: int, difference: float, draws: int, seed: int) -> tuple[float, float]:
    """The mean of a - b on ``n`` items drawn at a population difference ``difference``, less that difference, and
    its standard error over ``draws`` draws: the statistic's own bias at ``n`` items, without a test's noise."""
    rng, mixture = np.random.default_rng(seed), population.mixture(difference)
    found = np.array([a.score() - b.score() for a, b in (population.draw(rng, n, *mixture) for _ in range(draws))])
    return float(found.mean() - difference), float(found.std(ddof=1) / np.sqrt(draws))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--samples", type=int, default=1000, help="resamples per test (the analysis's default 1000)")
    parser.add_argument("--pool", type=int, default=20000, help="items in the population")
    parser.add_argument("--step", type=float, default=0.05, help="logit step between side a's levels")
    parser.add_argument("--only", choices=["chrf", "bleu"], help="one metric's designs")
    parser.add_argument("--design", nargs=4, metavar=("METRIC", "PILOT", "ITEMS", "FAMILY"),
                        help="this design in place of the list (its seed: --seed)")
    parser.add_argument("--bias-draws", type=int, default=0, help="also the statistic's bias at each design's "
                        "median MDE, over this many draws of its items without a test (0: not measured)")
    args = parser.parse_args(argv)
    designs = DESIGNS if args.design is None else [(args.design[0], *map(int, args.design[1:]))]
    print(f"{'metric':>6} {'pilot':>6} {'items':>6} {'family':>6} {'MDE (median)':>13} {'power':>7} "
          f"{'SE planned':>11} {'SE simulated':>13} {'bias':>6} {'seconds':>8}")
    populations: dict[str, Population] = {}
    for k, (metric, pilot, n, family) in enumerate(designs):
        if args.only and metric != args.only:
            continue
        start = time.perf_counter()
        if metric not in populations:
            populations[metric] = Population(metric, args.pool, args.step, args.seed)
        row = planned_power(populations[metric].sides, n, family, pilot, args.trials, args.seed + k, args.samples)
        print(f"{metric:>6} {pilot:>6} {n:>6} {family:>6} {row['mde_median']:>13.2f} {row['power']:>7.1%} "
              f"{row['se_planned']:>11.3f} {row['se_simulated']:>13.3f} {row['bias']:>6.2f} "
              f"{time.perf_counter() - start:>8.0f}", flush=True)
        if args.bias_draws:
            bias, error = mean_bias(populations[metric], n, row["mde_median"], args.bias_draws, args.seed + k)
            print(f"{'':>6} bias of a - b at {n} items and a difference of {row['mde_median']:.2f}, "
                  f"{args.bias_draws} draws: {bias:+.3f} +- {error:.3f}", flush=True)
    print(f"{args.trials} studies per design, {args.samples} resamples per test, alpha 0.05 / family size; "
          f"a population of {args.pool} items; points on the metric's 0-100 scale")
    return 0


if __name__ == "__main__":
    sys.exit(main())
