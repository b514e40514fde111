"""One way to call the command-line tools: ``python -m babeleval <command>``."""

import subprocess
import sys

import pytest

from babeleval.cli import COMMANDS, main


@pytest.mark.workflow
def test_every_command_answers_its_help():
    for command in COMMANDS:
        proc = subprocess.run([sys.executable, "-m", "babeleval", command, "--help"], capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 0 and f"python -m babeleval {command}" in proc.stdout, (command, proc.stderr)


def test_an_unknown_or_missing_command_lists_the_commands(capsys):
    assert main(["shwo"]) == 2
    err = capsys.readouterr().err
    assert "unknown command 'shwo'" in err and "show, parse, search, compare, dvc-plots" in err
    assert main([]) == 2 and "usage: python -m babeleval <command>" in capsys.readouterr().err
    assert main(["--help"]) == 0


def test_compare_before_a_baseline_gives_the_command_that_records_it(tmp_path, capsys):
    """Right after a first run nothing is committed: compare says how to make that run the baseline."""
    import os
    from pathlib import Path

    from babeleval.cli import compare
    from babeleval.grid import run_lock

    env = {**os.environ, "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
           "DVC_NO_ANALYTICS": "1", "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    for command in (["git", "init", "-q"], [sys.executable, "-m", "dvc", "init", "-q"],
                    ["git", "commit", "-q", "-m", "a clone"]):
        subprocess.run(command, cwd=tmp_path, env=env, check=True, capture_output=True)
    raw = tmp_path / "results/raw/m/belebele/eng_Latn/paper.jsonl"
    raw.parent.mkdir(parents=True)
    raw.write_text('{"id": "q1", "correct": true}\n', encoding="utf-8")
    assert compare.main(["--repo", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "HEAD: no per-item outputs recorded at this revision" in err and run_lock.BASELINE in err, err
