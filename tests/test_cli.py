"""One way to call the command-line tools: ``python -m babeleval <command>``."""

import subprocess
import sys

from babeleval.cli import COMMANDS, main


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
