"""The GPU benchmark in one command (``bash bench/gpu.sh``): a random-weight Llama-3-8B-shaped model in bf16,
babeleval's hf backend against lm-evaluation-harness's HF path on Belebele-format multiple choice, and
generation throughput. Needs only torch, transformers and accelerate (lm-eval optional); no network, no hub.

    bash bench/gpu.sh [--out DIR] [--items 900] [--gen-prompts 900] [--max-new-tokens 64]
                      [--mc-batch-size 64] [--lmeval-batch-size 64] [--gen-batch-size 128] [--budget-s 570]
                      [--dtype bfloat16|float32] [--torch-compile] [--save-logprobs]
                      [--compiled | --no-compiled] [--compile-allow-s 300]
    bash bench/gpu.sh --cpu-check --out DIR   # the same code on a tiny model on the CPU (tests/test_bench_gpu.py)

Steps, each timed on its own; a step that cannot run is listed under ``skipped`` with the reason (lm-eval
not importable, the time budget spent), and the others still run:

1. ``matmul``: the measured bf16 matmul rate (8192^3, best of 20), beside the GPU's published dense bf16
   peak (``PEAK_BF16_TFLOPS``, by the name torch reports);
2. ``model``: Llama-3-8B's shape (32 layers, hidden 4096, MLP 14336, 32/8 heads, vocabulary 128256),
   random weights built on the GPU, saved with a tokenizer trained offline (byte-level BPE, 8192 tokens,
   on the bundled Belebele sample, as bench/make_data.py trains it) to a temporary directory (/dev/shm
   where there is room), so both harnesses load it with ``from_pretrained`` as they load any model;
3. ``mc_ours_<choices>``: babeleval's ``HFBackend`` (its constructor and ``loglikelihood``, unchanged) on
   ``--items`` items made as bench/make_data.py makes them (two questions a passage), choices as texts
   (multi-token) and as letters; the first batch timed apart (warm-up), then the whole set;
4. ``mc_lmeval_<choices>``: the same strings through lm-eval's ``HFLM.loglikelihood``
   (bench/lmeval_mc.py's requests), when ``lm_eval`` imports; its log-probs compared with ours;
5. ``generation``: ``--gen-prompts`` prompts (lm-eval's Belebele prompt), greedy, ``--max-new-tokens``
   each (random weights rarely stop early), through the backend's ``generate``; tokens per second
   beside vLLM's published figure;
6. ``mc_vllm_<choices>``, ``generation_vllm``: babeleval's vLLM backend on the same model and items, where
   vLLM is installed (not needed otherwise);
7. ``mc_compiled_<choices>`` (on a GPU by default; ``--no-compiled`` leaves it out, ``--compiled`` asks for it on
   the CPU check): the hf backend again, loaded with its ``torch_compile`` setting, on the same items at the same
   batch size: the warm-up batch and a first whole run (both compiling) timed apart, then the whole set timed as
   the eager steps are; its log-probs against the eager run's. It runs last, so a compile that outlasts the
   machine's time costs no other figure, and starts only while ``--compile-allow-s`` seconds (300) are left of
   ``--budget-s`` plus that allowance: give the command a limit of the budget plus the allowance.

The JSON and the Markdown are rewritten after every step, so a run stopped from outside keeps what it measured.

What the forward passes run is counted by a hook on the model, whichever harness calls it: input
positions (padding included), attended (query, key) pairs, logit rows, and (CUDA events) the device time
inside the passes; their matmul FLOPs over the seconds give TFLOP/s, over the peak the fraction of peak.
``--dtype float32`` loads the same bf16 weights in float32 in both harnesses (the agreement without bf16
rounding); ``--save-logprobs`` keeps every choice's log-prob in the JSON. Peak memory is torch's
``max_memory_allocated`` per step. Writes ``gpu_bench.json`` and ``gpu_bench.md`` under ``--out`` and
prints the Markdown.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "workflow"))

import belebele_prompts as prompts  # noqa: E402

LLAMA3_8B = dict(vocab_size=128256, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                 num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=8192, rope_theta=500000.0,
                 rms_norm_eps=1e-5, tie_word_embeddings=False)
TINY = dict(vocab_size=8192, hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, max_position_embeddings=4096, tie_word_embeddings=False)
TOKENIZER_VOCABULARY = 8192

# Dense bf16 tensor-core peaks in TFLOP/s: NVIDIA's datasheets (H100 and H200 Tensor Core GPU datasheets, A100
# Tensor Core GPU datasheet, L40S and L4 datasheets) give the figure "with sparsity"; the dense peak is half of
# it (H100 SXM 1,979 -> 989; H100 PCIe 1,513 -> 756; H100 NVL and H200 NVL 1,671 -> 835; H200 SXM 1,979 -> 989;
# L40S 733 -> 362 as printed; L4 242 -> 121; A100 312 dense). The first name torch's device name contains wins.
PEAK_BF16_TFLOPS = (("H100 PCIe", 756.0), ("H100 NVL", 835.0), ("H100", 989.0), ("H200 NVL", 835.0),
                    ("H200", 989.0), ("A100", 312.0), ("L40S", 362.0), ("L4", 121.0))
PREFILL_GOAL = 0.5  # the fraction of the dense bf16 peak the MC prefill aims at

# Offline batch generation, Llama-3.1-8B-Instruct in bf16 on one H100 80GB, 1,000 ShareGPT prompts:
# vLLM 12,553 output tokens/s, SGLang 16,215 (https://research.aimultiple.com/inference-engines).
VLLM_PUBLISHED = {"output_tokens_per_s": 12553, "model": "Llama-3.1-8B-Instruct, bf16", "gpu": "one H100 80GB",
                  "source": "https://research.aimultiple.com/inference-engines"}


def sig(x: float, digits: int = 4) -> float:
    """``x`` to ``digits`` significant digits (rates from a tiny CPU check to an H100 keep their precision)."""
    return float(f"{x:.{digits}g}")


def published_peak(device_name: str) -> float | None:
    for name, peak in PEAK_BF16_TFLOPS:
        if name.lower() in device_name.lower():
            return peak
    return None


def model_flops(config: Any, tokens: int, attended: int, logits: int) -> float:
    """Forward matmul FLOPs: 2 x the non-embedding weights per position, attention scores and values over the
    attended (query, key) pairs, the output matrix for each logit row."""
    h, layers = config.hidden_size, config.num_hidden_layers
    kv = config.num_key_value_heads * (h // config.num_attention_heads)
    per_layer = h * h * 2 + h * kv * 2 + 3 * h * config.intermediate_size  # q, o, k, v, MLP
    return 2 * per_layer * layers * tokens + 4 * h * layers * attended + 2 * h * config.vocab_size * logits


class ForwardCounter:
    """What the model's forward passes run, read from their inputs (a hook on the model, so any harness):
    input positions (padding included), attended (query, key) pairs and logit rows; on a GPU also the device
    time from each pass's first kernel to its last (CUDA events recorded as the pass starts and returns)."""

    def __init__(self, model: Any):
        import torch

        self.config = model.config
        self.active = False
        self.tokens = self.attended = self.logits = 0
        self.events: list[list[Any]] = []
        self.timing = torch.cuda.is_available() and next(model.parameters()).is_cuda
        self.handles = [model.register_forward_pre_hook(self._count, with_kwargs=True),
                        model.register_forward_hook(self._returned)]

    def start(self) -> None:
        self.tokens = self.attended = self.logits = 0
        self.events = []
        self.active = True

    def stop(self) -> None:
        for handle in self.handles:
            handle.remove()

    def _event(self) -> Any:
        import torch

        event = torch.cuda.Event(enable_timing=True)
        event.record()
        return event

    def _returned(self, module: Any, args: tuple, output: Any) -> None:
        if self.active and self.timing:
            self.events[-1].append(self._event())

    def forward_seconds(self) -> float | None:
        """The device time inside the passes (the run synchronized first); None on a CPU."""
        if not self.timing:
            return None
        return sum(start.elapsed_time(end) for start, end in self.events) / 1000

    def _count(self, module: Any, args: tuple, kwargs: dict) -> None:
        if not self.active:
            return
        import torch

        if self.timing:
            self.events.append([self._event()])
        ids = kwargs["input_ids"] if "input_ids" in kwargs else args[0]
        rows, width = ids.shape
        self.tokens += rows * width
        mask = kwargs.get("attention_mask")
        if mask is not None and mask.dim() == 4:  # a tree mask: True, or 0.0, where a query may see a key
            # summed on the device and read at the end: reading it now would make the host wait for the pass
            self.attended += (mask if mask.dtype == torch.bool else mask == 0).sum()
        else:  # causal over each row
            self.attended += rows * width * (width + 1) // 2
        keep = kwargs.get("logits_to_keep", 0)
        if torch.is_tensor(keep):  # a boolean mask, or each row's positions
            self.logits += keep.sum() if keep.dtype == torch.bool else keep.numel()
        else:
            self.logits += rows * (keep or width)

    def flops(self) -> float:
        return model_flops(self.config, self.tokens, int(self.attended), int(self.logits))


@dataclass
class Run:
    """The benchmark's clock, device and report; ``step`` runs a step unless the time budget is spent."""
    torch: Any
    device: str
    budget_s: float
    peak: float | None
    started: float = field(default_factory=time.perf_counter)
    report: dict = field(default_factory=dict)
    on_step: Callable[[], None] | None = None  # called after each step (the files rewritten)

    def sync(self) -> None:
        if self.device == "cuda":
            self.torch.cuda.synchronize()

    def timed(self, fn: Callable[[], Any]) -> tuple[Any, float]:
        self.sync()
        started = time.perf_counter()
        out = fn()
        self.sync()
        return out, time.perf_counter() - started

    def step(self, name: str, fn: Callable[[], dict | None], budget_s: float | None = None) -> dict | None:
        """Runs ``fn`` as step ``name`` unless more than ``budget_s`` (default: the run's budget) is spent."""
        spent = time.perf_counter() - self.started
        budget = self.budget_s if budget_s is None else budget_s
        if spent > budget:
            self.skip(name, f"time budget spent ({spent:.0f} s of {budget:.0f} s)")
            return None
        if self.device == "cuda":
            self.torch.cuda.reset_peak_memory_stats()
        figures = fn()
        if figures is not None:
            if self.device == "cuda":
                figures["peak_memory_gib"] = round(self.torch.cuda.max_memory_allocated() / 2**30, 2)
            self.report.setdefault("steps", {})[name] = figures
        print(f"[{time.perf_counter() - self.started:.0f} s] {name}: "
              f"{'done' if figures is not None else 'no figures'}", file=sys.stderr, flush=True)
        if self.on_step is not None:
            self.on_step()
        return figures

    def skip(self, name: str, reason: str) -> None:
        self.report.setdefault("skipped", {})[name] = reason

    def rate(self, counter: ForwardCounter, seconds: float) -> dict:
        """The passes' matmul FLOPs over the whole call's seconds; ``forward_s`` is the device time inside the
        passes (the rest of ``seconds`` is the device waiting on the CPU), ``forward_tflops`` the rate there."""
        tflops = counter.flops() / seconds / 1e12
        matmul = self.report["steps"].get("matmul", {}).get("measured_tflops")
        inside = counter.forward_seconds()
        return {"positions_run": counter.tokens, "positions_per_s": round(counter.tokens / seconds),
                "forward_s": round(inside, 3) if inside else None,
                "forward_tflops": sig(counter.flops() / inside / 1e12) if inside else None,
                "tflops": sig(tflops), "fraction_of_measured_matmul": sig(tflops / matmul, 3) if matmul else None,
                "fraction_of_peak": sig(tflops / self.peak, 3) if self.peak else None,
                "meets_goal": tflops / self.peak >= PREFILL_GOAL if self.peak else None}


def matmul_rate(run: Run, dtype: Any, n: int) -> dict:
    torch = run.torch
    a = torch.randn((n, n), device=run.device, dtype=dtype)
    b = torch.randn((n, n), device=run.device, dtype=dtype)
    for _ in range(3):
        a @ b
    best = min(run.timed(lambda: a @ b)[1] for _ in range(20))
    return {"n": n, "measured_tflops": sig(2 * n ** 3 / best / 1e12), "published_peak_tflops": run.peak}


def build_model(run: Run, shape: dict, dtype: Any, where: Path) -> dict:
    """A random-weight Llama of ``shape`` and an offline tokenizer, saved to ``where``."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from babeleval.generate import tiny_model

    sample = sorted((HERE.parent / "data" / "samples" / "belebele").glob("*.jsonl"))
    tok = tiny_model.train_tokenizer(tiny_model.corpus(sample), TOKENIZER_VOCABULARY)
    config = LlamaConfig(**shape, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                         pad_token_id=tok.pad_token_id)
    run.torch.manual_seed(0)
    previous = run.torch.get_default_dtype()
    run.torch.set_default_dtype(dtype)
    try:
        with run.torch.device(run.device):
            model, built = run.timed(lambda: LlamaForCausalLM(config))
    finally:
        run.torch.set_default_dtype(previous)
    _, saved = run.timed(lambda: (model.save_pretrained(where), tok.save_pretrained(where)))
    parameters = sum(p.numel() for p in model.parameters())
    model = None  # the saved copy is what the harnesses load
    release(run)
    return {"parameters_billion": round(parameters / 1e9, 3), "tokenizer_vocabulary": len(tok),
            "build_s": round(built, 2), "save_s": round(saved, 2), "directory": str(where)}


def release(run: Run) -> None:
    gc.collect()
    if run.device == "cuda":
        run.torch.cuda.empty_cache()


def mc_ours(run: Run, backend: Any, rows: list[dict], choices: str, out: dict, whole_warmup: bool = False) -> dict:
    """The warm-up batch, then (``whole_warmup``) a first whole run, each timed apart; then the whole set timed."""
    from babeleval.generate.backends.base import LoglikelihoodRequest

    requests = [LoglikelihoodRequest(c, tuple(x)) for _, c, x in prompts.requests(rows, choices)]
    _, first = run.timed(lambda: backend.loglikelihood(requests[: backend.batch_size]))
    warm = {}
    if whole_warmup:
        warm["first_run_s"] = round(run.timed(lambda: backend.loglikelihood(requests))[1], 3)
    counter = ForwardCounter(backend.scoring_model)  # the module the passes call (compiled or not)
    counter.start()
    results, seconds = run.timed(lambda: backend.loglikelihood(requests))
    counter.stop()
    out[choices] = [r.logprobs for r in results]
    return {"items": len(rows), "batch_size": backend.batch_size, "first_batch_s": round(first, 3), **warm,
            "seconds": round(seconds, 3), "items_per_s": round(len(rows) / seconds, 1), **run.rate(counter, seconds)}


def mc_compiled(run: Run, backend: Any, rows: list[dict], choices: str, eager: list[list[float]] | None,
                out: dict) -> dict:
    """``mc_ours`` through the compiled passes: the warm-up batch and a first whole run (both may compile) timed
    apart, then the whole set timed; the log-probs against the eager run's."""
    figures = mc_ours(run, backend, rows, choices, out, whole_warmup=True)
    if eager is not None:
        differences = [abs(a - b) for x, y in zip(eager, out[choices]) for a, b in zip(x, y)]
        same = sum(max(range(4), key=x.__getitem__) == max(range(4), key=y.__getitem__)
                   for x, y in zip(eager, out[choices]))
        figures.update(largest_logprob_difference_from_eager=float(f"{max(differences):.3g}"),
                       same_argmax_as_eager=f"{same} / {len(rows)}")
    return figures


def mc_lmeval(run: Run, lm: Any, rows: list[dict], choices: str, ours: list[list[float]], batch: int,
              out: dict) -> dict:
    import lmeval_mc

    _, first = run.timed(lambda: lmeval_mc.score(lm, rows[: max(1, batch // 4)], choices))  # about one batch
    counter = ForwardCounter(lm.model)
    counter.start()
    (_, logprobs), seconds = run.timed(lambda: lmeval_mc.score(lm, rows, choices))
    counter.stop()
    out[choices] = logprobs
    differences = [abs(a - b) for x, y in zip(ours, logprobs) for a, b in zip(x, y)]
    same = sum(max(range(4), key=x.__getitem__) == max(range(4), key=y.__getitem__) for x, y in zip(ours, logprobs))
    return {"items": len(rows), "batch_size": batch, "first_batch_s": round(first, 3), "seconds": round(seconds, 3),
            "items_per_s": round(len(rows) / seconds, 1), **run.rate(counter, seconds),
            "largest_logprob_difference_from_ours": float(f"{max(differences):.3g}"),
            "same_argmax_as_ours": f"{same} / {len(rows)}"}


def generation(run: Run, backend: Any, rows: list[dict], max_new: int, batch: int) -> dict:
    from babeleval.generate.backends.base import Decoding, GenerationRequest

    if hasattr(backend, "batch_size"):  # hf: the config's batch_size (a speed setting), chosen for generation
        backend.batch_size = batch
    requests = [GenerationRequest(prompts.context(r, "letters"), max_new) for r in rows]
    _, first = run.timed(lambda: backend.generate(requests[:batch], Decoding()))
    results, seconds = run.timed(lambda: backend.generate(requests, Decoding()))
    tokens = sum(r.n_completion_tokens for r in results)
    figures = {"prompts": len(rows), "max_new_tokens": max_new, "batch_size": batch, "first_batch_s": round(first, 3),
               "seconds": round(seconds, 3), "output_tokens": tokens, "output_tokens_per_s": round(tokens / seconds, 1),
               "vllm_published": VLLM_PUBLISHED}
    figures["ours_over_vllm_published"] = round(figures["output_tokens_per_s"] / VLLM_PUBLISHED["output_tokens_per_s"], 3)
    return figures


def import_lmeval() -> tuple[Any, str | None]:
    """lm-eval's HFLM class, or None and why not."""
    try:
        from lm_eval.models.huggingface import HFLM
    except ImportError as exc:
        return None, f"lm-eval is not importable here ({exc}); bring its wheels (bench/gpu_wheels.sh)"
    return HFLM, None


def scratch_dir(parameters_gib: float) -> Path:
    """Where the model is saved: /dev/shm when it has room for it twice over (fast to write and to read)."""
    shm = Path("/dev/shm")
    if shm.is_dir() and shutil.disk_usage(shm).free > 2 * parameters_gib * 2**30:
        return Path(tempfile.mkdtemp(prefix="babeleval-gpu-bench-", dir=shm))
    return Path(tempfile.mkdtemp(prefix="babeleval-gpu-bench-"))


def setting(args: argparse.Namespace, torch: Any) -> tuple[str, Any, dict, int]:
    """The device, the dtype the weights are built in, the model's shape and the matmul size. On a GPU the
    weights are bf16 whatever ``--dtype`` the harnesses load them in, so a float32 run scores the same model."""
    if args.cpu_check:
        args.items, args.gen_prompts, args.max_new_tokens = 12, min(args.gen_prompts, 6), 8
        args.mc_batch_size, args.lmeval_batch_size, args.gen_batch_size = 4, 8, 4
        args.dtype = "float32"
        return "cpu", torch.float32, TINY, 256
    if not torch.cuda.is_available():
        raise SystemExit("no CUDA GPU here: this benchmark runs on a GPU machine (--cpu-check runs it on a tiny model)")
    return "cuda", torch.bfloat16, LLAMA3_8B, 8192


def measure(run: Run, args: argparse.Namespace, dtype: Any, shape: dict, n: int, where: Path) -> None:
    from babeleval.generate.backends.config import HFConfig
    from babeleval.generate.backends.hf import HFBackend
    from make_data import make_items

    run.step("matmul", lambda: matmul_rate(run, dtype, n))
    if run.step("model", lambda: build_model(run, shape, dtype, where)) is None:
        for name in [f"mc_{side}_{c}" for side in ("ours", "lmeval", "vllm") for c in prompts.CHOICES] + [
                "generation", "generation_vllm"]:
            run.skip(name, "no model: the model step did not run")
        return
    rows = make_items(args.items, seed=1)  # Belebele's layout: two questions a passage (a prefix of a longer set)
    config = HFConfig(model=str(where), device=run.device, dtype=args.dtype, batch_size=args.mc_batch_size,
                      torch_compile=args.torch_compile)
    backend, load_s = run.timed(lambda: HFBackend(config, str(where)))
    run.report["steps"]["model"]["ours_load_s"] = round(load_s, 2)
    ours: dict[str, list] = {}
    for choices in prompts.CHOICES:
        run.step(f"mc_ours_{choices}", lambda c=choices: mc_ours(run, backend, rows, c, ours))
    if args.gen_prompts:
        run.step("generation", lambda: generation(run, backend, rows[: args.gen_prompts], args.max_new_tokens,
                                                  args.gen_batch_size))
    else:
        run.skip("generation", "not asked for (--gen-prompts 0)")
    backend = None  # the GPU to lm-eval, whole
    release(run)
    theirs = lmeval_side(run, args, rows, ours, where)
    vllm_side(run, args, rows, where)
    compiled_side(run, args, rows, ours, where)
    if args.save_logprobs:
        run.report["logprobs"] = {**{f"ours_{c}": v for c, v in ours.items()},
                                  **{f"lmeval_{c}": v for c, v in theirs.items()}}


def lmeval_side(run: Run, args: argparse.Namespace, rows: list[dict], ours: dict[str, list],
                where: Path) -> dict[str, list]:
    """lm-eval's HFLM on the same items, each choice's log-probs compared with ours; returns its log-probs."""
    theirs: dict[str, list] = {}
    HFLM, why_not = import_lmeval()
    if HFLM is None:
        for choices in prompts.CHOICES:
            run.skip(f"mc_lmeval_{choices}", why_not)
        return theirs
    lm, load_s = run.timed(lambda: HFLM(pretrained=str(where), device=run.device, dtype=args.dtype,
                                        batch_size=args.lmeval_batch_size))
    run.report["steps"]["model"]["lmeval_load_s"] = round(load_s, 2)
    for choices in prompts.CHOICES:
        if choices not in ours:
            run.skip(f"mc_lmeval_{choices}", f"nothing to compare with: mc_ours_{choices} did not run")
            continue
        run.step(f"mc_lmeval_{choices}", lambda c=choices: mc_lmeval(run, lm, rows, c, ours[c], args.lmeval_batch_size,
                                                                     theirs))
    lm = None  # the GPU to vLLM, whole
    release(run)
    return theirs


def compiled_side(run: Run, args: argparse.Namespace, rows: list[dict], ours: dict[str, list], where: Path) -> None:
    """The hf backend with its ``torch_compile`` setting on the same items and batch size, after every other step."""
    names = [f"mc_compiled_{c}" for c in prompts.CHOICES]
    if not args.compiled:
        for name in names:
            run.skip(name, "not asked for (--no-compiled; --compiled asks for it)")
        return
    if args.torch_compile:
        for name in names:
            run.skip(name, "--torch-compile: the mc_ours steps are the compiled ones")
        return
    budget = run.budget_s  # started only while the allowance for compiling is left of the budget plus it
    spent = time.perf_counter() - run.started
    if spent > budget:
        for name in names:
            run.skip(name, f"time budget spent ({spent:.0f} s of {budget:.0f} s; {args.compile_allow_s:.0f} s are "
                           "kept for compiling after it)")
        return
    from babeleval.generate.backends.config import HFConfig
    from babeleval.generate.backends.hf import HFBackend

    config = HFConfig(model=str(where), device=run.device, dtype=args.dtype, batch_size=args.mc_batch_size,
                      torch_compile=True)
    backend, load_s = run.timed(lambda: HFBackend(config, str(where)))
    run.report["steps"]["model"]["compiled_load_s"] = round(load_s, 2)
    compiled: dict[str, list] = {}
    for choices in prompts.CHOICES:
        # after the budget, the allowance for compiling: a step that started within it may run on
        run.step(f"mc_compiled_{choices}",
                 lambda c=choices: mc_compiled(run, backend, rows, c, ours.get(c), compiled),
                 budget_s=budget + args.compile_allow_s)
    from torch._dynamo.utils import counters

    run.report["dynamo_stats"] = {k: v for k, v in counters["stats"].items()}
    backend = None
    release(run)


def vllm_side(run: Run, args: argparse.Namespace, rows: list[dict], where: Path) -> None:
    """babeleval's vLLM backend on the same model and items, where vLLM is installed (it is not required)."""
    names = [f"mc_vllm_{c}" for c in prompts.CHOICES] + ["generation_vllm"]
    why_not = ("vLLM runs on a CUDA GPU only" if run.device != "cuda"
               else None if importlib.util.find_spec("vllm") else "vllm is not installed")
    if why_not:
        for name in names:
            run.skip(name, why_not)
        return
    from babeleval.generate.backends.base import LoglikelihoodRequest
    from babeleval.generate.backends.config import VLLMConfig
    from babeleval.generate.backends.vllm import VLLMBackend

    backend, load_s = run.timed(lambda: VLLMBackend(VLLMConfig(model=str(where), dtype="bfloat16"), str(where)))
    run.report["steps"]["model"]["vllm_load_s"] = round(load_s, 2)
    for choices in prompts.CHOICES:
        requests = [LoglikelihoodRequest(c, tuple(x)) for _, c, x in prompts.requests(rows, choices)]
        run.step(f"mc_vllm_{choices}", lambda r=requests: vllm_mc(run, backend, r))
    run.step("generation_vllm", lambda: generation(run, backend, rows[: args.gen_prompts], args.max_new_tokens,
                                                   args.gen_batch_size))


def vllm_mc(run: Run, backend: Any, requests: list) -> dict:
    _, first = run.timed(lambda: backend.loglikelihood(requests[:64]))
    _, seconds = run.timed(lambda: backend.loglikelihood(requests))
    return {"items": len(requests), "first_batch_s": round(first, 3), "seconds": round(seconds, 3),
            "items_per_s": round(len(requests) / seconds, 1)}


def speedups(report: dict, ours: str = "mc_ours", theirs: str = "mc_lmeval") -> dict:
    """Per choice format, ``theirs``' seconds over ``ours``' (the same items, the same run)."""
    steps = report.get("steps", {})
    return {choices: round(steps[f"{theirs}_{choices}"]["seconds"] / steps[f"{ours}_{choices}"]["seconds"], 2)
            for choices in prompts.CHOICES if f"{theirs}_{choices}" in steps and f"{ours}_{choices}" in steps}


def markdown(report: dict) -> str:
    steps = report.get("steps", {})
    lines = [f"# GPU benchmark: {report['device']}", "",
             f"{report['date']}; {report['model_shape']} in {report['dtype']}"
             f"{', ours through torch.compile' if report.get('torch_compile') else ''}; torch {report['torch']}, transformers "
             f"{report['transformers']}, lm-eval {report['lm_eval'] or 'absent'}; whole run {report['total_s']} s; "
             f"peak GPU memory {report['peak_memory_gib']} GiB.", "",
             "| step | batch | first batch s | seconds | in passes s | items/s | positions/s | TFLOP/s | of peak | "
             "of matmul | TFLOP/s in passes | peak GiB | lm-eval s / ours s |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    ratios = {"mc_ours": speedups(report), "mc_compiled": speedups(report, "mc_compiled")}
    for name, s in steps.items():
        if name.startswith(("mc_ours", "mc_lmeval", "mc_compiled")):
            side, choices = name.rsplit("_", 1)
            first = f"{s['first_batch_s']}" + (f" + {s['first_run_s']}" if "first_run_s" in s else "")
            lines.append(f"| {name} | {s['batch_size']} | {first} | {s['seconds']} | {s['forward_s']} | "
                         f"{s['items_per_s']} | {s['positions_per_s']} | {s['tflops']} | {s['fraction_of_peak']} | "
                         f"{s['fraction_of_measured_matmul']} | {s['forward_tflops']} | {s.get('peak_memory_gib')} | "
                         f"{ratios.get(side, {}).get(choices, '')} |")
    compiled = speedups(report, "mc_compiled", "mc_ours")
    if compiled:
        lines += ["", "Compiled (`torch_compile`) against eager, the same items and batch size: eager s / compiled s "
                      + ", ".join(f"{c} {r}" for c, r in compiled.items()) + "; the first batch and a first whole "
                      "run (compiling) are timed apart (\"first batch s\": batch + run)."]
    for name, s in steps.items():
        if name.startswith("mc_compiled") and "largest_logprob_difference_from_eager" in s:
            lines.append(f"\n{name}: largest log-prob difference from eager {s['largest_logprob_difference_from_eager']}, "
                         f"same argmax {s['same_argmax_as_eager']}.")
    if report.get("dynamo_stats"):
        lines.append(f"\ntorch.compile: {report['dynamo_stats']}")
    if "matmul" in steps:
        m = steps["matmul"]
        lines += ["", f"bf16 matmul ({m['n']}^3): {m['measured_tflops']} TFLOP/s measured; published dense peak "
                      f"{m['published_peak_tflops'] or 'unknown for this GPU'} TFLOP/s (goal: prefill >= "
                      f"{PREFILL_GOAL:.0%} of it)."]
    if "generation" in steps:
        g = steps["generation"]
        lines += ["", f"Generation: {g['prompts']} prompts x {g['max_new_tokens']} new tokens, batch {g['batch_size']}: "
                      f"{g['output_tokens_per_s']} output tokens/s ({g['output_tokens']} tokens in {g['seconds']} s; "
                      f"first batch {g['first_batch_s']} s; peak {g.get('peak_memory_gib')} GiB); vLLM's published "
                      f"{VLLM_PUBLISHED['output_tokens_per_s']} tokens/s ({VLLM_PUBLISHED['model']}, "
                      f"{VLLM_PUBLISHED['gpu']}): ratio {g['ours_over_vllm_published']}."]
    for name, s in steps.items():
        if name.startswith("mc_vllm"):
            lines.append(f"\n{name} (babeleval's vLLM backend): {s['items']} items in {s['seconds']} s "
                         f"({s['items_per_s']} items/s; first 64 items {s['first_batch_s']} s).")
        if name == "generation_vllm":
            lines.append(f"\n{name} (babeleval's vLLM backend): {s['output_tokens_per_s']} output tokens/s "
                         f"({s['output_tokens']} tokens in {s['seconds']} s).")
        if name.startswith("mc_lmeval"):
            lines.append(f"\n{name}: largest log-prob difference from ours {s['largest_logprob_difference_from_ours']}, "
                         f"same argmax {s['same_argmax_as_ours']}.")
    lines += [""] + [f"- skipped {name}: {why}" for name, why in report.get("skipped", {}).items()]
    if "error" in report:
        lines.append(f"- **the run failed**: {report['error']}")
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(HERE / "out" / "gpu"))
    parser.add_argument("--items", type=int, default=900)
    parser.add_argument("--gen-prompts", type=int, default=900)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--mc-batch-size", type=int, default=64, help="ours: items a forward pass")
    parser.add_argument("--lmeval-batch-size", type=int, default=64, help="lm-eval: (context, choice) pairs a pass")
    parser.add_argument("--gen-batch-size", type=int, default=128)
    parser.add_argument("--budget-s", type=float, default=570, help="start no step after this many seconds")
    parser.add_argument("--dtype", choices=("bfloat16", "float32"), default="bfloat16",
                        help="what both harnesses load the (bf16) weights in: float32 separates bf16 rounding from "
                             "a real difference")
    parser.add_argument("--torch-compile", action="store_true", help="ours: the hf backend's torch_compile setting")
    parser.add_argument("--compiled", action=argparse.BooleanOptionalAction, default=None,
                        help="the mc_compiled steps, last (default: on a GPU; off on the CPU check)")
    parser.add_argument("--compile-allow-s", type=float, default=300,
                        help="seconds allowed for compiling after --budget-s (the mc_compiled steps)")
    parser.add_argument("--save-logprobs", action="store_true", help="every choice's log-prob into the JSON")
    parser.add_argument("--cpu-check", action="store_true", help="a tiny model on the CPU: checks the script runs")
    args = parser.parse_args(argv)

    import torch
    import transformers

    device, dtype, shape, n = setting(args, torch)
    if args.compiled is None:
        args.compiled = device == "cuda"
    name = torch.cuda.get_device_name(0) if device == "cuda" else f"CPU ({platform.processor() or platform.machine()})"
    run = Run(torch, device, args.budget_s, published_peak(name) if device == "cuda" else None)
    HFLM, _ = import_lmeval()
    run.report.update({"device": name, "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                       "load_average": list(os.getloadavg()), "torch": torch.__version__,
                       "transformers": transformers.__version__,
                       "lm_eval": _version("lm_eval") if HFLM is not None else None,
                       "model_shape": "Llama-3-8B" if shape is LLAMA3_8B else "tiny (CPU check)",
                       "dtype": args.dtype, "torch_compile": args.torch_compile, "compiled": args.compiled,
                       "items": args.items, "steps": {}})
    where = scratch_dir(16.1 if shape is LLAMA3_8B else 0.1)
    run.on_step = lambda: write(run, Path(args.out), quiet=True)
    try:
        measure(run, args, dtype, shape, n, where)
    except BaseException as exc:  # what was measured before the failure is still written; the run still fails
        run.report["error"] = f"{type(exc).__name__}: {exc}"
        raise
    finally:
        shutil.rmtree(where, ignore_errors=True)
        write(run, Path(args.out))
    return run.report


def write(run: Run, out: Path, quiet: bool = False) -> None:
    run.report["lmeval_over_ours"] = speedups(run.report)
    run.report["lmeval_over_compiled"] = speedups(run.report, "mc_compiled")
    run.report["eager_over_compiled"] = speedups(run.report, "mc_compiled", "mc_ours")
    peaks = [s["peak_memory_gib"] for s in run.report["steps"].values() if "peak_memory_gib" in s]
    run.report["peak_memory_gib"] = max(peaks) if peaks else None
    run.report["total_s"] = round(time.perf_counter() - run.started, 1)
    out.mkdir(parents=True, exist_ok=True)
    (out / "gpu_bench.json").write_text(json.dumps(run.report, indent=1) + "\n", encoding="utf-8")
    (out / "gpu_bench.md").write_text(markdown(run.report), encoding="utf-8")
    if not quiet:
        print(markdown(run.report))


def _version(package: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package.replace("_", "-"))
    except PackageNotFoundError:
        return None


if __name__ == "__main__":
    main()
