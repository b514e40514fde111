"""The vLLM backend: a clear message without vllm, and the requests it makes of a stand-in ``vllm`` module.

The stand-in engine answers from the tiny model itself (one full forward pass per request: prompt log-probs,
next-token log-probs), a few requests a step, first come first served as vLLM's scheduler does, so the
backend's scores can be compared with the hf backend's and its requests, their order and the engine settings
checked.
"""

import sys
import types
from dataclasses import dataclass
from enum import Enum

import pytest
import torch

from babeleval.generate.backends import load_backend
from babeleval.generate.backends import vllm as vllm_backend
from babeleval.generate.backends.base import Decoding, GenerationRequest, LoglikelihoodRequest
from babeleval.generate.backends.config import HFConfig
from babeleval.generate.backends.hf import HFBackend
from babeleval.generate.backends.vllm import request_seed
from babeleval.core.errors import BackendError


def test_missing_vllm_says_how_to_install(monkeypatch, tiny_model_dir):
    monkeypatch.setitem(sys.modules, "vllm", None)  # makes `import vllm` fail as if it were not installed
    with pytest.raises(BackendError, match=r"pip install 'babeleval\[vllm\]'"):
        load_backend({"backend": "vllm", "model": str(tiny_model_dir)}, str(tiny_model_dir))


def test_importing_the_package_does_not_import_vllm():
    import babeleval.generate.backends  # noqa: F401
    assert "vllm" not in sys.modules or sys.modules["vllm"] is None


@dataclass
class Logprob:
    logprob: float
    rank: int
    decoded_token: str | None = None


@dataclass
class Completion:
    text: str
    token_ids: list
    finish_reason: str
    logprobs: list | None = None


@dataclass
class RequestOutput:
    request_id: str
    prompt_token_ids: list
    prompt_logprobs: list | None
    outputs: list
    finished: bool = True


class RequestOutputKind(Enum):
    CUMULATIVE = 0
    DELTA = 1
    FINAL_ONLY = 2


class SamplingParams:
    def __init__(self, **kwargs):
        self.kwargs = kwargs


def entry(row: torch.Tensor, token: int, top: int) -> dict:
    """vLLM's log-prob entry for one position: the top ``top`` tokens and ``token``, each with its rank."""
    ranks = torch.argsort(row, descending=True)
    out = {int(t): Logprob(float(row[t]), r + 1) for r, t in enumerate(ranks[:top])}
    out.setdefault(token, Logprob(float(row[token]), int((row > row[token]).sum()) + 1))
    return out


class Engine:
    """vLLM's ``LLMEngine`` as the backend uses it: add_request, step, has_unfinished_requests, abort_request."""

    PER_STEP = 2  # requests finished a step: results arrive in turns, as from the real scheduler

    def __init__(self, model, calls):
        self.model, self.calls = model, calls
        self.waiting: list[tuple[str, list, SamplingParams]] = []

    def add_request(self, request_id, prompt, params):
        self.calls["added"].append((self.calls["steps"], request_id, prompt["prompt_token_ids"], params))
        self.waiting.append((request_id, prompt["prompt_token_ids"], params))

    def has_unfinished_requests(self):
        return bool(self.waiting)

    def abort_request(self, request_ids):
        self.calls["aborted"].extend(request_ids)
        self.waiting = [w for w in self.waiting if w[0] not in request_ids]

    def step(self):
        self.calls["steps"] += 1
        done, self.waiting = self.waiting[: self.PER_STEP], self.waiting[self.PER_STEP:]
        return [self.answer(*request) for request in done]

    def answer(self, request_id, ids, params):
        assert params.kwargs["output_kind"] is RequestOutputKind.FINAL_ONLY
        with torch.no_grad():
            logprobs = torch.log_softmax(self.model(input_ids=torch.tensor([ids])).logits[0].float(), dim=-1)
        prompt_logprobs, completion = None, Completion(" B\nmore", [5, 6, 7], "length")
        if params.kwargs.get("prompt_logprobs"):
            top = params.kwargs["prompt_logprobs"]
            prompt_logprobs = [None] + [entry(logprobs[pos - 1], ids[pos], top) for pos in range(1, len(ids))]
        if params.kwargs.get("logprobs") is not None:  # one greedy token and its position's top log-probs
            token = int(logprobs[-1].argmax())
            completion = Completion("?", [token], "length", [entry(logprobs[-1], token, params.kwargs["logprobs"])])
        return RequestOutput(request_id, ids, prompt_logprobs, [completion])


def fake_vllm():
    from transformers import AutoModelForCausalLM, AutoTokenizer

    module = types.ModuleType("vllm")
    module.SamplingParams = SamplingParams
    module.sampling_params = types.SimpleNamespace(RequestOutputKind=RequestOutputKind)
    module.__version__ = "0.0-test"
    calls = {"init": [], "added": [], "aborted": [], "steps": 0}

    class LLM:
        def __init__(self, **kwargs):
            calls["init"].append(kwargs)
            self.tokenizer = AutoTokenizer.from_pretrained(kwargs["model"])
            self.llm_engine = Engine(AutoModelForCausalLM.from_pretrained(kwargs["model"]).eval(), calls)

        def get_tokenizer(self):
            return self.tokenizer

    module.LLM = LLM
    return module, calls


@pytest.fixture
def vllm_stub(monkeypatch, tiny_model_dir):
    module, calls = fake_vllm()
    monkeypatch.setitem(sys.modules, "vllm", module)
    return calls


def settings(params) -> dict:
    return {k: v for k, v in params.kwargs.items() if k != "output_kind"}


def test_engine_arguments(vllm_stub, tiny_model_dir):
    load_backend({"backend": "vllm", "model": str(tiny_model_dir), "revision": "abc123", "dtype": "bfloat16", "max_length": 512,
                  "tensor_parallel_size": 2, "gpu_memory_utilization": 0.8}, str(tiny_model_dir))
    assert vllm_stub["init"] == [{"model": str(tiny_model_dir), "dtype": "bfloat16", "trust_remote_code": False,
                                  "seed": 0, "enable_prefix_caching": True, "revision": "abc123",
                                  "tokenizer_revision": "abc123", "max_model_len": 512, "tensor_parallel_size": 2,
                                  "gpu_memory_utilization": 0.8}]


REQUESTS = [LoglikelihoodRequest("Passage: the cat sat.\nAnswer:", (" A", " the mat", " under a tree")),
            LoglikelihoodRequest("短い文脈。答え: ", ("はい", "いいえ")),
            LoglikelihoodRequest("P: the cat sat on the mat.\nQ: Where?\nA: mat\nC: tree\nD: sky\nAnswer:",
                                 (" A", " C", " D"))]


@pytest.mark.parametrize("top", [2048, 1], ids=["letters-in-top", "letters-below-top"])
def test_loglikelihood_matches_the_hf_backend(vllm_stub, tiny_model_dir, monkeypatch, top):
    monkeypatch.setattr(vllm_backend, "NEXT_TOKEN_TOP", top)
    backend = load_backend({"backend": "vllm", "model": str(tiny_model_dir), "dtype": "float32"}, str(tiny_model_dir))
    hf = HFBackend(HFConfig(model=str(tiny_model_dir), dtype="float32", device="cpu"), str(tiny_model_dir))
    assert [len(c) for c in backend.encode_request(REQUESTS[2].context, REQUESTS[2].continuations)[1]] == [1, 1, 1]
    got = backend.loglikelihood(REQUESTS)
    want = hf.loglikelihood(REQUESTS)
    for g, w in zip(got, want):
        assert g.logprobs == pytest.approx(w.logprobs, abs=1e-4)
        assert g.greedy == w.greedy and g.n_tokens == w.n_tokens and g.n_context_tokens == w.n_context_tokens

    added = vllm_stub["added"]
    first_run = [a for a in added if a[0] == 0]  # added before the engine's first step
    # every item's requests went in before the engine ran, one after another: each choice of the multi-token
    # items as context + choice with prompt log-probs, the letter item as its context alone
    assert [settings(p) for _, _, _, p in first_run] == [{"max_tokens": 1, "temperature": 0.0, "prompt_logprobs": 1}] * 5 + [
        {"max_tokens": 1, "temperature": 0.0, "logprobs": top}]
    context, conts = backend.encode_request(REQUESTS[0].context, REQUESTS[0].continuations)
    assert [ids for _, _, ids, _ in first_run[:3]] == [context + c for c in conts]
    letters_context, letters = backend.encode_request(REQUESTS[2].context, REQUESTS[2].continuations)
    assert first_run[5][2] == letters_context
    later = added[len(first_run):]
    if top > 1:  # every letter among the returned log-probs (the whole vocabulary here): one request for the item
        assert later == []
    else:  # a letter ranked below the one returned is read from its own prompt, in the same engine run
        below = [c for c, greedy in zip(letters, want[2].greedy) if not greedy]
        assert below and [ids for _, _, ids, _ in later] == [letters_context + c for c in below]
        assert all(settings(p)["prompt_logprobs"] == 1 for _, _, _, p in later)
    assert vllm_stub["aborted"] == []


def test_results_stream_as_items_finish(vllm_stub, tiny_model_dir):
    backend = load_backend({"backend": "vllm", "model": str(tiny_model_dir)}, str(tiny_model_dir))
    stream = backend.iter_loglikelihood(REQUESTS)
    index, _ = next(stream)
    # the first item's three choices are answered in the engine's second step (two requests a step), before
    # the rest: its result reaches the job (and the response cache) at once
    assert (index, vllm_stub["steps"]) == (0, 2)
    stream.close()  # a job that stops reading (an error) leaves nothing running in the engine
    # every request whose answer was not read: the second item's two choices (one answered in that same step,
    # which vLLM's abort ignores) and the letter item's request
    assert vllm_stub["aborted"] == [request_id for _, request_id, _, _ in vllm_stub["added"][3:]]
    assert backend.llm.llm_engine.waiting == []


def test_generation_mapping(vllm_stub, tiny_model_dir):
    backend = load_backend({"backend": "vllm", "model": str(tiny_model_dir)}, str(tiny_model_dir))
    requests = [GenerationRequest("Question one?\nAnswer:", 5, ("\n",)), GenerationRequest("Two?", 3)]
    greedy = backend.generate(requests, Decoding())
    assert [r.text for r in greedy] == [" B", " B\nmore"]
    assert [r.finish_reason for r in greedy] == ["stop", "length"]
    assert [r.truncated_tokens for r in greedy] == [0, 0]  # a stop sequence cuts the answer, never the prompt
    (_, _, ids, params), _ = vllm_stub["added"]
    assert ids == backend.encode("Question one?\nAnswer:")
    assert settings(params) == {"n": 1, "max_tokens": 5, "stop": ["\n"], "temperature": 0.0}

    sampled = Decoding(do_sample=True, temperature=0.7, top_p=0.1, top_k=40, repetition_penalty=1.18, seed=1234)
    backend.generate(requests, sampled)
    (_, _, ids, params), (_, _, _, other) = vllm_stub["added"][2:4]
    assert settings(params) == {"n": 1, "max_tokens": 5, "stop": ["\n"], "temperature": 0.7, "top_p": 0.1,
                                "top_k": 40, "repetition_penalty": 1.18, "seed": request_seed(1234, ids)}
    # a per-request seed from the run's seed and the prompt: independent of batching, distinct across prompts
    assert params.kwargs["seed"] != other.kwargs["seed"]
    backend.generate(requests[:1], sampled)
    assert vllm_stub["added"][4][3].kwargs["seed"] == params.kwargs["seed"]


def test_chat_goes_through_the_template(vllm_stub, tiny_model_dir, tmp_path):
    template = tmp_path / "t.jinja"
    template.write_text("{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}<assistant>")
    backend = load_backend({"backend": "vllm", "model": str(tiny_model_dir), "chat": True,
                            "chat_template": str(template)}, str(tiny_model_dir))
    [result] = backend.generate([GenerationRequest("x", 2, (), ({"role": "user", "content": "Hi?"},))], Decoding())
    assert result.rendered_prompt == "<user>Hi?<assistant>"
    [(_, _, ids, _)] = vllm_stub["added"]
    assert ids == backend.tokenizer("<user>Hi?<assistant>", add_special_tokens=False)["input_ids"]


def test_a_job_hands_all_its_requests_to_the_engine_at_once(vllm_stub, tiny_model_dir, tmp_path):
    """Through the GPU job (generate.job.run, as Snakemake's jobs call it): every request of every language goes
    to the engine before it runs, and every answer reaches the response cache and the outputs."""
    from babeleval.core.jsonl import read_jsonl, write_jsonl
    from babeleval.generate import job as generate
    from babeleval.generate.backends import model_config

    files = {}
    for lang, n in [("eng_Latn", 5), ("jpn_Jpan", 3)]:
        files[lang] = str(tmp_path / f"{lang}.prompts.jsonl")
        write_jsonl(files[lang], [{"id": f"q{i}", "prompt": f"[{lang}] question {i}?\nAnswer:",
                                   "continuations": [" the mat", " under a tree"]} for i in range(n)])
    outputs = {lang: str(tmp_path / "out" / f"{lang}.jsonl") for lang in files}
    config = model_config({"backend": "vllm", "model": str(tiny_model_dir), "dtype": "float32"})
    model = generate.JobModel(config, str(tiny_model_dir))
    job_files = generate.JobFiles(files, outputs, str(tmp_path / "cache.sqlite"))
    counts = generate.run(model, "loglikelihood", {"mode": "loglikelihood"}, job_files)
    assert counts == {"requests": 8, "cache_hits": 0, "computed": 8}
    assert len(vllm_stub["added"]) == 16 and {step for step, *_ in vllm_stub["added"]} == {0}
    assert vllm_stub["steps"] == 8  # two requests a step: the engine ran them all in one go
    assert all(len(r["loglikelihoods"]) == 2 for lang in outputs for r in read_jsonl(outputs[lang]))
    again = generate.run(model, "loglikelihood", {"mode": "loglikelihood"}, job_files)
    assert again["cache_hits"] == 8 and len(vllm_stub["added"]) == 16
