"""Budgeted Thompson-sampling search over variants: the budget holds, the extremes are found, runs repeat."""

import numpy as np
import pytest

from babeleval.core.errors import BabelevalError
from babeleval.cli.search import thompson_search

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
    assert summary["interval_credible"][0] < low and summary["interval_credible"][1] > high
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


def test_search_cli_runs_the_workflows_machinery(repo_root, tiny_model_dir, tmp_path, monkeypatch):
    """Render, answer with the tiny model and score as the workflow does; the summary holds the interval."""
    import json

    import yaml

    from babeleval.cli.search import main

    params = yaml.safe_load((repo_root / "examples/formatspread.yaml").read_text(encoding="utf-8"))
    params["models"] = {"tiny": {"backend": "hf", "model": str(tiny_model_dir), "device": "cpu", "batch_size": 8}}
    params["cache"] = {"enabled": False}  # nothing written into the repository
    params_file = tmp_path / "params.yaml"
    params_file.write_text(yaml.safe_dump(params, allow_unicode=True), encoding="utf-8")
    monkeypatch.chdir(repo_root)
    out = tmp_path / "search.json"
    assert main(["--params", str(params_file), "--model", "tiny", "--task", "belebele", "--language", "hin_Deva",
                 "--template", "formatspread", "--candidates", "6", "--budget", "40", "--batch", "8",
                 "--out", str(out)]) == 0
    summary = json.loads(out.read_text(encoding="utf-8"))
    assert summary["spent"] == 40 and summary["candidates"] == 6 and summary["items"] == 24
    assert summary["interval"][0] <= summary["interval"][1]
    assert sum(t["items"] for t in summary["tried"]) == 40
    assert summary["calls"]["requests"] == 40
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("search-")] == []  # scratch files removed
