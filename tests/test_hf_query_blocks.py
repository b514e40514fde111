"""On a CPU the scorer's attention runs by query blocks (generate.backends.query_blocks): the same numbers,
and only the scorer's passes use it."""

import dataclasses

import pytest
import torch
from transformers.integrations.sdpa_attention import sdpa_attention_forward

from babeleval.generate.backends import query_blocks
from babeleval.generate.backends.base import Decoding, GenerationRequest
from babeleval.generate.backends.hf import HFBackend

from test_hf_loglikelihood_packing import CONFIG, REQUESTS, expected


class Heads(torch.nn.Module):
    """What the attention function reads from a model's attention module."""

    def __init__(self, groups: int):
        super().__init__()
        self.num_key_value_groups = groups
        self.is_causal = True


def tree_like_mask(rows: int, width: int, generator: torch.Generator) -> torch.Tensor:
    """An additive mask of the scorer's kind: each query sees itself and a random subset of earlier keys."""
    allowed = (torch.rand((rows, 1, width, width), generator=generator) < 0.5).tril()
    allowed |= torch.eye(width, dtype=torch.bool)
    return torch.zeros(allowed.shape).masked_fill_(~allowed, torch.finfo(torch.float32).min)


@pytest.mark.parametrize("width", [query_blocks.BLOCK - 1, query_blocks.BLOCK + 1, 3 * query_blocks.BLOCK + 17])
@pytest.mark.parametrize("groups", [1, 2])
def test_query_blocks_compute_the_same_attention(width, groups):
    generator = torch.Generator().manual_seed(width + groups)
    heads, kv_heads, dim = 4, 4 // groups, 16
    query = torch.randn((2, heads, width, dim), generator=generator)
    key, value = (torch.randn((2, kv_heads, width, dim), generator=generator) for _ in range(2))
    mask = tree_like_mask(2, width, generator)
    module = Heads(groups)
    blocked, _ = query_blocks.query_blocked_sdpa(module, query, key, value, mask, scaling=dim ** -0.5)
    plain, _ = sdpa_attention_forward(module, query, key, value, mask, scaling=dim ** -0.5)
    assert blocked.shape == plain.shape == (2, width, heads, dim)
    torch.testing.assert_close(blocked, plain, atol=1e-5, rtol=1e-5)


@pytest.fixture(scope="module")
def backends(tiny_model_dir):
    """The same model twice: attention by query blocks (the CPU default) and the model's own sdpa."""
    blocked = HFBackend(dataclasses.replace(CONFIG, batch_size=len(REQUESTS)), str(tiny_model_dir))
    plain = HFBackend(dataclasses.replace(CONFIG, batch_size=len(REQUESTS)), str(tiny_model_dir))
    plain.by_query_blocks = False
    return blocked, plain


def counting_calls(monkeypatch) -> list[int]:
    """The widths the query-block attention is called with, from now on."""
    widths: list[int] = []
    original = query_blocks.query_blocked_sdpa

    def spy(module, query, *args, **kwargs):
        widths.append(query.shape[2])
        return original(module, query, *args, **kwargs)

    monkeypatch.setitem(query_blocks.AttentionInterface._global_mapping, query_blocks.NAME, spy)
    return widths


def test_the_scorer_on_a_cpu_runs_by_query_blocks_with_the_same_numbers(backends, monkeypatch):
    blocked, plain = backends
    assert blocked.by_query_blocks
    widths = counting_calls(monkeypatch)
    results = blocked.loglikelihood(REQUESTS)
    assert max(widths) > query_blocks.BLOCK  # a pass wide enough to run in blocks
    assert blocked.model.config._attn_implementation == "sdpa"  # its own attention again afterwards
    for request, a, b in zip(REQUESTS, results, plain.loglikelihood(REQUESTS)):
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-5)
        assert a.logprobs == pytest.approx(expected(blocked, request), abs=1e-4)
        assert a.greedy == b.greedy


def test_generation_keeps_the_models_own_attention(backends, monkeypatch):
    blocked, _ = backends
    widths = counting_calls(monkeypatch)
    blocked.generate([GenerationRequest(REQUESTS[0].context, 4)], Decoding())
    assert widths == []


def test_a_failed_pass_gives_the_model_its_attention_back(backends, monkeypatch):
    blocked, _ = backends

    def broken(*args, **kwargs):
        raise RuntimeError("out of memory")

    monkeypatch.setitem(query_blocks.AttentionInterface._global_mapping, query_blocks.NAME, broken)
    with pytest.raises(RuntimeError, match="out of memory"):
        blocked.loglikelihood(REQUESTS)
    assert blocked.model.config._attn_implementation == "sdpa"


def test_query_blocks_are_for_the_cpu_and_the_eager_passes(tiny_model_dir):
    compiled = HFBackend(dataclasses.replace(CONFIG, torch_compile=True), str(tiny_model_dir))
    assert not compiled.by_query_blocks  # a compiled pass traces the model's own attention
