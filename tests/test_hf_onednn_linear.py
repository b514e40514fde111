"""On a CPU the model's linear layers run through oneDNN (generate.backends.onednn_linear): the same numbers for
scoring and generation, and each layer's own forward wherever oneDNN's operator does not serve the call."""

import dataclasses

import pytest
import torch
from torch.profiler import ProfilerActivity, profile

from babeleval.generate.backends import onednn_linear
from babeleval.generate.backends.base import Decoding, GenerationRequest
from babeleval.generate.backends.hf import HFBackend

from test_hf_loglikelihood_packing import CONFIG, REQUESTS, expected

PROMPTS = [GenerationRequest("Question: where does the market go in winter?\nAnswer:", 12),
           GenerationRequest("短い文脈。答え:", 12)]


def linears(model: torch.nn.Module) -> list[torch.nn.Linear]:
    return [m for m in model.modules() if isinstance(m, torch.nn.Linear)]


def kernels(call) -> set[str]:
    """The names of the operators a call runs."""
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        call()
    return {event.key for event in prof.key_averages()}


@pytest.fixture(scope="module")
def backends(tiny_model_dir):
    """The same model twice: linear layers through oneDNN (the CPU default) and through torch's own matmul."""
    routed = HFBackend(CONFIG, str(tiny_model_dir))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(onednn_linear, "usable", lambda: False)
        plain = HFBackend(CONFIG, str(tiny_model_dir))
    return routed, plain


def test_onednn_is_usable_with_the_pinned_torch():
    assert onednn_linear.usable()


def test_every_linear_layer_of_a_cpu_model_is_routed(backends):
    routed, plain = backends
    assert routed.onednn_linears == len(linears(routed.model)) > 0
    assert all(type(layer) is onednn_linear.OneDnnLinear for layer in linears(routed.model))
    assert plain.onednn_linears == 0
    assert all(type(layer) is torch.nn.Linear for layer in linears(plain.model))
    assert onednn_linear.route(routed.model) == 0  # routed once: a second call wraps nothing again


def test_the_scorer_runs_through_onednn_with_the_same_numbers(backends):
    routed, plain = backends
    ran = kernels(lambda: routed.loglikelihood(REQUESTS))
    assert "mkldnn::_linear_pointwise" in ran and not {"aten::mm", "aten::addmm"} & ran
    assert {"aten::mm", "aten::addmm"} & kernels(lambda: plain.loglikelihood(REQUESTS[:1]))
    for request, a, b in zip(REQUESTS, routed.loglikelihood(REQUESTS), plain.loglikelihood(REQUESTS)):
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-5)
        assert a.logprobs == pytest.approx(expected(plain, request), abs=1e-4)
        assert a.greedy == b.greedy


def test_generation_runs_through_onednn_with_the_same_text(backends):
    routed, plain = backends
    ran = kernels(lambda: routed.generate(PROMPTS, Decoding()))
    assert "mkldnn::_linear_pointwise" in ran
    assert [r.text for r in routed.generate(PROMPTS, Decoding())] == \
        [r.text for r in plain.generate(PROMPTS, Decoding())]


def test_calls_the_operator_does_not_serve_go_to_the_layers_own_forward():
    layer = torch.nn.Linear(16, 8)
    reference = torch.nn.Linear(16, 8)
    reference.load_state_dict(layer.state_dict())
    assert onednn_linear.route(layer) == 1
    x = torch.randn(3, 16, requires_grad=True)
    out = layer(x)  # gradients wanted: the operator has none
    assert out.grad_fn is not None
    out.sum().backward()
    assert x.grad is not None
    with torch.inference_mode():
        torch.testing.assert_close(layer(torch.ones(16)), reference(torch.ones(16)))  # a 1-D input
        torch.testing.assert_close(layer(x.detach()), reference(x.detach()), atol=1e-5, rtol=1e-5)
        assert "mkldnn::_linear_pointwise" in kernels(lambda: layer(x.detach()))


def test_only_plain_float32_linear_layers_are_routed():
    class Adapter(torch.nn.Linear):
        """A subclass (a quantized or adapter layer) has a forward of its own to keep."""

    model = torch.nn.Sequential(torch.nn.Linear(4, 4), Adapter(4, 4), torch.nn.Linear(4, 4).to(torch.bfloat16))
    assert onednn_linear.route(model) == 1
    assert [type(layer) for layer in model] == [onednn_linear.OneDnnLinear, Adapter, torch.nn.Linear]


def test_nothing_is_routed_where_onednn_is_not_usable(monkeypatch):
    monkeypatch.setattr(onednn_linear, "usable", lambda: False)
    layer = torch.nn.Linear(4, 4)
    assert onednn_linear.route(layer) == 0
    assert type(layer) is torch.nn.Linear


def test_a_compiled_model_keeps_torchs_linear(tiny_model_dir):
    backend = HFBackend(dataclasses.replace(CONFIG, torch_compile=True), str(tiny_model_dir))
    assert backend.onednn_linears == 0
    assert all(type(layer) is torch.nn.Linear for layer in linears(backend.model))
