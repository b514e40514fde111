"""The API backend keeps the key at its origin, bounds each request in time, and puts no key in what it returns.

Scripted servers on 127.0.0.1: one that redirects to a second (another port, so another origin), one that
trickles its answer a byte at a time, and one that echoes the key back in its answers and error bodies.
"""

from __future__ import annotations

import json
import logging
import socket
import time

import pytest

from scripted_server import Scripted, send

from babeleval.generate.backends import model_config
from babeleval.generate.backends.base import Decoding, GenerationRequest
from babeleval.generate.backends.http_transport import origin
from babeleval.generate.backends.openai_api import OpenAIBackend
from babeleval.core.errors import BabelevalError, BackendError
from babeleval.core.redact import MASK

from conftest import TINY_GRID

KEY = "sk-origin-test-7c1d2e3f4a5b6c7d"
ANSWER = {"choices": [{"text": " B", "index": 0, "finish_reason": "stop"}],
          "usage": {"prompt_tokens": 3, "completion_tokens": 1}}


def make(url, monkeypatch, **spec):
    monkeypatch.setenv("BABELEVAL_ORIGIN_KEY", KEY)
    return OpenAIBackend(model_config({
        "backend": "openai", "model": "origin-model", "base_url": url, "api_key_env": "BABELEVAL_ORIGIN_KEY",
        "endpoint": "completions", "max_retries": 1, "backoff_base": 0.01, "backoff_max": 0.02, "timeout": 2,
        "concurrency": 1, **spec}), "origin-model")


def ask(backend, prompt="Which letter? / どれ? / Welcher Buchstabe?"):
    return backend.generate([GenerationRequest(prompt, 4)], Decoding())


def test_origin_fills_in_default_ports():
    assert origin("https://API.example.org/v1") == origin("https://api.example.org:443/x") == (
        "https", "api.example.org", 443)
    assert origin("http://api.example.org/v1") != origin("https://api.example.org/v1")
    assert origin("http://127.0.0.1:8000/v1") != origin("http://127.0.0.1:8001/v1")


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_to_another_port_never_carries_the_key(status, monkeypatch):
    with Scripted(lambda h, s: send(h, 200, ANSWER)) as second:
        target = second.url + "/completions"
        with Scripted(lambda h, s: send(h, status, b"", [("Location", target)])) as first:
            with pytest.raises(BackendError, match=rf"the server redirects \(HTTP {status}\) to {target}, another "
                                                   r"origin than base_url.*not followed") as caught:
                ask(make(first.url, monkeypatch))
    assert first.headers[0]["Authorization"] == f"Bearer {KEY}"
    assert second.headers == []  # not contacted at all, so never saw the key
    assert KEY not in str(caught.value)


@pytest.mark.parametrize("location", ["https://127.0.0.1:{port}/v1/completions", "http://localhost:{port}/v1/c"])
def test_a_redirect_to_another_scheme_or_host_is_refused(location, monkeypatch):
    with Scripted(lambda h, s: send(h, 302, b"", [("Location", location.format(port=h.server.server_port))])) as srv:
        with pytest.raises(BackendError, match="another origin than base_url"):
            ask(make(srv.url, monkeypatch))
    assert len(srv.headers) == 1


def test_a_same_origin_redirect_of_a_post_is_named_not_followed(monkeypatch):
    with Scripted(lambda h, s: send(h, 307, b"", [("Location", "/v2/completions")])) as srv:
        with pytest.raises(BackendError, match=r"HTTP 307 redirect to /v2/completions: set base_url"):
            ask(make(srv.url, monkeypatch))


def trickle(handler, server):
    """Headers at once, then the body one byte every 0.1 s: each read is quick, the whole answer is not."""
    data = json.dumps(ANSWER).encode()
    handler.send_response(200)
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    for byte in data:
        handler.wfile.write(bytes([byte]))
        handler.wfile.flush()
        time.sleep(0.1)


def trickle_headers(handler, server):
    """The status line and headers themselves, one byte every 0.1 s."""
    raw = handler.wfile
    for byte in b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Slow: " + b"z" * 200:
        raw.write(bytes([byte]))
        raw.flush()
        time.sleep(0.1)


@pytest.mark.parametrize("respond", [trickle, trickle_headers], ids=["body", "headers"])
def test_the_request_deadline_holds_against_a_trickling_server(respond, monkeypatch):
    with Scripted(respond) as srv:
        backend = make(srv.url, monkeypatch, timeout=1, request_deadline=1.5, max_retries=3)
        started = time.monotonic()
        with pytest.raises(BackendError, match=r"no complete answer within the request deadline of 1\.5 s "
                                               r"\(request_deadline: connecting, reading and retries together\)"):
            ask(backend)
        took = time.monotonic() - started
    # each byte came within the 1 s timeout; only the deadline stops it (the whole trickle takes over 20 s; the
    # upper bound leaves a busy machine room)
    assert 1.4 <= took < 10.0, took


def test_retries_stop_at_the_deadline(monkeypatch):
    with Scripted(lambda h, s: send(h, 503, {"error": {"message": "busy"}}, [("Retry-After", "5")])) as srv:
        backend = make(srv.url, monkeypatch, request_deadline=1, max_retries=10)
        started = time.monotonic()
        with pytest.raises(BackendError, match=r"request deadline of 1 s"):
            ask(backend)
    # one request: the 5 s wait the server asked for would pass the deadline, so it is not waited (the bound
    # is under those 5 s, with room for a busy machine)
    assert len(srv.headers) == 1 and time.monotonic() - started < 4.0


def test_retry_after_is_capped_by_max_retry_after(monkeypatch):
    replies = iter([(503, {"error": {"message": "busy"}}, [("Retry-After", "3600")]), (200, ANSWER, [])])
    sleeps = []
    with Scripted(lambda h, s: send(h, *next(replies))) as srv:
        monkeypatch.setenv("BABELEVAL_ORIGIN_KEY", KEY)
        backend = OpenAIBackend(model_config({"backend": "openai", "model": "m", "base_url": srv.url,
                                              "api_key_env": "BABELEVAL_ORIGIN_KEY", "endpoint": "completions",
                                              "max_retry_after": 0.2}), "m", sleep=sleeps.append)
        [result] = ask(backend)
    assert sleeps == [0.2] and result.text == " B"


def test_an_echoed_key_is_masked_in_answers_errors_and_logs(monkeypatch, caplog):
    def echo(handler, server):
        if len(server.headers) == 1:
            return send(handler, 500, {"error": {"message": f"upstream said: Authorization: Bearer {KEY}"}})
        send(handler, 200, {"choices": [{"text": f" B (your key is {KEY})", "finish_reason": "stop"}]})

    with Scripted(echo) as srv, caplog.at_level(logging.INFO):
        [result] = ask(make(srv.url, monkeypatch))
    assert result.text == f" B (your key is {MASK})"
    assert "upstream said" in caplog.text and KEY not in caplog.text

    def unauthorised(handler, server):
        send(handler, 401, {"error": {"message": f"Incorrect API key provided: {KEY[:-4]}xxxx, or Bearer {KEY}"}})

    with Scripted(unauthorised) as srv:
        with pytest.raises(BackendError) as caught:
            ask(make(srv.url, monkeypatch))
    assert "HTTP 401" in str(caught.value) and "sk-origin" not in str(caught.value), str(caught.value)


def test_a_server_that_never_accepts_is_bounded_by_the_deadline(monkeypatch):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)  # accepts the connection into the backlog, never answers
    try:
        backend = make(f"http://127.0.0.1:{listener.getsockname()[1]}/v1", monkeypatch, timeout=5,
                       request_deadline=1, max_retries=0)
        started = time.monotonic()
        with pytest.raises(BackendError, match="request deadline of 1 s"):
            ask(backend)
        assert time.monotonic() - started < 4.5  # the deadline, not the 5 s timeout (room for a busy machine)
    finally:
        listener.close()


def test_deadline_settings_are_valid_and_keep_the_cache(repo_root):
    import yaml

    from babeleval.generate.fingerprint import model_fingerprint
    from babeleval.grid.params import validate

    spec = {"backend": "openai", "model": "gpt-4o-mini-2024-07-18", "base_url": "https://api.example.org/v1",
            "api_key_env": "OPENAI_API_KEY", "chat": True}
    tuned = {**spec, "request_deadline": 120, "max_retry_after": 30}
    assert (model_fingerprint(model_config(spec), spec["model"])
            == model_fingerprint(model_config(tuned), spec["model"]))
    params = yaml.safe_load(TINY_GRID.read_text(encoding="utf-8"))
    params["models"] = {"api": tuned}
    assert validate(params, root=repo_root).models["api"].request_deadline == 120
    params["models"]["api"]["request_deadline"] = 0
    with pytest.raises(BabelevalError, match=r"models\.api\.request_deadline: 0 is less than or equal to the minimum"):
        validate(params, root=repo_root)
