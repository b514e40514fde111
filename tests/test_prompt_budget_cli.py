"""`python -m babeleval estimate` on a run's per-item outputs: the estimate, `--validate`, and a user's mistakes."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from babeleval.score import outcomes
from conftest import ROOT

VARIANTS = ["fs", *(f"fs~order=p{k}" for k in range(1, 10))]
LANGUAGES = ["eng_Latn", "hin_Deva"]
ITEMS = [f"q{k:03d}" for k in range(60)]


def write_run(root, correct=True, variants=VARIANTS, items=ITEMS, headline="acc"):
    """A run's outcome tables (every variant on ``items``), its scores files (their resolved record's metrics, the
    headline named) and the task's prepared items, as the workflow writes them."""
    rng, norm_rng = np.random.default_rng(0), np.random.default_rng(1)  # `correct` drawn alone: the same with or without `correct_norm`
    for language in LANGUAGES:
        prepared = root / "data/prepared/belebele" / f"{language}.jsonl"
        prepared.parent.mkdir(parents=True, exist_ok=True)
        prepared.write_text("".join(json.dumps({"id": i}) + "\n" for i in ITEMS))
        for variant in variants:
            metrics = [{"name": name, "headline": name == headline} for name in ("acc", "acc_norm")]
            scores = root / "results/scores/tiny/belebele" / language / f"{variant}.json"
            scores.parent.mkdir(parents=True, exist_ok=True)
            scores.write_text(json.dumps({"model": "tiny", "task": "belebele", "language": language,
                                          "template": variant, "provenance": {"spec": {"metrics": metrics}}}))
            outcomes.write(root / "results/outcomes/tiny/belebele" / language / f"{variant}.parquet",
                           [{"id": i, "correct": bool(rng.random() < 0.5) if correct else None,
                             "correct_norm": bool(norm_rng.random() < 0.8), "f1": 0.5} for i in items])


def run(root, *args):
    return subprocess.run([sys.executable, "-m", "babeleval", "estimate", "--model", "tiny", "--task", "belebele",
                           "--base", "fs", "--root", str(root), "--draws", "50", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)


def test_validate_prints_the_estimate_from_a_share_beside_the_exhaustive_values(tmp_path):
    write_run(tmp_path)
    proc = run(tmp_path, "--parallel", "--validate", "--fraction", "0.2", "--csv", str(tmp_path / "out.csv"))
    assert proc.returncode == 0, proc.stderr
    assert "10 variants; acc; 90% intervals" in proc.stdout
    table = pd.read_csv(tmp_path / "out.csv")
    assert set(table["language"]) == set(LANGUAGES) and len(table) == 2 * 9
    assert (table["cells"] == 120).all() and (table["grid_cells"] == 600).all()
    assert {"exhaustive", "error", "covered"} <= set(table.columns)
    assert table.loc[table["statistic"] == "mean", "error"].abs().max() < 0.1


def test_a_run_with_every_cell_gives_the_exhaustive_values(tmp_path):
    write_run(tmp_path)
    proc = run(tmp_path, "--parallel", "--languages", "hin_Deva", "--csv", str(tmp_path / "out.csv"))
    assert proc.returncode == 0, proc.stderr
    table = pd.read_csv(tmp_path / "out.csv")
    assert set(table["language"]) == {"hin_Deva"}
    assert (table["low"] == table["high"]).all() and (table["fraction"] == 1).all()


def test_the_metric_is_the_recorded_headline_unless_named_and_the_variance_method_is_chosen(tmp_path):
    """By default the headline the scores files record is modelled (acc_norm: each cell's `correct_norm`, here right
    more often than `correct`); --metric names another; --variant-variance picks the method."""
    write_run(tmp_path, headline="acc_norm")
    means = {}
    for metric, named in (("acc_norm", []), ("acc", ["--metric", "acc"])):
        proc = run(tmp_path, "--parallel", "--languages", "eng_Latn", *named, "--variant-variance", "laplace",
                   "--csv", str(tmp_path / f"{metric}.csv"))
        assert proc.returncode == 0 and f"; {metric}; " in proc.stdout, proc.stderr
        table = pd.read_csv(tmp_path / f"{metric}.csv").set_index("statistic")
        means[metric] = table.loc["mean", "estimate"]
    assert means["acc_norm"] > means["acc"] + 0.15, means
    proc = run(tmp_path, "--variant-variance", "bayes")
    assert proc.returncode == 2 and "invalid choice: 'bayes'" in proc.stderr


@pytest.mark.parametrize("setup, args, message", [
    (write_run, ["--metric", "chrf"], "metric chrf is not right or wrong per item"),
    (lambda root: write_run(root, correct=False), [], "no right/wrong `correct`"),
    (lambda root: write_run(root, items=ITEMS[:30]), ["--validate", "--fraction", "0.1"], "lacks 300 of its 600"),
    (lambda root: None, [], "no scores files of fs or its variants"),
    (lambda root: None, ["--metric", "acc"], "no per-item outputs of fs"),
    (lambda root: write_run(root, headline=None), [], "record no headline metric: name the metric the estimate "
                                                        "models with --metric"),
    (write_run, ["--languages", "fra_Latn"], "no outputs of fs in fra_Latn"),
])
def test_a_users_mistake_is_named_and_exits_nonzero(tmp_path, setup, args, message):
    setup(tmp_path)
    proc = run(tmp_path, *args)
    assert proc.returncode == 1 and message in proc.stderr, proc.stderr
