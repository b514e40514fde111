"""`python -m babeleval estimate` on a run's per-item outputs: the estimate, `--validate`, the study params.yaml
configures (leftovers of another study named and ignored), the flags, and a user's mistakes."""

import copy
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import yaml

from babeleval.score import outcomes
from conftest import ROOT, TINY_GRID

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


def run(root, *args, base="fs", on_disk=True):
    return subprocess.run([sys.executable, "-m", "babeleval", "estimate", "--model", "tiny", "--task", "belebele",
                           "--base", base, "--root", str(root), "--draws", "50", "--replicates", "4",
                           *(["--all-on-disk"] if on_disk else []), *args],
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


@pytest.mark.workflow
def test_the_metric_is_the_recorded_headline_unless_named(tmp_path):
    """By default the headline the scores files record is modelled (acc_norm: each cell's `correct_norm`, here right
    more often than `correct`); --metric names another."""
    write_run(tmp_path, headline="acc_norm")
    means = {}
    for metric, named in (("acc_norm", []), ("acc", ["--metric", "acc"])):
        proc = run(tmp_path, "--parallel", "--languages", "eng_Latn", *named, "--csv", str(tmp_path / f"{metric}.csv"))
        assert proc.returncode == 0 and f"; {metric}; " in proc.stdout, proc.stderr
        table = pd.read_csv(tmp_path / f"{metric}.csv").set_index("statistic")
        means[metric] = table.loc["mean", "estimate"]
    assert means["acc_norm"] > means["acc"] + 0.15, means


AXES = {"enum": ["upper", "num"], "sep": ["colon", "dash"]}


def write_params(root):
    """A params.yaml whose Belebele expands formatspread to four variants (two axes of two settings)."""
    params = yaml.safe_load(TINY_GRID.read_text(encoding="utf-8"))
    params["tasks"] = {"belebele": copy.deepcopy(params["tasks"]["belebele"])}
    params["tasks"]["belebele"].update(languages=LANGUAGES, templates=["paper"],
                                       variants={"formatspread": {"sample": "all", "axes": AXES}})
    (root / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    (root / "data").mkdir(exist_ok=True)
    (root / "data/samples").symlink_to(ROOT / "data/samples")
    (root / "prompts").symlink_to(ROOT / "prompts")


@pytest.mark.workflow
def test_the_family_params_yaml_configures_is_read_and_leftovers_are_named(tmp_path):
    """Outputs of four variants params.yaml's family expands to, and of two left from an earlier study: only the
    four are fitted, and the two are named as ignored."""
    write_params(tmp_path)
    family = ["formatspread", "formatspread~enum=num", "formatspread~enum=num~sep=dash", "formatspread~sep=dash"]
    leftovers = ["formatspread~order=p1", "formatspread~order=p2"]
    write_run(tmp_path, variants=family + leftovers)
    proc = run(tmp_path, "--parallel", "--languages", "eng_Latn", "--csv", str(tmp_path / "out.csv"),
               base="formatspread", on_disk=False)
    assert proc.returncode == 0, proc.stderr
    assert "formatspread: 4 variants" in proc.stdout
    assert f"ignored 2 variant(s) of formatspread on disk that params.yaml's family does not expand to: " \
           f"{', '.join(leftovers)}" in proc.stderr
    proc = run(tmp_path, "--parallel", "--languages", "eng_Latn", base="formatspread")  # --all-on-disk: all six
    assert proc.returncode == 0 and "formatspread: 6 variants" in proc.stdout, proc.stderr


def test_an_estimate_with_few_items_a_variant_is_flagged_in_the_csv_and_on_stderr(tmp_path):
    """10 variants x 60 items at 10%: 6 items a variant, below what the method supports."""
    write_run(tmp_path)
    proc = run(tmp_path, "--parallel", "--languages", "eng_Latn", "hin_Deva", "--validate", "--fraction", "0.1",
               "--csv", str(tmp_path / "out.csv"))
    assert proc.returncode == 0, proc.stderr
    table = pd.read_csv(tmp_path / "out.csv", keep_default_na=False)
    assert (table["items_per_variant"] == 6).all()
    tails = table["statistic"].isin(["q05", "q95", "best", "worst", "spread"])
    assert table[~tails]["check"].str.startswith("few items per variant (6 < 10)").all()
    assert set(table[~tails]["method"]) <= {"model", "plain mean"}
    assert (table[tails]["method"] == "refused").all() and (table[tails]["estimate"] == "").all()
    assert (table[tails]["covered"] == "").all()  # a refused row is neither covered nor missed
    assert "check: eng_Latn mean: few items per variant (6 < 10)" in proc.stderr
    assert "check: eng_Latn best: refused: 6 items a variant cannot place a variant in the tails (fewer than 10): " \
           "a budget of 17% of the grid gives 10" in proc.stderr


@pytest.mark.parametrize("setup, args, message", [
    (write_run, ["--metric", "chrf"], "metric chrf is not right or wrong per item"),
    (lambda root: write_run(root, correct=False), [], "no right/wrong `correct`"),
    (lambda root: write_run(root, items=ITEMS[:30]), ["--validate", "--fraction", "0.1"], "lacks 300 of its 600"),
    (lambda root: None, [], "no scores files of fs or its variants"),
    (lambda root: None, ["--metric", "acc"], "no per-item outputs of fs"),
    (write_run, ["--params", "nowhere.yaml"], "nowhere.yaml does not exist: the estimate reads the variants its "
                                              "family expands to; give --params, or --all-on-disk"),
    (lambda root: write_run(root, headline=None), [], "record no headline metric: name the metric the estimate "
                                                        "models with --metric"),
    (write_run, ["--languages", "fra_Latn"], "no outputs of fs in fra_Latn"),
    # the settings are checked before anything is read: no run at all, and the setting is what is named
    (lambda root: None, ["--replicates", "1"], "--replicates 1: simulated studies behind each interval, at least 2 "
                                               "(the choice between the model and the plain mean"),
    (lambda root: None, ["--confidence", "1"], "--confidence 1.0: a share, above 0 and below 1"),
    (lambda root: None, ["--draws", "0"], "--draws 0: posterior draws behind each estimate, at least 1"),
])
def test_a_users_mistake_is_named_and_exits_nonzero(tmp_path, setup, args, message):
    setup(tmp_path)
    proc = run(tmp_path, *args, on_disk="--params" not in args)
    assert proc.returncode == 1 and message in proc.stderr, proc.stderr
