"""What each model of a grid will cost before it runs: requests, prompt and completion tokens, cache hits, money.

For every combination of a model, the requests its prompts hold (rendered as the rendering job renders them):

- **prompt tokens** as the run's usage files count them (``generate.job._tokens``: a generation's prompt; a
  log-likelihood request's context and each scored continuation), counted with the model's own tokenizer through
  the backend's own encoding (``LocalText``: its BOS, its chat template) where the model is on disk; else
  **estimated** from the prompt's UTF-8 bytes at the tokens per byte an earlier run of the model measured (its
  generations files: per combination, else per (task, template), per language, over all), else at
  ``BYTES_PER_TOKEN``, and said so;
- **completion tokens** of generated answers: a pilot's average per (task, language, template), else per (task,
  template), else the template's ``max_new_tokens`` (an upper bound), and said so;
- **cache hits**: requests whose answers the model's response cache already holds (the job's own keys);
- **cost** where the entry gives ``prices`` (per million tokens), for what the cache does not hold.

A prompt cut to fit the model's context (``max_length``) is counted whole: the forecast is then high.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..core import paths
from ..core.record_fields import MESSAGES
from ..generate.backends import get_backend
from ..generate.backends.chat import build_messages
from ..generate.backends.config import APIConfig, LocalConfig, ModelConfig
from ..generate.cache import ResponseCache, request_key
from ..generate.fingerprint import model_fingerprint
from ..generate.job import _payload
from ..grid.records import Grid
from ..prompts.protocols import ENCODINGS, JOINT

# where neither a tokenizer nor a pilot says: about what BPE tokenizers make of English text
BYTES_PER_TOKEN = 4.0


@dataclass
class ModelForecast:
    model: str
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: float = 0.0
    completion_bound: int = 0  # max_new_tokens over the generated requests: at most this many
    cache_hits: int = 0
    prompt_tokens_uncached: int = 0
    completion_tokens_uncached: float = 0.0
    prompt_method: str = ""
    completion_methods: set[str] = field(default_factory=set)
    cache_note: str = ""
    cost: float | None = None


def prompt_texts(row: Mapping[str, Any], messages: list[dict] | None, mode: str) -> list[str]:
    """The texts a request sends: its messages or prompt, and for a log-likelihood request each continuation."""
    texts = [m["content"] for m in messages] if messages is not None else [row["prompt"]]
    return texts + (list(row.get("continuations", ())) if mode == "loglikelihood" else [])


def _nbytes(texts: Iterable[str]) -> int:
    return sum(len(t.encode("utf-8")) for t in texts)


class _Tokenizer:
    """The model's own tokenizer behind the backend's encoding (hf and vllm models on disk)."""

    def __init__(self, config: LocalConfig, model_path: str):
        from transformers import AutoTokenizer  # only here: the tokenizer, never the weights

        from ..generate.backends.local_text import LocalText

        self.text = LocalText()
        self.text.init_text(AutoTokenizer.from_pretrained(model_path), config, model_path)

    def count(self, rows: list[tuple[dict, list | None]], mode: str) -> list[int]:
        rendered = [self.text.render_chat(m, r["prompt"]) for r, m in rows]
        if mode == "loglikelihood":
            encoded = self.text.encode_requests([(text, r["continuations"], ENCODINGS[r.get("encoding", JOINT.name)])
                                                 for text, (r, _) in zip(rendered, rows)])
            return [len(ctx) + sum(map(len, conts)) for ctx, conts in encoded]
        return [len(self.text.encode(text, ENCODINGS[r.get("encoding", JOINT.name)]))
                for text, (r, _) in zip(rendered, rows)]


@dataclass
class Pilot:
    """What an earlier run's generations files say about a model: tokens per byte, completions per request."""

    # (task, language, template), (task, template), (language,) and () (all) -> the ratio: the finest that the pilot
    # holds is used (a chat template's framing is a number of tokens per message, not per byte: it differs by task)
    tokens_per_byte: dict[tuple[str, ...], float]
    completions: dict[tuple[str, ...], float]  # (task, language, template) and (task, template) -> mean


def read_pilot(root: Path, model: str, config: ModelConfig) -> Pilot:
    sums: dict[tuple[str, ...], list[int]] = {}
    completions: dict[tuple[str, ...], list[float]] = {}
    base = root / Path(paths.GENERATIONS.split("{model}")[0]) / model
    for path in sorted(base.glob("*/*/*.jsonl")) if base.is_dir() else []:
        task, language, template = path.parent.parent.name, path.parent.name, path.stem
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            mode = (record.get("settings") or {}).get("mode", "generate")
            tokens = (record.get("prompt_tokens") or 0) + sum(record.get("continuation_tokens") or [])
            texts = prompt_texts(record, record.get(MESSAGES), mode)
            for key in ((task, language, template), (task, template), (language,), ()):
                total = sums.setdefault(key, [0, 0])
                total[0] += tokens
                total[1] += _nbytes(texts)
            if record.get("completion_tokens") is not None:
                for key in ((task, language, template), (task, template)):
                    completions.setdefault(key, []).append(record["completion_tokens"])
    return Pilot({k: t / b for k, (t, b) in sums.items() if b and t},
                 {k: sum(v) / len(v) for k, v in completions.items()})


def forecast(grid: Grid, model: str, requests: Mapping[tuple[str, str, str], list[dict]], root: Path
             ) -> ModelForecast:
    """A model's forecast over its combinations (``requests``: (task, language, template) -> rendered requests)."""
    config = grid.models[model]
    model_path = config.model_path()
    out = ModelForecast(model)
    pilot = read_pilot(root, model, config)
    tokenizer = None
    if isinstance(config, LocalConfig) and Path(model_path).is_dir():
        tokenizer = _Tokenizer(config, model_path)
        out.prompt_method = "counted with the model's tokenizer"
    elif pilot.tokens_per_byte:
        out.prompt_method = "estimated: the prompts' bytes at the tokens per byte an earlier run of it measured"
    else:
        out.prompt_method = (f"estimated: {BYTES_PER_TOKEN:g} bytes a token (no tokenizer on disk, no earlier run "
                             "to measure)")
    keys, key_tokens = [], {}
    fingerprint = _fingerprint(config, model_path, out)
    for combo in grid.combinations():
        if combo[0] != model:
            continue
        _, task, language, template = combo
        record = grid.record(*combo)
        mode, settings = record.mode, dict(record.decoding)
        rows = [(r, build_messages(r, config) if config.chat else None) for r in requests[task, language, template]]
        if tokenizer is not None:
            prompt = tokenizer.count(rows, mode)
        else:
            ratio = next((pilot.tokens_per_byte[k] for k in ((task, language, template), (task, template), (language,),
                                                              ()) if k in pilot.tokens_per_byte), 1 / BYTES_PER_TOKEN)
            prompt = [round(_nbytes(prompt_texts(r, m, mode)) * ratio) for r, m in rows]
        completion = 0.0
        if mode == "generate":
            bound = settings["max_new_tokens"]
            average = pilot.completions.get((task, language, template)) or pilot.completions.get((task, template))
            out.completion_methods.add("a pilot's average" if average is not None else
                                       "max_new_tokens (at most)")
            completion = bound if average is None else average
            out.completion_bound += bound * len(rows)
        out.requests += len(rows)
        out.prompt_tokens += sum(prompt)
        out.completion_tokens += completion * len(rows)
        if fingerprint is not None:
            for (row, messages), tokens in zip(rows, prompt):
                key = request_key(fingerprint, mode, settings, _payload(mode, row, messages))
                keys.append(key)
                key_tokens[key] = (tokens, completion)
    hits = _cached(root, model, keys) if fingerprint is not None else set()
    out.cache_hits = sum(1 for key in keys if key in hits)
    out.prompt_tokens_uncached = out.prompt_tokens - sum(key_tokens[k][0] for k in keys if k in hits)
    out.completion_tokens_uncached = out.completion_tokens - sum(key_tokens[k][1] for k in keys if k in hits)
    if isinstance(config, APIConfig) and config.prices:
        out.cost = (out.prompt_tokens_uncached * config.prices["prompt"]
                    + out.completion_tokens_uncached * config.prices["completion"]) / 1e6
    return out


def _fingerprint(config: ModelConfig, model_path: str, out: ModelForecast) -> dict | None:
    """The model fingerprint its cache keys on; None (and why) where it cannot be made before the model is."""
    if not get_backend(config.backend).calls_api and not Path(model_path).exists():
        out.cache_note = f"not looked up: {model_path} is not built yet"
        return None
    return model_fingerprint(config, model_path)


def _cached(root: Path, model: str, keys: list[str]) -> set[str]:
    path = root / paths.CACHE.format(model=model)
    if not path.exists():
        return set()
    cache = ResponseCache(path)
    try:
        return set(cache.get_many(keys))
    finally:
        cache.close()


def last_run(root: Path, grid: Grid, model: str) -> dict[str, int] | None:
    """The tokens of all requests the usage files of the model's (task, template) jobs in the grid report (a run of
    this grid), where each has one."""
    jobs = {(task, template) for m, task, _, template in grid.combinations() if m == model}
    files = [root / paths.USAGE.format(model=model, task=task, template=template) for task, template in sorted(jobs)]
    if not files or not all(path.exists() for path in files):
        return None
    total = {"prompt": 0, "completion": 0, "requests": 0}
    for path in files:
        usage = json.loads(path.read_text(encoding="utf-8"))
        tokens = usage.get("tokens_all_requests") or {}
        total["prompt"] += int(tokens.get("prompt", 0))
        total["completion"] += int(tokens.get("completion", 0))
        total["requests"] += int(usage.get("requests", 0))
    return total


def lines(forecasts: list[ModelForecast], grid: Grid, root: Path) -> list[str]:
    out = ["Cost: per model, every request of the grid (requests, tokens in and out, what the response cache "
           "already holds, and the cost where the entry gives prices per million tokens).", ""]
    for f in forecasts:
        methods = "; ".join(sorted(f.completion_methods)) or "none generated"
        out.append(f"## {f.model}: {f.requests:,} requests; prompt tokens {f.prompt_tokens:,} ({f.prompt_method}); "
                   f"completion tokens {round(f.completion_tokens):,} ({methods}"
                   + (f"; at most {f.completion_bound:,}" if f.completion_bound > f.completion_tokens else "") + ")")
        out.append(f"  cache: {f.cache_hits:,} of {f.requests:,} answered on disk"
                   + (f" ({f.cache_note})" if f.cache_note else "")
                   + f"; to pay: {f.prompt_tokens_uncached:,} in, {round(f.completion_tokens_uncached):,} out"
                   + ("" if f.cost is None else f"; cost {f.cost:.4g} (its prices)"))
        done = last_run(root, grid, f.model)
        if done and done["prompt"] + done["completion"]:
            forecast_total = f.prompt_tokens + f.completion_tokens
            actual = done["prompt"] + done["completion"]
            # only a run of these very requests can check the forecast (a pilot of fewer items is not one)
            check = (f"the forecast is {100 * (forecast_total - actual) / actual:+.1f}% of its tokens"
                     if done["requests"] == f.requests else "another set of requests than this forecast's")
            out.append(f"  last run ({paths.USAGE.split('{model}')[0]}{f.model}/, all requests): "
                       f"{done['requests']:,} requests, {done['prompt']:,} in, {done['completion']:,} out; {check}")
    return out
