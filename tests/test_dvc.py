"""DVC for real: a git + DVC repository in a temporary directory with a local directory remote.

Two experiments (a baseline, then one template edited) must both show in ``dvc exp show`` with
their own metrics, a rerun must not redo finished work, and ``dvc push`` then ``dvc pull`` into a
fresh clone must bring back the DVC-tracked dataset and the results.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, SHIPPED, copy_workflow, snakemake

pytestmark = pytest.mark.slow

# Besides what copy_workflow() copies, what a clone of the repository has that DVC reads.
DVC_FILES = [".gitignore", ".dvcignore", ".dvc/config", ".dvc/.gitignore", "pyproject.toml", "data/raw/README.md",
             "results/template_hashes.yaml"]


def env() -> dict[str, str]:
    """This interpreter's bin/ first on PATH (dvc runs the stage's `snakemake` through the shell), no telemetry."""
    bindir = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", ""), "DVC_NO_ANALYTICS": "1",
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}


def run(cwd: Path, *cmd: str, timeout: int = 900) -> str:
    proc = subprocess.run(cmd, cwd=cwd, env=env(), capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc.stdout


def dvc(cwd: Path, *args: str, timeout: int = 900) -> str:
    return run(cwd, sys.executable, "-m", "dvc", *args, timeout=timeout)


def run_wide(cwd: Path, columns: int, *args: str) -> str:
    """A `dvc` command rendered for a terminal ``columns`` wide (rich reads COLUMNS)."""
    proc = subprocess.run([sys.executable, "-m", "dvc", *args], cwd=cwd, env={**env(), "COLUMNS": str(columns)},
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc.stdout


def tree_digest(path: Path) -> dict[str, str]:
    return {p.relative_to(path).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()}


def exp_metrics(show: list[dict]) -> dict[str, dict]:
    """Experiment name -> its headline.json content (DVC's metrics), from `dvc exp show --json`."""
    found = {}
    for baseline in show:
        for exp in baseline.get("experiments") or []:
            for rev in exp.get("revs", []):
                data = rev.get("data") or {}
                name = rev.get("name") or data.get("name")
                metrics = (data.get("metrics") or {}).get("results/headline.json", {}).get("data")
                if name and metrics is not None:
                    found[name] = metrics
    return found


@pytest.fixture(scope="module")
def repo(tmp_path_factory, tiny_model_dir) -> Path:
    """A committed git + DVC repository of the workflow: a small grid on a DVC-tracked dataset, a local remote.
    Two task families (Belebele's multiple choice and generation, JNLI's classification with its exemplars): what
    DVC versions is the stage's output folders, whatever the tasks in them (every family runs in
    test_workflow_e2e.py)."""
    base = tmp_path_factory.mktemp("dvc")
    # the shipped layout: one generation job a template, so that an edited template reruns only its own
    repo = copy_workflow(base / "repo", tasks=("belebele", "jnli"), generation_job=SHIPPED)
    for name in DVC_FILES:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, repo / name)
    # the dataset comes through DVC: a copy of the bundled sample, added under data/raw/
    shutil.copytree(ROOT / "data/samples/belebele", repo / "data/raw/belebele")
    params = yaml.safe_load((repo / "params.yaml").read_text(encoding="utf-8"))
    # the tiny model built once per test session (a local directory: identified by its weights hash)
    params["models"] = {"tiny-llama": {"backend": "hf", "model": str(tiny_model_dir), "dtype": "float32",
                                       "device": "cpu", "batch_size": 8}}
    belebele = params["tasks"]["belebele"]
    belebele.update(languages=["eng_Latn", "jpn_Jpan"], templates=["paper", "instruct"], limit=4,
                    source={"kind": "local", "path": "data/raw/belebele"})
    (repo / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")

    run(repo, "git", "init", "-q", "-b", "main")
    dvc(repo, "add", "data/raw/belebele")
    dvc(repo, "remote", "add", "-d", "storage", str(base / "remote"))
    run(repo, "git", "add", "-A")
    run(repo, "git", "commit", "-q", "-m", "workflow, dataset tracked by DVC, local remote")
    return repo


@pytest.mark.workflow
def test_dataset_is_tracked_by_dvc_not_git(repo):
    tracked = run(repo, "git", "ls-files").split()
    assert "data/raw/belebele.dvc" in tracked
    assert not [p for p in tracked if p.startswith("data/raw/belebele/")]
    assert "data/samples/belebele/eng_Latn.jsonl" in tracked  # the bundled sample stays in git


# What DVC declares as the stage's outputs (dvc.yaml), each compared before and after an experiment.
DECLARED = ["data/prepared", "results/prompts", "results/generations", "results/raw", "results/scores",
            "results/outcomes", "results/leaderboard.csv", "results/leaderboard.md", "results/metrics.json",
            "results/headline.json", "results/tables/by_template.csv", "results/tables/by_language.csv"]


def outputs(repo: Path) -> dict[str, tuple[int, str]]:
    """Every file of the declared outputs: (mtime, SHA-256)."""
    found = {}
    for name in DECLARED:
        path = repo / name
        for p in ([path] if path.is_file() else sorted(path.rglob("*"))):
            if p.is_file():
                found[p.relative_to(repo).as_posix()] = (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
    return found


@pytest.fixture(scope="module")
def experiments(repo) -> dict:
    """The quickstart (a plain Snakemake run, recorded with `dvc commit`), then two experiments: baseline, and
    the `instruct` template edited. What each wrote, and the declared outputs before and after each."""
    written = {}
    written["quickstart-log"] = snakemake(repo).stderr  # `make run`: it records what it built in dvc.lock itself
    written["quickstart"] = outputs(repo)

    written["baseline-log"] = dvc(repo, "exp", "run", "-n", "baseline")
    written["baseline"] = json.loads((repo / "results/headline.json").read_text())
    written["after-baseline"] = outputs(repo)

    template = repo / "prompts/belebele/instruct.yaml"
    text = template.read_text(encoding="utf-8")
    edited = text.replace("output the letter", "output only the letter")
    assert edited != text
    template.write_text(edited, encoding="utf-8")
    written["edited-log"] = dvc(repo, "exp", "run", "-n", "edited-instruct")
    written["edited-instruct"] = json.loads((repo / "results/headline.json").read_text())
    written["after-edit"] = outputs(repo)
    return written


@pytest.mark.workflow
def test_first_experiment_after_the_quickstart_reuses_everything(experiments):
    assert "babeleval: outputs recorded in dvc.lock" in experiments["quickstart-log"], experiments["quickstart-log"]
    log = experiments["baseline-log"]
    # the stage is always_changed: DVC runs Snakemake, which finds nothing to do
    assert "No file hash info" not in log and "Running stage 'evaluate'" in log, log
    before, after = experiments["quickstart"], experiments["after-baseline"]
    # nothing deleted, nothing rewritten: every declared file has its quickstart bytes...
    assert {path: digest for path, (_, digest) in after.items()} == {path: digest for path, (_, digest) in before.items()}
    # ...and time, but the files DVC caches one by one: recording the stage, DVC sets their time anew (the same
    # bytes; Snakemake compares a small input's checksum before rerunning on a newer time). metrics.json, written by
    # the job that writes leaderboard.csv and not DVC's, keeps its time: the job did not run again.
    retimed = {"results/leaderboard.csv", "results/leaderboard.md"}
    assert {p: v for p, v in after.items() if p not in retimed} == {p: v for p, v in before.items() if p not in retimed}


@pytest.mark.workflow
def test_edited_template_reruns_only_its_own_combinations(experiments):
    before, after = experiments["after-baseline"], experiments["after-edit"]
    assert "No file hash info" not in experiments["edited-log"]
    assert sorted(before) == sorted(after)  # no declared output deleted
    for name in ("results/generations", "results/raw", "results/scores", "results/outcomes", "results/prompts"):
        for path in before:
            if path.startswith(name + "/"):
                changed = before[path] != after[path]
                assert changed == path.endswith(("/instruct.jsonl", "/instruct.json", "/instruct.parquet")), path
    instruct = [p for p in before if p.startswith("results/generations/") and p.endswith("/instruct.jsonl")]
    assert instruct and all(before[p][0] != after[p][0] for p in instruct)


@pytest.mark.workflow
def test_exp_show_holds_both_experiments_with_their_own_metrics(repo, experiments):
    show = json.loads(dvc(repo, "exp", "show", "--json"))
    metrics = exp_metrics(show)
    assert metrics.get("baseline") == experiments["baseline"]
    assert metrics.get("edited-instruct") == experiments["edited-instruct"]
    for name in ("baseline", "edited-instruct"):
        # one headline number per task (one model: named by the task), on the leaderboard's scale (accuracy in %)
        assert set(metrics[name]) == set(yaml.safe_load((repo / "params.yaml").read_text(encoding="utf-8"))["tasks"])
        assert 0.0 <= metrics[name]["belebele"] <= 100.0


@pytest.mark.workflow
def test_exp_show_fits_a_terminal(repo, experiments):
    """A column per task (one model), not per language x template x metric; `--only-changed` (docs/experiments.md)
    narrows the table to what the experiments changed, here the instruct template."""
    header = dvc(repo, "exp", "show", "--csv").splitlines()[0].split(",")
    tasks = yaml.safe_load((repo / "params.yaml").read_text(encoding="utf-8"))["tasks"]
    assert [c for c in header if c in tasks] == sorted(tasks), header
    changed = dvc(repo, "exp", "show", "--csv", "--only-changed").splitlines()[0].split(",")
    assert "belebele.instruct" in changed and "belebele.paper" not in changed, changed  # its template's hash
    assert not [c for c in changed if c == "seed" or c.startswith(("tasks.", "models."))], changed  # no param did
    narrow = run_wide(repo, 120, "exp", "show", "--no-pager", "--only-changed")
    lines = narrow.splitlines()
    assert max(len(line) for line in lines) <= 120, narrow
    assert "belebele" in lines[1].split(), narrow  # the first headline column is never folded away
    for name in ("baseline", "edited-instruct"):
        [row] = [line for line in lines if f"[{name}]" in line]
        assert re.search(r"\s\d+(\.\d+)?\s", row), row  # its belebele headline


@pytest.mark.workflow
def test_exp_diff_shows_the_metric_change_or_nothing(repo, experiments):
    diff = json.loads(dvc(repo, "exp", "diff", "baseline", "edited-instruct", "--json"))
    # only the edited task's headline can differ (the tiny model may answer the edited prompt no better)
    changed = diff["metrics"].get("results/headline.json", {})
    assert set(changed) <= {"belebele"}, changed
    assert "tasks.belebele.templates" not in str(diff["params"])
    # the same experiment against itself: no metric changed; `dvc exp diff` prints nothing, and with `--all`
    # (docs/experiments.md) it lists every headline with a change of 0
    assert json.loads(dvc(repo, "exp", "diff", "baseline", "baseline", "--json")) == {"metrics": {}, "params": {}}
    assert not dvc(repo, "exp", "diff", "baseline", "baseline").strip()
    listed = dvc(repo, "exp", "diff", "baseline", "baseline", "--all")
    rows = [line.split() for line in listed.splitlines() if line.startswith("results/headline.json")]
    assert {row[1] for row in rows} == set(yaml.safe_load((repo / "params.yaml").read_text(encoding="utf-8"))["tasks"]), listed
    assert all(row[-1] == "0" for row in rows), listed


@pytest.mark.workflow
def test_plots_render_for_both_experiments(repo, experiments):
    out = json.loads(dvc(repo, "plots", "diff", "baseline", "edited-instruct", "--json", "--split"))
    assert not out.get("errors"), out.get("errors")
    for name in ("by_template", "by_language"):
        [(key, [plot])] = [(k, v) for k, v in out["data"].items() if name in k]
        assert plot["revisions"] == ["baseline", "edited-instruct"], key


@pytest.mark.workflow
def test_push_then_pull_into_a_fresh_clone(repo, experiments, tmp_path):
    scores_file = "results/scores/tiny-llama/belebele/jpn_Jpan/instruct.json"
    scores = json.loads((repo / scores_file).read_text())
    assert scores["provenance"]["template"]["sha256"] == scores["template_sha256"]
    assert scores["provenance"]["code"]["commit"]  # a git repository: the commit is known

    run(repo, "git", "add", "-A")
    run(repo, "git", "commit", "-q", "-m", "edited instruct template, with results")
    dvc(repo, "push")

    clone = tmp_path / "clone"
    run(tmp_path, "git", "clone", "-q", str(repo), str(clone))
    assert not (clone / "data/raw/belebele").exists() and not (clone / "results/generations").exists()
    dvc(clone, "pull")
    for path in ["data/raw/belebele", "data/prepared", "results/prompts", "results/generations", "results/raw",
                 "results/scores", "results/outcomes"]:
        assert tree_digest(clone / path) == tree_digest(repo / path), path
    for path in ["results/metrics.json", "results/tables/by_template.csv", "results/leaderboard.csv"]:
        assert (clone / path).read_bytes() == (repo / path).read_bytes(), path
    # every output as dvc.lock records it; the stage itself is always_changed (Snakemake decides)
    assert dvc(clone, "status").split() == ["evaluate:", "always", "changed"]
    # and Snakemake, run in the clone, finds nothing to redo but what DVC does not version
    # (builtin models are rebuilt from their seed; scores must not change)
    snakemake(clone)
    assert (clone / "results/metrics.json").read_bytes() == (repo / "results/metrics.json").read_bytes()


def test_no_workflow_job_calls_dvc():
    # DVC holds the repository lock while the stage runs: a job calling dvc would deadlock or fail
    calls = re.compile(r"""(\bimport dvc\b|\bfrom dvc\b|["'\s]dvc\s+(add|commit|push|pull|repro|exp|checkout)\b)""")
    # the command-line tools (babeleval.cli: compare reads other revisions through DVC) are what users run between
    # runs; no job imports them (the stages below never import cli: tests/test_import_graph.py; nor a script)
    user_commands = ROOT / "workflow/babeleval/cli"
    entry_point = ROOT / "workflow/babeleval/__main__.py"  # python -m babeleval <command>
    # the main Snakemake process, once its jobs are done (onsuccess), records a plain run's outputs: never inside
    # a DVC stage (DVC_STAGE set), and never from a job
    end_of_run = ROOT / "workflow/babeleval/grid/run_lock.py"
    assert 'os.environ.get("DVC_STAGE")' in end_of_run.read_text(encoding="utf-8")
    for path in sorted((ROOT / "workflow").rglob("*")):
        if path.suffix in {".py", ".smk", ".sh"} and path.is_file() and user_commands not in path.parents \
                and path not in (entry_point, end_of_run):
            text = path.read_text(encoding="utf-8")
            assert not calls.search(text), f"{path} calls dvc"
            assert "babeleval.cli" not in text, f"{path} imports a command-line tool"
