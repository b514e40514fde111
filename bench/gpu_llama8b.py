"""GPU benchmark (needs a CUDA GPU; never run in tests or CI): a random-weight Llama-3-8B-shaped model
in bf16, MC scoring (prefill) as a fraction of the GPU's measured bf16 matmul rate, and generation
tokens per second, for the hf backend and, where it is installed, vLLM.

    python bench/gpu_llama8b.py [--items 900] [--batch-size 64] [--gen-prompts 256] [--max-new-tokens 128]
    python bench/gpu_llama8b.py --cpu-check          # the same code on a tiny model, on the CPU

Steps: (1) the bf16 matmul rate: 8192^3 matmuls, best of several, in TFLOP/s; (2) the model: Llama-3-8B's
shape (32 layers, hidden 4096, MLP 14336, 32 heads / 8 KV heads, vocabulary 128256), random weights
built on the GPU (no download), the tokenizer bench/make_data.py trains; (3) MC scoring with the hf
backend's log-likelihood scorer on ``--items`` items made as bench/make_data.py makes them, texts and
letters: model FLOPs (2 x parameters per token run + attention) / seconds, over the matmul rate;
(4) generation, greedy: the hf backend, ``model.generate`` in one big batch, and vLLM (dummy weights)
if importable. One JSON line with every figure.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "workflow"))

import belebele_prompts as prompts  # noqa: E402
from generation import left_padded  # noqa: E402

LLAMA3_8B = dict(vocab_size=128256, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                 num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=8192, rope_theta=500000.0,
                 rms_norm_eps=1e-5, tie_word_embeddings=False)
TINY = dict(vocab_size=8192, hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, max_position_embeddings=4096, tie_word_embeddings=False)


def matmul_tflops(torch, device: str, dtype, n: int, repeats: int = 20) -> float:
    a = torch.randn((n, n), device=device, dtype=dtype)
    b = torch.randn((n, n), device=device, dtype=dtype)
    for _ in range(3):
        a @ b
    best = float("inf")
    for _ in range(repeats):
        sync(torch, device)
        started = time.perf_counter()
        a @ b
        sync(torch, device)
        best = min(best, time.perf_counter() - started)
    return 2 * n ** 3 / best / 1e12


def sync(torch, device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def tokenizer(data_dir: Path):
    from transformers import AutoTokenizer

    model_dir = data_dir / "llama30m"
    if not (model_dir / "tokenizer.json").is_file():
        raise SystemExit(f"run bench/make_data.py first ({model_dir} has no tokenizer)")
    return AutoTokenizer.from_pretrained(model_dir)


def build_backend(torch, shape: dict, device: str, dtype, tok, batch_size: int):
    from transformers import LlamaConfig, LlamaForCausalLM

    from babeleval.generate.backends.hf import HFBackend

    config = LlamaConfig(**shape, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                         pad_token_id=tok.pad_token_id, attn_implementation="sdpa")
    torch.manual_seed(0)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    with torch.device(device):
        model = LlamaForCausalLM(config)
    torch.set_default_dtype(previous)
    model.eval()
    # The backend as HFBackend.__init__ leaves it, around a model built in memory (no checkpoint to load).
    backend = HFBackend.__new__(HFBackend)
    backend.device, backend.batch_size, backend.tokenizer, backend.model = device, batch_size, tok, model
    backend.pad_id, backend.add_bos, backend.max_length = tok.pad_token_id, None, shape["max_position_embeddings"]
    for name in ("chat_template", "chat_template_sha256"):  # attributes newer versions of the backend read
        setattr(backend, name, None)
    backend.model_path = "random-llama"
    return backend, config


def model_flops(config, tokens: int, attended: int, logits: int) -> float:
    """Forward FLOPs: 2 x (non-embedding weights) per token, attention scores and values, the kept logits."""
    h, layers = config.hidden_size, config.num_hidden_layers
    kv = config.num_key_value_heads * (h // config.num_attention_heads)
    per_layer = h * h * 2 + h * kv * 2 + 3 * h * config.intermediate_size  # q, o, k, v, MLP
    return 2 * per_layer * layers * tokens + 4 * h * layers * attended + 2 * h * config.vocab_size * logits


def mc_scoring(torch, backend, config, rows: list[dict], choices: str, device: str) -> dict:
    from babeleval.generate.backends.base import LoglikelihoodRequest

    requests = [LoglikelihoodRequest(c, tuple(x)) for _, c, x in prompts.requests(rows, choices)]
    encoded = [backend.encode_request(r.context, r.continuations) for r in requests]
    trees = [backend._tree(row, encoded) for row in backend._rows(encoded)]
    tokens = sum(len(t.tokens) for t in trees)
    attended = sum(sum(t.depths) + len(t.tokens) for t in trees)  # each token attends to its ancestors and itself
    logits = sum(len({n for _, _, nodes, _ in t.targets for n in nodes}) for t in trees)
    lmeval_tokens = sum(len(ctx) if all(len(c) == 1 for c in conts) else sum(len(ctx) + len(c) - 1 for c in conts)
                        for ctx, conts in encoded)
    backend.loglikelihood(requests[: backend.batch_size])  # warm-up
    sync(torch, device)
    started = time.perf_counter()
    backend.loglikelihood(requests)
    sync(torch, device)
    seconds = time.perf_counter() - started
    flops = model_flops(config, tokens, attended, logits)
    return {"items": len(rows), "unique_tokens": tokens, "lmeval_tokens": lmeval_tokens, "seconds": round(seconds, 3),
            "tokens_per_s": round(tokens / seconds), "items_per_s": round(len(rows) / seconds, 1),
            "tflops": float(f"{flops / seconds / 1e12:.4g}")}


def generation(torch, backend, rows: list[dict], max_new: int, device: str) -> dict:
    from babeleval.generate.backends.base import Decoding, GenerationRequest

    texts = [prompts.context(r, "letters") for r in rows]
    requests = [GenerationRequest(t, max_new) for t in texts]
    backend.generate(requests[:2], Decoding())
    sync(torch, device)
    started = time.perf_counter()
    results = backend.generate(requests, Decoding())
    sync(torch, device)
    hf_s = time.perf_counter() - started
    hf_tokens = sum(r.n_completion_tokens for r in results)

    tok = backend.tokenizer
    ids, mask = left_padded(backend, texts)
    width = ids.shape[1]
    sync(torch, device)
    started = time.perf_counter()
    with torch.inference_mode():
        out = backend.model.generate(input_ids=ids.to(device), attention_mask=mask.to(device), max_new_tokens=max_new,
                                     do_sample=False, pad_token_id=backend.pad_id, eos_token_id=tok.eos_token_id)
    sync(torch, device)
    big_s = time.perf_counter() - started
    new = out[:, width:]
    big_tokens = int((~((new == tok.eos_token_id).int().cumsum(-1) > 0)).sum())
    return {"prompts": len(texts), "max_new_tokens": max_new, "batch_size": backend.batch_size,
            "hf_backend": {"tokens": hf_tokens, "seconds": round(hf_s, 3), "tokens_per_s": round(hf_tokens / hf_s, 1)},
            "generate_one_batch": {"tokens": big_tokens, "seconds": round(big_s, 3),
                                   "tokens_per_s": round(big_tokens / big_s, 1)}}


def vllm_side(config, tok, rows: list[dict], gen_rows: list[dict], max_new: int, peak: float) -> dict:
    try:
        from vllm import LLM, SamplingParams
    except ImportError:
        return {"available": False}
    with tempfile.TemporaryDirectory() as tmp:
        config.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        llm = LLM(model=tmp, load_format="dummy", dtype="bfloat16", seed=0, enable_prefix_caching=True)
        texts = [prompts.context(r, "letters") for r in gen_rows]
        params = SamplingParams(temperature=0.0, max_tokens=max_new, ignore_eos=True)
        llm.generate(texts[:2], params)
        started = time.perf_counter()
        outs = llm.generate(texts, params)
        gen_s = time.perf_counter() - started
        gen_tokens = sum(len(o.outputs[0].token_ids) for o in outs)
        # MC scoring the vLLM way: prompt log-probs of context + choice, one prompt per choice (prefix caching on)
        mc = [c + x for _, c, xs in prompts.requests(rows, "texts") for x in xs]
        score = SamplingParams(max_tokens=1, prompt_logprobs=0)
        started = time.perf_counter()
        llm.generate(mc, score)
        mc_s = time.perf_counter() - started
    return {"available": True,
            "generation": {"prompts": len(texts), "tokens": gen_tokens, "seconds": round(gen_s, 3),
                           "tokens_per_s": round(gen_tokens / gen_s, 1)},
            "mc_texts_prompt_logprobs": {"items": len(rows), "seconds": round(mc_s, 3),
                                         "items_per_s": round(len(rows) / mc_s, 1)}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=900)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--gen-prompts", type=int, default=256)
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--no-vllm", action="store_true")
    parser.add_argument("--cpu-check", action="store_true", help="a tiny model on the CPU: checks the script runs")
    args = parser.parse_args(argv)

    import torch

    if args.cpu_check:
        device, dtype, shape, n = "cpu", torch.float32, TINY, 512
        args.items, args.gen_prompts, args.max_new_tokens, args.batch_size = 16, 8, 8, 8
    else:
        if not torch.cuda.is_available():
            raise SystemExit("no CUDA GPU here: this benchmark runs only on a GPU machine (--cpu-check to test it)")
        device, dtype, shape, n = "cuda", torch.bfloat16, LLAMA3_8B, 8192
    report: dict = {"device": torch.cuda.get_device_name(0) if device == "cuda" else "cpu",
                    "torch": torch.__version__}
    peak = matmul_tflops(torch, device, dtype, n)
    report["matmul_tflops_bf16" if device == "cuda" else "matmul_tflops"] = float(f"{peak:.4g}")

    tok = tokenizer(HERE / "data")
    from make_data import make_items

    rows = make_items(args.items, seed=1)  # as bench/data/belebele200.jsonl, with as many items as asked
    backend, config = build_backend(torch, shape, device, dtype, tok, args.batch_size)
    report["parameters_billion"] = float(f"{sum(p.numel() for p in backend.model.parameters()) / 1e9:.4g}")
    for choices in ("texts", "letters"):
        mc = mc_scoring(torch, backend, config, rows, choices, device)
        mc["fraction_of_matmul_rate"] = float(f"{mc['tflops'] / peak:.3g}")
        report[f"mc_{choices}"] = mc
    report["generation"] = generation(torch, backend, rows[: args.gen_prompts], args.max_new_tokens, device)
    if not args.no_vllm and device == "cuda":
        del backend
        torch.cuda.empty_cache()
        report["vllm"] = vllm_side(config, tok, rows, rows[: args.gen_prompts], args.max_new_tokens, peak)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
