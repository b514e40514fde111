"""The oracle run: every item's gold answer, served by an OpenAI-compatible endpoint, scores the maximum.

Over every task, language and template of the bundled samples (data/samples; templates: every file under
prompts/), a scripted server (tests/fake_openai.py, completions endpoint) answers each generate prompt with
the gold answer in the form its template asks for (the template's own exemplar target: a letter, a number,
a span, a label word, a translation; after reasoning and ``####`` where the prompt asks for that), and gives
the gold continuation of a log-likelihood prompt the highest log-probability. Each combination must score its
metrics' maximum with no parse failure. A second pass answers a fixed wrong choice (the next letter, label or
continuation; the gold number plus one; a span or translation sharing nothing with the gold) and must score
the minimum. Prompts are built, generated and scored by the workflow's own functions (``show.render_for``,
``generate.run``, ``scoring.score_files``) for each combination, not through Snakemake: the whole grid is
some 60 combinations. ``test_oracle_through_the_workflow`` (slow) runs the default grid through Snakemake
against the same oracle: prepared data, rendered prompts, generation, scoring and aggregation as a user runs them.
"""

from __future__ import annotations

import functools
import math
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from babeleval.generate import job as generate
from babeleval.generate.backends import model_config
from babeleval.score import job as scoring
from babeleval.grid.params import load_params, validate
from babeleval.grid.resolve import decoding_settings
from babeleval.core.jsonl import write_jsonl
from babeleval.prompts.render import target_variables
from babeleval.cli.show import render_for
from babeleval.tasks import get_task
from babeleval.prompts.templates import load_template
from conftest import ROOT
from fake_openai import FakeOpenAI

SAMPLES = "data/samples"
# Languages with bundled data, per task (JaQuAD has none: it is read from the hub only).
LANGUAGES = {
    "belebele": ["eng_Latn", "fra_Latn", "hin_Deva", "jpn_Jpan"],
    "jcommonsenseqa": ["jpn_Jpan"], "jnli": ["jpn_Jpan"], "marc_ja": ["jpn_Jpan"], "jsquad": ["jpn_Jpan"],
    "mmlu": ["eng_Latn", "hin_Deva", "jpn_Jpan"], "mgsm": ["eng_Latn", "jpn_Jpan"],
    "arc": ["eng_Latn", "swh_Latn"], "truthfulqa": ["eng_Latn", "swh_Latn"], "sib200": ["eng_Latn", "jpn_Jpan"],
    "translation_to": ["hin_Deva", "jpn_Jpan"], "translation_from": ["hin_Deva", "jpn_Jpan"],
    "topic_classification": ["eng_Latn", "hin_Deva", "jpn_Jpan"],
}
DATA = {"translation_to": "flores_plus", "translation_from": "flores_plus", "topic_classification": "flores_plus"}
NO_BUNDLED_DATA = {"jaquad"}
# prompts/lmeval holds the pass-through template of lm-eval tasks (tasks/lmeval.py), whose prompts are lm-eval's own:
# no task of that name; lm-eval tasks are checked against lm-eval itself (tests/test_lmeval_tasks.py)
NOT_A_TASK = {"lmeval"}

BEST = {"acc": 1.0, "acc_norm": 1.0, "balanced_acc": 1.0, "macro_f1": 1.0, "exact_match": 100.0, "f1": 100.0,
        "bleu": 100.0, "chrf": 100.0, "parse_failure_rate": 0.0}
WORST = {"acc": 0.0, "acc_norm": 0.0, "balanced_acc": 0.0, "macro_f1": 0.0, "exact_match": 0.0, "f1": 0.0,
         "bleu": 0.0, "chrf": 0.0, "parse_failure_rate": 0.0}
NOTHING_IN_COMMON = "☃ ☃ ☃"  # no character of any reference or gold span


def templates_of(task: str) -> list[str]:
    return sorted(path.stem for path in (ROOT / "prompts" / task).glob("*.yaml"))


def combinations() -> list[tuple[str, str]]:
    return [(task, template) for task in sorted(LANGUAGES) for template in templates_of(task)]


def test_every_task_and_template_is_in_the_oracle_run():
    tasks = {path.name for path in (ROOT / "prompts").iterdir() if path.is_dir()}
    assert tasks - NO_BUNDLED_DATA - NOT_A_TASK == set(LANGUAGES)


@pytest.fixture(scope="module")
def server():
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture(scope="module")
def params_file(server, tmp_path_factory) -> Path:
    params = {
        "seed": 1234,
        "models": {"oracle": {"backend": "openai", "model": "oracle", "base_url": server.base_url,
                              "endpoint": "completions", "concurrency": 8, "max_retries": 0}},
        "tasks": {task: {"languages": languages, "templates": templates_of(task),
                         "source": {"kind": "local", "path": f"{SAMPLES}/{DATA.get(task, task)}"}}
                  for task, languages in LANGUAGES.items()},
        "decoding": {"greedy": {"do_sample": False},
                     "llama-precise": {"do_sample": True, "temperature": 0.7, "top_p": 0.1, "top_k": 40,
                                       "repetition_penalty": 1.18}},
    }
    validate(params, root=ROOT)  # the grid is one a user could run
    path = tmp_path_factory.mktemp("oracle") / "params.yaml"
    path.write_text(yaml.safe_dump(params, allow_unicode=True), encoding="utf-8")
    return path


# -- what the oracle answers ----------------------------------------------------------------------------


def reply(template, request: dict, answer) -> str:
    """An answer in the form the template asks for: its exemplar target, after reasoning where it asks for '####'."""
    target = template.render_target(target_variables({"choices": request.get("choices"), "answer": answer},
                                                     template))
    if "####" in template.prompt:
        return f"Let me work through it step by step; that settles it.\n#### {target.strip()}"
    return target


def wrong(family: str, request: dict):
    """A fixed wrong answer: the next choice, the gold number plus one, or a text sharing nothing with the gold."""
    if request.get("choices") is not None and isinstance(request["answer"], int):
        return (request["answer"] + 1) % len(request["choices"])
    if family == "math":
        return str(Decimal(request["answer"]) + 1)
    return [NOTHING_IN_COMMON] if family == "extractive_qa" else NOTHING_IN_COMMON


@functools.lru_cache(maxsize=1)
def grid_of(params_file: Path):
    """The oracle grid, validated once: each combination is scored as its resolved record says."""
    return load_params(params_file, root=ROOT)


def run_combination(server, params_file: Path, tmp_path: Path, task: str, template_name: str, language: str,
                    oracle: bool, requests: list[dict] | None = None) -> dict:
    template = load_template(task, template_name)
    family = get_task(task).FAMILY
    requests = requests or render_for(str(params_file), task, language, template_name)
    answers = {r["id"]: r["answer"] if oracle else wrong(family, r) for r in requests}
    if template.mode == "loglikelihood":
        chosen = {r["prompt"] + r["continuations"][answers[r["id"]]] for r in requests}
        server.token_logprob = lambda prompt: -0.01 if prompt in chosen else -20.0
    else:
        replies = {r["prompt"]: reply(template, r, answers[r["id"]]) for r in requests}
        server.replies = replies.__getitem__
    requests_file, generations = tmp_path / "requests.jsonl", tmp_path / "generations.jsonl"
    write_jsonl(requests_file, requests)
    spec = yaml.safe_load(params_file.read_text(encoding="utf-8"))
    settings = decoding_settings(
        template.mode, {"max_new_tokens": template.generation.max_new_tokens, "stop": template.generation.stop},
        spec["decoding"][template.generation.decoding], spec["seed"])
    generate.run(generate.JobModel(model_config(spec["models"]["oracle"]), "oracle"), template.mode, settings,
                 generate.JobFiles({language: str(requests_file)}, {language: str(generations)}, None))
    record = grid_of(params_file).record("oracle", task, language, template_name).as_json()
    return scoring.score_files(generations=str(generations), record=record,
                               raw_out=str(tmp_path / "raw.jsonl"), scores_out=str(tmp_path / "scores.json"),
                               labels={"model": "oracle", "task": task, "language": language,
                                       "template": template_name})


@pytest.mark.parametrize("task,template_name", combinations(), ids=lambda v: v)
def test_gold_answers_score_the_maximum_and_a_wrong_choice_the_minimum(task, template_name, server, params_file,
                                                                      tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)  # templates and data are found from the repository root, as in the workflow
    for language in LANGUAGES[task]:
        requests = render_for(str(params_file), task, language, template_name)
        for oracle, expected in ((True, BEST), (False, WORST)):
            workdir = tmp_path / language / ("gold" if oracle else "wrong")
            workdir.mkdir(parents=True)
            summary = run_combination(server, params_file, workdir, task, template_name, language, oracle, requests)
            where = f"{task}/{language}/{template_name} ({'gold' if oracle else 'wrong'} answers)"
            assert summary["n"] > 0 and summary["parse_failures"] == 0, (where, summary)
            for name, value in summary["metrics"].items():
                assert math.isclose(value, expected[name], abs_tol=1e-9), (where, name, value, summary)


def test_perfect_japanese_translation_scores_full_bleu(server, params_file, tmp_path, monkeypatch):
    """A perfect translation into Japanese is BLEU 100 (with sacrebleu's 13a tokens it was 0: one token a sentence)."""
    monkeypatch.chdir(ROOT)
    summary = run_combination(server, params_file, tmp_path, "translation_to", "en_zeroshot", "jpn_Jpan", True)
    assert "tok:13a" not in summary["signatures"]["bleu"], summary["signatures"]["bleu"]
    assert summary["metrics"]["bleu"] == pytest.approx(100.0)


@pytest.mark.workflow
@pytest.mark.slow
def test_oracle_through_the_workflow(tmp_path, monkeypatch):
    """The default grid, run by Snakemake against the oracle: every score file holds its metrics' maximum."""
    import json
    import subprocess
    import sys

    from conftest import copy_workflow

    workdir = copy_workflow(tmp_path / "wf")
    params_path = workdir / "params.yaml"
    with FakeOpenAI() as fake:
        params = yaml.safe_load(params_path.read_text(encoding="utf-8"))
        params["models"] = {"oracle": {"backend": "openai", "model": "oracle", "base_url": fake.base_url,
                                       "endpoint": "completions", "concurrency": 8, "max_retries": 0}}
        params_path.write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")
        monkeypatch.chdir(workdir)
        replies, chosen = {}, set()
        for task, spec in params["tasks"].items():
            for template_name in spec["templates"]:
                template = load_template(task, template_name)
                for language in spec["languages"]:
                    for request in render_for(str(params_path), task, language, template_name):
                        if template.mode == "loglikelihood":
                            chosen.add(request["prompt"] + request["continuations"][request["answer"]])
                        else:
                            replies[request["prompt"]] = reply(template, request, request["answer"])
        fake.replies = replies.__getitem__
        fake.token_logprob = lambda prompt: -0.01 if prompt in chosen else -20.0
        proc = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2", "--resources", "gpu=1"],
                              cwd=workdir, capture_output=True, text=True, timeout=1200)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]

    scores = sorted((workdir / "results" / "scores" / "oracle").rglob("*.json"))
    expected = {(t, lang, tpl) for t, spec in params["tasks"].items() for lang in spec["languages"]
                for tpl in spec["templates"]}
    assert {(p.parts[-3], p.parts[-2], p.stem) for p in scores} == expected
    for path in scores:
        summary = json.loads(path.read_text(encoding="utf-8"))
        assert summary["parse_failures"] == 0 and summary["truncated_prompts"] == 0, (path, summary)
        for name, value in summary["metrics"].items():
            assert math.isclose(value, BEST[name], abs_tol=1e-9), (path, name, value)
