"""The experiment loop from a fresh clone, exactly as the README and docs/experiments.md print it.

A copy of the repository's tracked files, made a git repository: `make run` (with this interpreter's
environment standing in for .venv), then the command the run prints to record the baseline, an edit of a
template, `dvc exp run`, `dvc exp show`, `python -m babeleval compare` and `dvc plots diff`; each must succeed
and show something true. The grid is cut to two tasks (Belebele and chrF translation: two scales) to keep the
run within minutes.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from browser import run_chromium
from conftest import ROOT, TINY_GRID

pytestmark = [pytest.mark.slow, pytest.mark.workflow]

VENV = Path(sys.executable).parent.parent
TASKS = ("belebele", "translation_to")


def env(repo: Path) -> dict[str, str]:
    return {**os.environ, "PATH": str(VENV / "bin") + os.pathsep + os.environ.get("PATH", ""),
            "PYTHONPATH": str(repo / "workflow"), "DVC_NO_ANALYTICS": "1", "COLUMNS": "120",
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}


def sh(repo: Path, command: str, timeout: int = 1200) -> str:
    proc = subprocess.run(command, shell=True, cwd=repo, env=env(repo), capture_output=True, text=True,
                          timeout=timeout)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{command} failed ({proc.returncode}):\n{out[-6000:]}"
    return out


def fresh_clone(dest: Path) -> Path:
    """The repository's tracked files (as a clone has them), in a new git repository."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split("\0")
    for name in filter(None, files):
        source = ROOT / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    # the tests' grid (the default grid's tasks on the tiny model): the loop's machinery, not the model, is tested
    params = yaml.safe_load(TINY_GRID.read_text(encoding="utf-8"))
    params["tasks"] = {name: spec for name, spec in params["tasks"].items() if name in TASKS}
    (dest / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")
    sh(dest, "git init -q -b main && git add -A && git commit -q -m 'a fresh clone'")
    return dest


def digests(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def loop(tmp_path_factory) -> dict:
    repo = fresh_clone(tmp_path_factory.mktemp("clone"))
    seen: dict = {"repo": repo}
    # `make run`; the environment is this interpreter's (installing one is the Makefile's other half)
    seen["run"] = sh(repo, f"make -o {VENV}/bin/.installed run VENV={VENV}")
    printed = seen["run"].splitlines()
    seen["baseline"] = printed[printed.index(next(line for line in printed if "commit it:" in line)) + 1].strip()
    sh(repo, seen["baseline"])  # the one printed command that records the baseline
    seen["raw-before"] = digests(repo / "results/raw")

    template = repo / "prompts/belebele/instruct.yaml"
    text = template.read_text(encoding="utf-8")
    assert "output the letter" in text
    template.write_text(text.replace("output the letter", "output only the letter"), encoding="utf-8")
    seen["exp-run"] = sh(repo, "dvc exp run -n terse-instruct")
    seen["raw-after"] = digests(repo / "results/raw")
    seen["exp-show"] = sh(repo, "dvc exp show --no-pager")
    seen["exp-show-changed"] = sh(repo, "dvc exp show --no-pager --only-changed")
    seen["exp-show-one-task"] = sh(repo, "dvc exp show --no-pager --drop '.*' --keep 'Experiment|.*belebele'")
    seen["exp-show-columns"] = sh(repo, "dvc exp show --csv").splitlines()[0].split(",")
    seen["compare"] = sh(repo, "python -m babeleval compare")
    seen["plots"] = sh(repo, "dvc plots diff -o plots_page")
    return seen


def test_run_prints_the_baseline_command_and_it_records_the_baseline(loop):
    assert "babeleval: run finished" in loop["run"]
    assert loop["baseline"].startswith("git add dvc.lock results/metrics.json"), loop["baseline"]
    # the baseline commit is HEAD: experiments are refs of their own
    committed = subprocess.run(["git", "show", "--stat", "HEAD"], cwd=loop["repo"], capture_output=True,
                               text=True).stdout
    assert "dvc.lock" in committed and "results/metrics.json" in committed, committed


def test_exp_run_reuses_the_run_and_reruns_only_the_edited_template(loop):
    assert "No file hash info" not in loop["exp-run"]
    before, after = loop["raw-before"], loop["raw-after"]
    assert sorted(before) == sorted(after)  # nothing deleted
    changed = sorted(path for path in before if before[path] != after[path])
    assert all(path.endswith("/instruct.jsonl") for path in changed), changed


def template_hashes(table: str, name: str) -> list[str]:
    """The template hashes (8 hex digits) shown in the row of `name` (a revision or an experiment), left to right."""
    [line] = [line for line in table.splitlines() if line.split()[:1] == [name] or f"[{name}]" in line]
    return [cell for cell in line.split() if re.fullmatch("[0-9a-f]{8}", cell)]


def test_exp_show_fits_and_shows_the_edited_template(loop):
    for table in (loop["exp-show"], loop["exp-show-changed"], loop["exp-show-one-task"]):
        assert max(len(line) for line in table.splitlines()) <= 120, table
        assert "terse-instruct" in table
    # the default view, as it is: the headline numbers under short names and the edited template's hash, changed
    table = loop["exp-show"]
    header = table.splitlines()[1].split()
    # the edited template first among the params: DVC keeps the first column of each kind in view
    assert header[:5] == ["Experiment", "Created", "belebele", "translation_to", "belebele.instruct"], table
    shown = [name for name in header if name.startswith(("belebele.", "translation_to."))]
    instruct = shown.index("belebele.instruct")
    edited, baseline = template_hashes(table, "terse-instruct"), template_hashes(table, "main")
    assert len(edited) == len(baseline) == len(shown), table
    assert edited[instruct] != baseline[instruct], table
    assert [h for i, h in enumerate(edited) if i != instruct] == [h for i, h in enumerate(baseline) if i != instruct]
    # nothing else is a column: no params.yaml value (.dvcignore), no dependency hash (none declared)
    columns = loop["exp-show-columns"]
    data = columns[columns.index("parent") + 1:]
    assert data[:2] == ["belebele", "translation_to"], columns
    assert all(name.startswith(("belebele.", "translation_to.")) for name in data[2:]), columns
    header = loop["exp-show-changed"].splitlines()[1]
    assert "belebele.instruct" in header, loop["exp-show-changed"]  # the template's hash: the param that changed
    assert "belebele.paper" not in header  # an unchanged template is not
    header = loop["exp-show-one-task"].splitlines()[1].split()
    assert header == ["Experiment", "belebele", "belebele.instruct", "belebele.blog", "belebele.paper"], header


def test_compare_tells_the_edit_against_the_baseline(loop):
    out = loop["compare"]
    assert "workspace against HEAD" in out and "## belebele (acc)" in out, out
    assert "## translation_to" in out and "No difference" in out.split("## translation_to")[1], out


def test_plots_diff_draws_one_chart_per_task_and_metric(loop, tmp_path):
    page = loop["repo"] / "plots_page" / "index.html"
    html = page.read_text(encoding="utf-8")
    assert "cdn.jsdelivr" not in html  # `make run` set up the offline page template
    assert "bars_by_metric" in html or '"facet"' in html
    shot = tmp_path / "plots.png"
    run_chromium("--window-size=1280,2400", "--virtual-time-budget=5000", f"--screenshot={shot}", page.as_uri(),
                 profile=tmp_path / "profile")
    assert shot.stat().st_size > 20_000
    keep = os.environ.get("BABELEVAL_KEEP_SCREENSHOT")  # where to copy it to look at it
    if keep:
        shutil.copy2(shot, keep)
    # both experiments are in the page's data
    assert re.search(r'"rev":\s*"workspace"', html) and re.search(r'"rev":\s*"(HEAD|main)"', html), html[:2000]
