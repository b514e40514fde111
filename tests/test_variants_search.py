"""Budgeted Thompson-sampling search over variants: the budget holds, the extremes are found, runs repeat."""

import numpy as np
import pytest

from babeleval.errors import BabelevalError
from babeleval.search import thompson_search

# true accuracy of each variant; per-item outcomes fixed by the item index, so a variant is one item table
TRUE = {f"v{i}": acc for i, acc in enumerate([0.30, 0.45, 0.5, 0.5, 0.55, 0.6, 0.62, 0.9])}
N_ITEMS = 400


def table():
    rng = np.random.default_rng(7)
    return {name: rng.random(N_ITEMS) < acc for name, acc in TRUE.items()}


def run(budget, batch=10, seed=3):
    outcomes = table()
    calls = []

    def evaluate(name, indices):
        calls.append((name, list(indices)))
        return [bool(outcomes[name][i]) for i in indices]

    return thompson_search(list(TRUE), N_ITEMS, evaluate, budget, batch, seed), calls


def test_budget_is_never_exceeded_and_items_are_shared():
    result, calls = run(budget=605, batch=10)
    assert result.spent == 605 == sum(len(i) for _, i in calls)
    # every variant walks the same item order: what each saw is a prefix of one order
    seen = {}
    for name, indices in calls:
        seen.setdefault(name, []).extend(indices)
    longest = max(seen.values(), key=len)
    assert all(order == longest[:len(order)] for order in seen.values())
    assert all(len(set(order)) == len(order) for order in seen.values())  # no item twice for one variant


def test_finds_the_extremes_and_reports_an_interval():
    summary = run(budget=1200)[0].summary()
    assert summary["best"]["variant"] == "v7" and summary["worst"]["variant"] == "v0"
    low, high = summary["interval"]
    assert low < 0.4 < 0.8 < high and summary["spread"] == pytest.approx(high - low)
    lo, hi = summary["best"]["credible_interval"]
    assert lo < summary["best"]["accuracy"] < hi
    # the search spends its budget on the extremes, not evenly
    items = {t["variant"]: t["items"] for t in summary["tried"]}
    middle = max(count for name, count in items.items() if name not in ("v0", "v7"))
    assert min(items["v0"], items["v7"]) > middle


def test_same_seed_same_search():
    assert run(budget=300)[1] == run(budget=300)[1]
    assert run(budget=300, seed=4)[1] != run(budget=300)[1]


def test_stops_when_every_item_of_every_variant_is_scored():
    result, _ = run(budget=10 ** 6, batch=50)
    assert result.spent == N_ITEMS * len(TRUE)


def test_bad_budget():
    with pytest.raises(BabelevalError, match="budget and batch"):
        thompson_search(["a"], 10, lambda n, i: [], 0, 1, 0)
