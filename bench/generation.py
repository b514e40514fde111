"""Generation throughput: the hf backend against ``model.generate`` with one big batch (the in-process
ceiling), in one process, alternately.

    python bench/generation.py --model DIR --data FILE.jsonl [--prompts 64] [--max-new-tokens 32]
        [--batch-size 16] [--repeats 3] [--mode both|backend]

Prompts: lm-eval's Belebele prompt of the first ``--prompts`` items, greedy, no stop sequence but the
end-of-text token (random weights rarely emit it, so nearly every prompt runs to ``--max-new-tokens``).
Tokens per second = generated tokens / seconds of the call. ``--mode backend`` times the backend alone
(for the whole-process comparison with bench/lmeval_generate.py). A JSON line with every figure.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

STARTED = time.perf_counter()

from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "workflow"))

import belebele_prompts as prompts  # noqa: E402


def left_padded(backend, texts: list[str]):
    """Token ids and attention mask of ``texts`` as one left-padded batch, as ``model.generate`` takes them."""
    import torch

    encoded = [backend.encode(t) for t in texts]
    width = max(map(len, encoded))
    ids = torch.full((len(encoded), width), backend.pad_id, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for r, e in enumerate(encoded):
        ids[r, width - len(e):] = torch.tensor(e)
        mask[r, width - len(e):] = 1
    return ids, mask


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    prompts.add_model_arguments(parser, repeats=3)
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--mode", choices=("both", "backend"), default="both")
    parser.add_argument("--out", default=None, help="write the backend's responses here (JSON Lines)")
    args = parser.parse_args(argv)

    from babeleval.generate.backends import load_backend
    from babeleval.generate.backends.base import Decoding, GenerationRequest
    from babeleval.generate.backends.config import HFConfig

    backend = load_backend(HFConfig(model=args.model, device=args.device, dtype=args.dtype,
                                    batch_size=args.batch_size), args.model)  # as a generation job loads it
    import torch

    loaded = time.perf_counter()
    texts = [prompts.context(row, "letters") for row in prompts.read_items(args.data, args.prompts)]
    requests = [GenerationRequest(text, args.max_new_tokens) for text in texts]
    model, tok = backend.model, backend.tokenizer

    def sync():
        if backend.device == "cuda":
            torch.cuda.synchronize()

    def hf_backend() -> int:
        results = backend.generate(requests, Decoding())
        sync()
        hf_backend.results = results
        return sum(r.n_completion_tokens for r in results)

    @torch.inference_mode()
    def ceiling() -> int:
        ids, mask = left_padded(backend, texts)
        width = ids.shape[1]
        out = model.generate(input_ids=ids.to(backend.device), attention_mask=mask.to(backend.device),
                             max_new_tokens=args.max_new_tokens, do_sample=False, pad_token_id=backend.pad_id,
                             eos_token_id=tok.eos_token_id)
        sync()
        new = out[:, width:]
        ended = (new == tok.eos_token_id).int().cumsum(-1) > 0  # tokens after the end of text are padding
        return int((~ended).sum())

    sides = {"hf_backend": hf_backend} if args.mode == "backend" else {"hf_backend": hf_backend, "ceiling": ceiling}
    times: dict[str, list[float]] = {k: [] for k in sides}
    tokens: dict[str, int] = {}
    for _ in range(args.repeats):
        for name, fn in sides.items():
            started = time.perf_counter()
            tokens[name] = fn()
            times[name].append(time.perf_counter() - started)
    report = {"prompts": len(texts), "max_new_tokens": args.max_new_tokens, "batch_size": args.batch_size,
              "threads": torch.get_num_threads(), "load_s": round(loaded - STARTED, 2)}
    for name in sides:
        med = statistics.median(times[name])
        report[name] = {"tokens": tokens[name], "seconds": [round(t, 3) for t in times[name]],
                        "tokens_per_s": round(tokens[name] / med, 1)}
    if "ceiling" in report:
        report["backend_over_ceiling"] = round(report["hf_backend"]["tokens_per_s"] / report["ceiling"]["tokens_per_s"], 3)
    report["total_s"] = round(time.perf_counter() - STARTED, 2)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            for r in hf_backend.results:
                handle.write(json.dumps({"response": r.text, "completion_tokens": r.n_completion_tokens},
                                        ensure_ascii=False) + "\n")
    print(json.dumps(report))


if __name__ == "__main__":
    main()
