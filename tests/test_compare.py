"""`python -m babeleval compare`: a template edit against the baseline, per language, from stored per-item outputs.

A temporary git + DVC repository whose one stage writes per-item outputs (hand-made, no model) from a
params value; the baseline is committed, an experiment changes the value, and the workspace changes again.
Other revisions' outputs come through DVC's cache.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from babeleval.cli import compare
from babeleval.cli import dvc_plots
from browser import load_in_chromium

pytestmark = [pytest.mark.slow, pytest.mark.workflow]

# Writes results/raw and results/scores for one model, one task, two languages, two templates.
# `instruct_right` items of ten are right under `instruct` in fra_Latn; a parse failure for the rest when
# `format_broken`; `paper` never changes.
STAGE = r'''
import json, pathlib, yaml
p = yaml.safe_load(open("params.yaml"))
for lang in ("eng_Latn", "fra_Latn"):
    for tpl in ("paper", "instruct"):
        right = p["instruct_right"] if (tpl == "instruct" and lang == "fra_Latn") else 5
        recs = []
        for i in range(10):
            ok = i < right
            failed = tpl == "instruct" and not ok and p["format_broken"]
            rec = {"id": f"q{i:02d}", "correct": ok, "parsed": not failed, "answer": 0,
                   "choices": ["Ọ̀kan", "二", "तीन", "quatre"]}
            if tpl == "instruct":
                rec["response"] = "???" if failed else ("A" if ok else "B")
            recs.append(rec)
        raw = pathlib.Path("results/raw/m1/belebele", lang, tpl + ".jsonl")
        raw.parent.mkdir(parents=True, exist_ok=True)
        raw.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), encoding="utf-8")
        metrics = {"acc": right / 10}
        if tpl == "instruct":
            metrics["parse_failure_rate"] = sum(not r["parsed"] for r in recs) / 10
        score = pathlib.Path("results/scores/m1/belebele", lang, tpl + ".json")
        score.parent.mkdir(parents=True, exist_ok=True)
        score.write_text(json.dumps({"model": "m1", "task": "belebele", "language": lang, "template": tpl,
                                     "n": 10, "metrics": metrics}))
table = pathlib.Path("results/tables/by_template.csv")
table.parent.mkdir(parents=True, exist_ok=True)
table.write_text("name,value\nm1/belebele/paper acc,0.5\nm1/belebele/instruct acc,%s\n"
                 % ((5 + p["instruct_right"]) / 20))
'''


def env() -> dict[str, str]:
    bindir = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", ""), "DVC_NO_ANALYTICS": "1",
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}


def run(cwd: Path, *cmd: str) -> str:
    proc = subprocess.run(cmd, cwd=cwd, env=env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{' '.join(cmd)}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    repo = tmp_path_factory.mktemp("compare")
    (repo / "stage.py").write_text(STAGE, encoding="utf-8")
    (repo / "params.yaml").write_text("instruct_right: 5\nformat_broken: false\n", encoding="utf-8")
    (repo / "dvc.yaml").write_text(
        "stages:\n  evaluate:\n    cmd: python stage.py\n    params: [instruct_right, format_broken]\n"
        "    deps: [stage.py]\n    outs: [results/raw, results/scores]\n"
        "    plots:\n      - results/tables/by_template.csv:\n          cache: false\n"
        "          template: bar_horizontal\n          x: value\n          y: name\n", encoding="utf-8")
    run(repo, "git", "init", "-q", "-b", "main")
    run(repo, sys.executable, "-m", "dvc", "init", "-q")
    run(repo, sys.executable, "-m", "dvc", "repro", "-q")
    run(repo, "git", "add", "-A")
    run(repo, "git", "commit", "-q", "-m", "baseline")
    # an experiment: the edited template answers 9 of 10 in French
    run(repo, sys.executable, "-m", "dvc", "exp", "run", "-q", "-n", "better-instruct", "-S", "instruct_right=10")
    # the workspace: a template edit that breaks the answer format (back to baseline first)
    (repo / "params.yaml").write_text("instruct_right: 5\nformat_broken: true\n", encoding="utf-8")
    run(repo, sys.executable, "-m", "dvc", "repro", "-q")
    return repo


def test_experiment_against_baseline_per_language(repo, capsys):
    assert compare.main(["--repo", str(repo), "HEAD", "better-instruct", "--csv", str(repo / "cmp.csv")]) == 0
    out = capsys.readouterr().out
    rows = pd.read_csv(repo / "cmp.csv", dtype={"template": str})
    changed = rows[rows["delta"] != 0]
    assert list(zip(changed["language"], changed["template"])) == [("fra_Latn", "instruct")]
    row = changed.iloc[0]
    assert (row.score_a, row.score_b, row.delta) == (50.0, 100.0, 50.0)
    assert row.test == "exact McNemar" and row.p_value == pytest.approx(2 * 0.5 ** 5)  # 5 discordant items
    assert 0 < row.delta_low <= 50.0 <= row.delta_high
    assert row.p_holm == row.p_value  # the only combination whose outputs changed: a family of one
    assert "| m1      | fra_Latn   | instruct   | 50.0 (pf 0.0) | 100.0 (pf 0.0)    | +50.0 [-2.2, 50.0] | 0.0625 " in out
    assert "(3 other combination(s) unchanged.)" in out


def test_workspace_against_head_separates_parsing(repo, capsys):
    assert compare.main(["--repo", str(repo)]) == 0  # HEAD against the workspace
    out = capsys.readouterr().out
    assert "workspace against HEAD" in out
    # same right answers, the wrong ones now fail to parse: accuracy unchanged, parse failures 0 -> 50%
    line = next(li for li in out.splitlines() if li.startswith("| m1      | eng_Latn"))
    assert "50.0 (pf 0.0)" in line and "50.0 (pf 50.0)" in line and "+0.0 [–, –]" in line
    assert "(2 other combination(s) unchanged.)" in out


def test_nothing_changed_says_so(repo, capsys):
    assert compare.main(["--repo", str(repo), "HEAD", "main"]) == 0
    assert "No difference" in capsys.readouterr().out


def test_unknown_revision_is_named(repo, capsys):
    assert compare.main(["--repo", str(repo), "no-such-exp"]) == 2
    assert "'no-such-exp' is neither a git revision nor a DVC experiment" in capsys.readouterr().err


def test_bad_settings_are_named_before_any_revision_is_read(tmp_path, capsys):
    # tmp_path is no repository: the settings are checked first
    # the bounds are params.yaml's for its analysis settings (its schema): the same flags, the same limits
    assert compare.main(["--repo", str(tmp_path), "--samples", "50", "--confidence", "95", "--alpha", "0"]) == 2
    err = capsys.readouterr().err
    assert "--samples 50: 50 is less than the minimum of 100 (as params.yaml's analysis.bootstrap_samples)" in err, err
    assert "--confidence 95.0: 95.0 is greater than or equal to the maximum of 1" in err, err
    assert "--alpha 0.0: 0.0 is less than or equal to the minimum of 0" in err, err
    assert "neither a git revision" not in err, err


def test_dvc_plots_diff_renders_offline(repo, tmp_path):
    template = tmp_path / "offline_plots.html"
    assert dvc_plots.main(["--out", str(template)]) == 0
    out = tmp_path / "plots"
    run(repo, sys.executable, "-m", "dvc", "plots", "diff", "--html-template", str(template), "-o", str(out),
        "HEAD", "better-instruct")
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "cdn.jsdelivr" not in page
    dom, requests, errors = load_in_chromium((out / "index.html").as_uri(), tmp_path / "profile")
    assert requests == [] and errors == []
    assert "<canvas" in dom or 'class="marks"' in dom  # vega-embed drew the chart
