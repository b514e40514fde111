"""Adding a metric is one place: a ``Metric`` registered in a file params.yaml lists under ``modules``
(docs/extending.md, "Adding a metric").

A metric of our own (the share of answers that are choice A: a position bias) is written to a temporary
directory outside the package, listed in a Belebele template's ``metrics:``, and run end to end through
Snakemake on a tiny local model: scoring, the scores file's record, the leaderboard with its bootstrap
interval, the tables and the report pick it up with no other edit. A metric name a template cannot report
(unknown, or not computable for the task's family and mode) stops validation, naming the template file.
"""

from __future__ import annotations

import json
import os

import pytest
import yaml

from conftest import copy_workflow, snakemake

from babeleval.analysis.records import read_table
from babeleval.core.errors import ConfigError
from babeleval.grid.params import load_params
from babeleval.score import metrics

METRIC_MODULE = '''
"""The share of answers that are the first choice (A): a position bias, whatever the gold answer."""

from babeleval.score.metrics import ItemMean, Metric, choice_families, register


def answered_a(record):
    return record.get("prediction") == 0  # an unreadable answer (None) is not an A


def share_answered_a(records):
    return sum(map(answered_a, records)) / len(records) if records else float("nan")


register(Metric("answered_a", "share of answers that are choice A, %", share_answered_a, choice_families,
                ItemMean(answered_a), higher_is_better=False, headline=False))
'''

LANGUAGES = ["eng_Latn", "jpn_Jpan"]


def with_template_metrics(workdir, names):
    """Belebele's ``paper`` template, as ``position``, listing ``names`` under ``metrics:``."""
    fields = yaml.safe_load((workdir / "prompts/belebele/paper.yaml").read_text(encoding="utf-8"))
    fields["metrics"] = names
    text = yaml.safe_dump(fields, sort_keys=False, allow_unicode=True)
    (workdir / "prompts/belebele/position.yaml").write_text(text, encoding="utf-8")


def write_params(workdir, modules=(), **entries):
    params = yaml.safe_load((workdir / "params.yaml").read_text(encoding="utf-8"))
    params["tasks"]["belebele"].update(languages=LANGUAGES, templates=["paper", "position"], **entries)
    if modules:
        params["modules"] = [str(path) for path in modules]
    (workdir / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return params


@pytest.fixture
def registry(monkeypatch):
    """The metric registry and the exported extension files as they were, after the test."""
    monkeypatch.delenv("BABELEVAL_MODULES", raising=False)
    saved = dict(metrics.METRICS)
    yield metrics.METRICS
    metrics.METRICS.clear()
    metrics.METRICS.update(saved)


@pytest.mark.workflow
@pytest.mark.slow
def test_a_metric_from_a_temporary_directory_runs_end_to_end(tmp_path, tiny_model_dir, built_tiny_model):
    outside = tmp_path / "my_metrics"
    outside.mkdir()
    (outside / "answered_a.py").write_text(METRIC_MODULE, encoding="utf-8")
    workdir = copy_workflow(tmp_path / "wf", tasks=("belebele",), built=built_tiny_model)
    with_template_metrics(workdir, ["acc", "answered_a"])
    params = write_params(workdir, modules=[outside / "answered_a.py"])
    params["models"] = {"tiny-llama": {"backend": "hf", "model": str(tiny_model_dir), "dtype": "float32",
                                       "device": "cpu", "batch_size": 8}}
    (workdir / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")
    env_before = os.environ.get("BABELEVAL_MODULES")

    snakemake(workdir)  # the default target: scores, leaderboard, tables and the analysis report

    assert os.environ.get("BABELEVAL_MODULES") == env_before  # registration stays in the workflow's processes
    assert "answered_a" not in metrics.METRICS
    scores = json.loads((workdir / "results/scores/tiny-llama/belebele/jpn_Jpan/position.json").read_text())
    assert set(scores["metrics"]) == {"acc", "answered_a"} and 0.0 <= scores["metrics"]["answered_a"] <= 1.0
    entries = {m["name"]: m for m in scores["provenance"]["spec"]["metrics"]}
    assert entries["answered_a"] == {"name": "answered_a", "scale": "0-1", "higher_is_better": False,
                                     "headline": False, "bootstrap": "items", "interval": "bootstrap"}
    assert entries["acc"]["headline"]
    board = read_table(workdir / "results/leaderboard.csv")
    rows = board[board.metric == "answered_a"]
    assert set(rows.language) == set(LANGUAGES) and set(rows.template) == {"position"}
    assert rows[["ci_low", "ci_high"]].notna().all().all()
    assert ((rows.ci_low <= rows.value + 1e-12) & (rows.value <= rows.ci_high + 1e-12)).all()
    assert "answered_a" in (workdir / "results/tables/by_template.csv").read_text(encoding="utf-8")
    assert "answered_a" in (workdir / "results/report.html").read_text(encoding="utf-8")


def test_a_registered_metric_can_be_listed_and_its_name_is_its_own(tmp_path, registry):
    module = tmp_path / "answered_a.py"
    module.write_text(METRIC_MODULE, encoding="utf-8")
    workdir = copy_workflow(tmp_path / "wf", tasks=("belebele",))
    with_template_metrics(workdir, ["acc", "answered_a"])
    write_params(workdir, modules=[module])
    grid = load_params(workdir / "params.yaml", root=workdir)
    names = [m.name for m in grid.record("tiny-llama", "belebele", "eng_Latn", "position").metrics]
    assert names == ["acc", "answered_a"] and registry["answered_a"].label.startswith("share of answers")

    again = tmp_path / "again.py"
    again.write_text(METRIC_MODULE, encoding="utf-8")
    write_params(workdir, modules=[again])
    with pytest.raises(ConfigError, match=r"params\.yaml: modules: .*again\.py: metric 'answered_a' is already "
                                          r"registered; rename it"):
        load_params(workdir / "params.yaml", root=workdir)


@pytest.mark.parametrize("names, message", [
    (["acc", "blue"], r"unknown metric blue \(known: acc, acc_norm, balanced_acc, bleu, chrf, exact_match, f1, "
                      r"macro_f1, parse_failure_rate; a metric of your own is registered in a file params\.yaml "
                      r"lists under modules\)"),
    (["acc", "bleu"], r"metric bleu cannot be computed for a multiple_choice task in mode 'loglikelihood' "
                      r"\(it can report: acc, acc_norm, balanced_acc, macro_f1\)"),
    (["acc_parsed"], r"metric acc_parsed cannot be computed for a multiple_choice task in mode 'loglikelihood'"),
])
def test_a_metric_the_template_cannot_report_is_a_named_error(tmp_path, registry, names, message):
    workdir = copy_workflow(tmp_path / "wf", tasks=("belebele",))
    with_template_metrics(workdir, names)
    write_params(workdir)
    with pytest.raises(ConfigError, match=r"params\.yaml: tasks\.belebele\.templates: \S*prompts/belebele/"
                                          r"position\.yaml: " + message):
        load_params(workdir / "params.yaml", root=workdir)


def test_the_registry_refuses_a_taken_name(registry):
    with pytest.raises(ConfigError, match="metric 'acc' is already registered; rename it"):
        metrics.register(metrics.get_metric("acc"))
    with pytest.raises(ConfigError, match=r"metric 'x': scale must be '0-1' or '0-100'"):
        metrics.Metric("x", "x", len, metrics.generated, metrics.Recomputed(), scale="percent")
