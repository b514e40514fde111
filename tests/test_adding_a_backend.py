"""Adding a backend is one extension file (docs/extending.md, "Adding a backend").

A scripted backend (it always picks the first choice and always says the same text) with a config of its own
is written to a temporary directory outside the package, registered through params.yaml's ``modules``, and run
end to end through Snakemake on Belebele's three templates (log-likelihood and generation): generation,
scoring, tables and the report pick it up with no other edit. Its output setting enters the response cache's
fingerprint; a change to its speed setting reruns nothing, a change to its output setting reruns generation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
import yaml

from conftest import copy_workflow, snakemake, TINY_GRID

from babeleval.analysis.records import read_table
from babeleval.core.errors import ConfigError
from babeleval.core.jsonl import read_jsonl
from babeleval.generate.backends import BACKENDS, get_backend, load_backend, register
from babeleval.generate.backends.base import Decoding, GenerationRequest
from babeleval.generate.backends.config import ModelConfig
from babeleval.generate.fingerprint import OUTPUT, setting
from babeleval.grid.params import validate

BACKEND_MODULE = '''
"""A scripted backend: no model, the same answers every time (the first choice; a fixed text)."""

import time
from dataclasses import dataclass

from babeleval.generate.backends import register
from babeleval.generate.backends.base import GenerationResult, LoglikelihoodResult
from babeleval.generate.backends.config import ModelConfig
from babeleval.generate.fingerprint import OUTPUT, SPEED, setting


@dataclass(frozen=True)
class ScriptedConfig(ModelConfig):
    answer: str = setting("A", OUTPUT)  # the text of every generation
    pause: float = setting(0.0, SPEED)  # seconds to wait before each batch: speed only


class Scripted:
    def __init__(self, config, model_path):
        self.answer, self.pause = config.answer, config.pause

    def loglikelihood(self, requests):
        time.sleep(self.pause)
        return [LoglikelihoodResult([0.0] + [-1.0] * (len(r.continuations) - 1),
                                    [True] + [False] * (len(r.continuations) - 1),
                                    [1] * len(r.continuations), len(r.context.split())) for r in requests]

    def generate(self, requests, decoding):
        time.sleep(self.pause)
        return [GenerationResult(self.answer, len(r.prompt.split()), 1, "stop") for r in requests]


register("scripted", ScriptedConfig, Scripted, gpu=False, conda_env="envs/cpu.yaml")
'''

TEMPLATES = ["paper", "blog", "instruct"]  # log-likelihood, generation (two parsers)


def write_params(workdir, params) -> None:
    (workdir / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")


@pytest.mark.workflow
@pytest.mark.slow
def test_a_backend_from_a_temporary_directory_runs_end_to_end(tmp_path, built_tiny_model):
    outside = tmp_path / "my_backends"
    outside.mkdir()
    (outside / "scripted.py").write_text(BACKEND_MODULE, encoding="utf-8")
    workdir = copy_workflow(tmp_path / "wf", tasks=("belebele",), built=built_tiny_model)
    params = yaml.safe_load((workdir / "params.yaml").read_text(encoding="utf-8"))
    params["modules"] = [str(outside / "scripted.py")]
    params["models"] = {"scripted": {"backend": "scripted", "model": "scripted-v1", "answer": "A", "pause": 0}}
    params["tasks"]["belebele"]["templates"] = TEMPLATES
    write_params(workdir, params)

    snakemake(workdir)  # the default target: metrics, tables and the analysis report

    languages = params["tasks"]["belebele"]["languages"]
    for language in languages:
        for template in TEMPLATES:
            raw = read_jsonl(workdir / f"results/raw/scripted/belebele/{language}/{template}.jsonl")
            assert [r["correct"] for r in raw] == [r["answer"] == 0 for r in raw], (language, template)
            scores = json.loads((workdir / f"results/scores/scripted/belebele/{language}/{template}.json").read_text())
            assert scores["metrics"]["acc"] == pytest.approx(sum(r["answer"] == 0 for r in raw) / len(raw))
    board = read_table(workdir / "results/leaderboard.csv")
    rows = board[(board.model == "scripted") & (board.metric == "acc")]
    assert sorted(zip(rows.language, rows.template)) == sorted((lang, t) for lang in languages for t in TEMPLATES)
    assert "scripted" in (workdir / "results/report.html").read_text(encoding="utf-8")
    record = read_jsonl(workdir / f"results/generations/scripted/belebele/{languages[0]}/blog.jsonl")[0]
    assert record["response"] == "A"
    assert record["model_fingerprint"] == {"backend": "scripted", "model": "scripted-v1", "answer": "A"}

    params["models"]["scripted"]["pause"] = 0.01  # speed only: nothing to redo
    write_params(workdir, params)
    assert "Nothing to be done" in snakemake(workdir, "-n").stdout
    params["models"]["scripted"]["answer"] = "B"  # another output: generation reruns, then scoring
    write_params(workdir, params)
    planned = snakemake(workdir, "-n").stdout
    assert "rule generate_belebele:" in planned and "rule score_belebele:" in planned


@pytest.fixture
def registry(monkeypatch):
    """The backend registry as it was, after the test: a backend the test registers is gone again."""
    monkeypatch.delenv("BABELEVAL_MODULES", raising=False)  # validation exports extension files to jobs
    before = dict(BACKENDS)
    yield
    BACKENDS.clear()
    BACKENDS.update(before)


def test_an_extension_backend_is_registered_and_its_settings_are_model_keys(tmp_path, repo_root, registry):
    (tmp_path / "scripted.py").write_text(BACKEND_MODULE, encoding="utf-8")
    params = yaml.safe_load(TINY_GRID.read_text(encoding="utf-8"))
    params["modules"] = [str(tmp_path / "scripted.py")]
    params["models"] = {"scripted": {"backend": "scripted", "model": "scripted-v1", "answer": "C", "pause": 0.5}}
    grid = validate(params, root=repo_root)
    config = grid.models["scripted"]
    assert (type(config).__name__, config.answer, config.pause) == ("ScriptedConfig", "C", 0.5)
    assert not get_backend("scripted").gpu and not get_backend("scripted").calls_api
    backend = load_backend(config, config.model_path())
    assert [r.text for r in backend.generate([GenerationRequest("Which one?", 4)], Decoding())] == ["C"]
    with pytest.raises(ConfigError, match=r"backend 'scripted' is already registered; rename it"):
        register("scripted", ModelConfig, type(backend), gpu=False, conda_env="envs/cpu.yaml")


def test_an_unknown_backend_names_the_registered_ones(repo_root):
    params = yaml.safe_load(TINY_GRID.read_text(encoding="utf-8"))
    params["models"]["tiny-llama"]["backend"] = "llamacpp"
    with pytest.raises(ConfigError, match=r"models\.tiny-llama\.backend: 'llamacpp' is not one of "
                                          r"\['hf', 'vllm', 'openai'"):
        validate(params, root=repo_root)
    with pytest.raises(ConfigError, match=r"unknown backend 'llamacpp' \(known: hf, openai, "):
        get_backend("llamacpp")


def test_a_setting_without_a_role_is_refused(registry):
    @dataclass(frozen=True)
    class Unclassified(ModelConfig):
        answer: str = setting("A", OUTPUT)
        temperature_hint: float = 0.0  # a plain field: what it does to the outputs is not said

    with pytest.raises(ConfigError, match=r"backend 'unclassified': Unclassified has setting temperature_hint "
                                          r"without a role"):
        register("unclassified", Unclassified, lambda config, path: None, gpu=False, conda_env="envs/cpu.yaml")
    assert "unclassified" not in BACKENDS
