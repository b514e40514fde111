"""An OpenAI-compatible HTTP server on 127.0.0.1 for the tests: scripted failures, deterministic answers.

- ``/v1/chat/completions`` and ``/v1/completions`` answer deterministically from the request (the same
  prompt always gets the same reply), with a ``usage`` block;
- ``/v1/completions`` with ``echo`` and ``logprobs`` returns prompt token log-probabilities: the prompt is
  cut into tokens at whitespace (each token keeps its leading spaces), and one generated token follows;
- ``script(...)`` queues behaviours that the next requests get, in order, before the default answer:
  an HTTP status with headers and body, a delay longer than the client's timeout, malformed JSON, a
  connection closed without an answer;
- every request (path, headers, JSON body) is recorded for the tests to check what the client sent;
- ``hold_after(n)`` makes requests after the n-th wait until ``release()`` (to stop a job mid-run);
- ``replies`` and ``token_logprob`` (attributes, settable between runs) script the answers themselves: the
  reply to a completions prompt, and the log-probability every echoed token of a prompt gets (the oracle
  test, tests/test_oracle.py, serves each item's gold answer this way); ``identity`` what every reply says
  the server is (``model``, ``system_fingerprint``: a server swapped behind the same URL).
- ``echo_auth=True`` appends the request's ``Authorization`` header to every answer's text, as a careless or
  hostile server might (to check that no key reaches anything a run writes).

It serves only the loopback address and stops with the test (``with FakeOpenAI() as server``).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


class LocalServer(ThreadingHTTPServer):
    """The tests' HTTP server: a listen backlog of 128, not socketserver's 5. A run's jobs open up to 16 connections at
    once (two jobs, concurrency 8); with 5, a busy machine's late accept overflowed the queue and the kernel reset a
    connection, which a job with ``max_retries: 0`` rightly counts as a failed request."""

    request_queue_size = 128
    daemon_threads = True


def _h(text: str) -> int:
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:8], 16)


def reply_for(prompt: str) -> str:
    """The deterministic answer to a prompt (or to the JSON of a conversation)."""
    return f"The correct answer is ({'ABCD'[_h(prompt) % 4]})"


def echo_logprobs(prompt: str) -> dict[str, Any]:
    tokens = re.findall(r"\s*\S+|\s+$", prompt) or [prompt]
    offsets, position = [], 0
    for token in tokens:
        offsets.append(position)
        position += len(token)
    logprobs: list[float | None] = [None]
    top: list[dict[str, float] | None] = [None]
    for i in range(1, len(tokens)):
        lp = -((_h(prompt[: offsets[i]] + "|" + tokens[i]) % 500) / 100 + 0.01)
        logprobs.append(lp)
        # the token is "greedy" when its hash is even; otherwise a more likely token tops the list
        top.append({tokens[i]: lp} if _h(tokens[i]) % 2 == 0 else {"<other>": lp + 0.5})
    # the one generated token (max_tokens 1) follows the prompt
    tokens.append("\n")
    offsets.append(len(prompt))
    logprobs.append(-0.1)
    top.append({"\n": -0.1})
    return {"tokens": tokens, "token_logprobs": logprobs, "top_logprobs": top, "text_offset": offsets}


class FakeOpenAI:
    def __init__(self, delay: float = 0.0, support_echo: bool = True, echo_auth: bool = False):
        self.delay = delay
        self.echo_auth = echo_auth
        self.support_echo = support_echo
        self.requests: list[dict[str, Any]] = []
        self._script: list[tuple] = []
        self._lock = threading.Lock()
        self._hold_after: int | None = None
        self._admit = threading.Condition(self._lock)
        self.admitted = 0  # requests let through to a normal answer
        self.in_flight = self.peak_in_flight = 0
        self.replies: Callable[[str], str] | None = None
        self.token_logprob: Callable[[str], float] | None = None
        self.identity: dict[str, str] = {}  # what replies say the server is, over the model asked for
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output quiet
                pass

            def do_POST(self):
                server._handle(self)

        self.httpd = LocalServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> "FakeOpenAI":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.release()
        self.httpd.shutdown()
        self.httpd.server_close()

    # -- scripting ------------------------------------------------------------------------------------

    def script(self, *actions: tuple) -> None:
        """Queue actions: ("status", code, headers, body), ("sleep", seconds), ("malformed",), ("drop",)."""
        with self._lock:
            self._script.extend(actions)

    def hold_after(self, n: int) -> None:
        """Answer n more requests normally, then hold the rest until ``release()``."""
        with self._lock:
            self._hold_after = self.admitted + n

    def release(self) -> None:
        with self._lock:
            self._hold_after = None
            self._admit.notify_all()

    # -- serving --------------------------------------------------------------------------------------

    def _send(self, handler, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(body)))
            for key, value in (headers or {}).items():
                handler.send_header(key, value)
            handler.end_headers()
            handler.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
            pass

    def _handle(self, handler) -> None:
        length = int(handler.headers.get("Content-Length", 0))
        raw = handler.rfile.read(length)
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            body = None
        with self._lock:
            self.requests.append({"path": handler.path, "headers": dict(handler.headers), "body": body})
            action = self._script.pop(0) if self._script else None
        if action is not None:
            kind = action[0]
            if kind == "status":
                _, code, headers, payload = action
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                return self._send(handler, code, data, headers)
            if kind == "sleep":
                time.sleep(action[1])
            elif kind == "malformed":
                return self._send(handler, 200, b'{"choices": [{"text": "cut sho')
            elif kind == "drop":  # close the connection without an answer
                handler.close_connection = True
                return
        with self._admit:
            while self._hold_after is not None and self.admitted >= self._hold_after:
                self._admit.wait()
            self.admitted += 1
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            if self.delay:
                time.sleep(self.delay)
            answer = self._answer(handler.path, body)
            if self.echo_auth:
                heard = f" (heard {handler.headers.get('Authorization', 'no key')})"
                for choice in answer["choices"]:
                    if "message" in choice:
                        choice["message"]["content"] += heard
                    else:
                        choice["text"] += heard
            reply = json.dumps(answer).encode()
        finally:
            # counted out before the answer is written: a client sends its next request as soon as it reads this
            # one, and on a busy machine this thread could count out after that request counted in
            with self._lock:
                self.in_flight -= 1
        self._send(handler, 200, reply)

    def _answer(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        return {**self._reply(path, body), **self.identity}

    def _reply(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        if path.endswith("/chat/completions"):
            key = json.dumps(body["messages"], sort_keys=True)
            text = reply_for(key)
            usage = {"prompt_tokens": sum(len(m["content"].split()) for m in body["messages"]),
                     "completion_tokens": len(text.split())}
            return {"id": "chatcmpl-1", "object": "chat.completion", "model": body["model"],
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                 "finish_reason": "stop"}], "usage": usage}
        prompt = body["prompt"]
        usage = {"prompt_tokens": len(prompt.split())}
        if body.get("echo") and body.get("logprobs") is not None:
            if not self.support_echo:
                return {"id": "cmpl-1", "object": "text_completion", "model": body["model"],
                        "choices": [{"index": 0, "text": prompt + "\n", "logprobs": None, "finish_reason": "length"}],
                        "usage": {**usage, "completion_tokens": 1}}
            logprobs = echo_logprobs(prompt)
            if self.token_logprob is not None:
                lp = self.token_logprob(prompt)
                logprobs["token_logprobs"] = [None] + [lp] * (len(logprobs["tokens"]) - 1)
                logprobs["top_logprobs"] = [None] + [{token: lp} for token in logprobs["tokens"][1:]]
            return {"id": "cmpl-1", "object": "text_completion", "model": body["model"],
                    "choices": [{"index": 0, "text": prompt + "\n", "logprobs": logprobs,
                                 "finish_reason": "length"}], "usage": {**usage, "completion_tokens": 1}}
        text = self.replies(prompt) if self.replies is not None else " " + reply_for(prompt) + "\nand more"
        return {"id": "cmpl-1", "object": "text_completion", "model": body["model"],
                "choices": [{"index": 0, "text": text, "finish_reason": "stop"}],
                "usage": {**usage, "completion_tokens": len(text.split())}}
