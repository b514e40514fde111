"""Hugging Face transformers backend: batched generation and shared-prefix log-likelihood scoring.

Log-likelihood multiple choice runs the context once per item and reuses its
KV cache for all choices: the context of a batch of items is prefilled with
left padding, the cache is repeated once per choice, and only the choice
tokens are run on top. When every continuation is one token (letters), the
prefill's last logits already answer, and no second pass runs at all.
Tokenisation follows lm-evaluation-harness: trailing whitespace of the context
moves to the continuation, and the continuation's tokens are those of
``encode(context + continuation)`` past the context's own tokens.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any, Sequence

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from ..errors import BackendError
from . import chat
from .base import (Decoding, GenerationRequest, GenerationResult, LoglikelihoodRequest,
                   LoglikelihoodResult)

log = logging.getLogger(__name__)

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16, "auto": "auto"}


def pick_device(name: str) -> str:
    if name != "auto":
        return name
    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return "cpu"


class HFBackend:
    def __init__(self, spec: dict[str, Any], model_path: str):
        self.device = pick_device(spec.get("device", "auto"))
        self.batch_size = spec.get("batch_size", 8)
        revision = spec.get("revision")
        trust = spec.get("trust_remote_code", False)
        self.tokenizer = AutoTokenizer.from_pretrained(model_path, revision=revision, trust_remote_code=trust)
        self.model = AutoModelForCausalLM.from_pretrained(
            model_path, revision=revision, trust_remote_code=trust, dtype=DTYPES[spec.get("dtype", "auto")],
        ).to(self.device)
        self.model.eval()
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.pad_id = self.tokenizer.pad_token_id
        self.add_bos = spec.get("add_bos_token")
        self.max_length = spec.get("max_length") or getattr(self.model.config, "max_position_embeddings", None) or 2048
        self.model_path = model_path
        self.chat_template: str | None = None
        self.chat_template_sha256: str | None = None
        if chat.is_chat(spec):
            self.chat_template = chat.tokenizer_template(self.tokenizer, spec, model_path)
            self.chat_template_sha256 = chat.sha256_text(self.chat_template)
            if self.add_bos is None:  # a rendered conversation carries the special tokens its template puts in
                self.add_bos = False
        log.info("loaded %s on %s (dtype %s, max_length %d)", model_path, self.device, self.model.dtype, self.max_length)

    # -- tokenisation -----------------------------------------------------------------------------

    def encode(self, text: str) -> list[int]:
        if self.add_bos is None:
            return self.tokenizer(text)["input_ids"]
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        bos = self.tokenizer.bos_token_id
        return [bos, *ids] if self.add_bos and bos is not None else ids

    def encode_pair(self, context: str, continuation: str) -> tuple[list[int], list[int]]:
        spaces = len(context) - len(context.rstrip())
        if spaces:
            context, continuation = context[:-spaces], context[-spaces:] + continuation
        context_ids = self.encode(context)
        whole = self.encode(context + continuation)
        return context_ids, whole[len(context_ids):]

    def render_chat(self, messages: Sequence[dict[str, str]] | None, plain: str) -> str:
        """The text the model sees: the conversation through the chat template for a chat model, else ``plain``."""
        if self.chat_template is None:
            return plain
        if messages is None:
            messages = [{"role": "user", "content": plain}]
        return chat.render(self.tokenizer, self.chat_template, list(messages), self.model_path)

    # -- log-likelihood ---------------------------------------------------------------------------

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[LoglikelihoodResult]:
        if self.chat_template is None:
            return self._loglikelihood(requests)
        rendered = [self.render_chat(r.messages, r.context) for r in requests]
        results = self._loglikelihood([dataclasses.replace(r, context=text) for r, text in zip(requests, rendered)])
        return [dataclasses.replace(res, rendered_prompt=text) for res, text in zip(results, rendered)]

    @torch.inference_mode()
    def _loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[LoglikelihoodResult]:
        encoded = []
        for request in requests:
            pairs = [self.encode_pair(request.context, cont) for cont in request.continuations]
            context_ids = pairs[0][0]
            if not context_ids:  # nothing to condition on: start from the end-of-text token, as lm-eval does
                context_ids = [self.tokenizer.eos_token_id]
            conts = [cont for _, cont in pairs]
            if any(not cont for cont in conts):
                raise BackendError(f"a continuation encodes to no tokens after context {request.context[-40:]!r}")
            budget = self.max_length - max(len(c) for c in conts)
            encoded.append((context_ids[-budget:], conts))
        order = sorted(range(len(encoded)), key=lambda i: -len(encoded[i][0]))
        results: list[LoglikelihoodResult | None] = [None] * len(encoded)
        for start in range(0, len(order), self.batch_size):
            batch = order[start:start + self.batch_size]
            for index, result in zip(batch, self._score_batch([encoded[i] for i in batch])):
                results[index] = result
        return results  # type: ignore[return-value]

    def _score_batch(self, batch: list[tuple[list[int], list[list[int]]]]) -> list[LoglikelihoodResult]:
        contexts = [ctx for ctx, _ in batch]
        width = max(map(len, contexts))
        ids = torch.full((len(batch), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for row, ctx in enumerate(contexts):
            ids[row, width - len(ctx):] = torch.tensor(ctx)
            mask[row, width - len(ctx):] = 1
        ids, mask = ids.to(self.device), mask.to(self.device)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        single_token = all(len(c) == 1 for _, conts in batch for c in conts)
        out = self.model(input_ids=ids, attention_mask=mask, position_ids=positions,
                         use_cache=not single_token, logits_to_keep=1)
        first = torch.log_softmax(out.logits[:, -1, :].float(), dim=-1)  # predicts each continuation's 1st token

        owner = [row for row, (_, conts) in enumerate(batch) for _ in conts]
        flat = [cont for _, conts in batch for cont in conts]
        rest = None
        if not single_token:
            rest = self._continuation_logprobs(out.past_key_values, mask, owner, flat)

        results = []
        k = 0
        for row, (ctx, conts) in enumerate(batch):
            logprobs, greedy = [], []
            for cont in conts:
                lp = first[row, cont[0]].item()
                is_greedy = int(first[row].argmax()) == cont[0]
                if len(cont) > 1:
                    tail = rest[k, : len(cont) - 1]  # position j predicts token j + 1
                    targets = torch.tensor(cont[1:], device=tail.device)
                    lp += tail.gather(-1, targets[:, None]).sum().item()
                    is_greedy = is_greedy and bool((tail.argmax(-1) == targets).all())
                logprobs.append(lp)
                greedy.append(is_greedy)
                k += 1
            results.append(LoglikelihoodResult(logprobs, greedy, [len(c) for c in conts], len(ctx)))
        return results

    def _continuation_logprobs(self, cache, context_mask, owner: list[int], conts: list[list[int]]) -> torch.Tensor:
        """Log-probs at every continuation position, running only continuation tokens on the shared cache."""
        index = torch.tensor(owner, device=self.device)
        cache.reorder_cache(index)  # one copy of an item's context per choice
        width = max(map(len, conts))
        ids = torch.full((len(conts), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(conts), width), dtype=torch.long)
        for row, cont in enumerate(conts):
            ids[row, : len(cont)] = torch.tensor(cont)
            mask[row, : len(cont)] = 1
        ids, mask = ids.to(self.device), mask.to(self.device)
        ctx_mask = context_mask.index_select(0, index)
        positions = ctx_mask.sum(-1, keepdim=True) + torch.arange(width, device=self.device)
        out = self.model(input_ids=ids, attention_mask=torch.cat([ctx_mask, mask], dim=1),
                         position_ids=positions, past_key_values=cache, use_cache=True)
        return torch.log_softmax(out.logits.float(), dim=-1)

    # -- generation -------------------------------------------------------------------------------

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding) -> list[GenerationResult]:
        if self.chat_template is None:
            return self._generate(requests, decoding)
        rendered = [self.render_chat(r.messages, r.prompt) for r in requests]
        results = self._generate([dataclasses.replace(r, prompt=text) for r, text in zip(requests, rendered)], decoding)
        return [dataclasses.replace(res, rendered_prompt=text) for res, text in zip(results, rendered)]

    @torch.inference_mode()
    def _generate(self, requests: Sequence[GenerationRequest], decoding: Decoding) -> list[GenerationResult]:
        encoded = [self.encode(r.prompt) for r in requests]
        order = sorted(range(len(requests)), key=lambda i: -len(encoded[i]))
        results: list[GenerationResult | None] = [None] * len(requests)
        for batch_number, start in enumerate(range(0, len(order), self.batch_size)):
            batch = order[start:start + self.batch_size]
            torch.manual_seed(decoding.seed + batch_number)
            for index, result in zip(batch, self._generate_batch([requests[i] for i in batch],
                                                                 [encoded[i] for i in batch], decoding)):
                results[index] = result
        return results  # type: ignore[return-value]

    def _generate_batch(self, requests: list[GenerationRequest], encoded: list[list[int]],
                        decoding: Decoding) -> list[GenerationResult]:
        max_new = max(r.max_new_tokens for r in requests)
        budget = self.max_length - max_new
        encoded = [ids[-budget:] for ids in encoded]
        width = max(map(len, encoded))
        ids = torch.full((len(encoded), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(encoded), width), dtype=torch.long)
        for row, prompt in enumerate(encoded):
            ids[row, width - len(prompt):] = torch.tensor(prompt)
            mask[row, width - len(prompt):] = 1
        stops = sorted({s for r in requests for s in r.stop})
        kwargs: dict[str, Any] = {"do_sample": decoding.do_sample}
        if decoding.do_sample:
            for key in ("temperature", "top_p", "top_k"):
                if getattr(decoding, key) is not None:
                    kwargs[key] = getattr(decoding, key)
        if decoding.repetition_penalty is not None:
            kwargs["repetition_penalty"] = decoding.repetition_penalty
        if stops:
            kwargs.update(stop_strings=stops, tokenizer=self.tokenizer)
        output = self.model.generate(
            input_ids=ids.to(self.device), attention_mask=mask.to(self.device), max_new_tokens=max_new,
            pad_token_id=self.pad_id, eos_token_id=self.tokenizer.eos_token_id, **kwargs,
        )
        results = []
        for row, request in enumerate(requests):
            new = output[row, width:].tolist()[: request.max_new_tokens]
            ended = self.tokenizer.eos_token_id in new
            if ended:
                new = new[: new.index(self.tokenizer.eos_token_id)]
            text = self.tokenizer.decode(new, skip_special_tokens=True)
            cut = [text.index(s) for s in request.stop if s in text]
            if cut:
                text = text[: min(cut)]
            finish = "stop" if cut or ended else "length"
            results.append(GenerationResult(text, len(encoded[row]), len(new), finish))
        return results
