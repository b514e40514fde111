"""OpenAI-compatible HTTP backend: OpenAI, OpenRouter, a ``vllm serve``, or any server speaking the same API.

Plain HTTP with the standard library (no SDK): the requests are simple and the
behaviour under failure is ours to decide and test.

- Endpoints: ``chat`` (``/chat/completions``, messages) or ``completions``
  (``/completions``, a prompt string).
- Bounded concurrency: at most ``concurrency`` requests in flight per job; the
  workflow declares the same number as a Snakemake resource named after the
  endpoint, so ``--resources api_<name>=N`` caps the whole run.
- Retries: 408, 409, 429, 5xx, timeouts, dropped connections and malformed
  JSON are retried up to ``max_retries`` times, waiting the server's
  ``Retry-After`` (or ``retry-after-ms``) when it gives one, else an
  exponential backoff with jitter. 400, 401, 403, 404, 422 and a 429 for an
  exhausted quota cannot be fixed by retrying: they stop the job at once with
  the server's message.
- The API key is read from the environment variable that ``api_key_env``
  names, only here, and kept out of every message this module raises or logs
  and out of every answer it returns (see ``babeleval.core.redact``). It is sent
  only to the origin (scheme, host, port) of ``base_url``: a redirect to any
  other origin stops the job with a named error instead of being followed.
- Deadlines: ``timeout`` bounds each connect and socket read;
  ``request_deadline`` bounds a whole request, connecting, reading and every
  retry together (a server that trickles its answer a byte at a time is cut
  off); ``max_retry_after`` caps how long a server's ``Retry-After`` is
  honoured.
- Every answer is checked against the shape the endpoint promises (choices, a
  message or text that is a string, integer token counts). A malformed answer
  is retried like a server error; when retries run out the item is recorded
  as failed (empty response, ``finish_reason`` ``"error: <reason>"``, never
  cached) and the job goes on.
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

import email.utils
import http.client
import json
import logging
import os
import random
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, Callable, Iterator, Sequence

from ...core import redact as secrets
from ...core.errors import BackendError
from ...prompts.answer_slot import AnswerSlot
from .base import (Decoding, GenerationRequest, GenerationResult, LoglikelihoodRequest,
                   LoglikelihoodResult)
from ..server_change import served_by
from ..spend import Spending, worst_prompt_tokens
from .config import OpenAIConfig

log = logging.getLogger(__name__)

RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
_REDIRECTS = {301, 302, 303, 307, 308}


class _Cancelled(Exception):
    """A call given up because another one failed."""


class _Retryable(Exception):
    def __init__(self, reason: str, retry_after: float | None = None):
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


class _Malformed(_Retryable):
    """An answer arrived but is not what the endpoint promises: retried, then the item is recorded as failed."""


class _ItemFailed(Exception):
    """Retries ran out on malformed answers: the item fails, the job goes on."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) with the scheme's default port filled in: where a credential may be sent."""
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or {"http": 80, "https": 443}.get(scheme)


class _SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only within the origin of the request; any other stops the job.

    The standard handler keeps the Authorization header on every redirect, so a server (or whoever controls
    its redirects) could send the key to any host.
    """

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if origin(newurl) != origin(req.full_url):
            fp.close()
            raise BackendError(secrets.redact(
                f"{req.full_url}: the server redirects (HTTP {code}) to {newurl}, another origin than base_url; "
                "babeleval does not send the API key anywhere but base_url's scheme, host and port, so the "
                "request was not followed: set base_url to the address that answers"))
        return super().redirect_request(req, fp, code, msg, headers, newurl)


_watch = threading.local()  # the _Deadline of the request this thread is making


class _Deadline:
    """Shuts a request's socket when its deadline passes, however slowly the server trickles bytes.

    ``timeout`` bounds each socket read only; a timer is what bounds the whole exchange.
    """

    def __init__(self, seconds: float):
        self.expired = False
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(0.0, seconds), self._expire)
        self._timer.daemon = True

    def attach(self, sock: socket.socket) -> None:
        with self._lock:
            self._sock = sock
            if self.expired:
                _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            if self._sock is not None:
                _shut(self._sock)

    def __enter__(self) -> "_Deadline":
        _watch.current = self
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self._timer.cancel()
        _watch.current = None


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:  # already closed
        pass


class _Watched:
    """A connection whose socket (after TLS, for HTTPS) is handed to the current request's deadline watch."""

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]
        watch = getattr(_watch, "current", None)
        if watch is not None:
            watch.attach(self.sock)  # type: ignore[attr-defined]


class _WatchedHTTPConnection(_Watched, http.client.HTTPConnection):
    pass


class _WatchedHTTPSConnection(_Watched, http.client.HTTPSConnection):
    pass


class _WatchedHTTPHandler(urllib.request.HTTPHandler):
    def http_open(self, req):
        return self.do_open(_WatchedHTTPConnection, req)


class _WatchedHTTPSHandler(urllib.request.HTTPSHandler):
    def https_open(self, req):
        return self.do_open(_WatchedHTTPSConnection, req, context=self._context)


def parse_retry_after(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date); None if absent."""
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    value = headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class OpenAIBackend:
    def __init__(self, config: OpenAIConfig, model_path: str, *, sleep: Callable[[float], None] | None = None):
        self.model = model_path
        self.base_url = config.base_url.rstrip("/")
        self.endpoint = config.endpoint_kind  # a chat model has a chat endpoint (OpenAIConfig checks)
        self.concurrency = config.concurrency
        self.timeout = float(config.timeout)
        self.max_retries = config.max_retries
        self.backoff_base = float(config.backoff_base)
        self.backoff_max = float(config.backoff_max)
        self.request_deadline = float(config.request_deadline)
        self.max_retry_after = float(config.max_retry_after)
        self._stop = threading.Event()  # set when a call fails for good: the others stop retrying
        self._sleep = sleep or self._stop.wait
        self._random = random.Random()
        self._secret: str | None = None
        env = config.api_key_env
        if env:
            key = os.environ.get(env)
            if not key:
                raise BackendError(f"model {model_path}: the environment variable {env} (api_key_env) is not set "
                                   "or empty: export it with the API key before running")
            self._secret = key
            secrets.register(key)
        # a server on this machine (a local vllm serve, the tests' server) is never reached through a proxy
        host = urllib.parse.urlsplit(self.base_url).hostname or ""
        local = host in ("localhost", "::1") or host.startswith("127.")
        handlers = [_SameOriginRedirects, _WatchedHTTPHandler, _WatchedHTTPSHandler]
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), *handlers) if local else \
            urllib.request.build_opener(*handlers)
        self._lock = threading.Lock()
        self._usage = {"http_calls": 0, "retries": 0, "prompt_tokens": 0, "completion_tokens": 0}
        # the model's spending cap, where its entry sets one: the generation job hands it its ledger
        self.spending: Spending | None = None

    def __repr__(self) -> str:  # never show the key
        return f"OpenAIBackend(model={self.model!r}, base_url={self.base_url!r}, endpoint={self.endpoint!r})"

    # -- HTTP ---------------------------------------------------------------------------------------

    def redact(self, text: str) -> str:
        """``text`` with the API key (and anything shaped like a bearer key) masked."""
        return secrets.redact(text)

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json", "User-Agent": "babeleval"}
        if self._secret:
            headers["Authorization"] = f"Bearer {self._secret}"
        return headers

    def _exchange(self, url: str, request: urllib.request.Request, timeout: float) -> bytes:
        """One HTTP exchange: the answer's body, or _Retryable / BackendError saying what went wrong."""
        try:
            with self._opener.open(request, timeout=timeout) as response:
                return response.read()
        except urllib.error.HTTPError as exc:
            status = exc.code
            try:
                body = exc.read().decode("utf-8", "replace")
            except Exception:  # the connection may drop while the error body is read
                body = ""
            message = self.redact(_server_message(body))
            if status in _REDIRECTS:  # a redirect the handler would not follow (a POST answered with 307/308)
                raise BackendError(f"{url}: HTTP {status} redirect to {self.redact(exc.headers.get('Location', '?'))}"
                                   ": set base_url to the address that answers (not followed)") from None
            if status in RETRYABLE_STATUS:
                if status == 429 and "insufficient_quota" in body:
                    raise BackendError(f"{url}: HTTP 429 insufficient_quota: {message} (the account's quota is "
                                       "used up; retrying cannot help)") from None
                raise _Retryable(f"HTTP {status}: {message}", parse_retry_after(exc.headers)) from None
            hint = {401: "check the key in the environment variable api_key_env names",
                    403: "the key is not allowed to use this model or endpoint",
                    404: "check base_url, the endpoint kind and the model name"}.get(status, "check the request")
            raise BackendError(f"{url}: HTTP {status}: {message} ({hint}; not retried)") from None
        except (TimeoutError, socket.timeout):
            raise _Retryable(f"no answer within {self.timeout:g} s (timeout)") from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, (TimeoutError, socket.timeout)):
                raise _Retryable(f"no answer within {self.timeout:g} s (timeout)") from None
            raise _Retryable(self.redact(f"cannot reach the server ({reason})")) from None
        except (ConnectionError, OSError, http.client.HTTPException) as exc:  # reset or closed mid-answer, incomplete read
            raise _Retryable(self.redact(f"connection failed ({type(exc).__name__}: {exc})")) from None

    def _post_once(self, path: str, payload: dict[str, Any], deadline: float) -> dict[str, Any]:
        url = self.base_url + path
        request = urllib.request.Request(url, data=json.dumps(payload).encode("utf-8"), headers=self._headers(),
                                         method="POST")
        with self._lock:
            self._usage["http_calls"] += 1
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise self._deadline_passed(path)
        with _Deadline(remaining) as watch:
            try:
                raw = self._exchange(url, request, min(self.timeout, remaining))
            except (_Retryable, BackendError):
                # the socket was shut by the deadline, or its read timeout was cut to what the deadline left
                if watch.expired or time.monotonic() >= deadline:
                    raise self._deadline_passed(path) from None
                raise
        if watch.expired:
            raise self._deadline_passed(path)
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            snippet = self.redact(raw[:120].decode("utf-8", "replace"))
            raise _Malformed(f"malformed JSON in the answer: {snippet!r}") from None
        if not isinstance(data, dict):
            raise _Malformed(f"malformed answer: expected a JSON object, got {type(data).__name__}") from None
        if "error" in data and "choices" not in data:  # some servers report errors with status 200
            raise _Retryable(f"error in the answer: {self.redact(_server_message(json.dumps(data)))}")
        return data

    def _deadline_passed(self, path: str) -> BackendError:
        return BackendError(f"{self.base_url}{path}: no complete answer within the request deadline of "
                            f"{self.request_deadline:g} s (request_deadline: connecting, reading and retries "
                            "together); the server is too slow or trickling its answer")

    def post(self, path: str, payload: dict[str, Any], check: Callable[[dict[str, Any]], None] | None = None
             ) -> dict[str, Any]:
        """POST with retries; returns the decoded JSON answer or raises BackendError.

        ``check`` raises ``_Malformed`` for an answer not shaped as the endpoint promises; such answers are
        retried, and when retries run out ``_ItemFailed`` is raised for the caller to record.
        """
        deadline = time.monotonic() + self.request_deadline
        for attempt in range(self.max_retries + 1):
            if attempt and self._stop.is_set():
                raise _Cancelled("given up: another request failed")
            try:
                data = self._post_once(path, payload, deadline)
                if check is not None:
                    check(data)
                return data
            except _Retryable as exc:
                if attempt == self.max_retries:
                    if isinstance(exc, _Malformed):
                        raise _ItemFailed(f"{exc.reason} (after {attempt + 1} attempts)") from None
                    raise BackendError(f"{self.base_url}{path}: gave up after {attempt + 1} attempts; last error: "
                                       f"{exc.reason}") from None
                if exc.retry_after is not None:
                    delay = min(exc.retry_after, self.max_retry_after)
                else:
                    ceiling = min(self.backoff_max, self.backoff_base * 2 ** attempt)
                    delay = ceiling / 2 + self._random.uniform(0, ceiling / 2)  # "equal jitter"
                if time.monotonic() + delay >= deadline:
                    raise self._deadline_passed(path) from None
                with self._lock:
                    self._usage["retries"] += 1
                log.warning("%s%s: %s; retry %d/%d in %.2f s", self.base_url, path, exc.reason, attempt + 1,
                            self.max_retries, delay)
                self._sleep(delay)
        raise AssertionError("unreachable")

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
            raise _Cancelled()
        reservation = self.spending.reserve(worst_prompt, worst_completion)
        try:
            data = call()
        except _ItemFailed:  # answers came, malformed: counted as billed at the worst case
            self.spending.settle(reservation, None, None)
            raise
        except BaseException:  # no answer: nothing billed
            self.spending.release(reservation)
            raise
        usage = data.get("usage") or {}
        self.spending.settle(reservation, usage.get("prompt_tokens"), usage.get("completion_tokens"))
        return data

    def usage(self) -> dict[str, int]:
        with self._lock:
            return dict(self._usage)

    # -- concurrency --------------------------------------------------------------------------------

    def _run(self, tasks: Sequence[Callable[[], Any]]) -> Iterator[tuple[int, Any]]:
        """Run ``tasks`` with at most ``concurrency`` in flight; yield (index, value) as each finishes.

        On the first error nothing new starts, calls waiting to retry give up, the calls still running are
        waited for and their answers yielded (so they reach the cache), and then the error is raised.
        """
        if not tasks:
            return
        self._stop.clear()
        pool = ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="babeleval-api")
        pending: dict[Future, int] = {}
        upcoming = iter(range(len(tasks)))
        error: BaseException | None = None

        def submit_next() -> None:
            index = next(upcoming, None)
            if index is not None:
                pending[pool.submit(tasks[index])] = index

        try:
            for _ in range(2 * self.concurrency):  # a short queue: a failure cancels cheaply
                submit_next()
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    index = pending.pop(future)
                    if future.cancelled():
                        continue
                    exc = future.exception()
                    if exc is not None:
                        if error is None or (isinstance(error, _Cancelled) and not isinstance(exc, _Cancelled)):
                            error = exc
                        continue
                    yield index, future.result()
                    if error is None:
                        submit_next()
                if error is not None:
                    self._stop.set()
                    for future in list(pending):
                        if future.cancel():
                            pending.pop(future)
            if error is not None:
                raise error
        finally:
            self._stop.set()
            pool.shutdown(wait=True, cancel_futures=True)

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
        except _ItemFailed as failed:
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
        except _ItemFailed as failed:  # a score cannot be recorded as missing: the job stops, naming the reason
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
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise _Malformed(f"malformed answer: 'choices' is {_kind(choices)}, not a non-empty list "
                         f"(keys: {', '.join(sorted(map(str, data))) or 'none'})")
    if not isinstance(choices[0], dict):
        raise _Malformed(f"malformed answer: choices[0] is {_kind(choices[0])}, not an object")
    usage = data.get("usage")
    if usage is not None:
        if not isinstance(usage, dict):
            raise _Malformed(f"malformed answer: 'usage' is {_kind(usage)}, not an object")
        for key in ("prompt_tokens", "completion_tokens"):
            value = usage.get(key)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
                raise _Malformed(f"malformed answer: usage.{key} is {_kind(value)}, not a whole number")
    finish = choices[0].get("finish_reason")
    if finish is not None and not isinstance(finish, str):
        raise _Malformed(f"malformed answer: finish_reason is {_kind(finish)}, not a string")
    return choices[0]


def check_chat_reply(data: dict[str, Any]) -> None:
    """Raises _Malformed unless ``data`` is a chat completion: choices[0].message.content a string (or null)."""
    choice = _check_common(data)
    message = choice.get("message")
    if not isinstance(message, dict):
        raise _Malformed(f"malformed answer: choices[0].message is {_kind(message)}, not an object")
    if message.get("content") is not None and not isinstance(message["content"], str):
        raise _Malformed(f"malformed answer: choices[0].message.content is {_kind(message['content'])}, "
                         "not a string")


def check_completion_reply(data: dict[str, Any]) -> None:
    """Raises _Malformed unless ``data`` is a text completion: choices[0].text a string."""
    choice = _check_common(data)
    if not isinstance(choice.get("text"), str):
        raise _Malformed(f"malformed answer: choices[0].text is {_kind(choice.get('text'))}, not a string")


def _kind(value: Any) -> str:
    """How a malformed value is described: its JSON type and a short, redacted excerpt."""
    if value is None:
        return "missing"
    shown = secrets.redact(json.dumps(value, ensure_ascii=False))
    return f"{type(value).__name__} {shown[:40] + ('...' if len(shown) > 40 else '')}"


def _server_message(body: str) -> str:
    """The error message in a server's JSON error body, or the body's start."""
    try:
        data = json.loads(body)
    except json.JSONDecodeError:
        return body.strip()[:200] or "(empty body)"
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        parts = [str(error.get(k)) for k in ("message", "type", "code") if error.get(k)]
        return "; ".join(parts)[:300] or body[:200]
    if isinstance(error, str):
        return error[:300]
    if isinstance(data, dict) and data.get("message"):
        return str(data["message"])[:300]
    return body.strip()[:200]
