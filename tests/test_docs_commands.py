"""Every command in README.md, docs/*.md and the headers of examples/*.yaml runs as written.

The shell blocks of the pages are extracted and each command is run in a fresh copy of the workflow (one whose
Belebele and MMLU outputs a first run built, so that commands reading them have them): Snakemake commands as dry
runs (``-n`` right after ``snakemake``, so that targets and options are read exactly as written), the package's
commands for real, ``make`` targets with ``make -n``, DVC's read-only commands for real and the others through
DVC's own argument parser. Commands that need what a copy cannot have (a named experiment, a remote, an editor)
are listed in ``NOT_RUN`` with the reason; a command in no class fails the test, so a new one must be placed.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, SHIPPED, copy_workflow

pytestmark = pytest.mark.slow

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "examples").glob("*.yaml"))]
COMMANDS = ("snakemake", "dvc", "python", ".venv/bin/python", "make", "git", "cp", "export", "source", "pip",
            "$EDITOR")
# what a copy of the workflow cannot run, by its first words, and why (each is run elsewhere or needs a place)
NOT_RUN = {
    "source .venv/bin/activate": "the test runs in this interpreter's environment",
    "$EDITOR": "an editor",
    "pip install": "installs packages",
    "git add dvc.lock": "needs a whole-grid run: tests/test_experiment_loop.py runs it",
    "git clone <repo>": "a placeholder for a repository's address",
    "python -m babeleval search": "a model evaluation of minutes: tests/test_variants_search.py runs the command",
    "python bench/": "a benchmark of minutes: bench/run_all.sh",
    "python -m pytest": "the test suite itself, which a copy of the workflow does not hold: CI runs it",
    "dvc exp apply": "needs the experiment a run of minutes makes",
    "snakemake --cores 2 --allowed-rules": "needs raw outputs and scores of the whole grid, made elsewhere",
    "python -m babeleval parse --params params.yaml --parser last_letter": "needs the parser the page adds first",
    "python -m babeleval estimate": "needs a run of a variant set (examples/prompt_budget.yaml, minutes): "
                                    "tests/test_prompt_budget_cli.py runs the command on such outputs",
}
# the same, for commands that are not run exactly as written here (with other arguments they are)
NOT_RUN_EXACTLY = {
    "python -m babeleval compare": "the workspace against a recorded baseline: tests/test_experiment_loop.py runs it",
}
# DVC commands run for real in the copy (they only read, or write local settings); the rest are parsed
DVC_RUN = ("dvc exp show", "dvc config --local", "dvc plots show")
# a compare of named experiments, run where they do not exist, must fail for that reason and that reason only
MISSING_EXPERIMENT = re.compile(r"'(baseline|terse-instruct)' is neither a git revision nor a DVC experiment")


def shell_blocks(page: Path) -> list[str]:
    """The shell blocks of a page: a Markdown page's bash/sh blocks; an example grid's header (its leading comment,
    whose indented lines are the commands that run it) as one block."""
    text = page.read_text(encoding="utf-8")
    if page.suffix == ".yaml":
        header = re.match(r"(?:#.*\n)*", text).group(0)
        return ["\n".join(line[len("#   "):] for line in header.splitlines() if line.startswith("#   "))]
    return [body for lang, body in re.findall(r"```(\w*)\n(.*?)```", text, re.S) if lang in ("bash", "sh", "shell", "")]


def shell_commands(page: Path) -> list[list[list[str]]]:
    """Each shell block of ``page`` as its lines, each line the commands it chains with && (comments stripped,
    continuations joined)."""
    blocks = []
    for body in shell_blocks(page):
        lines = []
        for line in body.replace("\\\n", " ").splitlines():
            chain = [part.strip() for part in re.sub(r"\s+#\s.*$", "", line).strip().split("&&")]
            if chain[0].split(" ", 1)[0] in COMMANDS:
                lines.append(chain)
        if lines:
            blocks.append(lines)
    return blocks


def env(copy: Path) -> dict[str, str]:
    bindir = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", ""),
            "PYTHONPATH": str(copy / "workflow"), "DVC_NO_ANALYTICS": "1", "COLUMNS": "120",
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}


def run(copy: Path, argv: list[str], timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=copy, env=env(copy), capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def copy(tmp_path_factory, built_tiny_model) -> Path:
    """A git + DVC repository of the workflow whose outputs the documented commands read are built."""
    copy = copy_workflow(tmp_path_factory.mktemp("docs") / "repo", built=built_tiny_model, generation_job=SHIPPED)
    # the pages name the default grid's models: its entries, run here on the tiny model's weights
    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    for entry in params["models"].values():
        entry.update(builtin="tiny-llama", max_new_tokens=24)
        entry.pop("chat", None)  # the tiny model has no chat template
    (copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")
    for name in (".gitignore", ".dvcignore", ".dvc/config", ".dvc/.gitignore", "pyproject.toml", "Makefile",
                 "examples", "bench", "results/template_hashes.yaml"):
        source, dest = ROOT / name, copy / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(source, dest) if source.is_dir() else shutil.copy2(source, dest)
    for command in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"], ["git", "commit", "-q", "-m", "copy"]):
        assert run(copy, command).returncode == 0
    built = run(copy, [sys.executable, "-m", "snakemake", "results/raw/smollm2-chat/mmlu/jpn_Jpan/en_zeroshot.jsonl",
                       "results/raw/smollm2-chat/belebele/jpn_Jpan/instruct.jsonl", "--cores", "2", "--resources",
                       "gpu=1"], timeout=1200)
    assert built.returncode == 0, built.stderr[-4000:]
    return copy


def not_run(command: str) -> str | None:
    words = command.replace(".venv/bin/python", "python")
    return NOT_RUN_EXACTLY.get(words) or next((why for start, why in NOT_RUN.items() if words.startswith(start)), None)


def check(copy: Path, command: str) -> str | None:
    """Run or check one documented command; a message when it does not work as written."""
    argv = shlex.split(command)
    if argv[0] in ("python", ".venv/bin/python"):
        argv[0] = sys.executable
    if argv[0] == "snakemake":
        argv = [sys.executable, "-m", "snakemake", *(argv[1:] if "--unlock" in argv else ["-n", *argv[1:]])]
    elif argv[0] == "make":
        argv = ["make", "-n", *argv[1:]]
    elif argv[0] == "export":
        return None  # a variable for the commands after it: nothing to check alone
    elif argv[0] == "dvc" and not command.startswith(DVC_RUN):
        from dvc.cli import parse_args

        try:
            parse_args(argv[1:])
        except (SystemExit, Exception) as exc:  # DVC's parser exits or raises on an unknown option
            return f"dvc does not accept it: {exc!r}"
        return None
    proc = run(copy, argv)
    out = proc.stdout + proc.stderr
    if proc.returncode != 0 and not MISSING_EXPERIMENT.search(out):
        return f"exit {proc.returncode}:\n{out[-3000:]}"
    return None


@pytest.mark.workflow
@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_documented_command_runs(copy, page):
    params = (copy / "params.yaml").read_text(encoding="utf-8")
    failures = []
    for block in shell_commands(page):
        for chain in block:
            for command in chain:
                if not_run(command):
                    break  # the rest of the chain needs what this one would have done
                problem = check(copy, command)
                if problem:
                    failures.append(f"{command}\n  {problem}")
        (copy / "params.yaml").write_text(params, encoding="utf-8")  # a block may copy an example grid in
    assert not failures, f"{page.name}:\n" + "\n".join(failures)


def test_commands_are_found():
    every = [command for page in PAGES for block in shell_commands(page) for chain in block for command in chain]
    assert "snakemake results/tables/variation_spread.csv results/report.html --cores 2 --resources gpu=1" in every
    assert any(command.startswith("python -m babeleval show --params examples/formatspread.yaml") for command in every)
    assert len(every) > 40
