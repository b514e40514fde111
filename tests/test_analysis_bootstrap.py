"""Bootstrap confidence intervals: against scipy and sacrebleu, seeded, and in the leaderboard."""

import csv
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis_data import HYPOTHESES_A, REFERENCES, translation_records, write_results
from babeleval.analysis import leaderboard as aggregate
from babeleval.analysis import bootstrap
from babeleval.score import metrics, translation_metrics
from babeleval.analysis.settings import AnalysisSettings


def sacrebleu_scorer(name):
    """sacrebleu's own metric with the settings ours uses (English references: BLEU tokenized with 13a)."""
    from sacrebleu.metrics import BLEU, CHRF

    return BLEU(tokenize=metrics.bleu_tokenize(REFERENCES)) if name == "bleu" else CHRF()


def acc_records(outcomes):
    return [{"id": f"i{k}", "correct": bool(v), "parsed": True} for k, v in enumerate(outcomes)]


def test_item_mean_bootstrap_agrees_with_scipy_percentile_bootstrap():
    rng = np.random.default_rng(7)
    outcomes = rng.random(200) < 0.62
    data = bootstrap.item_data("acc", acc_records(outcomes))
    low, high = bootstrap.confidence_interval(data, seed=1, n_samples=20000, confidence=0.95)
    ref = stats.bootstrap((outcomes.astype(float),), np.mean, n_resamples=20000, method="percentile",
                          confidence_level=0.95, random_state=2).confidence_interval
    assert low == pytest.approx(ref.low, abs=0.012)
    assert high == pytest.approx(ref.high, abs=0.012)
    assert low < outcomes.mean() < high


def test_interval_is_seeded_and_follows_the_level():
    recs = translation_records(HYPOTHESES_A)
    a = bootstrap.interval_for("chrf", recs, seed=5, n_samples=200)
    assert a == bootstrap.interval_for("chrf", recs, seed=5, n_samples=200)
    assert a != bootstrap.interval_for("chrf", recs, seed=6, n_samples=200)
    narrow = bootstrap.interval_for("chrf", recs, seed=5, n_samples=200, confidence=0.5)
    assert a[0] <= narrow[0] <= narrow[1] <= a[1]


def test_degenerate_cases():
    # a share of items gets the exact interval: 3/3 is not the zero-width [1, 1] a bootstrap would give
    low, high = bootstrap.interval_for("acc", acc_records([1, 1, 1]), seed=0)
    assert low < 0.3 and high == 1.0
    assert all(math.isnan(v) for v in bootstrap.interval_for("acc", [], seed=0))
    # a metric the records do not hold per item has no interval rather than a wrong one
    assert all(math.isnan(v) for v in bootstrap.interval_for("rouge", acc_records([1, 0]), seed=0))
    # parse_failure_rate is derived from `parsed`
    recs = [{"id": "a", "correct": False, "parsed": False}, {"id": "b", "correct": True, "parsed": True}]
    assert bootstrap.item_data("parse_failure_rate", recs).score() == 0.5
    with pytest.raises(ValueError, match="confidence"):
        bootstrap.interval_for("acc", recs, seed=0, confidence=95)


@pytest.mark.parametrize("name", ["bleu", "chrf"])
def test_corpus_metric_point_and_resamples_match_sacrebleu(name, monkeypatch):
    from sacrebleu.significance import _bootstrap_resample

    data = bootstrap.item_data(name, translation_records(HYPOTHESES_A))
    scorer = sacrebleu_scorer(name)
    assert data.score() == pytest.approx(scorer.corpus_score(HYPOTHESES_A, [REFERENCES]).score, abs=1e-9)

    # sacrebleu --confidence draws from default_rng(SACREBLEU_SEED): same seed, same resampled scores
    monkeypatch.setenv("SACREBLEU_SEED", "99")
    stats_ = scorer._extract_corpus_statistics(HYPOTHESES_A, [REFERENCES])
    _, theirs = _bootstrap_resample(stats_, scorer, n_samples=300)
    ours = data.resampled(bootstrap.resample_indices(data.n, 300, seed=99))
    np.testing.assert_allclose(ours, [s.score for s in theirs], rtol=0, atol=1e-9)


def test_leaderboard_gets_intervals_and_keeps_its_columns(tmp_path):
    raws, scores = write_results(tmp_path)
    frame = aggregate.write_outputs(scores, tmp_path / "lb.csv", tmp_path / "lb.md", tmp_path / "m.json",
                                    outcome_files=raws, settings=AnalysisSettings(seed=3, samples=500, confidence=0.9))
    rows = list(csv.DictReader((tmp_path / "lb.csv").open()))
    assert list(rows[0]) == ["model", "task", "language", "template", "metric", "scale", "value", "n", "ci_low",
                             "ci_high", "chance", "truncated_prompts", "fewer_items_because"]
    # the file is on the scale readers see (accuracy in percent, named); read back onto the computed one
    assert {r["scale"] for r in rows} == {"percent"}
    assert pd.testing.assert_frame_equal(aggregate.read_leaderboard(tmp_path / "lb.csv")[["value", "ci_low"]],
                                         frame[["value", "ci_low"]], atol=1e-6) is None
    assert "90% interval" in (tmp_path / "lb.md").read_text()
    assert not frame[["ci_low", "ci_high"]].isna().any().any()
    assert (frame["ci_low"] <= frame["value"] + 1e-12).all() and (frame["value"] <= frame["ci_high"] + 1e-12).all()
    row = frame[(frame.model == "m1") & (frame.language == "eng_Latn") & (frame.template == "paper")
                & (frame.metric == "acc")].iloc[0]
    recs = [{"id": str(i), "correct": v == "1"} for i, v in enumerate("1110000000")]
    assert (row.ci_low, row.ci_high) == bootstrap.interval_for("acc", recs, seed=3, n_samples=500, confidence=0.9)


def test_leaderboard_without_raw_files_is_unchanged(tmp_path):
    _, scores = write_results(tmp_path)
    frame = aggregate.write_outputs(scores, tmp_path / "lb.csv", tmp_path / "lb.md", tmp_path / "m.json")
    assert list(frame.columns) == aggregate.COLUMNS


def test_missing_raw_file_leaves_cells_empty(tmp_path):
    raws, scores = write_results(tmp_path, models=["m1"])
    frame = aggregate.leaderboard([__import__("json").loads(p.read_text()) for p in scores])
    out = bootstrap.leaderboard_intervals(frame, raws[1:], seed=0, n_samples=100)
    assert out["ci_low"].isna().sum() == 2  # m1/eng_Latn/paper: acc and acc_norm
    assert isinstance(out, pd.DataFrame)


def test_analysis_modules_do_not_import_torch():
    modules = ["records", "bootstrap", "template_sensitivity", "significance", "parse_failures", "item_difficulty", "plots",
               "report"]
    code = ("import sys\n" + "".join(f"import babeleval.analysis.{m}\n" for m in modules)
            + "heavy = [m for m in ('torch', 'transformers', 'datasets') if m in sys.modules]\n"
            + "assert not heavy, heavy\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_corpus_metric_that_cannot_be_built_gives_no_interval(monkeypatch):
    def offline(references, target_language=None, spm_model=None):
        raise OSError("cannot download the SentencePiece model")

    monkeypatch.setattr(translation_metrics, "bleu_tokenize", offline)
    recs = translation_records(HYPOTHESES_A)
    assert bootstrap.item_data("bleu", recs) is None
    assert all(math.isnan(v) for v in bootstrap.interval_for("bleu", recs, seed=0))
