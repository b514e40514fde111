"""A hard cap on an API model's spending (``max_tokens``, ``max_cost``) against the scripted server: no request
that could cross the cap is sent, the answers paid for stay in the cache, the stop is noted for the run summary,
and a resume with a higher cap pays only for the rest."""

import json
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI
from test_cache_resume import LANGS, api_model, cache_rows, chat_requests, job_args, run

from babeleval.core.errors import ConfigError
from babeleval.generate.backends import model_config
from babeleval.generate.spend import PER_MESSAGE, CapReached, read_ledger

KEY_ENV = "BABELEVAL_TEST_KEY"
ITEMS = sum(n for _, n in LANGS)


def billed(request):
    """The tokens the scripted server bills a chat request: its messages' words in, five words out."""
    return sum(len(m["content"].split()) for m in request["body"]["messages"]) + 5


def worst_case(request, max_new_tokens):
    messages = request["body"]["messages"]
    return sum(len(m["content"].encode()) for m in messages) + PER_MESSAGE * (len(messages) + 1) + max_new_tokens


@pytest.mark.parametrize("concurrency", [1, 4])
def test_the_cap_stops_before_crossing_and_a_higher_cap_resumes_from_the_cache(tmp_path, monkeypatch, concurrency):
    monkeypatch.setenv(KEY_ENV, "sk-test-cap")
    spend = tmp_path / "spend" / "api.json"
    cap = 300
    with FakeOpenAI() as server:
        model = api_model(server, max_tokens=cap, concurrency=concurrency)
        args = job_args(tmp_path, "capped", chat_requests, **model, spend_file=str(spend), model_name="api",
                        flush_every=1)
        with pytest.raises(CapReached, match=r"model api: stopped before its cap: .*max_tokens 300.*raise "
                                             r"models\.api\.max_tokens"):
            run(args)
        sent = list(server.requests)
        ledger = read_ledger(spend)
        # some were answered, not all; what the server billed is what the ledger holds, and it is within the cap;
        # with four in flight, a request that fits once the others settle waits for them rather than stopping the job
        assert 1 < len(sent) < ITEMS
        assert ledger["requests"] == len(sent) and ledger["tokens"] == sum(billed(r) for r in sent) <= cap
        # every request sent had its worst case within the cap when it was sent: with one in flight at a time, the
        # spend before each request plus its worst case
        if concurrency == 1:
            spent = 0
            for request in sent:
                assert spent + worst_case(request, 8) <= cap
                spent += billed(request)
        assert ledger["stopped"]["answered"] == len(sent) and ledger["stopped"]["not_sent"] == ITEMS - len(sent)
        assert ledger["cap"] == "max_tokens 300"
        assert cache_rows(Path(args["cache_path"])) == len(sent)  # every answer paid for is kept
        assert not any(Path(p).exists() for p in args["output_files"].values())  # no partial output looks complete

        # a resume with a higher cap: the cached answers are not asked again
        higher = job_args(tmp_path, "capped", chat_requests, **api_model(server, max_tokens=100_000,
                                                                          concurrency=concurrency),
                          spend_file=str(spend), model_name="api")
        counts = run(higher)
        assert counts == {"requests": ITEMS, "cache_hits": len(sent), "computed": ITEMS - len(sent)}
        assert len(server.requests) == ITEMS
        assert len({json.dumps(r["body"]["messages"]) for r in server.requests}) == ITEMS  # none asked twice
        assert read_ledger(spend)["tokens"] == sum(billed(r) for r in server.requests)


def test_a_cost_cap_counts_in_the_models_prices(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test-cap")
    spend = tmp_path / "spend.json"
    prices = {"prompt": 2.0, "completion": 8.0}  # per million tokens
    with FakeOpenAI() as server:
        model = api_model(server, max_cost=0.0012, prices=prices, concurrency=1)
        args = job_args(tmp_path, "cost", chat_requests, **model, spend_file=str(spend), model_name="api")
        with pytest.raises(CapReached, match=r"max_cost 0\.0012"):
            run(args)
        sent = server.requests
        words_in = sum(billed(r) - 5 for r in sent)
        assert read_ledger(spend)["cost"] == pytest.approx((2.0 * words_in + 8.0 * 5 * len(sent)) / 1e6)
        assert read_ledger(spend)["cost"] <= 0.0012 and 0 < len(sent) < ITEMS


def test_cap_settings_are_checked():
    base = {"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1"}
    with pytest.raises(ConfigError, match="max_cost: .*prices"):
        model_config({**base, "max_cost": 5})
    with pytest.raises(ConfigError, match="prices: "):
        model_config({**base, "max_cost": 5, "prices": {"input": 1}})
    with pytest.raises(ConfigError, match="max_tokens: "):
        model_config({**base, "max_tokens": -3})
    assert model_config({**base, "max_tokens": 10}).cap().describe() == "max_tokens 10"


def test_the_run_summary_names_the_cap_and_the_stop(tmp_path, monkeypatch):
    from babeleval.core import paths
    from babeleval.grid import run_summary

    monkeypatch.setenv(KEY_ENV, "sk-test-cap")
    spend = tmp_path / paths.SPEND.format(model="api")
    with FakeOpenAI() as server:
        args = job_args(tmp_path, "summary", chat_requests, **api_model(server, max_tokens=300, concurrency=1),
                        spend_file=str(spend), model_name="api")
        with pytest.raises(CapReached):
            run(args)
        sent = len(server.requests)
    summary = run_summary.collect(tmp_path, [], started=0.0)
    text = "\n".join(run_summary.lines(summary, succeeded=False, wall_seconds=1.0))
    assert (f"api: cap max_tokens 300: spent over every run {read_ledger(spend)['tokens']} tokens; STOPPED before "
            f"crossing it: {sent} request(s) answered and kept in the cache, {ITEMS - sent} not sent: raise the cap in "
            "params.yaml (models.api)") in text


def test_a_killed_jobs_reservations_do_not_hold_the_cap(tmp_path):
    from babeleval.generate.spend import Cap, Spending

    ledger = tmp_path / "spend.json"
    # a job killed with 900 tokens reserved (its process is gone), another one still running with 50 (this test)
    ledger.write_text(json.dumps({"tokens": 0, "reserved": {"999999999:1": {"tokens": 900, "cost": 0.0}}}))
    spending = Spending(ledger, Cap(max_tokens=1000), "api")
    reservation = spending.reserve(100, 10)  # would cross the cap if the dead job's 900 still counted
    spending.settle(reservation, 40, 5)
    assert read_ledger(ledger)["tokens"] == 45 and "999999999:1" not in read_ledger(ledger)["reserved"]
    with pytest.raises(CapReached, match="max_tokens 1,000"):
        spending.reserve(900, 100)
