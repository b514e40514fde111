"""OpenAI-compatible HTTP backend: OpenAI, OpenRouter, a ``vllm serve``, or any server speaking the same API.

The protocol is here; the transport (deadlines, same-origin redirects, retries with backoff, bounded concurrency,
the key kept out of messages) is ``babeleval.generate.backends.http_transport``.

- Endpoints: ``chat`` (``/chat/completions``, messages) or ``completions``
  (``/completions``, a prompt string).
- The API key is read from the environment variable that ``api_key_env``
  names, only here, and kept out of every message this module raises or logs
  and out of every answer it returns (see ``babeleval.core.redact``). The
  transport sends it only to the origin (scheme, host, port) of ``base_url``.
- Every answer is checked against the shape the endpoint promises (choices, a
  message or text that is a string, integer token counts). A malformed answer
  is retried like a server error; when retries run out the item is recorded
  as failed (empty response, ``finish_reason`` ``"error: <reason>"``, never
  cached) and the job goes on. An answer that is an error object (some servers
  report errors with status 200) is retried like a server error.
- Log-likelihood: a completions endpoint with ``echo`` and ``logprobs``
  returns the prompt's token log-probabilities (OpenAI's legacy models,
  ``vllm serve``); chat endpoints cannot, and say so.
- Usage: each result carries the server's token counts; ``usage()`` adds up
  calls, retries and tokens for the job's usage file.
- Server identity: each result carries what the reply says the server is
  (``model``, ``system_fingerprint``), so that a changed server is noticed
  (``babeleval.generate.server_change``).
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any, Callable, Iterator, Sequence

from ...core import redact as secrets
from ...core.errors import BackendError
from ...prompts.answer_slot import AnswerSlot
from .base import (Decoding, GenerationRequest, GenerationResult, LoglikelihoodRequest,
                   LoglikelihoodResult)
from ..server_change import served_by
from ..spend import Spending, worst_prompt_tokens
from .config import OpenAIConfig
from .http_transport import Cancelled, HTTPClient, ItemFailed, Malformed, Retryable, server_message

log = logging.getLogger(__name__)


class OpenAIBackend(HTTPClient):
    """OpenAI's protocol over the HTTP transport: the request bodies of the chat and completions endpoints, and
    what is read of their answers (choices, log-probabilities, token counts, the server's identity)."""

    def __init__(self, config: OpenAIConfig, model_path: str, *, sleep: Callable[[float], None] | None = None):
        self.model = model_path
        self.endpoint = config.endpoint_kind  # a chat model has a chat endpoint (OpenAIConfig checks)
        secret: str | None = None
        env = config.api_key_env
        if env:
            key = os.environ.get(env)
            if not key:
                raise BackendError(f"model {model_path}: the environment variable {env} (api_key_env) is not set "
                                   "or empty: export it with the API key before running")
            secret = key
            secrets.register(key)
        super().__init__(config.base_url, secret=secret, concurrency=config.concurrency, timeout=config.timeout,
                         max_retries=config.max_retries, backoff_base=config.backoff_base,
                         backoff_max=config.backoff_max, request_deadline=config.request_deadline,
                         max_retry_after=config.max_retry_after, sleep=sleep)
        self._usage.update(prompt_tokens=0, completion_tokens=0)  # what the server says it counted
        # the model's spending cap, where its entry sets one: the generation job hands it its ledger
        self.spending: Spending | None = None

    def __repr__(self) -> str:  # never show the key
        return f"OpenAIBackend(model={self.model!r}, base_url={self.base_url!r}, endpoint={self.endpoint!r})"

    def _count_tokens(self, data: dict[str, Any]) -> tuple[int | None, int | None]:
        usage = data.get("usage") or {}  # its shape was checked by check_reply
        prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
        with self._lock:
            self._usage["prompt_tokens"] += prompt or 0
            self._usage["completion_tokens"] += completion or 0
        return prompt, completion

    def _paid(self, worst_prompt: int, worst_completion: int, call: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """``call`` (one request, its retries included) under the model's cap: its worst case reserved before it is
        sent (CapReached where that could cross the cap), settled at what the server billed once it answers."""
        if self.spending is None:
            return call()
        if self._stop.is_set():  # another request stopped the job (the cap, or an error): nothing more is sent
            raise Cancelled()
        reservation = self.spending.reserve(worst_prompt, worst_completion)
        try:
            data = call()
        except ItemFailed:  # answers came, malformed: counted as billed at the worst case
            self.spending.settle(reservation, None, None)
            raise
        except BaseException:  # no answer: nothing billed
            self.spending.release(reservation)
            raise
        usage = data.get("usage") or {}
        self.spending.settle(reservation, usage.get("prompt_tokens"), usage.get("completion_tokens"))
        return data

    # -- generation ---------------------------------------------------------------------------------

    def _sampling(self, decoding: Decoding) -> dict[str, Any]:
        if not decoding.do_sample:
            params: dict[str, Any] = {"temperature": 0}
        else:
            params = {"seed": decoding.seed}
            for key in ("temperature", "top_p", "top_k"):
                if getattr(decoding, key) is not None:
                    params[key] = getattr(decoding, key)
        if decoding.repetition_penalty is not None:
            params["repetition_penalty"] = decoding.repetition_penalty  # vLLM, OpenRouter; OpenAI rejects it
        return params

    def _generate_one(self, request: GenerationRequest, sampling: dict[str, Any]) -> GenerationResult:
        """One completion; a constrained answer slot (``babeleval.prompts.answer_slot``) goes as the server's
        ``response_format`` or ``guided_choice``."""
        payload: dict[str, Any] = {"model": self.model, "max_tokens": request.max_new_tokens, **sampling}
        if request.stop:
            payload["stop"] = list(request.stop)
        payload.update(constrained(request.answer_slot))
        try:
            if self.endpoint == "chat":
                messages = list(request.messages) if request.messages else [{"role": "user", "content": request.prompt}]
                worst = worst_prompt_tokens([m["content"] for m in messages], len(messages))
                data = self._paid(worst, request.max_new_tokens, lambda: self.post(
                    "/chat/completions", {**payload, "messages": messages}, check_chat_reply))
                choice = data["choices"][0]
                text = (choice.get("message") or {}).get("content") or ""
            else:
                data = self._paid(worst_prompt_tokens([request.prompt]), request.max_new_tokens, lambda: self.post(
                    "/completions", {**payload, "prompt": request.prompt}, check_completion_reply))
                choice = data["choices"][0]
                text = choice.get("text") or ""
        except ItemFailed as failed:
            log.warning("%s: item failed: %s", self.base_url, failed.reason)
            return GenerationResult("", None, None, f"error: {failed.reason}")
        text = secrets.redact_values(text)  # an endpoint that echoes the key must not put it on disk
        cut = [text.index(s) for s in request.stop if s in text]
        if cut:
            text = text[: min(cut)]
        prompt_tokens, completion_tokens = self._count_tokens(data)
        finish = choice.get("finish_reason") or "stop"
        return GenerationResult(text, prompt_tokens, completion_tokens, "stop" if cut else finish,
                                server=served_by(data))

    def iter_generate(self, requests: Sequence[GenerationRequest], decoding: Decoding
                      ) -> Iterator[tuple[int, GenerationResult]]:
        sampling = self._sampling(decoding)
        return self._run([lambda r=r: self._generate_one(r, sampling) for r in requests])

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding) -> list[GenerationResult]:
        return _in_order(self.iter_generate(requests, decoding), len(requests))

    # -- log-likelihood -----------------------------------------------------------------------------

    def _score_one(self, context: str, continuation: str) -> tuple[float, bool, int, int, dict[str, str] | None]:
        """(log-probability, is greedy, continuation tokens, context tokens, the server) of ``continuation`` after
        ``context``."""
        spaces = len(context) - len(context.rstrip())
        if spaces:  # as the hf backend (and lm-evaluation-harness): trailing whitespace belongs to the continuation
            context, continuation = context[:-spaces], context[-spaces:] + continuation
        prompt = context + continuation
        try:
            data = self._paid(worst_prompt_tokens([prompt]), 1, lambda: self.post(
                "/completions", {"model": self.model, "prompt": prompt, "max_tokens": 1, "temperature": 0,
                                 "echo": True, "logprobs": 1}, check_completion_reply))
        except ItemFailed as failed:  # a score cannot be recorded as missing: the job stops, naming the reason
            raise BackendError(f"{self.base_url}/completions: {failed.reason}") from None
        self._count_tokens(data)
        logprobs = data["choices"][0].get("logprobs")
        try:
            tokens = logprobs["tokens"]
            token_logprobs = logprobs["token_logprobs"]
            offsets = logprobs["text_offset"]
            top = logprobs.get("top_logprobs") or [None] * len(tokens)
        except (TypeError, KeyError):
            raise BackendError(f"{self.base_url}/completions returned no prompt log-probabilities (echo with "
                               "logprobs); this server or model cannot score log-likelihood templates: use a "
                               "generate template, or a server that returns them (e.g. vllm serve)") from None
        # Tokens of the prompt are those starting before its end (echo may be followed by one generated token);
        # the continuation's are those ending after the context does.
        in_prompt = [i for i, off in enumerate(offsets) if off < len(prompt)]
        start = next((i for i in in_prompt if offsets[i] + len(tokens[i]) > len(context)), None)
        if start is None or start == 0:
            raise BackendError(f"{self.base_url}/completions: cannot find the continuation {continuation!r} among "
                               "the echoed prompt tokens")
        span = range(start, in_prompt[-1] + 1)
        if any(token_logprobs[i] is None for i in span):
            raise BackendError(f"{self.base_url}/completions: the echoed prompt lacks log-probabilities for the "
                               f"continuation {continuation!r}")
        total = float(sum(token_logprobs[i] for i in span))
        greedy = all(top[i] and max(top[i], key=top[i].get) == tokens[i] for i in span)
        return total, greedy, len(span), start, served_by(data)

    def iter_loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> Iterator[tuple[int, LoglikelihoodResult]]:
        if self.endpoint != "completions":
            raise BackendError(f"model {self.model}: log-likelihood templates need prompt log-probabilities, which "
                               "a chat endpoint does not return; use endpoint: completions on a server that echoes "
                               "them (e.g. vllm serve), or a generate template")
        tasks, owners = [], []
        for index, request in enumerate(requests):
            for cont in request.continuations:
                tasks.append(lambda c=request.context, k=cont: self._score_one(c, k))
                owners.append(index)
        parts: dict[int, dict[int, tuple]] = {}
        first_task = {}
        for t, owner in enumerate(owners):
            first_task.setdefault(owner, t)
        for t, value in self._run(tasks):
            owner = owners[t]
            parts.setdefault(owner, {})[t - first_task[owner]] = value
            n = len(requests[owner].continuations)
            if len(parts[owner]) == n:
                finished = parts.pop(owner)
                scored = [finished[j] for j in range(n)]
                yield owner, LoglikelihoodResult([s[0] for s in scored], [s[1] for s in scored],
                                                 [s[2] for s in scored], scored[0][3], server=scored[0][4])

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[LoglikelihoodResult]:
        return _in_order(self.iter_loglikelihood(requests), len(requests))


def constrained(slot: AnswerSlot | None) -> dict[str, Any]:
    """The request fields that constrain an answer slot: vLLM's ``guided_choice`` where the whole reply is the
    answer and the template asks for it, else a JSON-schema ``response_format`` (reasoning, then the answer)."""
    if slot is None:
        return {}
    if slot.api == "guided_choice" and slot.choices is not None:
        return {"guided_choice": list(slot.choices)}
    return {"response_format": slot.json_schema()}


def _in_order(pairs: Iterator[tuple[int, Any]], n: int) -> list[Any]:
    results: list[Any] = [None] * n
    for index, value in pairs:
        results[index] = value
    return results


def _check_common(data: dict[str, Any]) -> dict[str, Any]:
    """The parts every completion answer shares: a non-empty list of choice objects, a usage object or none."""
    if "error" in data and "choices" not in data:  # some servers report errors with status 200
        raise Retryable(f"error in the answer: {secrets.redact(server_message(json.dumps(data)))}")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise Malformed(f"malformed answer: 'choices' is {_kind(choices)}, not a non-empty list "
                         f"(keys: {', '.join(sorted(map(str, data))) or 'none'})")
    if not isinstance(choices[0], dict):
        raise Malformed(f"malformed answer: choices[0] is {_kind(choices[0])}, not an object")
    usage = data.get("usage")
    if usage is not None:
        if not isinstance(usage, dict):
            raise Malformed(f"malformed answer: 'usage' is {_kind(usage)}, not an object")
        for key in ("prompt_tokens", "completion_tokens"):
            value = usage.get(key)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
                raise Malformed(f"malformed answer: usage.{key} is {_kind(value)}, not a whole number")
    finish = choices[0].get("finish_reason")
    if finish is not None and not isinstance(finish, str):
        raise Malformed(f"malformed answer: finish_reason is {_kind(finish)}, not a string")
    return choices[0]


def check_chat_reply(data: dict[str, Any]) -> None:
    """Raises Malformed unless ``data`` is a chat completion: choices[0].message.content a string (or null)."""
    choice = _check_common(data)
    message = choice.get("message")
    if not isinstance(message, dict):
        raise Malformed(f"malformed answer: choices[0].message is {_kind(message)}, not an object")
    if message.get("content") is not None and not isinstance(message["content"], str):
        raise Malformed(f"malformed answer: choices[0].message.content is {_kind(message['content'])}, "
                         "not a string")


def check_completion_reply(data: dict[str, Any]) -> None:
    """Raises Malformed unless ``data`` is a text completion: choices[0].text a string."""
    choice = _check_common(data)
    if not isinstance(choice.get("text"), str):
        raise Malformed(f"malformed answer: choices[0].text is {_kind(choice.get('text'))}, not a string")


def _kind(value: Any) -> str:
    """How a malformed value is described: its JSON type and a short, redacted excerpt."""
    if value is None:
        return "missing"
    shown = secrets.redact(json.dumps(value, ensure_ascii=False))
    return f"{type(value).__name__} {shown[:40] + ('...' if len(shown) > 40 else '')}"
