"""The vLLM backend: a clear message without vllm, and its request mapping against a stand-in ``vllm`` module.

The stand-in serves prompt log-probabilities from the tiny model itself (one full forward pass per prompt),
so the backend's scores can be compared with the hf backend's.
"""

import sys
import types
from dataclasses import dataclass

import pytest
import torch

from babeleval.generate.backends import load_backend
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


@dataclass
class RequestOutput:
    prompt_token_ids: list
    prompt_logprobs: list | None
    outputs: list


class SamplingParams:
    def __init__(self, **kwargs):
        self.kwargs = kwargs


def fake_vllm(tiny_model_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    module = types.ModuleType("vllm")
    module.SamplingParams = SamplingParams
    module.__version__ = "0.0-test"
    calls = {"init": [], "generate": []}

    class LLM:
        def __init__(self, **kwargs):
            calls["init"].append(kwargs)
            self.tokenizer = AutoTokenizer.from_pretrained(kwargs["model"])
            self.model = AutoModelForCausalLM.from_pretrained(kwargs["model"]).eval()

        def get_tokenizer(self):
            return self.tokenizer

        def generate(self, prompts, params, use_tqdm=True):
            calls["generate"].append((prompts, params))
            params = params if isinstance(params, list) else [params] * len(prompts)
            outputs = []
            for prompt, param in zip(prompts, params):
                ids = prompt["prompt_token_ids"]
                prompt_logprobs = None
                if param.kwargs.get("prompt_logprobs"):
                    with torch.no_grad():
                        logits = self.model(input_ids=torch.tensor([ids])).logits[0].float()
                    logprobs = torch.log_softmax(logits, dim=-1)
                    prompt_logprobs = [None]
                    for pos in range(1, len(ids)):
                        row = logprobs[pos - 1]
                        token = ids[pos]
                        rank = int((row > row[token]).sum()) + 1
                        top = int(row.argmax())
                        entry = {token: Logprob(float(row[token]), rank)}
                        entry.setdefault(top, Logprob(float(row[top]), 1))
                        prompt_logprobs.append(entry)
                outputs.append(RequestOutput(ids, prompt_logprobs, [Completion(" B\nmore", [5, 6, 7], "length")]))
            return outputs

    module.LLM = LLM
    return module, calls


@pytest.fixture
def vllm_stub(monkeypatch, tiny_model_dir):
    module, calls = fake_vllm(tiny_model_dir)
    monkeypatch.setitem(sys.modules, "vllm", module)
    return calls


def test_engine_arguments(vllm_stub, tiny_model_dir):
    load_backend({"backend": "vllm", "model": str(tiny_model_dir), "revision": "abc123", "dtype": "bfloat16", "max_length": 512,
                  "tensor_parallel_size": 2, "gpu_memory_utilization": 0.8}, str(tiny_model_dir))
    assert vllm_stub["init"] == [{"model": str(tiny_model_dir), "dtype": "bfloat16", "trust_remote_code": False,
                                  "seed": 0, "revision": "abc123", "tokenizer_revision": "abc123",
                                  "max_model_len": 512, "tensor_parallel_size": 2, "gpu_memory_utilization": 0.8}]


def test_loglikelihood_matches_the_hf_backend(vllm_stub, tiny_model_dir):
    backend = load_backend({"backend": "vllm", "model": str(tiny_model_dir), "dtype": "float32"}, str(tiny_model_dir))
    hf = HFBackend(HFConfig(model=str(tiny_model_dir), dtype="float32", device="cpu"), str(tiny_model_dir))
    requests = [LoglikelihoodRequest("Passage: the cat sat.\nAnswer:", (" A", " the mat", " under a tree")),
                LoglikelihoodRequest("短い文脈。答え: ", ("はい", "いいえ"))]
    got = backend.loglikelihood(requests)
    want = hf.loglikelihood(requests)
    for g, w in zip(got, want):
        assert g.logprobs == pytest.approx(w.logprobs, abs=1e-4)
        assert g.greedy == w.greedy and g.n_tokens == w.n_tokens and g.n_context_tokens == w.n_context_tokens
    [(prompts, params)] = vllm_stub["generate"]
    assert len(prompts) == 5 and params.kwargs == {"max_tokens": 1, "temperature": 0.0, "prompt_logprobs": 1}


def test_generation_mapping(vllm_stub, tiny_model_dir):
    backend = load_backend({"backend": "vllm", "model": str(tiny_model_dir)}, str(tiny_model_dir))
    requests = [GenerationRequest("Question one?\nAnswer:", 5, ("\n",)), GenerationRequest("Two?", 3)]
    greedy = backend.generate(requests, Decoding())
    assert [r.text for r in greedy] == [" B", " B\nmore"]
    assert [r.finish_reason for r in greedy] == ["stop", "length"]
    assert [r.truncated_tokens for r in greedy] == [0, 0]  # a stop sequence cuts the answer, never the prompt
    prompts, params = vllm_stub["generate"][0]
    assert prompts[0]["prompt_token_ids"] == backend.encode("Question one?\nAnswer:")
    assert params[0].kwargs == {"n": 1, "max_tokens": 5, "stop": ["\n"], "temperature": 0.0}

    sampled = Decoding(do_sample=True, temperature=0.7, top_p=0.1, top_k=40, repetition_penalty=1.18, seed=1234)
    backend.generate(requests, sampled)
    prompts, params = vllm_stub["generate"][1]
    assert params[0].kwargs == {"n": 1, "max_tokens": 5, "stop": ["\n"], "temperature": 0.7, "top_p": 0.1,
                                "top_k": 40, "repetition_penalty": 1.18,
                                "seed": request_seed(1234, prompts[0]["prompt_token_ids"])}
    # a per-request seed from the run's seed and the prompt: independent of batching, distinct across prompts
    assert params[0].kwargs["seed"] != params[1].kwargs["seed"]
    backend.generate(requests[:1], sampled)
    assert vllm_stub["generate"][2][1][0].kwargs["seed"] == params[0].kwargs["seed"]


def test_chat_goes_through_the_template(vllm_stub, tiny_model_dir, tmp_path):
    template = tmp_path / "t.jinja"
    template.write_text("{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}<assistant>")
    backend = load_backend({"backend": "vllm", "model": str(tiny_model_dir), "chat": True,
                            "chat_template": str(template)}, str(tiny_model_dir))
    [result] = backend.generate([GenerationRequest("x", 2, (), ({"role": "user", "content": "Hi?"},))], Decoding())
    assert result.rendered_prompt == "<user>Hi?<assistant>"
    prompts, _ = vllm_stub["generate"][0]
    assert prompts[0]["prompt_token_ids"] == backend.tokenizer("<user>Hi?<assistant>",
                                                               add_special_tokens=False)["input_ids"]
