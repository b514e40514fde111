"""The GPU job: answer every request of one (model, task, template), all languages, with one model load.

Requests already in the response cache are not recomputed; the model is loaded
(or the API client built) only when some request is missing, so a rerun after
a parser edit or a new language costs little. Results go into the cache as
they are computed: chunk by chunk for hf, as each request finishes for vLLM (one engine
run a job), and for API backends, which answer out of order, every few results or seconds; a killed job keeps
everything it finished. Each language's output file is written atomically at
the end, so a crash never leaves a truncated file that looks complete.

Chat models (``chat: true``) are keyed on their messages (system prompt,
exemplar turns, query) rather than the plain prompt, and their records carry
the messages, the chat template's SHA-256 and, where the backend renders the
template itself, the exact text the model saw.

The optional usage file records what the run cost: requests, cache hits,
computed requests, tokens this run paid for and tokens of all requests, and
for API backends the server-reported usage with HTTP calls and retries.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from ..core import cpu_threads
from ..core.layout import job_pairs
from ..core.errors import ConfigError
from ..core.jsonl import read_jsonl, write_json, write_jsonl
from ..core.progress import Progress, heartbeat
from ..core.record_fields import MESSAGES, RENDERED_PROMPT
from ..prompts.answer_slot import AnswerSlot
from ..prompts.protocols import ENCODINGS, JOINT
from . import preflight, server_change
from .backends import BackendType, get_backend, load_backend, model_config
from .backends.base import Backend, Decoding, GenerationRequest, LoglikelihoodRequest
from .backends.chat import build_messages
from .backends.config import APIConfig, ModelConfig
from .cache import NoCache, ResponseCache, request_key
from .fingerprint import digest, model_fingerprint
from .spend import CapReached, Spending

log = logging.getLogger(__name__)

def _payload(mode: str, request: dict[str, Any], messages: list[dict[str, str]] | None = None) -> dict[str, Any]:
    """What the cache keys on besides the model and settings: the exact prompt, or for a chat model the messages;
    and what its protocol decides beyond the text, where the request says it (``babeleval.prompts.protocols``:
    a request of the default protocol keeps the key it always had)."""
    protocol = {key: request[key] for key in ("encoding", "answer_length_of", "answer_slot") if key in request}
    if messages is not None:
        if mode == "loglikelihood":
            return {"messages": messages, "continuations": request["continuations"], **protocol}
        return {"messages": messages, **protocol}
    if mode == "loglikelihood":
        return {"context": request["prompt"], "continuations": request["continuations"], **protocol}
    return {"prompt": request["prompt"], **protocol}


def _extras(result: Any) -> dict[str, Any]:
    """A prompt cut to fit the model is recorded (scoring counts it; a cut question fails its item); so is what
    an API server said it is (babeleval.generate.server_change)."""
    cut = getattr(result, "truncated_tokens", 0)
    server = getattr(result, "server", None)
    return {**({"truncated_tokens": cut, "question_cut": result.question_cut} if cut else {}),
            **({"server": server} if server else {})}


def _ll_record(result: Any) -> dict[str, Any]:
    record = {"loglikelihoods": result.logprobs, "greedy": result.greedy, "continuation_tokens": result.n_tokens,
              "prompt_tokens": result.n_context_tokens, **_extras(result)}
    if result.rendered_prompt is not None:
        record[RENDERED_PROMPT] = result.rendered_prompt
    return record


def _gen_record(result: Any) -> dict[str, Any]:
    record = {"response": result.text, "prompt_tokens": result.n_prompt_tokens,
              "completion_tokens": result.n_completion_tokens, "finish_reason": result.finish_reason,
              **_extras(result)}
    if result.rendered_prompt is not None:
        record[RENDERED_PROMPT] = result.rendered_prompt
    return record


def _decoding(settings: dict[str, Any]) -> Decoding:
    return Decoding(**{k: settings[k] for k in ("do_sample", "temperature", "top_p", "top_k", "repetition_penalty",
                                                "seed") if k in settings})


def _backend_requests(mode: str, settings: dict[str, Any], requests: list[tuple[dict, list | None]]) -> list:
    """The backend's requests, with what the rendered request says its protocol decides (tokens, limits)."""
    if mode == "loglikelihood":
        return [LoglikelihoodRequest(r["prompt"], tuple(r["continuations"]), tuple(m) if m else None, r.get("query"),
                                     ENCODINGS[r.get("encoding", JOINT.name)]) for r, m in requests]
    return [GenerationRequest(r["prompt"], settings["max_new_tokens"], tuple(settings["stop"]), tuple(m) if m else None,
                              r.get("query"), ENCODINGS[r.get("encoding", JOINT.name)],
                              tuple(r.get("answer_length_of", ())), AnswerSlot.from_json(r.get("answer_slot")))
            for r, m in requests]


def check_answer_slots(backend: BackendType, requests: Iterable[dict[str, Any]]) -> None:
    """Constrained answers need a backend that honours them: otherwise the run would measure free text under a
    constrained template's name. Checked before the model loads."""
    if not backend.constrains_answers and any(r.get("answer_slot") for r in requests):
        raise ConfigError(f"the template constrains its answers (answer_slot) and backend '{backend.name}' cannot: "
                          "run it with an hf or openai model, or drop answer_slot from the template")


def _compute(backend: Backend, mode: str, settings: dict[str, Any], requests: list[tuple[dict, list | None]]
             ) -> list[dict]:
    batch = _backend_requests(mode, settings, requests)
    if mode == "loglikelihood":
        return [_ll_record(r) for r in backend.loglikelihood(batch)]
    return [_gen_record(r) for r in backend.generate(batch, _decoding(settings))]


def _stream(backend: Any, mode: str, settings: dict[str, Any], requests: list[tuple[dict, list | None]]
            ) -> Iterator[tuple[int, dict]]:
    """(index, record) as each request finishes, for backends that answer out of order (API backends)."""
    batch = _backend_requests(mode, settings, requests)
    if mode == "loglikelihood":
        for index, result in backend.iter_loglikelihood(batch):
            yield index, _ll_record(result)
    else:
        for index, result in backend.iter_generate(batch, _decoding(settings)):
            yield index, _gen_record(result)


def _tokens(records: Iterable[dict[str, Any]]) -> dict[str, int]:
    """Tokens the records account for: prompts (and scored continuations) in, generated tokens out."""
    prompt = completion = 0
    for record in records:
        prompt += (record.get("prompt_tokens") or 0) + sum(record.get("continuation_tokens") or [])
        completion += record.get("completion_tokens") or 0
    return {"prompt": prompt, "completion": completion}


class _Committer:
    """Puts streamed results into the cache in small transactions: every ``every`` results or ``seconds``."""

    def __init__(self, cache: Any, every: int, seconds: float):
        self.cache, self.every, self.seconds = cache, every, seconds
        self.buffer: dict[str, dict] = {}
        self.last = time.monotonic()

    def add(self, key: str, value: dict) -> None:
        self.buffer[key] = value
        if len(self.buffer) >= self.every or time.monotonic() - self.last >= self.seconds:
            self.flush()

    def flush(self) -> None:
        if self.buffer:
            self.cache.put_many(self.buffer)
            self.buffer = {}
        self.last = time.monotonic()


@dataclasses.dataclass(frozen=True)
class JobModel:
    """The model a run asks: its typed entry, its weights' path, its params.yaml name and, for an API model with a
    cap, the spending ledger it is held to (``babeleval.generate.spend``); ``loader`` loads its backend."""

    config: ModelConfig
    path: str
    name: str = ""
    spend_file: str | None = None
    loader: Callable[[ModelConfig, str], Backend] = load_backend


@dataclasses.dataclass(frozen=True)
class JobFiles:
    """A run's files: label (a language) -> its requests and its generations file, the response cache (None: off)
    and the usage file that receives what the run cost (``usage`` in ``run``), written atomically."""

    requests: Mapping[str, str]
    outputs: Mapping[str, str]
    cache: str | None
    usage: str | None = None


@dataclasses.dataclass(frozen=True)
class Batching:
    """How a run hands requests to its backend and commits results: ``chunk_size`` requests a backend call (or a
    progress line, for a streaming backend), and streamed results committed every ``flush_every`` results or
    ``flush_seconds`` seconds."""

    chunk_size: int = 64
    flush_every: int = 16
    flush_seconds: float = 2.0


def run(model: JobModel, mode: str, settings: dict[str, Any], files: JobFiles,
        batching: Batching = Batching()) -> dict[str, int]:
    """Answer every request of the given files; returns request, cache-hit and computed counts."""
    started_run = time.perf_counter()
    config, cache_path = model.config, files.cache
    fingerprint = model_fingerprint(config, model.path)
    fingerprint_id = digest(fingerprint)
    cache = ResponseCache(cache_path) if cache_path else NoCache()
    by_language = _keyed_requests(files.requests, config, mode, settings, fingerprint)
    keyed = [entry for entries in by_language.values() for entry in entries]
    found = cache.get_many(key for key, _, _ in keyed)
    missing = {key: (row, messages) for key, row, messages in keyed if key not in found}  # duplicates computed once
    log.info("cache: %d of %d requests answered, %d to compute%s", len(keyed) - len(missing), len(keyed),
             len(missing), "" if cache_path else " (cache off)")
    computed: dict[str, dict] = {}
    api_usage = None
    if missing:
        check_answer_slots(get_backend(config.backend), (row for row, _ in missing.values()))
        backend = _load_timed(model.loader, config, model.path)
        spending = _spending(config, backend, model.spend_file, model.name)
        try:
            _compute_missing(backend, mode, settings, missing, cache, computed, batching)
        except CapReached as stop:
            raise _stopped(spending, stop, len(computed), len(missing)) from None
        finally:
            api_usage = _api_usage(backend)
        server_change.check(cache, fingerprint_id, found.values(), computed.values())  # before anything mixes
        found.update(computed)
    cache.close()
    _write_generations(by_language, found, files.outputs,
                       {"settings": settings, "model_fingerprint": fingerprint, "model_fingerprint_sha256": fingerprint_id})
    counts = {"requests": len(keyed), "cache_hits": len(keyed) - len(missing), "computed": len(missing)}
    usage = {
        **counts,
        "cache": "on" if cache_path else "off",
        "model_fingerprint_sha256": fingerprint_id,
        "tokens_computed": _tokens(computed.values()),  # what this run paid for
        "tokens_all_requests": _tokens(found[key] for key, _, _ in keyed),  # what the whole set costs uncached
        "seconds": round(time.perf_counter() - started_run, 3),
        **({"api": api_usage} if api_usage is not None else {}),  # as the server reported it, retries included
    }
    log.info("tokens this run: %s; all requests: %s", usage["tokens_computed"], usage["tokens_all_requests"])
    if files.usage:
        write_json(files.usage, usage)
    return counts


def _stopped(spending: Spending, stop: CapReached, answered: int, asked: int) -> CapReached:
    """The job stopped at its model's cap: noted in the ledger (the run summary names it) and the log."""
    spending.note_stop(str(stop), answered=answered, unanswered=asked - answered)
    log.error("%s; %d of %d requests answered and cached before the stop", stop, answered, asked)
    return stop


def _spending(config: ModelConfig, backend: Backend, spend_file: str | None, model_name: str) -> Spending | None:
    """The model's ledger, handed to its backend, where its entry caps its spending."""
    cap = config.cap() if isinstance(config, APIConfig) else None
    if cap is None:
        return None
    if spend_file is None or not hasattr(backend, "spending"):
        raise ConfigError(f"model {model_name or config.model}: {cap.describe()} is set, but this job has no spending "
                          "ledger or its backend cannot be held to one")
    backend.spending = Spending(spend_file, cap, model_name or str(config.model))
    log.info("spending cap: %s; ledger %s", cap.describe(), spend_file)
    return backend.spending


def _load_timed(backend_loader: Callable[[ModelConfig, str], Backend], config: ModelConfig,
                model_path: str) -> Backend:
    started = time.perf_counter()
    with heartbeat(f"loading {model_path}", log):
        backend = backend_loader(config, model_path)
    log.info("model loaded in %.1f s", time.perf_counter() - started)
    return backend


def _api_usage(backend: Backend) -> dict[str, int] | None:
    """An API backend's calls and retries as the server reported them; None for a local model."""
    if not hasattr(backend, "usage"):
        return None
    usage = backend.usage()
    log.info("API usage: %s", usage)
    return usage


def _write_generations(by_language: dict[str, list[tuple[str, dict, list | None]]], found: dict[str, dict],
                       output_files: Mapping[str, str], shared: dict[str, Any]) -> None:
    """One generations file per language: each request with its answer, the shared fields and its chat messages."""
    for lang, entries in by_language.items():
        records = []
        for key, row, messages in entries:
            record = {**row, **found[key], **shared}
            if messages is not None:
                record[MESSAGES] = messages
            records.append(record)
        write_jsonl(Path(output_files[lang]), records)


def _keyed_requests(request_files: Mapping[str, str], config: ModelConfig, mode: str, settings: dict[str, Any],
                    fingerprint: dict[str, Any]) -> dict[str, list[tuple[str, dict, list | None]]]:
    """Each language's requests as (cache key, request, chat messages or None), in file order."""
    by_language: dict[str, list[tuple[str, dict, list | None]]] = {}
    for lang, path in request_files.items():
        by_language[lang] = []
        for row in read_jsonl(path):
            messages = build_messages(row, config) if config.chat else None
            by_language[lang].append((request_key(fingerprint, mode, settings, _payload(mode, row, messages)),
                                      row, messages))
    return by_language


def _compute_missing(backend: Backend, mode: str, settings: dict[str, Any], missing: dict[str, tuple[dict, Any]],
                     cache, computed: dict[str, dict], batching: Batching) -> None:
    """Ask the model for the requests the cache lacks (longest prompt first), into ``computed`` and the cache.

    ``computed`` is filled as results arrive, so that what finished before an error is still counted.
    """
    template_sha = getattr(backend, "chat_template_sha256", None)
    todo = sorted(missing.items(), key=lambda kv: -len(kv[1][0]["prompt"]))
    streaming = hasattr(backend, "iter_generate" if mode == "generate" else "iter_loglikelihood")
    progress = Progress(len(todo), log=log)
    if streaming:
        committer = _Committer(cache, batching.flush_every, batching.flush_seconds)
        try:
            with heartbeat(f"computing {len(todo)} requests", log):
                for done, (index, record) in enumerate(_stream(backend, mode, settings, [r for _, r in todo]), 1):
                    if template_sha:
                        record["chat_template_sha256"] = template_sha
                    computed[todo[index][0]] = record
                    committer.add(todo[index][0], record)
                    if done % max(1, batching.chunk_size) == 0:
                        progress.report(done)
        finally:  # whatever finished before an error or interruption stays in the cache
            committer.flush()
        return
    chunk_size = batching.chunk_size
    for start in range(0, len(todo), chunk_size):
        chunk = todo[start:start + chunk_size]
        with heartbeat(f"computing requests {start + 1}-{start + len(chunk)} of {len(todo)}", log):
            results = _compute(backend, mode, settings, [r for _, r in chunk])
        batch = {key: result for (key, _), result in zip(chunk, results)}
        if template_sha:
            for record in batch.values():
                record["chat_template_sha256"] = template_sha
        cache.put_many(batch)
        computed.update(batch)
        progress.report(min(start + chunk_size, len(todo)))


# -- the workflow's jobs: workflow/scripts/generate.py and shared_prefix.py hand them Snakemake's files ---------


def generation_job(*, entry: Mapping[str, Any], model_path: str, templates: Sequence[str],
                   settings: Mapping[str, dict[str, Any]], languages: Sequence[str], prompts: Sequence[str],
                   generations: Sequence[str], usage: Sequence[str], cache_path: str | None,
                   granted: int | None = None, threads: int | None = None, model: str = "",
                   spend_file: str | None = None) -> None:
    """A generation job (workflow/rules/generate.smk): each template's languages in turn, as its files list them.

    ``entry`` is the model's params.yaml entry, read from the run's config rather than the rule's params
    (which hold only the settings that change outputs), so that a speed-only change reruns nothing.
    ``granted``: the units of its rate-limit resource an API model's job was given (Snakemake caps a job's
    resource at what --resources allows); it runs no more requests at once. ``threads``: the job's CPU threads,
    which a model computing on the CPU uses and no more (``babeleval.core.cpu_threads``). ``model``: the entry's
    name; ``spend_file``: its spending ledger (``paths.SPEND``), which holds an API model with a cap to it.
    """
    cpu_threads.grant(threads)
    config = _granted(model_config(entry), granted)
    model_of = JobModel(config, model_path, model, spend_file, _job_loader(get_backend(config.backend), len(templates)))
    for template, files in template_files(templates, languages, prompts, generations, usage, cache_path):
        if len(templates) > 1:
            log.info("template %s", template)
        log.info("done: %s", run(model_of, settings[template]["mode"], settings[template], files))


def _granted(config: ModelConfig, granted: int | None) -> ModelConfig:
    """An API model's config held to the units of its rate-limit resource its job was given (Snakemake caps a job's
    resource at what --resources allows): no more requests in flight than that."""
    if granted is None:
        return config
    config = dataclasses.replace(config, concurrency=min(config.concurrency, granted))
    log.info("%s: %d requests in flight at most", get_backend(config.backend).api_resource(config), config.concurrency)
    return config


def answer_job(*, entry: Mapping[str, Any], model_path: str, settings: dict[str, Any], files: JobFiles,
               usage_fields: Mapping[str, Any], granted: int | None = None, threads: int | None = None
               ) -> dict[str, int]:
    """Answer request files another stage wrote (an extractor model's questions about replies,
    ``babeleval.score.extraction``, workflow/scripts/extract.py): one run, the model loaded only where the cache
    lacks an answer, its usage file headed by ``usage_fields`` (the model asked, which the run summary counts it
    under). ``entry``, ``granted`` and ``threads`` as in ``generation_job``."""
    cpu_threads.grant(threads)
    config = _granted(model_config(entry), granted)
    counts = run(JobModel(config, model_path, loader=preflight.checked_loader(load_backend)), settings["mode"],
                 settings, files)
    if files.usage:
        write_json(files.usage, {**usage_fields, **json.loads(Path(files.usage).read_text(encoding="utf-8"))})
    log.info("done: %s", counts)
    return counts


def template_files(templates: Sequence[str], languages: Sequence[str], prompts: Sequence[str],
                   generations: Sequence[str], usage: Sequence[str], cache_path: str | None
                   ) -> list[tuple[str, JobFiles]]:
    """Each template of a job with its files: the job's file lists read in the order the rules wrote them
    (``babeleval.core.layout``), one usage file a template."""
    requests: dict[str, dict[str, str]] = {template: {} for template in templates}
    outputs: dict[str, dict[str, str]] = {template: {} for template in templates}
    for (template, language), prompt, generation in zip(job_pairs(templates, languages), prompts, generations,
                                                        strict=True):
        requests[template][language], outputs[template][language] = prompt, generation
    return [(template, JobFiles(requests[template], outputs[template], cache_path, usage_file))
            for template, usage_file in zip(templates, usage, strict=True)]


def _job_loader(backend: BackendType, templates: int) -> Callable[[ModelConfig, str], Backend]:
    """One model load for the whole job, however many templates it covers, and none when the cache answers
    everything; an API client is built afresh for each template (nothing to load), so that each usage file
    counts its own calls. The device and hub checks come before the weights load."""
    checked = preflight.checked_loader(load_backend)
    if backend.calls_api:
        return checked
    loaded: list[Backend] = []

    def load_once(config: ModelConfig, model_path: str) -> Backend:
        if not loaded:
            started = time.perf_counter()
            loaded.append(checked(config, model_path))
            log.info("model load 1 for %d template(s): %.1f s", templates, time.perf_counter() - started)
        return loaded[0]

    return load_once


def shared_prefix_job(*, entry: Mapping[str, Any], model_path: str, settings: dict[str, Any],
                      labels: Sequence[str], prompts: Sequence[str], usage: str, cache_path: str,
                      threads: int | None = None) -> None:
    """A shared-prefix job (workflow/rules/shared_prefix.smk): a variant set's log-likelihood requests in one
    backend call. Answers go to the response cache; the variants' own generation jobs write their files."""
    cpu_threads.grant(threads)
    scratch = Path(tempfile.mkdtemp(prefix="shared-prefix-"))
    try:
        files = JobFiles(dict(zip(labels, prompts, strict=True)),
                         {label: str(scratch / f"{n}.jsonl") for n, label in enumerate(labels)}, cache_path, usage)
        # the variants of one item must meet in one backend call to share their prefix
        counts = run(JobModel(model_config(entry), model_path), "loglikelihood", settings, files, Batching(chunk_size=1024))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    log.info("done: %s", counts)
