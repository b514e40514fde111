"""Cost before the run (`plan`'s forecast): prompt tokens with the model's own tokenizer equal what the generation
job then counts; without a tokenizer, estimated and said so; a pilot's tokens per byte and completions; prices."""

import json

import pytest
import yaml
from conftest import ROOT, TINY_GRID

from babeleval.cli import forecast, plan as plan_cli
from babeleval.core import paths
from babeleval.core.jsonl import write_jsonl
from babeleval.generate import job as generate
from babeleval.grid.params import validate


def grid_of(models: dict, templates=("paper", "instruct")):
    params = yaml.safe_load(TINY_GRID.read_text(encoding="utf-8"))
    params["models"] = models
    belebele = params["tasks"]["belebele"]
    belebele.update(languages=["eng_Latn", "jpn_Jpan"], templates=list(templates), limit=4)
    params["tasks"] = {"belebele": belebele}
    return validate(params)


def test_a_local_models_prompt_tokens_are_what_its_generation_job_counts(tiny_model_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    grid = grid_of({"tiny": {"backend": "hf", "model": str(tiny_model_dir), "device": "cpu", "max_new_tokens": 3}})
    requests = plan_cli.rendered_requests(grid)
    predicted = forecast.forecast(grid, "tiny", requests, tmp_path)
    assert predicted.prompt_method == "counted with the model's tokenizer"
    assert predicted.requests == 16 and predicted.completion_bound == 8 * 3

    usage = {"prompt": 0, "completion": 0}
    for template in ("paper", "instruct"):
        record = grid.record("tiny", "belebele", "eng_Latn", template)
        files = {}
        for language in ("eng_Latn", "jpn_Jpan"):
            files[language] = str(tmp_path / f"{template}-{language}.jsonl")
            write_jsonl(files[language], requests["belebele", language, template])
        generate.run(generate.JobModel(grid.models["tiny"], str(tiny_model_dir)), record.mode, dict(record.decoding),
                     generate.JobFiles(files, {k: v + ".out" for k, v in files.items()}, None,
                                       str(tmp_path / f"{template}.usage.json")))
        tokens = json.loads((tmp_path / f"{template}.usage.json").read_text())["tokens_all_requests"]
        usage["prompt"] += tokens["prompt"]
        usage["completion"] += tokens["completion"]
    assert predicted.prompt_tokens == usage["prompt"]
    assert usage["completion"] <= predicted.completion_tokens == predicted.completion_bound  # no pilot: the bound


def test_an_api_model_is_estimated_and_says_so_then_measured_from_a_pilot(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    entry = {"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1", "chat": True,
             "max_new_tokens": 10, "prices": {"prompt": 1.0, "completion": 4.0}}
    grid = grid_of({"api": entry}, templates=("instruct",))
    requests = plan_cli.rendered_requests(grid)
    guessed = forecast.forecast(grid, "api", requests, tmp_path)
    assert guessed.prompt_method.startswith("estimated: 4 bytes a token")
    assert guessed.completion_methods == {"max_new_tokens (at most)"} and guessed.completion_tokens == 8 * 10
    assert guessed.cost == pytest.approx((guessed.prompt_tokens * 1.0 + 80 * 4.0) / 1e6)

    # a pilot's generations file for English: 2 tokens per 10 bytes, 3 completion tokens an answer
    rows = requests["belebele", "eng_Latn", "instruct"][:2]
    from babeleval.generate.backends.chat import build_messages
    pilot = []
    for row in rows:
        messages = build_messages(row, grid.models["api"])
        size = sum(len(m["content"].encode()) for m in messages)
        pilot.append({**row, "messages": messages, "settings": {"mode": "generate"}, "prompt_tokens": size // 5,
                      "completion_tokens": 3})
    write_jsonl(tmp_path / paths.GENERATIONS.format(model="api", task="belebele", language="eng_Latn",
                                                    template="instruct"), pilot)
    measured = forecast.forecast(grid, "api", requests, tmp_path)
    assert measured.prompt_method.startswith("estimated: the prompts' bytes at the tokens per byte")
    assert measured.completion_methods == {"a pilot's average"} and measured.completion_tokens == 8 * 3
    # the pilot's ratio for every request (Japanese has no pilot of its own: the ratio over all languages)
    ratio = sum(p["prompt_tokens"] for p in pilot) / sum(
        sum(len(m["content"].encode()) for m in p["messages"]) for p in pilot)
    assert measured.prompt_tokens == sum(
        round(sum(len(m["content"].encode()) for m in build_messages(r, grid.models["api"])) * ratio)
        for language in ("eng_Latn", "jpn_Jpan") for r in requests["belebele", language, "instruct"])
    text = "\n".join(forecast.lines([measured], grid, tmp_path))
    assert "## api: 8 requests" in text and "cost " in text and "cache: 0 of 8 answered on disk" in text
