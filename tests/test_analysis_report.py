"""The analysis rules on hand-made raw outputs (no model), and the HTML report rendered in headless Chromium."""

from __future__ import annotations

import csv
import shutil
import struct
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
import yaml

from analysis_data import LANGUAGES, MODELS, TEMPLATES, write_results
from conftest import copy_workflow, snakemake

ANALYSIS_RULES = ["prepare_data", "leaderboard", "template_sensitivity", "significance", "parse_failures",
                  "item_difficulty", "plots", "report"]
TABLE_IDS = ["leaderboard-table", "sensitivity-table", "rank-stability-table", "significance-templates-table",
             "significance-models-table", "parse-failures-table", "parse-failure-reasons-table",
             "difficulty-buckets-table", "difficulty-patterns-table", "crosslingual-gaps-table"]


def analysis_only(workdir: Path, *args: str):
    """Snakemake limited to the rules that need no model: raw outputs in, analysis out."""
    return snakemake(workdir, "--allowed-rules", *ANALYSIS_RULES, *args, "--", "results/report.html")


@pytest.fixture(scope="module")
def analysed(tmp_path_factory) -> Path:
    workdir = copy_workflow(tmp_path_factory.mktemp("analysis") / "wf")
    params = yaml.safe_load((workdir / "params.yaml").read_text(encoding="utf-8"))
    params["models"] = {m: {"backend": "hf", "builtin": "tiny-llama", "device": "cpu"} for m in MODELS}
    params["tasks"] = {"belebele": {**params["tasks"]["belebele"], "languages": LANGUAGES, "templates": TEMPLATES}}
    params["analysis"] = {"bootstrap_samples": 400, "confidence": 0.9}
    (workdir / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    write_results(workdir)
    planned = analysis_only(workdir, "-n").stdout
    assert "rule generate_belebele" not in planned and "rule score:" not in planned
    analysis_only(workdir)
    return workdir


def test_rules_write_every_table_and_figure(analysed):
    results = analysed / "results"
    rows = list(csv.DictReader((results / "leaderboard.csv").open(encoding="utf-8")))
    assert list(rows[0]) == ["model", "task", "language", "template", "metric", "value", "n", "ci_low", "ci_high",
                            "chance", "truncated_prompts"]
    assert all(float(r["ci_low"]) <= float(r["value"]) <= float(r["ci_high"]) for r in rows if r["value"])
    for name in ["template_sensitivity", "rank_stability", "significance_templates", "significance_models",
                 "parse_failures", "parse_failure_reasons", "item_difficulty", "difficulty_buckets",
                 "difficulty_patterns", "crosslingual_gaps", "crosslingual_items"]:
        assert not pd.read_csv(results / "analysis" / f"{name}.csv").empty, name
    models = pd.read_csv(results / "analysis/significance_models.csv")
    assert models["correction"].str.startswith("Holm-Bonferroni over").all()
    for name in ["heatmap", "template_spread", "parse_failures"]:
        png = results / "plots/belebele" / f"{name}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Nothing to be done" in analysis_only(analysed, "-n").stdout


def test_settings_reach_the_jobs(analysed):
    from babeleval.analysis.bootstrap import interval_for
    from babeleval.analysis.records import load_raw

    raw = load_raw(sorted((analysed / "results/raw").rglob("*.jsonl")))
    combo = next(c for c in raw if c.model == "m2" and c.language == "fra_Latn" and c.template == "instruct")
    board = pd.read_csv(analysed / "results/leaderboard.csv")
    row = board[(board.model == "m2") & (board.language == "fra_Latn") & (board.template == "instruct")
                & (board.metric == "acc")].iloc[0]
    low, high = interval_for("acc", raw[combo], seed=1234, n_samples=400, confidence=0.9)
    assert (row.ci_low, row.ci_high) == (pytest.approx(low, abs=1e-6), pytest.approx(high, abs=1e-6))


class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.images, self.sections, self.cells = set(), [], [], 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "img":
            self.images.append(attrs.get("src", ""))
        if tag == "h2":
            self.sections.append(attrs.get("id"))
        if tag == "td":
            self.cells += 1


def test_report_is_self_contained(analysed):
    page = (analysed / "results/report.html").read_text(encoding="utf-8")
    dom = Dom()
    dom.feed(page)
    assert set(TABLE_IDS) <= dom.ids
    assert len(dom.images) == 3 and all(src.startswith("data:image/png;base64,") for src in dom.images)
    assert "http://" not in page and "https://" not in page.replace("https://example", "")  # nothing fetched
    assert "Holm-Bonferroni" in page and "90% bootstrap interval" in page


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("headless Chromium not installed (Debian: apt-get install chromium); .ci/run installs it")


def run_chromium(*args: str, profile: Path) -> subprocess.CompletedProcess:
    cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--disable-dev-shm-usage", f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)


def test_report_renders_in_headless_chromium(analysed, tmp_path):
    url = (analysed / "results/report.html").resolve().as_uri()
    dom_text = run_chromium("--dump-dom", url, profile=tmp_path / "profile").stdout
    dom = Dom()
    dom.feed(dom_text)
    assert set(TABLE_IDS) <= dom.ids
    assert dom.sections == ["findings", "leaderboard", "heatmaps", "sensitivity", "significance", "parse-failures",
                            "difficulty"]
    assert len(dom.images) == 3 and dom.cells > 500

    shot = tmp_path / "report.png"
    run_chromium("--hide-scrollbars", "--window-size=1280,2400", f"--screenshot={shot}", url,
                 profile=tmp_path / "profile")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1280, 2400) and len(data) > 50_000  # a page with content, not a blank one


def test_analysis_settings_are_validated(repo_root):
    from babeleval.config import validate
    from babeleval.errors import ConfigError

    params = yaml.safe_load((repo_root / "params.yaml").read_text(encoding="utf-8"))
    params["analysis"] = {"confidence": 0.9, "bootstrap_samples": 2000, "alpha": 0.01, "pivot_language": "eng_Latn"}
    validate(params, root=repo_root)
    params["analysis"] = {"confidnce": 0.9}
    with pytest.raises(ConfigError, match="analysis.confidnce: unknown key \\(did you mean 'confidence'\\?\\)"):
        validate(params, root=repo_root)
    params["analysis"] = {"confidence": 95}
    with pytest.raises(ConfigError, match="analysis.confidence"):
        validate(params, root=repo_root)


def test_single_model_report_says_what_it_cannot_do(tmp_path):
    from babeleval.analysis import difficulty, parse_failures, report, sensitivity, significance
    from babeleval.analysis.records import load_raw, load_scores
    from babeleval import aggregate

    raws, scores = write_results(tmp_path, models=["m1"])
    raw = load_raw(raws)
    board = aggregate.leaderboard(list(load_scores(scores).values()))
    tables = {"leaderboard": board, "sensitivity": sensitivity.template_sensitivity(board),
              "rank_stability": sensitivity.rank_stability(board)}
    sig = significance.pairwise(raw, load_scores(scores), seed=0, n_samples=100)
    tables.update(significance_templates=sig["templates"], significance_models=sig["models"])
    pf = parse_failures.tables(raw)
    tables.update(parse_failures=pf["rates"], parse_failure_reasons=pf["reasons"])
    diff = difficulty.difficulty(raw)
    gaps = difficulty.crosslingual(raw)
    tables.update(difficulty_buckets=diff["buckets"], difficulty_patterns=diff["patterns"],
                  crosslingual_gaps=gaps["gaps"], crosslingual_items=gaps["items"])
    page = report.render(tables, {}, {"seed": 1})
    assert "Model-vs-model tests need two models; this grid has 1 (m1)." in page
    assert "Ranking models needs two models" in page
    assert 'id="significance-models-table"' not in page and 'id="significance-templates-table"' in page
