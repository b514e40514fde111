"""The GPU job: one model load for all languages, the response cache, atomic per-language outputs."""

import pytest

from babeleval.generate import job as generate
from babeleval.generate.backends import load_backend
from babeleval.generate.backends.config import HFConfig
from babeleval.core.jsonl import read_jsonl, write_jsonl

CONFIG = HFConfig(builtin="tiny-llama", dtype="float32", device="cpu", batch_size=4)


def requests(language, n):
    return [{"id": f"q{i}", "language": language, "prompt": f"[{language}] question {i}?\nAnswer:",
             "continuations": [" A", " B", " C", " D"], "choices": ["a", "b", "c", "d"], "answer": i % 4}
            for i in range(n)]


@pytest.fixture
def job(tmp_path, tiny_model_dir):
    inputs = {}
    for lang, n in [("eng_Latn", 5), ("jpn_Jpan", 3)]:
        inputs[lang] = str(tmp_path / f"{lang}.prompts.jsonl")
        write_jsonl(inputs[lang], requests(lang, n))
    loads = []

    def counting_loader(config, path):
        loads.append(path)
        return load_backend(config, path)

    def run(request_files=inputs, output_files=None, cache_path=str(tmp_path / "cache.sqlite"),
            backend_loader=counting_loader):
        outputs = output_files or {lang: str(tmp_path / "out" / f"{lang}.jsonl") for lang in inputs}
        return generate.run(generate.JobModel(CONFIG, str(tiny_model_dir), loader=backend_loader), "loglikelihood",
                            {"mode": "loglikelihood"}, generate.JobFiles(request_files, outputs, cache_path),
                            generate.Batching(chunk_size=2))

    return run, loads, tmp_path


def test_one_load_for_all_languages_then_cache_only(job):
    run, loads, tmp_path = job
    assert run() == {"requests": 8, "cache_hits": 0, "computed": 8}
    assert len(loads) == 1
    first = {lang: (tmp_path / "out" / f"{lang}.jsonl").read_bytes() for lang in ["eng_Latn", "jpn_Jpan"]}
    # everything cached: the model is not even loaded, and the outputs are byte-identical
    assert run() == {"requests": 8, "cache_hits": 8, "computed": 0}
    assert len(loads) == 1
    assert first == {lang: (tmp_path / "out" / f"{lang}.jsonl").read_bytes() for lang in ["eng_Latn", "jpn_Jpan"]}


def test_new_language_computes_only_its_prompts(job):
    run, loads, tmp_path = job
    run()
    write_jsonl(tmp_path / "hin.jsonl", requests("hin_Deva", 2))
    inputs = {lang: str(tmp_path / f"{lang}.prompts.jsonl") for lang in ["eng_Latn", "jpn_Jpan"]}
    inputs["hin_Deva"] = str(tmp_path / "hin.jsonl")
    counts = run(request_files=inputs, output_files={lang: str(tmp_path / "out" / f"{lang}.jsonl") for lang in inputs})
    assert counts == {"requests": 10, "cache_hits": 8, "computed": 2}


def test_records_carry_what_rescoring_needs(job):
    run, _, tmp_path = job
    run()
    record = read_jsonl(tmp_path / "out" / "jpn_Jpan.jsonl")[0]
    assert record["prompt"] == "[jpn_Jpan] question 0?\nAnswer:"
    assert len(record["loglikelihoods"]) == 4 and record["answer"] == 0
    assert record["settings"] == {"mode": "loglikelihood"}
    assert "weights_sha256" in record["model_fingerprint"]


def test_killed_job_keeps_finished_chunks(job):
    run, loads, tmp_path = job

    class Crash(Exception):
        pass

    calls = []

    def crashing_loader(config, path):
        backend = load_backend(config, path)
        real = backend.loglikelihood

        def flaky(reqs):
            calls.append(len(reqs))
            if len(calls) == 3:
                raise Crash
            return real(reqs)

        backend.loglikelihood = flaky
        return backend

    with pytest.raises(Crash):
        run(backend_loader=crashing_loader)
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())  # nothing half-written
    assert run() == {"requests": 8, "cache_hits": 4, "computed": 4}  # two chunks of two were kept


def test_cache_off_recomputes(job):
    run, loads, _ = job
    run(cache_path=None)
    assert run(cache_path=None)["computed"] == 8
    assert len(loads) == 2


def test_a_slow_load_and_a_slow_chunk_say_they_are_alive(job, monkeypatch, caplog):
    """The console is never silent for long: a model load or one backend call over a chunk that runs past the
    heartbeat interval logs that it is still running (every 20 s in a job; 50 ms here)."""
    import time

    from babeleval.core import progress

    run, _, _ = job
    monkeypatch.setattr(progress, "HEARTBEAT_SECONDS", 0.05)

    def slow_loader(config, path):
        time.sleep(0.2)
        backend = load_backend(config, path)
        answer = backend.loglikelihood

        def slow(requests):
            time.sleep(0.2)
            return answer(requests)

        backend.loglikelihood = slow
        return backend

    with caplog.at_level("INFO", logger="babeleval"):
        run(backend_loader=slow_loader)
    said = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("loading ") and ": still running, elapsed 0:00" in m for m in said), said
    assert any(m.startswith("computing requests 1-2 of 8: still running") for m in said), said
    beats = len([m for m in said if "still running" in m])
    time.sleep(0.2)
    assert len([r for r in caplog.records if "still running" in r.getMessage()]) == beats  # none after its step
