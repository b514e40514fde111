"""Chat models: messages from rendered requests, the hf backend's chat template, hashes in the records."""

import hashlib

import pytest

from babeleval.generate import job as generate
from babeleval.generate.backends import load_backend, model_config
from babeleval.generate.backends.base import Decoding, GenerationRequest, LoglikelihoodRequest
from babeleval.generate.backends.chat import build_messages
from babeleval.generate.backends.config import HFConfig
from babeleval.generate.backends.hf import HFBackend
from babeleval.core.errors import BackendError
from babeleval.generate.fingerprint import model_fingerprint
from babeleval.core.jsonl import read_jsonl, write_jsonl
from babeleval.prompts.render import build_requests
from babeleval.tasks import get_task
from babeleval.prompts.templates import load_template
from resolved_record import prompt_record_for

TEMPLATE = ("{% for m in messages %}<s>[{{ m.role }}] {{ m.content }}</s>\n{% endfor %}"
            "{% if add_generation_prompt %}[assistant]{% endif %}")

REQUEST = {"id": "q1", "prompt": "Ex 1?\nAnswer: B\n\nReal question?\nAnswer:", "exemplar_ids": ["e1"],
           "exemplar_turns": [{"user": "Ex 1?\nAnswer:", "assistant": " B"}], "query": "Real question?\nAnswer:"}


def test_messages_plain_prompt_by_default():
    assert build_messages(REQUEST, HFConfig(builtin="tiny-llama", chat=True)) == [{"role": "user", "content": REQUEST["prompt"]}]


def test_messages_with_system_prompt_and_exemplars_as_turns():
    config = HFConfig(builtin="tiny-llama", chat=True, system_prompt="You are a careful reader.", fewshot_as_turns=True)
    assert build_messages(REQUEST, config) == [
        {"role": "system", "content": "You are a careful reader."},
        {"role": "user", "content": "Ex 1?\nAnswer:"},
        {"role": "assistant", "content": "B"},
        {"role": "user", "content": "Real question?\nAnswer:"},
    ]


def test_a_preamble_opens_the_first_user_turn():
    config = HFConfig(builtin="tiny-llama", chat=True, fewshot_as_turns=True)
    messages = build_messages({**REQUEST, "preamble": "Read and answer.\n\n"}, config)
    assert messages[0] == {"role": "user", "content": "Read and answer.\n\nEx 1?\nAnswer:"}
    assert messages[-1] == {"role": "user", "content": "Real question?\nAnswer:"}


def test_exemplars_as_turns_need_the_structured_fields():
    old = {k: v for k, v in REQUEST.items() if k not in ("exemplar_turns", "query")}
    config = HFConfig(builtin="tiny-llama", chat=True, fewshot_as_turns=True)
    with pytest.raises(BackendError, match="render the prompts again"):
        build_messages(old, config)
    zero_shot = {**old, "exemplar_ids": []}
    assert build_messages(zero_shot, config)[-1]["content"] == old["prompt"]


@pytest.mark.parametrize("template_name", ["paper", "blog"])
def test_rendered_requests_keep_exemplars_apart_from_the_query(repo_root, template_name):
    template = load_template("belebele", template_name, repo_root)
    plan = prompt_record_for("belebele", "jpn_Jpan", template_name, repo_root).fewshot
    source = {"kind": "local", "path": str(repo_root / "data" / "samples" / "belebele")}
    items = get_task("belebele").load(source, "jpn_Jpan")
    pool = get_task("belebele").load(source, template.fewshot.language) if template.fewshot.language else items
    for request in build_requests(template, items, pool, fewshot=plan, seed=1234, limit=3):
        turns = request["exemplar_turns"]
        assert len(turns) == template.fewshot.n == len(request["exemplar_ids"])
        joined = template.fewshot.separator.join([*(t["user"] + t["assistant"] for t in turns), request["query"]])
        assert joined == request["prompt"]  # the plain prompt is unchanged: the parts only add to it


@pytest.fixture(scope="module")
def chat_template_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("chat") / "template.jinja"
    path.write_text(TEMPLATE, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def chat_backend(tiny_model_dir, chat_template_file):
    config = HFConfig(builtin="tiny-llama", dtype="float32", device="cpu", batch_size=2, chat=True,
                      chat_template=str(chat_template_file))
    return HFBackend(config, str(tiny_model_dir))


MESSAGES = ({"role": "system", "content": "Be brief."}, {"role": "user", "content": "Which one?"})
RENDERED = "<s>[system] Be brief.</s>\n<s>[user] Which one?</s>\n[assistant]"


def test_hf_generation_goes_through_the_chat_template(chat_backend):
    [result] = chat_backend.generate([GenerationRequest("ignored plain text", 3, (), MESSAGES)], Decoding())
    assert result.rendered_prompt == RENDERED
    # the rendered text carries its own <s>: no second BOS is added
    ids = chat_backend.encode(RENDERED)
    assert ids.count(chat_backend.tokenizer.bos_token_id) == 2
    assert result.n_prompt_tokens == len(ids)
    assert chat_backend.chat_template_sha256 == hashlib.sha256(TEMPLATE.encode()).hexdigest()


def test_hf_loglikelihood_scores_after_the_rendered_conversation(chat_backend, tiny_model_dir):
    plain = HFBackend(HFConfig(builtin="tiny-llama", dtype="float32", device="cpu", add_bos_token=False),
                      str(tiny_model_dir))
    [chat_result] = chat_backend.loglikelihood([LoglikelihoodRequest("ignored", (" A", " B"), MESSAGES)])
    [plain_result] = plain.loglikelihood([LoglikelihoodRequest(RENDERED, (" A", " B"))])
    assert chat_result.logprobs == pytest.approx(plain_result.logprobs, abs=1e-5)
    assert chat_result.rendered_prompt == RENDERED


def test_chat_model_without_a_template_says_how_to_give_one(tiny_model_dir):
    with pytest.raises(BackendError, match="no chat template.*chat_template:"):
        load_backend({"backend": "hf", "builtin": "tiny-llama", "dtype": "float32", "device": "cpu", "chat": True},
                     str(tiny_model_dir))


def test_a_template_without_system_role_explains_itself(tiny_model_dir, tmp_path):
    strict = tmp_path / "strict.jinja"
    strict.write_text("{% for m in messages %}{% if m.role == 'system' %}"
                      "{{ raise_exception('System role not supported') }}{% endif %}{{ m.content }}{% endfor %}")
    backend = HFBackend(HFConfig(builtin="tiny-llama", device="cpu", chat=True, chat_template=str(strict)),
                        str(tiny_model_dir))
    with pytest.raises(BackendError, match="System role not supported.*system_prompt"):
        backend.generate([GenerationRequest("x", 2, (), MESSAGES)], Decoding())


def test_generate_job_records_messages_template_hash_and_rendered_prompt(tmp_path, tiny_model_dir, chat_template_file):
    write_jsonl(tmp_path / "eng.jsonl", [{**REQUEST, "id": f"q{i}", "language": "eng_Latn", "choices": list("abcd"),
                                          "answer": 1, "query": f"Real question {i}?\nAnswer:"} for i in range(3)])
    entry = {"backend": "hf", "builtin": "tiny-llama", "dtype": "float32", "device": "cpu", "chat": True,
             "fewshot_as_turns": True, "system_prompt": "Be brief.", "chat_template": str(chat_template_file)}
    settings = {"mode": "generate", "do_sample": False, "max_new_tokens": 3, "stop": ["\n"]}

    def run(entry):
        return generate.run(generate.JobModel(model_config(entry), str(tiny_model_dir)), "generate", settings,
                            generate.JobFiles({"eng_Latn": str(tmp_path / "eng.jsonl")},
                                              {"eng_Latn": str(tmp_path / "out.jsonl")}, str(tmp_path / "cache.sqlite")))

    assert run(entry)["computed"] == 3
    record = read_jsonl(tmp_path / "out.jsonl")[0]
    assert record["chat_template_sha256"] == hashlib.sha256(TEMPLATE.encode()).hexdigest()
    assert record["model_fingerprint"]["chat"] is True
    assert record["model_fingerprint"]["chat_template_sha256"] == record["chat_template_sha256"]
    assert [m["role"] for m in record["messages"]] == ["system", "user", "assistant", "user"]
    assert record["rendered_prompt"] == ("<s>[system] Be brief.</s>\n<s>[user] Ex 1?\nAnswer:</s>\n"
                                         "<s>[assistant] B</s>\n<s>[user] Real question 0?\nAnswer:</s>\n[assistant]")
    # cached, the hash is still recorded; another system prompt is another conversation, computed anew
    assert run(entry)["computed"] == 0
    assert read_jsonl(tmp_path / "out.jsonl")[0]["chat_template_sha256"] == record["chat_template_sha256"]
    assert run({**entry, "system_prompt": "Think first."})["computed"] == 3


def test_fingerprint_keeps_what_changes_outputs_and_nothing_secret():
    api = {"backend": "openai", "model": "gpt-x-2024", "base_url": "https://api.example.com/v1/",
           "api_key_env": "EXAMPLE_KEY", "concurrency": 8, "timeout": 30, "max_retries": 2, "chat": True}
    def fingerprint(entry, path):
        return model_fingerprint(model_config(entry), path)

    fp = fingerprint(api, "gpt-x-2024")
    assert fp == {"backend": "openai", "model": "gpt-x-2024", "base_url": "https://api.example.com/v1",
                  "endpoint": "chat", "chat": True}
    assert fingerprint({**api, "concurrency": 1, "timeout": 5}, "gpt-x-2024") == fp
    assert fingerprint({**api, "endpoint": "completions", "chat": False}, "gpt-x-2024")["endpoint"] == "completions"
    hf = {"backend": "hf", "model": "org/m", "revision": "abc", "dtype": "bfloat16", "batch_size": 4}
    assert fingerprint({**hf, "batch_size": 64, "device": "cuda"}, "org/m") == fingerprint(hf, "org/m")
    assert fingerprint({**hf, "backend": "vllm"}, "org/m") != fingerprint(hf, "org/m")
