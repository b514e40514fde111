"""The GPU job: answer every request of one (model, task, template), all languages, with one model load.

Requests already in the response cache are not recomputed; the model is loaded
only when some request is missing, so a rerun after a parser edit or a new
language costs little. Results go into the cache chunk by chunk as they are
computed (a killed job keeps its finished chunks), and each language's output
file is written atomically at the end.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any, Callable

from .backends import load_backend
from .backends.base import Backend, Decoding, GenerationRequest, LoglikelihoodRequest
from .cache import NoCache, ResponseCache, request_key
from .fingerprint import digest, model_fingerprint
from .jsonl import read_jsonl, write_jsonl

log = logging.getLogger(__name__)


def decoding_settings(mode: str, generation: dict[str, Any], preset: dict[str, Any], seed: int) -> dict[str, Any]:
    """Everything besides the prompt that decides an output; part of the cache key and of each record."""
    if mode == "loglikelihood":
        return {"mode": mode}
    settings = {"mode": mode, **preset, "max_new_tokens": generation["max_new_tokens"], "stop": list(generation["stop"])}
    if preset.get("do_sample"):
        settings["seed"] = seed  # sampled outputs are cached per seed; greedy ones do not depend on it
    return settings


def _payload(mode: str, request: dict[str, Any]) -> dict[str, Any]:
    if mode == "loglikelihood":
        return {"context": request["prompt"], "continuations": request["continuations"]}
    return {"prompt": request["prompt"]}


def _compute(backend: Backend, mode: str, settings: dict[str, Any], requests: list[dict[str, Any]]) -> list[dict]:
    if mode == "loglikelihood":
        results = backend.loglikelihood([LoglikelihoodRequest(r["prompt"], tuple(r["continuations"])) for r in requests])
        return [{"loglikelihoods": r.logprobs, "greedy": r.greedy, "continuation_tokens": r.n_tokens,
                 "prompt_tokens": r.n_context_tokens} for r in results]
    decoding = Decoding(**{k: settings[k] for k in ("do_sample", "temperature", "top_p", "top_k",
                                                     "repetition_penalty", "seed") if k in settings})
    gen = [GenerationRequest(r["prompt"], settings["max_new_tokens"], tuple(settings["stop"])) for r in requests]
    return [{"response": r.text, "prompt_tokens": r.n_prompt_tokens, "completion_tokens": r.n_completion_tokens,
             "finish_reason": r.finish_reason} for r in backend.generate(gen, decoding)]


def run(
    *,
    model_spec: dict[str, Any],
    model_path: str,
    mode: str,
    settings: dict[str, Any],
    request_files: dict[str, str],
    output_files: dict[str, str],
    cache_path: str | None,
    chunk_size: int = 64,
    backend_loader: Callable[[dict[str, Any], str], Backend] = load_backend,
) -> dict[str, int]:
    fingerprint = model_fingerprint(model_spec, model_path)
    fingerprint_id = digest(fingerprint)
    cache = ResponseCache(cache_path) if cache_path else NoCache()
    requests = {lang: read_jsonl(path) for lang, path in request_files.items()}
    keyed = [(request_key(fingerprint, mode, settings, _payload(mode, r)), r) for rs in requests.values() for r in rs]
    found = cache.get_many(key for key, _ in keyed)
    missing = {key: r for key, r in keyed if key not in found}  # identical prompts are computed once
    log.info("cache: %d of %d requests answered, %d to compute", len(keyed) - len(missing), len(keyed), len(missing))

    if missing:
        started = time.perf_counter()
        backend = backend_loader(model_spec, model_path)
        log.info("model loaded in %.1f s", time.perf_counter() - started)
        todo = sorted(missing.items(), key=lambda kv: -len(kv[1]["prompt"]))
        for start in range(0, len(todo), chunk_size):
            chunk = todo[start:start + chunk_size]
            results = _compute(backend, mode, settings, [r for _, r in chunk])
            computed = {key: result for (key, _), result in zip(chunk, results)}
            cache.put_many(computed)
            found.update(computed)
            log.info("computed %d/%d", min(start + chunk_size, len(todo)), len(todo))
    cache.close()

    for lang, rows in requests.items():
        records = []
        for row in rows:
            key = request_key(fingerprint, mode, settings, _payload(mode, row))
            records.append({**row, **found[key], "settings": settings, "model_fingerprint": fingerprint,
                            "model_fingerprint_sha256": fingerprint_id})
        write_jsonl(Path(output_files[lang]), records)
    return {"requests": len(keyed), "cache_hits": len(keyed) - len(missing), "computed": len(missing)}
