"""Each shipped template's tokens are its peer's: jp-stable for JGLUE, lm-eval for Belebele ``paper``, the default
(lm-eval's) elsewhere; never two BOS tokens in a row and never an appended EOS, on tokenizers that add a BOS,
an EOS, or nothing. The expected tokens come from the peers' code restated in ``protocol_peers``, and for a few
items are written out by hand from the prompt text."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from babeleval.generate.backends.base import GenerationRequest
from babeleval.generate.backends.config import HFConfig
from babeleval.generate.backends.local_text import LocalText
from babeleval.generate.job import _backend_requests
from babeleval.core.errors import TemplateError
from babeleval.grid.params import validate
from babeleval.prompts.protocols import JOINT, PROTOCOLS, SEPARATE
from babeleval.prompts.render import build_requests, requests_for
from babeleval.prompts.templates import load_template
from babeleval.tasks import get_task
from resolved_record import prompt_record_for
from protocol_peers import (BOS, EOS, KINDS, char_tokenizer, ids, jp_stable_loglikelihood, jp_stable_max_new_tokens,
                            jp_stable_prompt, lm_eval_encode_pair, lm_eval_tok_encode)
from test_templates_all_tasks import full_grid

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "data" / "samples"
SETTINGS = {"mode": "generate", "max_new_tokens": 128, "stop": ["\n"]}


def every_request() -> list[tuple[str, str, dict]]:
    """(task, template, request) for up to three items of every language of every shipped template."""
    grid = validate(full_grid(), root=ROOT)
    out = []
    for (task_name, language, name), record in sorted(grid.prompts.items()):
        entry, task = grid.tasks[task_name], get_task(task_name)

        def rows(lang, part, entry=entry, task=task):
            return task.load(entry.source, lang, root=ROOT, part=part, options=entry.options)

        record = dataclasses.replace(record, limit=3)
        out += [(task_name, name, request) for request in requests_for(entry.templates[name], record, rows)]
    return out


REQUESTS = every_request()


TOKENIZERS = {kind: char_tokenizer(kind) for kind in KINDS}


def encoder(kind: str, **settings) -> LocalText:
    text = LocalText()
    text.init_text(TOKENIZERS[kind], HFConfig(builtin="tiny-llama", **settings), "tiny")
    return text


@pytest.fixture(scope="module", params=KINDS)
def kind_and_encoder(request):
    return request.param, encoder(request.param)


def test_the_shipped_templates_declare_their_protocol():
    protocols = {(task, name): load_template(task, name, ROOT).protocol.name for task, name, _ in REQUESTS}
    assert {p for (task, _), p in protocols.items() if task in ("jcommonsenseqa", "jnli", "marc_ja", "jsquad")} \
        == {"jp-stable"}
    assert protocols["belebele", "paper"] == "lm-eval"
    assert {protocols[t, "en_zeroshot"] for t in ("mmlu", "mgsm", "translation_to", "topic_classification")} \
        == {"languagebench"}
    assert load_template("jaquad", "0.6", ROOT).protocol.name == "jp-stable"  # through ``use: jsquad/0.6``


def test_every_template_never_gives_two_bos_in_a_row_nor_an_appended_eos(kind_and_encoder):
    kind, text = kind_and_encoder
    checked = 0
    for task, name, request in REQUESTS:
        [backend_request] = _backend_requests(request.get("continuations") and "loglikelihood" or "generate",
                                              SETTINGS, [(request, None)])
        if "continuations" in request:
            context, conts = text.encode_request(request["prompt"], request["continuations"], backend_request.encoding)
            sequences = [context + cont for cont in conts]
        else:
            sequences = [text.encode(request["prompt"], backend_request.encoding)]
        for sequence in sequences:
            assert all(not (a == b == BOS) for a, b in zip(sequence, sequence[1:])), (task, name, kind)
            assert sequence[-1] != EOS, (task, name, kind)
            checked += 1
    assert checked > 300


def test_every_template_encodes_as_its_peer(kind_and_encoder):
    """jp-stable templates as jp-stable encodes (any tokenizer), the others as lm-eval does (lm-eval itself
    appends the EOS of a tokenizer that adds one: that is not reproduced, see the test above)."""
    kind, text = kind_and_encoder
    tokenizer = text.tokenizer
    for task, name, request in REQUESTS:
        jp_stable = load_template(task, name, ROOT).protocol.name == "jp-stable"
        if not jp_stable and kind == "adds-eos":
            continue
        encoding = SEPARATE if jp_stable else JOINT
        if "continuations" in request:
            for cont in request["continuations"]:
                peer = (jp_stable_loglikelihood if jp_stable else lm_eval_encode_pair)(tokenizer, request["prompt"], cont)
                assert text.encode_pair(request["prompt"], cont, encoding) == peer, (task, name, kind, cont)
        elif jp_stable:
            assert text.encode(request["prompt"], encoding) == jp_stable_prompt(tokenizer, request["prompt"])
            [limited] = text.limited(_backend_requests("generate", SETTINGS, [(request, None)]))
            assert limited.max_new_tokens == jp_stable_max_new_tokens(tokenizer, request["answer"]), (task, name)
        else:
            assert text.encode(request["prompt"], encoding) == lm_eval_tok_encode(tokenizer, request["prompt"])


# -- a few items written out: JGLUE 0.6's literal <s> and its context ending in a space --------------------------


def jcqa_items():
    task = get_task("jcommonsenseqa")
    source = {"kind": "local", "path": str(SAMPLES / "jcommonsenseqa")}
    return task.load(source, "jpn_Jpan"), task.load(source, "jpn_Jpan", part="fewshot")


def test_jglue_06_starts_with_its_one_literal_bos_and_keeps_the_trailing_space():
    items, pool = jcqa_items()
    template = load_template("jcommonsenseqa", "0.6", ROOT)
    plan = prompt_record_for("jcommonsenseqa", "jpn_Jpan", "0.6").fewshot
    request = build_requests(template, items, pool, fewshot=plan, seed=1234, limit=1)[0]
    item = next(i for i in items if i["id"] == request["id"])
    exemplars = [next(p for p in pool if p["id"] == e) for e in request["exemplar_ids"]]

    def text(doc):  # JCommonsenseQAWithLlama2.doc_to_text
        choices = "\n".join(f"- {c}" for c in doc["choices"])
        return ("与えられた5つの選択肢の中から、最適な答えを選んでください。出力は以下から選択してください：\n"
                f"{choices}\n\n質問：{doc['question']} [/INST] ")
    shots = "".join(text(e) + e["choices"][e["answer"]] + " </s><s>[INST] " for e in exemplars)
    prompt = "<s>[INST] <<SYS>>\nあなたは役立つアシスタントです。\n<</SYS>>\n\n" + shots + text(item)
    assert request["prompt"] == prompt and prompt.endswith("[/INST] ")
    for kind in KINDS:
        encode = encoder(kind)
        for settings in ({}, {"add_bos_token": True}, {"add_bos_token": False}):  # jp-stable adds none, whatever
            enc = encoder(kind, **settings) if settings else encode
            context, conts = enc.encode_request(prompt, request["continuations"], SEPARATE)
            assert context == ids(enc.tokenizer, prompt) and context[:2] == [BOS, ids(enc.tokenizer, "[")[0]]
            assert context[-1] == ids(enc.tokenizer, " ")[0]  # the space stays in the context
            assert conts == [ids(enc.tokenizer, c) for c in item["choices"]]
            assert sum(t == BOS for t in context) == 1 + len(exemplars)  # <s> at the start and after each </s>


def test_a_literal_bos_is_not_doubled_by_the_default_encoding(tmp_path):
    """The same 0.6 text under a template that names no protocol (babeleval's default, lm-eval's tokens)."""
    used = (ROOT / "prompts" / "jcommonsenseqa" / "0.6.yaml").read_text(encoding="utf-8")
    (tmp_path / "prompts" / "jcommonsenseqa").mkdir(parents=True)
    (tmp_path / "prompts" / "jcommonsenseqa" / "plain.yaml").write_text(
        used.replace("protocol: jp-stable\n", ""), encoding="utf-8")
    template = load_template("jcommonsenseqa", "plain", tmp_path)
    plan = prompt_record_for("jcommonsenseqa", "jpn_Jpan", "plain", tmp_path).fewshot
    assert template.protocol is PROTOCOLS["babeleval"] and template.protocol.encoding is JOINT
    items, pool = jcqa_items()
    request = build_requests(template, items, pool, fewshot=plan, seed=1234, limit=1)[0]
    assert "encoding" not in request  # the default's requests keep their response-cache keys
    prompt, choice = request["prompt"], request["continuations"][0]
    for kind in ("adds-bos", "adds-nothing"):
        enc = encoder(kind)
        context, cont = enc.encode_pair(prompt, choice)
        assert context == ids(enc.tokenizer, prompt.rstrip()) and context[0] == BOS and context[1] != BOS
        assert cont == ids(enc.tokenizer, " " + choice)  # the space moved to the continuation
        assert (context, cont) == lm_eval_encode_pair(enc.tokenizer, prompt, choice)


def test_belebele_paper_is_lm_evals_text_and_tokens():
    source = {"kind": "local", "path": str(SAMPLES / "belebele")}
    task = get_task("belebele")
    items = task.load(source, "jpn_Jpan")
    item = {**items[0], "question": "  " + items[0]["question"] + " \n"}  # lm-eval strips the question
    pool = [{**row, "question": row["question"] + " "} for row in task.load(source, "eng_Latn")]
    template = load_template("belebele", "paper", ROOT)
    plan = prompt_record_for("belebele", "jpn_Jpan", "paper").fewshot
    request = build_requests(template, [item], pool, fewshot=plan, seed=0)[0]
    exemplars = [next(p for p in pool if p["id"] == e) for e in request["exemplar_ids"]]

    def text(doc):  # _default_template_yaml's doc_to_text
        return (f"P: {doc['passage']}\nQ: {doc['question'].strip()}\nA: {doc['choices'][0]}\nB: {doc['choices'][1]}\n"
                f"C: {doc['choices'][2]}\nD: {doc['choices'][3]}\nAnswer:")
    prompt = "\n\n".join([*(text(e) + " " + "ABCD"[e["answer"]] for e in exemplars), text(item)])
    assert request["prompt"] == prompt and request["continuations"] == [" A", " B", " C", " D"]
    enc = encoder("adds-bos")
    context, cont = enc.encode_pair(prompt, " B", JOINT)
    assert context == [BOS, *ids(enc.tokenizer, prompt)] and cont == ids(enc.tokenizer, " B")
    enc = encoder("adds-eos")
    context, cont = enc.encode_pair(prompt, " B", JOINT)
    assert context == ids(enc.tokenizer, prompt) and cont == ids(enc.tokenizer, " B")  # no </s> after either


def test_jsquad_generation_is_capped_at_the_longest_gold_answer():
    task = get_task("jsquad")
    source = {"kind": "local", "path": str(SAMPLES / "jsquad")}
    items, pool = task.load(source, "jpn_Jpan"), task.load(source, "jpn_Jpan", part="fewshot")
    item = {**items[0], "answer": ["東京", "東京都庁", "都"]}
    template = load_template("jsquad", "0.2", ROOT)
    plan = prompt_record_for("jsquad", "jpn_Jpan", "0.2").fewshot
    [request] = build_requests(template, [item], pool, fewshot=plan, seed=0)
    assert request["answer_length_of"] == ["東京", "東京都庁", "都"]
    for kind in KINDS:
        [limited] = encoder(kind).limited(_backend_requests("generate", SETTINGS, [(request, None)]))
        assert limited.max_new_tokens == 4 and limited.encoding is SEPARATE
    [bounded] = encoder("adds-bos").limited([GenerationRequest("x", 3, answer_length_of=("東京都庁",))])
    assert bounded.max_new_tokens == 3  # the template's max_new_tokens bounds it
    [plain] = encoder("adds-bos").limited([GenerationRequest("x", 10)])
    assert plain.max_new_tokens == 10


def test_a_protocol_must_be_known(tmp_path):
    path = tmp_path / "prompts" / "jnli" / "bad.yaml"
    path.parent.mkdir(parents=True)
    path.write_text("protocol: jp_stable\nmode: loglikelihood\nprompt: x\ntarget: y\ncontinuation: z\n",
                    encoding="utf-8")
    with pytest.raises(TemplateError, match="bad.yaml: protocol 'jp_stable' is not one of babeleval, lm-eval, "
                                            "jp-stable, languagebench"):
        load_template("jnli", "bad", tmp_path)
