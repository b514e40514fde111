"""Adding a task family is one ``register`` call with everything about it (docs/extending.md, "Adding a task family").

A small family (repeat a word) and a task of it are written to a temporary directory outside the package and
registered through params.yaml's ``modules``; validation resolves its combination from the family alone, and its
items are rendered and scored in this process by the family's own scorer, into the family's default metrics.
"""

from __future__ import annotations

import os
import textwrap

import pytest

from conftest import ROOT

from babeleval.core import extensions
from babeleval.core.errors import ConfigError
from babeleval.grid.params import validate
from babeleval.prompts.render import build_requests
from babeleval.score.job import score_combination
from babeleval.tasks import TASKS, get_task
from babeleval.tasks.families import FAMILIES, SCORERS, get_family

FAMILY_MODULE = '''
# my_families/echo.py: the model repeats a word; right when its reply is the word
from pathlib import Path

from babeleval.tasks.base import Task
from babeleval.tasks.families import Family, register


def score_echo(record, template, parsed):
    """One record: the reply read as text (parsed), right when it is the word, case aside."""
    answer = parsed.answer if parsed.ok else None
    return {"prediction": answer, "parsed": parsed.ok, "parse_error": parsed.error, "gold": record["answer"],
            "correct": answer is not None and answer.casefold() == record["answer"].casefold()}


register(Family("echo", {"generate": ("acc", "parse_failure_rate")}, parser_kinds=("text",), choices=False,
                scorer=score_echo, target_language=True))


class Echo(Task):
    NAME = "echo"
    FAMILY = "echo"

    def read_local(self, files, language, split):  # one word a line
        words = files[0].read_text(encoding="utf-8").split()
        return [{"id": f"{language}-{number}", "word": word} for number, word in enumerate(words, start=1)]

    def local_files(self, source, language, root, split, options):
        return [Path(root) / source["path"] / f"{language}.txt"]

    def items(self, rows, language, where, options):
        return [{**row, "task": "echo", "language": language, "group": row["id"], "answer": row["word"]}
                for row in rows]
'''

TEMPLATE = '''
description: Asks the model to repeat one word; its reply is read as text.
reference: Written for the test of adding a task family.
mode: generate
fewshot: {n: 0}
prompt: |-
  Repeat this word and nothing else: {{ word }}
target: "{{ answer }}"
generation:
  decoding: greedy
  max_new_tokens: 8
  stop: []
parser: translation
'''

WORDS = {"eng_Latn": ["apple", "river", "stone"], "jpn_Jpan": ["りんご", "川", "石"]}


@pytest.fixture
def registries(monkeypatch):
    """The registries (process-global) and the exported extension files, as they were before the test."""
    monkeypatch.setenv(extensions.ENV, os.environ.get(extensions.ENV, ""))
    before = [(registry, dict(registry)) for registry in (TASKS, FAMILIES, SCORERS)]
    yield
    for registry, saved in before:
        registry.clear()
        registry.update(saved)


def write_grid(tmp_path, module: str = FAMILY_MODULE) -> dict:
    (tmp_path / "my_families").mkdir()
    (tmp_path / "my_families/echo.py").write_text(module, encoding="utf-8")
    (tmp_path / "prompts/echo").mkdir(parents=True)
    (tmp_path / "prompts/echo/repeat.yaml").write_text(textwrap.dedent(TEMPLATE).lstrip(), encoding="utf-8")
    (tmp_path / "data/echo").mkdir(parents=True)
    for language, words in WORDS.items():
        (tmp_path / f"data/echo/{language}.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
    return {"seed": 1, "modules": ["my_families/echo.py"],
            "models": {"tiny-llama": {"backend": "hf", "builtin": "tiny-llama"}},
            "decoding": {"greedy": {"do_sample": False}},
            "tasks": {"echo": {"languages": list(WORDS), "templates": ["repeat"],
                               "source": {"kind": "local", "path": "data/echo"}}}}


def test_a_family_from_a_temporary_directory_is_scored_end_to_end(tmp_path, registries):
    grid = validate(write_grid(tmp_path), root=tmp_path)

    record = grid.record("tiny-llama", "echo", "jpn_Jpan", "repeat")
    assert record.family == "echo" and record.parser == "translation"
    assert [metric.name for metric in record.metrics] == ["acc", "parse_failure_rate"]  # the family's defaults
    assert [metric.name for metric in record.metrics if metric.headline] == ["acc"]
    assert record.metric_options["target_language"] == "jpn_Jpan"  # the family asks; the task says which

    entry = grid.tasks["echo"]
    template = entry.templates["repeat"]
    items = get_task("echo").load(dict(entry.source), "jpn_Jpan", root=tmp_path)
    requests = build_requests(template, items, items, fewshot=record.prompts.fewshot, seed=grid.seed)
    assert [request["prompt"] for request in requests] == [f"Repeat this word and nothing else: {word}"
                                                           for word in WORDS["jpn_Jpan"]]
    replies = ["りんご", "<think>a river</think> 川", "   "]  # right; right once its reasoning is set aside; empty
    generations = [{**request, "response": reply, "finish_reason": "stop"} for request, reply in zip(requests, replies)]

    scored, values, _ = score_combination(generations, template, record.family, record.metric_options,
                                          tuple(metric.name for metric in record.metrics))

    assert [row["correct"] for row in scored] == [True, True, False]
    assert [row["parse_error"] for row in scored][:2] == [None, None]
    assert scored[2]["parse_error"].startswith("empty response")
    assert "reasoning_chars" in scored[1]  # every generated record keeps its reply's structure
    assert values == {"acc": pytest.approx(2 / 3), "parse_failure_rate": pytest.approx(1 / 3)}


def test_a_family_name_already_taken_is_refused(tmp_path, registries):
    clash = FAMILY_MODULE.replace('Family("echo"', 'Family("translation"').replace('FAMILY = "echo"',
                                                                                  'FAMILY = "translation"')
    built_in = get_family("translation")
    with pytest.raises(ConfigError, match=r"params\.yaml: modules: .*echo\.py: task family 'translation' is "
                                          r"already registered; rename it"):
        validate(write_grid(tmp_path, clash), root=tmp_path)
    assert get_family("translation") is built_in and "echo" not in TASKS


def test_a_task_of_an_unknown_family_names_the_closest(tmp_path, registries):
    misspelt = FAMILY_MODULE.replace('FAMILY = "echo"', 'FAMILY = "ecko"')
    with pytest.raises(ConfigError, match=r"echo\.py: task 'echo': unknown task family 'ecko' \(known: .*echo.*; "
                                          r"did you mean 'echo'\?\)"):
        validate(write_grid(tmp_path, misspelt), root=tmp_path)
    with pytest.raises(ConfigError, match=r"unknown task family 'multiple_choise' \(known: classification, .*; did "
                                          r"you mean 'multiple_choice'\?\)"):
        get_family("multiple_choise")


def test_the_documented_family_is_the_one_tested():
    assert FAMILY_MODULE.strip() in (ROOT / "docs/extending.md").read_text(encoding="utf-8")
