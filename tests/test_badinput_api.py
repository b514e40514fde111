"""Catalogue of bad inputs, part 5: API faults, against a fake OpenAI-compatible server on 127.0.0.1.

Each fault ends in one BackendError naming the URL and the HTTP status or the failure, never the key;
faults that retrying can fix are retried first (table: tests/README.md).
"""

from __future__ import annotations

import time

import pytest
from scripted_server import Scripted, send

from babeleval.generate.backends import model_config, openai_api
from babeleval.generate.backends.base import Decoding, GenerationRequest
from babeleval.core.errors import BackendError

KEY = "sk-babeleval-catalogue-5b2e8f61c0"
OK = {"choices": [{"text": " B", "index": 0, "finish_reason": "stop"}],
      "usage": {"prompt_tokens": 3, "completion_tokens": 1}}


class Server(Scripted):
    """Answers each POST with the next scripted (status, body, delay); the last one repeats."""

    def __init__(self, script):
        self.script, self.calls = list(script), 0
        super().__init__(self._next)

    def _next(self, handler, _server):
        status, body, delay = self.script[min(self.calls, len(self.script) - 1)]
        self.calls += 1
        time.sleep(delay)
        headers = [("Retry-After", "0")] if status == 429 else []
        if status == 302:
            headers.append(("Location", "http://127.0.0.1:9/v1/completions"))
        send(handler, status, body, headers)


def backend(server, monkeypatch, **spec):
    monkeypatch.setenv("BABELEVAL_CATALOGUE_KEY", KEY)
    entry = {"backend": "openai", "model": "catalogue-model", "base_url": server.url,
             "api_key_env": "BABELEVAL_CATALOGUE_KEY", "endpoint": "completions", "max_retries": 2,
             "backoff_base": 0.01, "backoff_max": 0.02, "timeout": 0.5, "concurrency": 1, **spec}
    return openai_api.OpenAIBackend(model_config(entry), "catalogue-model")


def ask(b):
    return b.generate([GenerationRequest("Which letter?", 4)], Decoding())


def error(message):
    return {"error": {"message": message, "type": "invalid_request_error"}}


# (case id, server script, the BackendError's message, HTTP calls made)
CASES = [
    ("401-bad-key", [(401, error(f"Incorrect API key provided: {KEY}"), 0)],
     r"/v1/completions: HTTP 401: .*check the key in the environment variable api_key_env names; not retried", 1),
    ("429-rate-limited-throughout", [(429, error("Rate limit reached"), 0)],
     r"/v1/completions: gave up after 3 attempts; last error: HTTP 429: Rate limit reached", 3),
    ("500-server-error-throughout", [(500, error("The server had an error"), 0)],
     r"/v1/completions: gave up after 3 attempts; last error: HTTP 500: The server had an error", 3),
    ("timeout", [(200, OK, 2.0)],
     r"/v1/completions: gave up after 3 attempts; last error: no answer within 0\.5 s \(timeout\)", 3),
    ("redirect-to-another-origin", [(302, b"", 0)],
     r"/v1/completions: the server redirects \(HTTP 302\) to http://127\.0\.0\.1:9/v1/completions, another "
     r"origin than base_url; babeleval does not send the API key", 1),
]

# (case id, answer body, the reason recorded for the item): read, retried, then recorded as failed
MALFORMED = [
    ("malformed-json", b'{"choices": [{"text": "B"', r"malformed JSON in the answer"),
    ("json-not-an-object", b'["B"]', r"malformed answer: expected a JSON object, got list"),
    ("choices-missing", {"usage": {"prompt_tokens": 3}}, r"'choices' is missing, not a non-empty list"),
    ("choices-empty", {"choices": []}, r"'choices' is list \[\], not a non-empty list"),
    ("choice-a-string", {"choices": ["B"]}, r"choices\[0\] is str \"B\", not an object"),
    ("text-a-number", {"choices": [{"text": 2}]}, r"choices\[0\]\.text is int 2, not a string"),
    ("usage-n/a", {"choices": [{"text": " B"}], "usage": "n/a"}, r"'usage' is str \"n/a\", not an object"),
    ("usage-tokens-a-string", {"choices": [{"text": " B"}], "usage": {"prompt_tokens": "3"}},
     r"usage\.prompt_tokens is str \"3\", not a whole number"),
    ("finish-reason-a-number", {"choices": [{"text": " B", "finish_reason": 1}]}, r"finish_reason is int 1"),
]


@pytest.mark.parametrize("script, message, calls", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_api_fault_is_one_clear_error_without_the_key(script, message, calls, monkeypatch):
    with Server(script) as server:
        with pytest.raises(BackendError, match=message) as caught:
            ask(backend(server, monkeypatch))
    assert server.calls == calls
    assert KEY not in str(caught.value) and KEY not in repr(caught.value)
    assert server.headers[0]["Authorization"] == f"Bearer {KEY}"  # the key went where it belongs, only there


@pytest.mark.parametrize("body, reason", [c[1:] for c in MALFORMED], ids=[c[0] for c in MALFORMED])
def test_malformed_answer_is_retried_then_recorded_as_a_failed_item(body, reason, monkeypatch):
    with Server([(200, body, 0)]) as server:
        b = backend(server, monkeypatch)
        [result] = ask(b)
    assert server.calls == 3  # retried like a server error
    assert result.text == "" and result.n_prompt_tokens is None
    assert result.finish_reason.startswith("error: ") and result.finish_reason.endswith("(after 3 attempts)")
    assert __import__("re").search(reason, result.finish_reason), result.finish_reason


def test_a_malformed_answer_then_a_good_one_is_answered(monkeypatch):
    with Server([(200, {"choices": [{"message": "B"}]}, 0), (200, OK, 0)]) as server:
        [result] = ask(backend(server, monkeypatch))
    assert result.text == " B" and result.finish_reason == "stop" and server.calls == 2


@pytest.mark.parametrize("status", [429, 500])
def test_transient_fault_is_retried_then_answered(status, monkeypatch):
    with Server([(status, error("busy"), 0), (200, OK, 0)]) as server:
        [result] = ask(backend(server, monkeypatch))
    assert result.text == " B" and server.calls == 2


def test_missing_key_is_named_by_its_variable(monkeypatch):
    monkeypatch.delenv("BABELEVAL_UNSET_KEY", raising=False)
    with pytest.raises(BackendError, match=r"the environment variable BABELEVAL_UNSET_KEY \(api_key_env\) is not set"):
        openai_api.OpenAIBackend(model_config({"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1",
                                               "api_key_env": "BABELEVAL_UNSET_KEY"}), "m")
