"""The lines a run ends with, from the files it leaves: run / reused / failed, parse failures, tokens, time."""

import json
import os

from babeleval.grid import run_summary
from babeleval.analysis.figures import figure_names

COMBOS = [("m1", "belebele", lang, tpl) for lang in ("eng_Latn", "yor_Latn") for tpl in ("paper", "instruct")]


def write(path, data, mtime):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    os.utime(path, (mtime, mtime))


def test_counts_costs_and_next_steps(tmp_path):
    started = 1_700_000_000.0
    scores = tmp_path / "results/scores/m1/belebele"
    write(scores / "eng_Latn/paper.json", {"n": 10, "metrics": {"acc": 0.3}}, started - 3600)  # from an earlier run
    write(scores / "eng_Latn/instruct.json", {"n": 10, "metrics": {"acc": 0.2, "parse_failure_rate": 0.3},
                                              "parse_failures": 3}, started + 5)
    write(scores / "yor_Latn/instruct.json", {"n": 10, "metrics": {"acc": 0.1, "parse_failure_rate": 0.5},
                                              "parse_failures": 5}, started + 6)
    # yor_Latn/paper: no scores file (its job failed)
    write(tmp_path / "results/usage/m1/belebele/instruct.json",
          {"requests": 20, "cache_hits": 4, "computed": 16, "tokens_computed": {"prompt": 5120, "completion": 80},
           "seconds": 75.2}, started + 4)
    write(tmp_path / "results/usage/m1/belebele/paper.json",
          {"requests": 20, "cache_hits": 0, "tokens_computed": {"prompt": 9, "completion": 0}, "seconds": 9.0},
          started - 3600)  # not this run's cost
    found = run_summary.collect(tmp_path, COMBOS, started)
    assert (len(found.ran), len(found.reused), len(found.missing)) == (2, 1, 1)
    ok = run_summary.lines(found, succeeded=True, wall_seconds=95)
    assert ok[0] == ("babeleval: run finished in 1:35: 4 combinations: 2 run, 1 reused (up to date), "
                     "1 failed or not run")
    assert ok[1] == "  parse failures: 8 of 20 generated answers (40.0%)"
    assert ok[2] == ("  m1: 1 generation job(s), 20 requests, 4 from the cache; tokens paid this run: 5120 in, "
                     "80 out; generation time 1:15")
    assert "results/report.html" in ok[-1]
    failed = run_summary.lines(found, succeeded=False, wall_seconds=95, log=".snakemake/log/x.snakemake.log")
    assert failed[0].startswith("babeleval: run FAILED")
    assert "  not scored: m1/belebele/yor_Latn/paper" in failed
    assert "snakemake --unlock" in failed[-1] and ".snakemake/log/x.snakemake.log" in failed[-1]


class T:
    def __init__(self, mode):
        self.mode = mode


def test_figures_a_task_gets():
    assert figure_names({"0.6": T("loglikelihood")}) == ["heatmap"]
    assert figure_names({"en_zeroshot": T("generate")}) == ["heatmap", "parse_failures"]
    assert figure_names({"paper": T("loglikelihood"), "instruct": T("generate")}) == [
        "heatmap", "template_spread", "parse_failures"]
