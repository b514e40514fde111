"""The floor of log-likelihood multiple choice: one forward pass over the unique tokens, side by side
with the project's scorer, in one process.

    python bench/mc_floor.py --model DIR --data FILE.jsonl --choices texts|letters [--repeats 3]

For each item set it prints the tokens each way of scoring runs through the model (lm-eval: context +
choice for each choice, except that single-token choices share one context; babeleval: the token
trees of bench's scorer, every shared prefix once) and times, alternately and ``--repeats`` times,
(a) the scorer's ``loglikelihood`` on the items and (b) the floor: plain causal forward passes over
exactly the scorer's unique tokens, in the same batches, keeping one logit a row (no tree mask, no
log-softmax, no bookkeeping). Medians in seconds; the scorer/floor ratio is what scoring costs on
top of the model's own arithmetic.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "workflow"))

import belebele_prompts as prompts  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    prompts.add_model_arguments(parser, repeats=3)
    parser.add_argument("--choices", required=True, choices=prompts.CHOICES)
    args = parser.parse_args(argv)

    import torch

    from babeleval.generate.backends.base import LoglikelihoodRequest
    from babeleval.generate.backends.config import HFConfig
    from babeleval.generate.backends.hf import HFBackend

    backend = HFBackend(HFConfig(model=args.model, device=args.device, dtype=args.dtype, batch_size=args.batch_size),
                        args.model)
    rows = prompts.read_items(args.data)
    requests = [LoglikelihoodRequest(c, tuple(x)) for _, c, x in prompts.requests(rows, args.choices)]
    encoded = [backend.encode_request(r.context, r.continuations) for r in requests]
    lmeval_tokens = sum(len(ctx) if all(len(c) == 1 for c in conts) else sum(len(ctx) + len(c) - 1 for c in conts)
                        for ctx, conts in encoded)
    batches = backend._passes(encoded)  # the scorer's own rows and passes
    unique_tokens = sum(len(t.tokens) for batch in batches for t in batch)

    def sync():
        if backend.device == "cuda":
            torch.cuda.synchronize()

    @torch.inference_mode()
    def floor():
        for batch in batches:
            width = max(len(t.tokens) for t in batch)
            ids = torch.full((len(batch), width), backend.pad_id, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for r, tree in enumerate(batch):
                ids[r, width - len(tree.tokens):] = torch.tensor(tree.tokens)
                mask[r, width - len(tree.tokens):] = 1
            backend.model(input_ids=ids.to(backend.device), attention_mask=mask.to(backend.device),
                          use_cache=False, logits_to_keep=1)
        sync()

    def scorer():
        backend.loglikelihood(requests)
        sync()

    backend.loglikelihood(requests[: args.batch_size])  # warm-up
    times: dict[str, list[float]] = {"scorer": [], "floor": []}
    for _ in range(args.repeats):
        for name, fn in (("scorer", scorer), ("floor", floor)):
            started = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - started)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(json.dumps({
        "items": len(rows), "choices": args.choices, "batch_size": args.batch_size, "threads": torch.get_num_threads(),
        "lmeval_tokens": lmeval_tokens, "unique_tokens": unique_tokens,
        "lmeval_over_unique_tokens": round(lmeval_tokens / unique_tokens, 3),
        "scorer_s": [round(t, 3) for t in times["scorer"]], "floor_s": [round(t, 3) for t in times["floor"]],
        "scorer_median_s": round(med["scorer"], 3), "floor_median_s": round(med["floor"], 3),
        "scorer_over_floor": round(med["scorer"] / med["floor"], 3),
    }))


if __name__ == "__main__":
    main()
