"""The HTTP transport of the API backends: JSON POSTs to one server, within deadlines, retried where a retry can help.

Plain HTTP with the standard library (no SDK): the behaviour under failure is ours to decide and test. It knows
nothing of what is asked: a caller gives a path, a JSON body and a ``check`` that says whether the answer has the
shape its endpoint promises (``Malformed`` where not); it gets back the decoded JSON object.

- Bounded concurrency: at most ``concurrency`` requests in flight per job (``HTTPClient._run``); the
  workflow declares the same number as a Snakemake resource named after the
  endpoint, so ``--resources api_<name>=N`` caps the whole run.
- Retries: 408, 409, 429, 5xx, timeouts, dropped connections and malformed
  JSON are retried up to ``max_retries`` times, waiting the server's
  ``Retry-After`` (or ``retry-after-ms``) when it gives one, else an
  exponential backoff with jitter. 400, 401, 403, 404, 422 and a 429 for an
  exhausted quota cannot be fixed by retrying: they stop the job at once with
  the server's message. An answer its ``check`` calls malformed is retried like
  a server error; when retries run out ``ItemFailed`` tells the caller to record the item as failed.
- The API key (``secret``) is kept out of every message this module raises or logs
  (see ``babeleval.core.redact``). It is sent
  only to the origin (scheme, host, port) of ``base_url``: a redirect to any
  other origin stops the job with a named error instead of being followed.
- Deadlines: ``timeout`` bounds each connect and socket read;
  ``request_deadline`` bounds a whole request, connecting, reading and every
  retry together (a server that trickles its answer a byte at a time is cut
  off); ``max_retry_after`` caps how long a server's ``Retry-After`` is
  honoured.
- Usage: ``usage()`` counts the HTTP calls and retries.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import logging
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

log = logging.getLogger(__name__)

RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
_REDIRECTS = {301, 302, 303, 307, 308}


class Cancelled(Exception):
    """A call given up because another one failed."""


class Retryable(Exception):
    def __init__(self, reason: str, retry_after: float | None = None):
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


class Malformed(Retryable):
    """An answer arrived but is not what the endpoint promises: retried, then the item is recorded as failed."""


class ItemFailed(Exception):
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


class HTTPClient:
    """POSTs JSON to the server at ``base_url`` with the API key ``secret`` (None: none sent), retrying and within
    deadlines; runs a job's calls at most ``concurrency`` at a time. ``sleep`` waits between retries (the tests'
    clock; by default a wait that a failed call cuts short)."""

    def __init__(self, base_url: str, *, secret: str | None, concurrency: int, timeout: float, max_retries: int,
                 backoff_base: float, backoff_max: float, request_deadline: float, max_retry_after: float,
                 sleep: Callable[[float], None] | None = None):
        self.base_url = base_url.rstrip("/")
        self.concurrency = concurrency
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.backoff_base = float(backoff_base)
        self.backoff_max = float(backoff_max)
        self.request_deadline = float(request_deadline)
        self.max_retry_after = float(max_retry_after)
        self._stop = threading.Event()  # set when a call fails for good: the others stop retrying
        self._sleep = sleep or self._stop.wait
        self._random = random.Random()
        self._secret = secret
        # a server on this machine (a local vllm serve, the tests' server) is never reached through a proxy
        host = urllib.parse.urlsplit(self.base_url).hostname or ""
        local = host in ("localhost", "::1") or host.startswith("127.")
        handlers = [_SameOriginRedirects, _WatchedHTTPHandler, _WatchedHTTPSHandler]
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), *handlers) if local else \
            urllib.request.build_opener(*handlers)
        self._lock = threading.Lock()
        self._usage = {"http_calls": 0, "retries": 0}

    def redact(self, text: str) -> str:
        """``text`` with the API key (and anything shaped like a bearer key) masked."""
        return secrets.redact(text)

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json", "User-Agent": "babeleval"}
        if self._secret:
            headers["Authorization"] = f"Bearer {self._secret}"
        return headers

    def _exchange(self, url: str, request: urllib.request.Request, timeout: float) -> bytes:
        """One HTTP exchange: the answer's body, or Retryable / BackendError saying what went wrong."""
        try:
            with self._opener.open(request, timeout=timeout) as response:
                return response.read()
        except urllib.error.HTTPError as exc:
            status = exc.code
            try:
                body = exc.read().decode("utf-8", "replace")
            except Exception:  # the connection may drop while the error body is read
                body = ""
            message = self.redact(server_message(body))
            if status in _REDIRECTS:  # a redirect the handler would not follow (a POST answered with 307/308)
                raise BackendError(f"{url}: HTTP {status} redirect to {self.redact(exc.headers.get('Location', '?'))}"
                                   ": set base_url to the address that answers (not followed)") from None
            if status in RETRYABLE_STATUS:
                if status == 429 and "insufficient_quota" in body:
                    raise BackendError(f"{url}: HTTP 429 insufficient_quota: {message} (the account's quota is "
                                       "used up; retrying cannot help)") from None
                raise Retryable(f"HTTP {status}: {message}", parse_retry_after(exc.headers)) from None
            hint = {401: "check the key in the environment variable api_key_env names",
                    403: "the key is not allowed to use this model or endpoint",
                    404: "check base_url, the endpoint kind and the model name"}.get(status, "check the request")
            raise BackendError(f"{url}: HTTP {status}: {message} ({hint}; not retried)") from None
        except (TimeoutError, socket.timeout):
            raise Retryable(f"no answer within {self.timeout:g} s (timeout)") from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, (TimeoutError, socket.timeout)):
                raise Retryable(f"no answer within {self.timeout:g} s (timeout)") from None
            raise Retryable(self.redact(f"cannot reach the server ({reason})")) from None
        except (ConnectionError, OSError, http.client.HTTPException) as exc:  # reset or closed mid-answer, incomplete read
            raise Retryable(self.redact(f"connection failed ({type(exc).__name__}: {exc})")) from None

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
            except (Retryable, BackendError):
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
            raise Malformed(f"malformed JSON in the answer: {snippet!r}") from None
        if not isinstance(data, dict):
            raise Malformed(f"malformed answer: expected a JSON object, got {type(data).__name__}") from None
        return data

    def _deadline_passed(self, path: str) -> BackendError:
        return BackendError(f"{self.base_url}{path}: no complete answer within the request deadline of "
                            f"{self.request_deadline:g} s (request_deadline: connecting, reading and retries "
                            "together); the server is too slow or trickling its answer")

    def post(self, path: str, payload: dict[str, Any], check: Callable[[dict[str, Any]], None] | None = None
             ) -> dict[str, Any]:
        """POST with retries; returns the decoded JSON answer or raises BackendError.

        ``check`` raises ``Malformed`` for an answer not shaped as the endpoint promises; such answers are
        retried, and when retries run out ``ItemFailed`` is raised for the caller to record. It raises
        ``Retryable`` for an answer that reports an error, retried as an HTTP error is.
        """
        deadline = time.monotonic() + self.request_deadline
        for attempt in range(self.max_retries + 1):
            if attempt and self._stop.is_set():
                raise Cancelled("given up: another request failed")
            try:
                data = self._post_once(path, payload, deadline)
                if check is not None:
                    check(data)
                return data
            except Retryable as exc:
                if attempt == self.max_retries:
                    if isinstance(exc, Malformed):
                        raise ItemFailed(f"{exc.reason} (after {attempt + 1} attempts)") from None
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
                        if error is None or (isinstance(error, Cancelled) and not isinstance(exc, Cancelled)):
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


def server_message(body: str) -> str:
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
