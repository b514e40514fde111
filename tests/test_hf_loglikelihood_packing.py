"""The shared-prefix scorer packs choices, and items that share a passage, into token trees: same numbers."""

import dataclasses

import pytest
import torch

from babeleval.generate.backends.base import LoglikelihoodRequest
from babeleval.generate.backends.config import HFConfig
from babeleval.generate.backends.hf import HFBackend

CONFIG = HFConfig(builtin="tiny-llama", dtype="float32", device="cpu", batch_size=4)
PASSAGE = "The market closes at noon, when the square must be cleared for buses. In winter it moves indoors. " * 3


@pytest.fixture(scope="module")
def backend(tiny_model_dir):
    return HFBackend(CONFIG, str(tiny_model_dir))


def direct_logprob(backend, context, continuation):
    """One full forward pass over context + continuation, as a per-choice harness would do it."""
    ctx, cont = backend.encode_pair(context, continuation)
    with torch.no_grad():
        logits = backend.model(input_ids=torch.tensor([ctx + cont])).logits[0].float()
    logprobs = torch.log_softmax(logits, dim=-1)
    return sum(logprobs[len(ctx) - 1 + j, tok].item() for j, tok in enumerate(cont))


# two questions on one passage (one row), choices sharing first words, an unrelated item, letters
REQUESTS = [
    LoglikelihoodRequest(PASSAGE + "\nQuestion: why does it close at noon?\nAnswer:",
                         (" Because the square is cleared", " Because the farmers leave", " Because of buses", " Rain")),
    LoglikelihoodRequest(PASSAGE + "\nQuestion: where does it go in winter?\nAnswer:",
                         (" Indoors", " To the old school hall", " Nowhere at all", " To the square")),
    LoglikelihoodRequest("短い文脈。答え:", (" はい", " いいえ、違います")),
    LoglikelihoodRequest("P: " + PASSAGE + "\nQ: when?\nA: noon\nB: one\nC: two\nD: three\nAnswer:", (" A", " B", " C", " D")),
    LoglikelihoodRequest("P: " + PASSAGE + "\nQ: why?\nA: buses\nB: rain\nC: snow\nD: sun\nAnswer:", (" A", " B", " C", " D")),
    LoglikelihoodRequest("", (" an empty context", " is conditioned on BOS")),
]


def expected(backend, request):
    if not request.context:
        bos = backend.tokenizer.bos_token_id
        out = []
        for cont in request.continuations:
            ids = backend.tokenizer(cont, add_special_tokens=False)["input_ids"]
            with torch.no_grad():
                logits = backend.model(input_ids=torch.tensor([[bos, *ids]])).logits[0].float()
            lp = torch.log_softmax(logits, dim=-1)
            out.append(sum(lp[j, tok].item() for j, tok in enumerate(ids)))
        return out
    return [direct_logprob(backend, request.context, c) for c in request.continuations]


def test_packed_rows_match_per_choice_computation(backend):
    rows = backend._rows([backend.encode_request(r.context, r.continuations) for r in REQUESTS])
    # each pair of questions on one passage shares a row; the other two items have rows of their own
    assert sorted(len(row) for row in rows) == [1, 1, 2, 2]
    for request, result in zip(REQUESTS, backend.loglikelihood(REQUESTS)):
        assert result.logprobs == pytest.approx(expected(backend, request), abs=1e-4)


def test_tree_stores_common_prefixes_once(backend):
    encoded = [backend.encode_request(r.context, r.continuations) for r in REQUESTS[:2]]
    tree = backend._tree([(0, None), (1, None)], encoded)
    scored = sum(len(ctx) + sum(len(c) - 1 for c in conts) for ctx, conts in encoded)
    assert len(tree.tokens) < scored - len(encoded[0][0]) // 2
    assert len(tree.tokens) == len(set(zip(tree.parents, tree.tokens)))


def test_without_4d_masks_each_choice_gets_its_own_row(backend, monkeypatch):
    packed = backend.loglikelihood(REQUESTS)
    monkeypatch.setattr(backend, "_attn_takes_4d_mask", lambda: False)
    rows = backend._rows([backend.encode_request(r.context, r.continuations) for r in REQUESTS])
    assert all(len(row) == 1 for row in rows)
    for a, b in zip(packed, backend.loglikelihood(REQUESTS)):
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-4)
        assert a.greedy == b.greedy


def test_order_and_batch_size_do_not_change_results(backend, monkeypatch):
    first = backend.loglikelihood(REQUESTS)
    monkeypatch.setattr(backend, "batch_size", 1)
    reversed_ = backend.loglikelihood(REQUESTS[::-1])[::-1]
    for a, b in zip(first, reversed_):
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-4)


def test_a_model_without_2d_logits_to_keep_gives_the_same_numbers(backend, monkeypatch):
    """Where the model takes no 2D ``logits_to_keep``, every position's logits come back and are indexed."""
    packed = backend.loglikelihood(REQUESTS)
    monkeypatch.setattr(backend, "_takes_2d_logits_to_keep", lambda: False)
    for a, b in zip(packed, backend.loglikelihood(REQUESTS)):
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-5)
        assert a.greedy == b.greedy


def run_counting_rows(backend):
    """The results of scoring REQUESTS and the (rows, width) of each forward pass."""
    shapes = []

    def count(module, args, kwargs):
        shapes.append(tuple(kwargs["input_ids"].shape))

    handle = backend.model.register_forward_pre_hook(count, with_kwargs=True)
    try:
        return backend.loglikelihood(REQUESTS), shapes
    finally:
        handle.remove()


def test_short_trees_share_a_row_with_long_ones(backend, monkeypatch):
    """Rows of very different lengths are packed side by side, so a batch runs almost no padding."""
    monkeypatch.setattr(backend, "batch_size", len(REQUESTS))
    monkeypatch.setattr(backend, "CPU_PACK_WIDTH", None)  # rows as wide as the longest tree, as on a GPU
    results, shapes = run_counting_rows(backend)
    trees = backend._rows([backend.encode_request(r.context, r.continuations) for r in REQUESTS])
    assert sum(rows for rows, _ in shapes) < len(trees)  # short trees filled the long rows' room
    for request, result in zip(REQUESTS, results):
        assert result.logprobs == pytest.approx(expected(backend, request), abs=1e-4)


def test_on_a_cpu_packed_rows_are_capped_and_passes_hold_rows_of_like_width(backend, monkeypatch):
    """A row holding several trees is at most CPU_PACK_WIDTH wide (attention costs its width squared); a tree
    longer than that is a row of its own; a pass's rows are at least CPU_NARROWEST_IN_PASS of its widest."""
    monkeypatch.setattr(backend, "batch_size", len(REQUESTS))
    encoded = [backend.encode_request(r.context, r.continuations) for r in REQUESTS]
    lengths = sorted((len(backend._tree(row, encoded).tokens) for row in backend._rows(encoded)), reverse=True)
    cap = lengths[1] + 1  # only the longest tree is wider
    monkeypatch.setattr(backend, "CPU_PACK_WIDTH", cap)
    passes = backend._passes(encoded)
    rows = [row for batch in passes for row in batch]
    assert sorted(len(row.tokens) for row in rows if len(row.tokens) > cap) == [lengths[0]]
    assert sorted(len(row.tokens) for row in rows) != sorted(lengths)  # short trees still share rows
    for batch in passes:
        assert all(len(row.tokens) >= backend.CPU_NARROWEST_IN_PASS * len(batch[0].tokens) for row in batch)
    results, shapes = run_counting_rows(backend)
    assert [(len(batch), len(batch[0].tokens)) for batch in passes] == shapes
    for request, result in zip(REQUESTS, results):
        assert result.logprobs == pytest.approx(expected(backend, request), abs=1e-4)


@pytest.mark.slow
def test_compiled_passes_give_the_same_numbers(tiny_model_dir):
    """torch_compile runs the log-likelihood passes through torch.compile (one graph with dynamic shapes):
    the same log-probs, also for a pass of one row (padded with an empty row, so no graph for one row);
    generation still runs the eager model."""
    compiled = HFBackend(dataclasses.replace(CONFIG, torch_compile=True, batch_size=1), str(tiny_model_dir))
    assert compiled.scoring_model is not compiled.model
    eager = HFBackend(CONFIG, str(tiny_model_dir))
    assert eager.scoring_model is eager.model
    torch._dynamo.utils.counters.clear()
    for a, b in zip(eager.loglikelihood(REQUESTS), compiled.loglikelihood(REQUESTS)):
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-4)
    # one graph: the kept positions' boolean mask is traced, not a graph break (each part would compile apart)
    assert not torch._dynamo.utils.counters["graph_break"]
