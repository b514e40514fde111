"""The analysis rules on hand-made raw outputs (no model), and the HTML report rendered in headless Chromium."""

from __future__ import annotations

import csv
import re
import struct
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
import yaml

from analysis_data import LANGUAGES, MODELS, TEMPLATES, report_tables, write_results
from browser import load_in_chromium, run_chromium
from conftest import copy_workflow, snakemake, TINY_GRID

ANALYSIS_RULES = ["prepare_data", "plan_omitted", "leaderboard", "template_sensitivity", "significance",
                  "parse_failures", "item_difficulty", "plots", "report"]
TABLE_IDS = ["leaderboard-table", "sensitivity-table", "rank-stability-table", "significance-templates-table",
             "significance-models-table", "parse-failures-table", "parse-failure-reasons-table",
             "difficulty-buckets-table", "difficulty-patterns-table", "crosslingual-gaps-table"]


def analysis_only(workdir: Path, *args: str):
    """Snakemake limited to the rules that need no model: raw outputs in, analysis out."""
    return snakemake(workdir, "--allowed-rules", *ANALYSIS_RULES, *args, "--", "results/report.html")


@pytest.fixture(scope="module")
def analysed(tmp_path_factory, built_tiny_model) -> Path:
    workdir = copy_workflow(tmp_path_factory.mktemp("analysis") / "wf", built=built_tiny_model)
    params = yaml.safe_load((workdir / "params.yaml").read_text(encoding="utf-8"))
    params["models"] = {m: {"backend": "hf", "builtin": "tiny-llama", "device": "cpu"} for m in MODELS}
    params["tasks"] = {"belebele": {**params["tasks"]["belebele"], "languages": LANGUAGES, "templates": TEMPLATES}}
    params["analysis"] = {"bootstrap_samples": 400, "confidence": 0.9}
    (workdir / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    write_results(workdir)
    planned = analysis_only(workdir, "-n").stdout
    assert "rule generate_belebele" not in planned and "rule score_belebele:" not in planned
    run = analysis_only(workdir)
    (workdir / "run-output.txt").write_text(run.stdout + run.stderr, encoding="utf-8")
    return workdir


@pytest.mark.workflow
def test_rules_write_every_table_and_figure(analysed):
    results = analysed / "results"
    rows = list(csv.DictReader((results / "leaderboard.csv").open(encoding="utf-8")))
    assert list(rows[0]) == ["model", "task", "language", "template", "metric", "scale", "value", "n", "ci_low",
                             "ci_high", "chance", "truncated_prompts", "fewer_items_because"]
    assert all(float(r["ci_low"]) <= float(r["value"]) <= float(r["ci_high"]) for r in rows if r["value"])
    for name in ["template_sensitivity", "rank_stability", "significance_templates", "significance_models",
                 "parse_failures", "parse_failure_reasons", "item_difficulty", "difficulty_buckets",
                 "difficulty_patterns", "crosslingual_gaps", "crosslingual_items"]:
        assert not pd.read_csv(results / "analysis" / f"{name}.csv").empty, name
    models = pd.read_csv(results / "analysis/significance_models.csv")
    assert models["correction"].str.startswith("Holm-Bonferroni over").all()
    # scores on the scale readers see, the unit named: accuracy in percent, as in the leaderboard
    assert set(models["scale"]) == {"percent"} and models["score_b"].max() == 100.0
    assert (models["diff_low"] <= models["diff"]).all() and (models["diff"] <= models["diff_high"]).all()
    assert set(pd.read_csv(results / "analysis/template_sensitivity.csv")["scale"]) == {"percent"}
    for name in ["heatmap", "template_spread", "parse_failures"]:
        png = results / "plots/belebele" / f"{name}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Nothing to be done" in analysis_only(analysed, "-n").stdout


@pytest.mark.workflow
def test_the_run_ends_with_its_summary(analysed):
    out = (analysed / "run-output.txt").read_text(encoding="utf-8")
    # the scores were there before the run (written by hand): reused, not run
    assert "12 combinations: 0 new, 0 rescored, 12 reused (up to date), 0 failed or not run" in out
    assert "  parse failures: 11 of 60 generated answers (18.3%)" in out
    assert "next: results/leaderboard.md (tables), results/report.html (analysis)" in out


@pytest.mark.workflow
def test_long_steps_report_progress_in_their_log_and_on_the_console(analysed):
    console = (analysed / "run-output.txt").read_text(encoding="utf-8")
    done = "[" + "#" * 20 + "] 100%"
    for log, line in [("leaderboard.log", f"bootstrapped intervals of 12/12 combinations {done}"),
                      ("analysis/significance.log", f"compared 10/10 groups of templates or models {done}")]:
        assert line in (analysed / "results/logs" / log).read_text(encoding="utf-8") and line in console, log


@pytest.mark.workflow
def test_settings_reach_the_jobs(analysed):
    from babeleval.analysis.bootstrap import interval_for
    from babeleval.analysis.leaderboard import read_leaderboard
    from babeleval.analysis.records import load_outcomes

    raw = load_outcomes(sorted((analysed / "results/outcomes").rglob("*.parquet")))
    combo = next(c for c in raw if c.model == "m2" and c.language == "fra_Latn" and c.template == "instruct")
    board = read_leaderboard(analysed / "results/leaderboard.csv")
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


@pytest.mark.workflow
def test_report_is_self_contained(analysed):
    page = (analysed / "results/report.html").read_text(encoding="utf-8")
    dom = Dom()
    dom.feed(page)
    assert set(TABLE_IDS) <= dom.ids
    assert len(dom.images) == 3 and all(src.startswith("data:image/png;base64,") for src in dom.images)
    assert "http://" not in page and "https://" not in page  # nothing to fetch
    assert "Holm-Bonferroni" in page and "[90% interval] n=items" in page
    assert "exact Clopper-Pearson binomial interval for acc" in page  # the method line names each metric's
    # the paper tables: per template and best/mean, each once (accuracy over parsed items inside the cells of
    # generated answers), chance level
    assert {"paper-belebele-acc-paper", "paper-belebele-acc-instruct", "paper-belebele-acc-best"} <= dom.ids
    assert "paper-belebele-acc_parsed-instruct" not in dom.ids and "· parsed " in page
    assert "Chance level: 25.0." in page and "· pf 80.0" in page
    assert "Parse failures: 11 of 60 generated answers (18.3%)" in page  # the paper template reads no text


@pytest.mark.workflow
def test_summary_sentences_say_significance_and_parsing(analysed):
    page = (analysed / "results/report.html").read_text(encoding="utf-8")
    # m1 vs m3 on instruct in English: 1 vs 10 right of 10, McNemar on 9 discordant items, Holm over 18 tests
    gap = next(line for line in page.splitlines() if "biggest model gap" in line)
    assert "m1 10.0 vs m3 100.0" in gap and "significant under the paired test (exact McNemar" in gap
    assert "over parsed items m1 12.5%, m3 100.0%: mostly a difference in answering" in gap
    effect = next(line for line in page.splitlines() if "largest template effect" in line)
    # m3's 9 vs 6 right in French: not significant, and the interval at the same Holm level holds 0
    assert "no detectable difference (interval [-20.3, +30.0] points adjusted over 6 tests" in effect
    assert "most robust language to the template" in page and "least robust language to the template" in page


def test_browser_check_catches_requests_and_script_errors(tmp_path):
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><html><body><img src="http://example.test/pixel.png">'
                   "<script>notDefinedAnywhere();</script></body></html>", encoding="utf-8")
    _, requests, errors = load_in_chromium(bad.as_uri(), tmp_path / "profile")
    assert requests == ["http://example.test/pixel.png"]
    assert len(errors) == 1 and "notDefinedAnywhere is not defined" in errors[0]


@pytest.mark.workflow
def test_report_renders_in_headless_chromium(analysed, tmp_path):
    url = (analysed / "results/report.html").resolve().as_uri()
    dom_text, requests, errors = load_in_chromium(url, tmp_path / "profile")
    assert requests == [] and errors == []
    dom = Dom()
    dom.feed(dom_text)
    assert set(TABLE_IDS) <= dom.ids
    # the answer first: models x tasks, then per task models x languages, then figures; sentences after
    assert dom.sections == ["overall", "leaderboard", "figures", "findings", "sensitivity", "significance",
                            "parse-failures", "difficulty", "planning"]
    assert len(dom.images) == 3 and dom.cells > 500

    # laptop width; the screenshot is kept beside the report for a person to look at
    shot = analysed / "results/report-screenshot.png"
    run_chromium("--hide-scrollbars", "--window-size=1366,2400", f"--screenshot={shot}", url,
                 profile=tmp_path / "profile")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1366, 2400) and len(data) > 50_000  # a page with content, not a blank one
    print(f"screenshot: {shot}")


def test_analysis_settings_are_validated(repo_root):
    from babeleval.grid.params import validate
    from babeleval.core.errors import ConfigError

    params = yaml.safe_load(TINY_GRID.read_text(encoding="utf-8"))
    params["analysis"] = {"confidence": 0.9, "bootstrap_samples": 2000, "alpha": 0.01, "pivot_language": "eng_Latn"}
    validate(params, root=repo_root)
    params["analysis"] = {"confidnce": 0.9}
    with pytest.raises(ConfigError, match="analysis.confidnce: unknown key \\(did you mean 'confidence'\\?\\)"):
        validate(params, root=repo_root)
    params["analysis"] = {"confidence": 95}
    with pytest.raises(ConfigError, match="analysis.confidence"):
        validate(params, root=repo_root)


def test_single_model_report_says_what_it_cannot_do(tmp_path):
    from babeleval.analysis import report
    from babeleval.analysis.settings import AnalysisSettings

    tables = report_tables(*write_results(tmp_path, models=["m1"]))
    page = report.render(tables, {"belebele": {}}, AnalysisSettings(seed=1))
    assert "Model-vs-model tests need two models; this grid has 1 (m1)." in page
    assert "Ranking models needs two models" in page
    assert 'id="significance-models-table"' not in page and 'id="significance-templates-table"' in page
    assert page.count("Model gaps need two models: this grid has one (m1).") == 1  # once, not once per task
    assert "no model gap to measure" not in page
    # m1 over 2 languages x 2 templates: (3 + 2 + 1 + 1) / 40 right; instruct: 10 of 20 unparsed, 2 of 10 parsed right
    assert ("belebele, m1: acc 17.5% over all items (mean over 2 language(s) and 2 template(s)); on its 2 generated "
            "combination(s), parse failures 50.0% and accuracy over parsed items 31.2%.") in page


@pytest.mark.workflow
def test_the_first_screen_answers_per_task_before_anything_else(analysed, tmp_path):
    """The rendered report's first screen: per task every model's score [interval] n with its parse-failure rate,
    chance, the templates x languages averaged, what stands out; at 1366x768 it is all above the fold."""
    page = (analysed / "results/report.html").read_text(encoding="utf-8")
    first = page.split('id="first-screen"')[1].split("</section>")[0]
    header = first.split("<thead>")[1].split("</thead>")[0]
    assert all(f"<th>{name}</th>" in header for name in
               ["task", "metric", "chance", "templates × languages", *MODELS, "what stands out"])
    row = first.split("<tbody>")[1]
    assert "<td>25.0</td>" in row and "instruct, paper × eng_Latn, fra_Latn" in row
    assert all(re.search(r"\d+\.\d \[\d+\.\d, \d+\.\d\] n=20† · pf \d+\.\d", cell) for cell in
               re.findall(r"<td>([^<]*n=20[^<]*)</td>", row)) and row.count("n=20†") == 3
    assert "No rows." not in page and "red mark on the colour bar: chance" in page  # belebele has a chance level
    # m1's unreadable answers first, then the biggest model gap the paired tests call significant
    assert re.search(r"m1: parse failures instruct 50%, so its score there is mostly parsing, not answering; biggest "
                     r"significant model gap: m\d vs m\d [+-]\d+\.\d points \(template \w+, \w+; Holm-adjusted p = ", row)
    shot = analysed / "results/first-screen-1366x768.png"
    run_chromium("--hide-scrollbars", "--window-size=1366,768", f"--screenshot={shot}",
                 (analysed / "results/report.html").resolve().as_uri(), profile=tmp_path / "profile")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    print(f"screenshot: {shot}")


def test_a_significance_tables_scores_intervals_and_mde_are_shown_on_the_metrics_scale():
    """Every column on the metric's scale (records.SIGNIFICANCE_SCORES) is shown as readers read it: accuracy in
    percent."""
    import pandas as pd

    from babeleval.analysis.report import on_display_scale
    from babeleval.analysis.records import SIGNIFICANCE_SCORES as SCORES

    row = {column: 0.061 for column in SCORES}
    shown = on_display_scale(pd.DataFrame([{"metric": "acc", **row}]), "significance_templates")
    assert shown.loc[0, "scale"] == "percent"
    assert all(shown.loc[0, column] == pytest.approx(6.1) for column in SCORES), shown.iloc[0].to_dict()
