"""Constrained answers (a template's ``answer_slot``): declared and checked, rendered into each request, keyed
in the cache, refused by a backend that cannot honour them, sent to an OpenAI-compatible server as a JSON schema
or guided_choice, enforced on a local transformers model by a logits processor, and read back from the reply."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from babeleval.core.errors import ConfigError, TemplateError
from babeleval.generate.backends import get_backend
from babeleval.generate.backends.openai_api import constrained
from babeleval.generate.job import _backend_requests, _payload, check_answer_slots
from babeleval.grid.entries import check_template
from babeleval.prompts.answer_slot import AnswerSlot
from babeleval.prompts.render import build_requests
from babeleval.prompts.templates import load_template
from babeleval.score.parsers import parse
from babeleval.tasks.families import get_family

PROMPT = ("prompt: |-\n  {{ question }}\n  {% for c in choices %}{{ letters[loop.index0] }}: {{ c }}\n  {% endfor %}"
          "Reason, then write #### and the letter.\ntarget: '{{ answer_letter }}'\ngeneration: {max_new_tokens: 8}\n")
ITEM = {"id": "q1", "language": "eng_Latn", "question": "Capital of France?", "choices": ["London", "Paris"],
        "answer": 1}


def template(root: Path, slot: str, parser: str = "final_letter", mode: str = "generate"):
    path = root / "prompts" / "mmlu" / "slot.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"mode: {mode}\nparser: {parser}\nanswer_slot: {slot}\n" + PROMPT, encoding="utf-8")
    return load_template("mmlu", "slot", root)


def test_the_request_carries_the_slot_and_the_cache_keys_on_it(tmp_path):
    slotted = template(tmp_path, "{holds: labels}")
    request = build_requests(slotted, [ITEM], [], fewshot=slotted.fewshot, seed=1)[0]
    assert request["answer_slot"] == {"after": "####", "choices": ["A", "B"], "number": False, "api": "json_schema"}
    assert _payload("generate", request)["answer_slot"] == request["answer_slot"]
    free = {key: value for key, value in request.items() if key != "answer_slot"}
    assert "answer_slot" not in _payload("generate", free)  # a template without a slot keeps the key it had
    settings = {"max_new_tokens": 8, "stop": []}
    asked, plain = _backend_requests("generate", settings, [(request, None), (free, None)])
    assert asked.answer_slot == AnswerSlot("####", ("A", "B")) and plain.answer_slot is None


@pytest.mark.parametrize("slot, message", [
    ("{holds: letters}", "holds 'letters' is not one of labels, choices, number"),
    ("{holds: labels, api: grammar}", "api 'grammar' is not one of"),
    ("{holds: labels, api: guided_choice}", "guided_choice constrains the whole reply"),
    ("{holds: labels, width: 3}", "must be a mapping with 'holds'"),
])
def test_a_slot_is_checked(tmp_path, slot, message):
    with pytest.raises(TemplateError, match=message):
        template(tmp_path, slot)


def test_the_slot_must_hold_what_the_parser_reads(tmp_path):
    family = get_family("multiple_choice")
    assert check_template(family, template(tmp_path, "{holds: labels}")) is None
    assert "holds number, which parser 'final_letter'" in check_template(family, template(tmp_path, "{holds: number}"))


def test_a_backend_that_cannot_constrain_is_refused_before_the_model_loads():
    requests = [{"prompt": "x", "answer_slot": AnswerSlot("####", ("A", "B")).to_json()}]
    with pytest.raises(ConfigError, match="backend 'vllm' cannot"):
        check_answer_slots(get_backend("vllm"), requests)
    check_answer_slots(get_backend("hf"), requests)
    check_answer_slots(get_backend("vllm"), [{"prompt": "x"}])


def test_what_an_openai_compatible_server_is_sent():
    assert constrained(None) == {}
    schema = constrained(AnswerSlot("####", ("A", "B")))["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["answer"] == {"type": "string", "enum": ["A", "B"]}
    assert schema["required"] == ["reasoning", "answer"]
    number = constrained(AnswerSlot("", number=True))["response_format"]["json_schema"]["schema"]
    assert list(number["properties"]) == ["answer"] and number["properties"]["answer"] == {"type": "number"}
    assert constrained(AnswerSlot("", ("A", "B"), api="guided_choice")) == {"guided_choice": ["A", "B"]}


@pytest.mark.parametrize("reply, parser, answer", [
    ('{"reasoning": "Paris is the capital.", "answer": "B"}', "final_letter", "B"),
    ('```json\n{"reasoning": "6 x 3", "answer": 18.0}\n```', "final_number", "18"),
    ('{"answer": "sports"}', "topic", "sports"),
])
def test_a_json_answer_is_read(reply, parser, answer):
    assert parse(parser, reply, labels=["sports", "health"]).answer == answer


# -- the logits processor on the tiny model ------------------------------------------------------------------

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def backend(tiny_model_dir):
    from babeleval.generate.backends.config import HFConfig
    from babeleval.generate.backends.hf import HFBackend

    return HFBackend(HFConfig(builtin="tiny-llama", dtype="float32", device="cpu", batch_size=3), str(tiny_model_dir))


def test_the_model_writes_only_an_answer_in_the_slot(backend):
    from babeleval.generate.backends.base import Decoding, GenerationRequest

    requests = [GenerationRequest("Question: which? Answer:", 8, answer_slot=AnswerSlot("", ("A", "B", "C", "D"))),
                GenerationRequest("How many? Answer:", 8, answer_slot=AnswerSlot("", number=True)),
                GenerationRequest("Free text:", 8)]
    letter, number, free = backend.generate(requests, Decoding(do_sample=True, temperature=1.0, seed=3))
    assert letter.text.strip() in ("A", "B", "C", "D") and letter.finish_reason == "stop"
    assert re.fullmatch(r"\s*[-+−]?[0-9.,]*\d[0-9.,]*\s*", number.text), number.text
    assert free.n_completion_tokens == 8  # the unconstrained row of the batch writes freely


def test_the_slot_opens_after_its_text(backend):
    from babeleval.generate.backends.answer_slot import _Row

    tokenizer = backend.tokenizer
    row = _Row(AnswerSlot("####", ("A", "B")), tokenizer, tokenizer.eos_token_id, None)
    reasoning = tokenizer.encode("Paris is the capital", add_special_tokens=False)
    assert row.allowed(reasoning) is None  # before the marker: free
    opened = reasoning + tokenizer.encode(" ####", add_special_tokens=False)
    first = row.allowed(opened)
    assert first and all(tokenizer.decode([t]).strip() in ("A", "B", "") for t in first)
    answer = list(next(seq for seq in row.sequences if tokenizer.decode(list(seq)).strip() == "B"))
    assert row.allowed(opened + answer) == [tokenizer.eos_token_id]
