"""The OpenAI-compatible backend against a scripted HTTP server on 127.0.0.1."""

import threading
import time
import traceback

import pytest
from fake_openai import FakeOpenAI, echo_logprobs, reply_for

from babeleval.generate.backends import load_backend, model_config
from babeleval.generate.backends.base import Decoding, GenerationRequest, LoglikelihoodRequest
from babeleval.generate.backends.config import OpenAIConfig, rate_limit_resource
from babeleval.generate.backends.http_transport import parse_retry_after
from babeleval.generate.backends.openai_api import OpenAIBackend
from babeleval.core.errors import BackendError, ConfigError

KEY = "sk-test-DO-NOT-LEAK-0123456789abcdef"


@pytest.fixture
def server():
    with FakeOpenAI() as srv:
        yield srv


@pytest.fixture
def key_env(monkeypatch):
    monkeypatch.setenv("BABELEVAL_TEST_KEY", KEY)
    return "BABELEVAL_TEST_KEY"


def make(server, key_env=None, sleeps=None, **spec):
    full = {"backend": "openai", "model": "test-model", "base_url": server.base_url, "concurrency": 2,
            "timeout": 2, "max_retries": 3, "backoff_base": 0.01, "backoff_max": 0.05, **spec}
    if key_env:
        full["api_key_env"] = key_env
    sleep = None if sleeps is None else (lambda s: (sleeps.append(s), time.sleep(min(s, 0.05))))
    return OpenAIBackend(model_config(full), "test-model", sleep=sleep)


GREEDY = Decoding()


def test_chat_sends_messages_key_and_decoding(server, key_env):
    backend = make(server, key_env, chat=True)
    messages = ({"role": "system", "content": "Be brief."}, {"role": "user", "content": "Q?"})
    [result] = backend.generate([GenerationRequest("Q?", 7, ("\n",), messages)], GREEDY)
    sent = server.requests[0]
    assert sent["path"] == "/v1/chat/completions"
    assert sent["headers"]["Authorization"] == f"Bearer {KEY}"
    assert sent["body"] == {"model": "test-model", "messages": list(messages), "max_tokens": 7, "temperature": 0,
                            "stop": ["\n"]}
    assert result.text == reply_for('[{"content": "Be brief.", "role": "system"}, {"content": "Q?", "role": "user"}]')
    assert result.n_prompt_tokens == 3 and result.n_completion_tokens == 5
    assert backend.usage()["prompt_tokens"] == 3


def test_completions_sampling_params_and_client_side_stop(server):
    backend = make(server, endpoint="completions")
    decoding = Decoding(do_sample=True, temperature=0.7, top_p=0.1, top_k=40, repetition_penalty=1.18, seed=1234)
    [result] = backend.generate([GenerationRequest("Passage...\nAnswer:", 5, ("\n",))], decoding)
    body = server.requests[0]["body"]
    assert server.requests[0]["path"] == "/v1/completions"
    assert "Authorization" not in server.requests[0]["headers"]  # no api_key_env: no key sent
    assert body == {"model": "test-model", "prompt": "Passage...\nAnswer:", "max_tokens": 5, "temperature": 0.7,
                    "top_p": 0.1, "top_k": 40, "repetition_penalty": 1.18, "seed": 1234, "stop": ["\n"]}
    assert result.text == " " + reply_for("Passage...\nAnswer:")  # cut at the stop sequence
    assert result.finish_reason == "stop"


def test_429_with_retry_after_is_honoured(server):
    sleeps = []
    backend = make(server, sleeps=sleeps, endpoint="completions")
    server.script(("status", 429, {"Retry-After": "3"}, {"error": {"message": "slow down", "type": "rate_limit"}}),
                  ("status", 429, {"retry-after-ms": "250"}, {"error": {"message": "slow down"}}))
    [result] = backend.generate([GenerationRequest("x", 4)], GREEDY)
    assert result.text.startswith(" The correct answer")
    assert sleeps == [3.0, 0.25]
    assert len(server.requests) == 3 and backend.usage()["retries"] == 2


def test_5xx_timeout_malformed_json_and_dropped_connections_are_retried(server, caplog):
    sleeps = []
    backend = make(server, sleeps=sleeps, endpoint="completions", timeout=0.3, max_retries=5)
    server.script(("status", 500, {}, {"error": {"message": "internal"}}),
                  ("status", 503, {}, b"<html>Service Unavailable</html>"),
                  ("sleep", 1.0),          # longer than the client's timeout
                  ("malformed",),
                  ("drop",))
    [result] = backend.generate([GenerationRequest("x", 4)], GREEDY)
    assert result.text.startswith(" The correct answer")
    assert len(sleeps) == 5
    reasons = [r.getMessage() for r in caplog.records if "retry" in r.getMessage()]
    for expected in ("HTTP 500: internal", "HTTP 503: <html>Service Unavailable</html>", "timeout", "malformed JSON",
                     "RemoteDisconnected"):
        assert any(expected in reason for reason in reasons), (expected, reasons)
    for attempt, delay in enumerate(sleeps):  # equal jitter: between half and all of the doubled ceiling
        ceiling = min(0.05, 0.01 * 2 ** attempt)
        assert ceiling / 2 <= delay <= ceiling


def test_gives_up_after_max_retries_with_the_last_error(server):
    backend = make(server, sleeps=[], endpoint="completions", max_retries=2)
    server.script(*[("status", 502, {}, {"error": {"message": "bad gateway"}})] * 3)
    with pytest.raises(BackendError, match=r"gave up after 3 attempts; last error: HTTP 502: bad gateway"):
        backend.generate([GenerationRequest("x", 4)], GREEDY)


@pytest.mark.parametrize("status,hint", [(401, "api_key_env"), (400, "check the request"), (404, "base_url")])
def test_errors_that_retrying_cannot_fix_stop_at_once(server, key_env, status, hint):
    backend = make(server, key_env, sleeps=[])
    # OpenAI's 401 message quotes part of the key: the message must not carry it
    server.script(("status", status, {}, {"error": {"message": f"Incorrect API key provided: {KEY}",
                                                    "type": "invalid_request_error"}}))
    with pytest.raises(BackendError) as info:
        backend.generate([GenerationRequest("x", 4)], GREEDY)
    message = str(info.value)
    assert f"HTTP {status}" in message and hint in message and "not retried" in message
    assert KEY not in message and "DO-NOT-LEAK" not in message
    assert len(server.requests) == 1


def test_exhausted_quota_is_not_retried(server):
    backend = make(server, sleeps=[])
    server.script(("status", 429, {}, {"error": {"message": "You exceeded your current quota",
                                                 "type": "insufficient_quota", "code": "insufficient_quota"}}))
    with pytest.raises(BackendError, match="quota"):
        backend.generate([GenerationRequest("x", 4)], GREEDY)
    assert len(server.requests) == 1


def test_missing_key_variable_names_the_variable_not_a_value(server, monkeypatch):
    monkeypatch.delenv("BABELEVAL_UNSET_KEY", raising=False)
    with pytest.raises(BackendError, match="BABELEVAL_UNSET_KEY.*not set"):
        make(server, "BABELEVAL_UNSET_KEY")


def test_key_is_not_in_repr_or_exceptions(server, key_env):
    backend = make(server, key_env, sleeps=[], max_retries=0)
    assert KEY not in repr(backend)
    server.script(("status", 500, {}, {"error": {"message": f"echoing {KEY}"}}))
    with pytest.raises(BackendError) as info:
        backend.generate([GenerationRequest("x", 4)], GREEDY)
    assert KEY not in "".join(traceback.format_exception(info.value))


def test_concurrency_is_bounded_and_results_keep_their_order(server):
    server.delay = 0.05
    backend = make(server, endpoint="completions", concurrency=3)
    prompts = [f"prompt {i}" for i in range(12)]
    in_flight, peak, lock = [0], [0], threading.Lock()
    real = backend._post_once

    def counting(path, payload, *deadline):
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        try:
            return real(path, payload, *deadline)
        finally:
            with lock:
                in_flight[0] -= 1

    backend._post_once = counting
    results = backend.generate([GenerationRequest(p, 4, ("\n",)) for p in prompts], GREEDY)
    assert [r.text for r in results] == [" " + reply_for(p) for p in prompts]
    assert peak[0] == 3


def test_a_fatal_error_stops_the_rest(server):
    backend = make(server, sleeps=[], endpoint="completions", concurrency=1)
    server.script(("status", 200, {}, {"choices": [{"text": " ok", "finish_reason": "stop"}]}),
                  ("status", 401, {}, {"error": {"message": "bad key"}}))
    seen = []
    with pytest.raises(BackendError, match="HTTP 401"):
        for index, result in backend.iter_generate([GenerationRequest(f"p{i}", 4) for i in range(20)], GREEDY):
            seen.append(index)
    assert seen[0] == 0  # the answer before the failure was handed over (and one already queued may follow)
    assert len(server.requests) <= 4  # nothing new was started after it


def test_loglikelihood_from_echoed_prompt_logprobs(server):
    backend = make(server, endpoint="completions")
    request = LoglikelihoodRequest("Passage: x\nAnswer:", (" A", " B is long"))
    [result] = backend.loglikelihood([request])
    for cont, lp, n, greedy in zip(request.continuations, result.logprobs, result.n_tokens, result.greedy):
        echoed = echo_logprobs(request.context + cont)
        tail = range(len(echoed["tokens"]) - 1 - n, len(echoed["tokens"]) - 1)
        assert lp == pytest.approx(sum(echoed["token_logprobs"][i] for i in tail))
        assert greedy == all(echoed["tokens"][i] in echoed["top_logprobs"][i] for i in tail)
    assert result.n_tokens == [1, 3]
    assert result.n_context_tokens == 3
    body = server.requests[0]["body"]
    assert body["echo"] is True and body["logprobs"] == 1 and body["temperature"] == 0


def test_loglikelihood_moves_trailing_space_to_the_continuation(server):
    backend = make(server, endpoint="completions")
    [result] = backend.loglikelihood([LoglikelihoodRequest("Answer: ", ("A",))])
    assert {r["body"]["prompt"] for r in server.requests} == {"Answer: A"}
    assert result.n_tokens == [1]


def test_loglikelihood_needs_a_completions_endpoint(server):
    backend = make(server, chat=True)
    with pytest.raises(BackendError, match="chat endpoint does not return"):
        backend.loglikelihood([LoglikelihoodRequest("x", (" A",))])
    assert server.requests == []


def test_loglikelihood_on_a_server_without_prompt_logprobs(server):
    server.support_echo = False
    backend = make(server, endpoint="completions")
    with pytest.raises(BackendError, match="cannot score log-likelihood"):
        backend.loglikelihood([LoglikelihoodRequest("x", (" A",))])


def test_chat_with_completions_endpoint_is_refused(server):
    with pytest.raises(ConfigError, match="needs endpoint: chat"):  # by the config, before any backend
        make(server, chat=True, endpoint="completions")


def test_load_backend_dispatches_openai(server):
    backend = load_backend({"backend": "openai", "base_url": server.base_url, "model": "m"}, "m")
    assert isinstance(backend, OpenAIBackend) and backend.endpoint == "completions"


def test_retry_after_forms():
    assert parse_retry_after({"Retry-After": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "1500", "Retry-After": "9"}) == 1.5
    assert 0 <= parse_retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert parse_retry_after({}) is None


def test_rate_limit_resource_names():
    def named(**settings):
        return rate_limit_resource(OpenAIConfig(model="m", **settings))

    assert named(base_url="https://openrouter.ai/api/v1") == "api_openrouter_ai"
    assert named(base_url="http://localhost:8000/v1") == "api_localhost"  # the host, as the docs name it
    assert named(base_url="http://user@127.0.0.1:8001/v1") == "api_127_0_0_1"
    assert named(base_url="https://x", rate_limit_resource="api_lab") == "api_lab"
