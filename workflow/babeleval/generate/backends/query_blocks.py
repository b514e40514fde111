"""The scorer's attention on a CPU: each block of queries against the keys up to the block's end.

In a causal model no token attends to a later one, so in a pass with an explicit mask (the shared-prefix
scorer's token trees) every key after a block's last query is masked for the whole block. torch's CPU
attention kernel leaves out such keys only when told the attention is causal and given no mask; with a mask it
computes every pair of a row, about twice the pairs a causal row needs. Here the queries run in blocks of
``BLOCK``, each against the keys before its end: in the CPU benchmark's text passes, 2.0 s of attention in 10.4 s of
scoring, this leaves out 44% of the pairs (bench/RESULTS.md, section 1, "Attention by query blocks").
Scores move only by float rounding (the same keys, summed in another order).

The implementation is registered with transformers' ``AttentionInterface`` and switched on only for the
scorer's passes (``query_blocks``), so generation keeps the model's own attention.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

import torch
from transformers import AttentionInterface, PreTrainedModel
from transformers.integrations.sdpa_attention import repeat_kv, sdpa_attention_forward

NAME = "babeleval_query_blocks"
# queries a block: 32, 64 and 128 measured alike on the CPU benchmark (bench/RESULTS.md)
BLOCK = 64


def query_blocked_sdpa(module: torch.nn.Module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                       attention_mask: torch.Tensor | None, dropout: float = 0.0, scaling: float | None = None,
                       **kwargs: Any) -> tuple[torch.Tensor, None]:
    """transformers' sdpa attention, with a pass's queries (no cache, a 4D mask) run a block at a time."""
    width = query.shape[2]
    if attention_mask is None or attention_mask.dim() != 4 or key.shape[2] != width or width <= BLOCK \
            or dropout or kwargs.get("position_bias") is not None:
        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling,
                                      **kwargs)
    groups = getattr(module, "num_key_value_groups", 1)
    key, value = repeat_kv(key, groups), repeat_kv(value, groups)
    blocks = []
    for start in range(0, width, BLOCK):
        end = min(start + BLOCK, width)
        blocks.append(torch.nn.functional.scaled_dot_product_attention(
            query[:, :, start:end], key[:, :, :end], value[:, :, :end],
            attn_mask=attention_mask[:, :, start:end, :end], scale=scaling))
    return torch.cat(blocks, dim=2).transpose(1, 2).contiguous(), None


AttentionInterface.register(NAME, query_blocked_sdpa)


def applies_to(model: PreTrainedModel) -> bool:
    """Whether a model's attention can be run by query blocks: transformers' sdpa, set through the interface."""
    can_set = getattr(model, "_can_set_attn_implementation", lambda: False)  # transformers' own check, if it has one
    return getattr(model.config, "_attn_implementation", None) == "sdpa" and can_set()


@contextmanager
def query_blocks(model: PreTrainedModel) -> Iterator[None]:
    """Run the block with the model's attention by query blocks; its own attention is back afterwards."""
    previous = model.config._attn_implementation
    model.set_attn_implementation(NAME)
    try:
        yield
    finally:
        model.set_attn_implementation(previous)
