"""bench/corpus_power_check.py: its population meets a corpus chrF or BLEU difference, and the loop it shares with
bench/graded_power_check.py plans and tests a small design."""

import sys

import numpy as np
import pytest

from conftest import ROOT

pytestmark = pytest.mark.bench

sys.path.insert(0, str(ROOT / "bench"))
import corpus_power_check as check  # noqa: E402


@pytest.mark.parametrize("metric", ["chrf", "bleu"])
def test_the_population_meets_a_corpus_difference_and_the_shared_loop_plans_and_tests(metric):
    population = check.Population(metric, 300, 0.1, seed=0)
    for difference in (0.0, 0.7, 3.0):
        k, weight = population.mixture(difference)
        # BLEU reads the hypotheses' length as a whole number: a mixture's lands within a hundredth of a point
        assert population.difference(k, weight) == pytest.approx(difference, abs=0.01)
    a, b = population.draw(np.random.default_rng(0), 50, 0, 0.0)
    assert a.values.shape == b.values.shape == (50, population.b.shape[1]) and a.score() > 0 and b.score() > 0
    row = check.planned_power(population.sides, 200, 1, 40, trials=3, seed=0, samples=200)
    assert 0 <= row["power"] <= 1 and row["mde_median"] > 0 and row["se_planned"] > 0

