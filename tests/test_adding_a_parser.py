"""Adding a parser is one registered function (docs/extending.md, "Adding a parser").

A parser written to a temporary directory outside the package is registered through params.yaml's
``modules``; a template then names it, the grid validates, and ``python -m babeleval parse`` runs it.
A name already taken stops the run naming the file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
import yaml

from conftest import ROOT

from babeleval.core import extensions
from babeleval.core.errors import ConfigError
from babeleval.grid.params import validate
from babeleval.score.parsers import PARSERS, parse, reason_of, register

# The parser of docs/extending.md ("Adding a parser").
PARSER_MODULE = '''
import re

from babeleval.core.choices import LETTERS
from babeleval.score.parsers import NO_ANSWER, Parsed, failure, register


@register("last_letter", kind="letter")
def last_letter(response: str, n_choices: int = 4) -> Parsed:
    """The last choice letter standing alone in the reply."""
    letters = re.findall(rf"\\b([{LETTERS[:n_choices]}])\\b", response)
    return Parsed(letters[-1]) if letters else failure(NO_ANSWER, "no choice letter")
'''

CLASHING_MODULE = '''
from babeleval.score.parsers import Parsed, register


@register("final_letter", "letter")
def my_final_letter(response, n_choices=4):
    """A second parser under a built-in's name."""
    return Parsed("A")
'''

TEMPLATE = '''
description: The question and its lettered choices; the last letter of the reply is its answer.
reference: Written for the test of adding a parser.
mode: generate
prompt: |-
  {{ passage }}
  Question: {{ question }}
  A: {{ choices[0] }}
  B: {{ choices[1] }}
  C: {{ choices[2] }}
  D: {{ choices[3] }}
  Answer:
target: " {{ answer_letter }}"
generation:
  decoding: greedy
  max_new_tokens: 8
parser: last_letter
'''


@pytest.fixture
def registry(monkeypatch):
    """The parser registry (process-global) and the exported extension files, as they were before the test."""
    monkeypatch.setenv(extensions.ENV, os.environ.get(extensions.ENV, ""))
    before = set(PARSERS)
    yield PARSERS
    for name in set(PARSERS) - before:
        del PARSERS[name]


def grid_params(tmp_path, modules: list[str]) -> dict:
    """A Belebele grid whose one template, written under ``tmp_path``, names the parser ``last_letter``."""
    (tmp_path / "prompts/belebele").mkdir(parents=True)
    (tmp_path / "prompts/belebele/last.yaml").write_text(textwrap.dedent(TEMPLATE).lstrip(), encoding="utf-8")
    (tmp_path / "data/belebele").mkdir(parents=True)
    (tmp_path / "data/belebele/eng_Latn.jsonl").touch()  # validation checks it is there; nothing reads it here
    return {"seed": 1, "modules": modules, "models": {"tiny-llama": {"backend": "hf", "builtin": "tiny-llama"}},
            "decoding": {"greedy": {"do_sample": False}},
            "tasks": {"belebele": {"languages": ["eng_Latn"], "templates": ["last"],
                                   "source": {"kind": "local", "path": "data/belebele"}}}}


def test_a_parser_from_an_extension_file_is_named_by_a_template(tmp_path, registry):
    (tmp_path / "my_parsers.py").write_text(PARSER_MODULE, encoding="utf-8")
    params = grid_params(tmp_path, ["my_parsers.py"])

    grid = validate(params, root=tmp_path)

    assert grid.tasks["belebele"].templates["last"].parser == "last_letter"
    assert registry["last_letter"].kind == "letter"
    assert registry["last_letter"].doc == "The last choice letter standing alone in the reply."
    assert parse("last_letter", "A? No: B, or rather C.").answer == "C"
    assert reason_of(parse("last_letter", "D", n_choices=3).error) == "no answer"


def test_the_documented_parser_is_the_one_tested():
    assert PARSER_MODULE.strip() in (ROOT / "docs/extending.md").read_text(encoding="utf-8")


def test_the_parse_command_runs_a_parser_from_an_extension_file(tmp_path):
    (tmp_path / "my_parsers.py").write_text(PARSER_MODULE, encoding="utf-8")
    (tmp_path / "params.yaml").write_text(yaml.safe_dump({"modules": ["my_parsers.py"]}), encoding="utf-8")
    (tmp_path / "outputs.jsonl").write_text(json.dumps({"id": 7, "response": "B, or rather C"}) + "\n",
                                            encoding="utf-8")

    def command(*args):  # in the workflow directory, which extension files are named relative to
        return subprocess.run([sys.executable, "-m", "babeleval", "parse", *args], cwd=tmp_path, capture_output=True,
                              text=True, timeout=60)

    proc = command("--params", "params.yaml", "--parser", "last_letter", "outputs.jsonl")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"line": 1, "id": 7, "answer": "C"}
    assert "last_letter" in command("--params", "params.yaml", "--list").stdout
    assert "last_letter" not in command("--list").stdout  # without --params, the built-in parsers only


def test_a_template_naming_an_unregistered_parser_is_refused(tmp_path, registry):
    with pytest.raises(ConfigError, match=r"prompts/belebele/last\.yaml: unknown parser 'last_letter'"):
        validate(grid_params(tmp_path, []), root=tmp_path)


def test_a_parser_name_already_taken_is_refused(tmp_path, registry):
    (tmp_path / "clash.py").write_text(CLASHING_MODULE, encoding="utf-8")
    built_in = registry["final_letter"]
    with pytest.raises(ConfigError, match=r"params\.yaml: modules: .*clash\.py: parser 'final_letter' is already "
                                          r"registered; rename it"):
        validate({"seed": 1, "modules": ["clash.py"], "models": {}, "tasks": {}, "decoding": {}}, root=tmp_path)
    assert registry["final_letter"] is built_in
    with pytest.raises(ConfigError, match=r"parser 'odd' reads kind 'word' \(known: letter, label, number, text\)"):
        register("odd", "word")
