"""The transformers backend on the tiny model: shared-prefix log-likelihoods and batched generation."""

import dataclasses
from types import SimpleNamespace

import pytest
import torch

from babeleval.core import cpu_threads
from babeleval.generate.backends.base import Decoding, GenerationRequest, LoglikelihoodRequest
from babeleval.generate.backends.config import HFConfig
from babeleval.generate.backends.hf import HFBackend, end_of_text_ids, without_partial_character

CONFIG = HFConfig(builtin="tiny-llama", dtype="float32", device="cpu", batch_size=3)


@pytest.fixture(scope="module")
def backend(tiny_model_dir):
    return HFBackend(CONFIG, str(tiny_model_dir))


def direct_logprob(backend, context, continuation):
    """One full forward pass over context + continuation, as a per-choice harness would do it."""
    ctx, cont = backend.encode_pair(context, continuation)
    ids = torch.tensor([ctx + cont])
    with torch.no_grad():
        logits = backend.model(input_ids=ids).logits[0].float()
    logprobs = torch.log_softmax(logits, dim=-1)
    return sum(logprobs[len(ctx) - 1 + j, tok].item() for j, tok in enumerate(cont))


REQUESTS = [
    LoglikelihoodRequest("Passage: the cat sat on the mat.\nQuestion: where did it sit?\nAnswer:",
                         (" on the mat", " in the garden shed", " nowhere", " under a very large and old oak tree")),
    LoglikelihoodRequest("短い文脈。答え:", (" はい", " いいえ、違います", " 多分")),
    LoglikelihoodRequest("P: x\nAnswer:", (" A", " B", " C", " D")),
    LoglikelihoodRequest("A much longer context " * 20 + "so the batch has to pad the others. Answer: ", ("yes", "no")),
]


def test_shared_prefix_matches_per_choice_computation(backend):
    results = backend.loglikelihood(REQUESTS)
    for request, result in zip(REQUESTS, results):
        expected = [direct_logprob(backend, request.context, c) for c in request.continuations]
        assert result.logprobs == pytest.approx(expected, abs=1e-4)
        assert result.n_tokens == [len(backend.encode_pair(request.context, c)[1]) for c in request.continuations]


def test_results_do_not_depend_on_batching(backend):
    batched = backend.loglikelihood(REQUESTS)
    alone = [backend.loglikelihood([r])[0] for r in REQUESTS]
    for a, b in zip(batched, alone):
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-4)
        assert a.greedy == b.greedy


def test_single_token_continuations_take_one_pass_and_one_logit(backend, monkeypatch):
    context = REQUESTS[2].context
    single = tuple(c for c in (" A", " B", " C", " D", " E") if len(backend.encode_pair(context, c)[1]) == 1)
    assert len(single) >= 2, "the tiny tokenizer should have some single-token letters"
    expected = [direct_logprob(backend, context, c) for c in single]
    calls = []
    forward = backend.model.forward

    def counting(*args, **kwargs):
        calls.append(kwargs)
        return forward(*args, **kwargs)

    monkeypatch.setattr(backend.model, "forward", counting)
    [result] = backend.loglikelihood([LoglikelihoodRequest(context, single)])
    assert len(calls) == 1, "single-token continuations must not run a continuation pass"
    assert int(calls[0]["logits_to_keep"].sum()) == 1, "only the context's last logits are needed"
    assert result.n_tokens == [1] * len(single)
    assert result.logprobs == pytest.approx(expected, abs=1e-4)


def test_trailing_space_moves_to_the_continuation(backend):
    ctx, cont = backend.encode_pair("Answer: ", "yes")
    ctx2, cont2 = backend.encode_pair("Answer:", " yes")
    assert (ctx, cont) == (ctx2, cont2)


@pytest.mark.slow
def test_greedy_generation_is_deterministic_and_batch_independent(backend):
    prompts = [GenerationRequest("Question: what is two plus two?\nAnswer:", 8),
               GenerationRequest("質問：日本の首都は？\n答え：", 8),
               GenerationRequest("x", 8), GenerationRequest("A longer prompt " * 10, 8)]
    first = backend.generate(prompts, Decoding())
    again = backend.generate(prompts, Decoding())
    alone = [backend.generate([p], Decoding())[0] for p in prompts]
    assert [r.text for r in first] == [r.text for r in again] == [r.text for r in alone]
    assert all(r.n_completion_tokens <= 8 for r in first)


def test_stop_sequences_cut_the_response(backend):
    [free] = backend.generate([GenerationRequest("Once upon a time", 12)], Decoding())
    assert free.text, "the tiny model should say something"
    stop = free.text.strip()[:1]
    [cut] = backend.generate([GenerationRequest("Once upon a time", 12, (stop,))], Decoding())
    assert stop not in cut.text and cut.finish_reason == "stop"


def test_sampling_is_seeded(backend):
    request = [GenerationRequest("Answer:", 6)]
    sampled = Decoding(do_sample=True, temperature=1.0, top_k=0, seed=5)
    assert backend.generate(request, sampled)[0].text == backend.generate(request, sampled)[0].text


# -- prompts longer than the model's context: cut from the left, and recorded --------------------------------


def test_long_prompts_are_cut_from_the_left_and_say_how_much(tiny_model_dir):
    backend = HFBackend(dataclasses.replace(CONFIG, max_length=48), str(tiny_model_dir))
    exemplars = "Beispiel: Die Katze schläft. Antwort: A\n\n" * 12
    question = "Frage: Wo schläft die Katze?\nAntwort:"
    requests = [GenerationRequest(exemplars + question, 4, (), None, question),
                GenerationRequest("Kurz: ja?", 4, (), None, "Kurz: ja?")]
    long, short = backend.generate(requests, Decoding())
    whole = len(backend.encode(exemplars + question))
    assert long.truncated_tokens == whole - (48 - 4) > 0 and long.n_prompt_tokens == 44
    assert not long.question_cut  # the exemplars went; the question is whole
    assert short.truncated_tokens == 0 and not short.question_cut

    [ll] = backend.loglikelihood([LoglikelihoodRequest(exemplars + question, (" A", " B"), None, question)])
    assert ll.truncated_tokens > 0 and not ll.question_cut


def test_a_cut_that_reaches_the_question_is_flagged(tiny_model_dir):
    backend = HFBackend(dataclasses.replace(CONFIG, max_length=16), str(tiny_model_dir))
    question = "प्रश्न: बिल्ली कहाँ सोती है? उत्तर दीजिए, कृपया विस्तार से और सोच-समझकर।\nउत्तर:"
    [result] = backend.generate([GenerationRequest("उदाहरण\n\n" + question, 4, (), None, question)], Decoding())
    assert result.truncated_tokens > 0 and result.question_cut
    [ll] = backend.loglikelihood([LoglikelihoodRequest("उदाहरण\n\n" + question, (" क", " ख"), None, question)])
    assert ll.truncated_tokens > 0 and ll.question_cut


def test_padding_after_a_rows_last_token_is_not_counted_as_generated():
    """A row that stopped before the batch's longest (a stop string) is filled with padding: none of it counts."""
    row = SimpleNamespace(end_ids=(2,), pad_id=0)
    assert HFBackend._generated(row, [5, 6, 7, 0, 0]) == ([5, 6, 7], False)
    assert HFBackend._generated(row, [5, 2, 0, 0]) == ([5], True)  # the end of text ends it, and is not counted
    assert HFBackend._generated(row, [5, 6, 7]) == ([5, 6, 7], False)


def test_the_end_of_a_chat_turn_ends_a_generation_beside_the_eos():
    tokenizer = SimpleNamespace(eos_token_id=2)
    assert end_of_text_ids(tokenizer, SimpleNamespace(eos_token_id=[7, 2])) == (2, 7)
    assert end_of_text_ids(tokenizer, SimpleNamespace(eos_token_id=2)) == (2,)
    assert end_of_text_ids(SimpleNamespace(eos_token_id=None), SimpleNamespace(eos_token_id=None)) == ()


def test_a_character_cut_at_the_length_limit_is_dropped():
    assert without_partial_character("नम\ufffd") == "नम"
    assert without_partial_character("ok") == "ok"


def test_a_job_given_one_thread_computes_on_one(tiny_model_dir, monkeypatch):
    """On a CPU, torch's threads follow the job's grant (babeleval.core.cpu_threads), not the machine's cores."""
    before = torch.get_num_threads()
    monkeypatch.setattr(cpu_threads, "_granted", None)
    monkeypatch.delenv("RAYON_NUM_THREADS", raising=False)  # restored afterwards: grant sets it
    try:
        cpu_threads.grant(1)
        HFBackend(CONFIG, str(tiny_model_dir))
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
