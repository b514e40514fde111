"""lm-evaluation-harness 0.4.13's ``generate_until`` on bench/generation.py's prompts (run in its venv).

    bench/.venv-lmeval/bin/python bench/lmeval_generate.py --model DIR --data FILE.jsonl [--prompts 64]
        [--max-new-tokens 32] [--batch-size 16] [--repeats 1]

Same prompts and settings as bench/generation.py (greedy, ``max_gen_toks``, stop only at end of text).
lm-eval returns text, not token counts: tokens = the returned text re-encoded without special tokens
(the same greedy tokens for a byte-level BPE, up to merges across the prompt boundary).
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

import belebele_prompts as prompts  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    prompts.add_model_arguments(parser, repeats=1)
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)

    import torch
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    lm = HFLM(pretrained=args.model, device=args.device, dtype=args.dtype, batch_size=args.batch_size)
    loaded = time.perf_counter()
    texts = [prompts.context(row, "letters") for row in prompts.read_items(args.data, args.prompts)]
    gen_kwargs = {"until": [], "max_gen_toks": args.max_new_tokens, "do_sample": False}
    instances = [Instance(request_type="generate_until", doc={}, arguments=(t, dict(gen_kwargs)), idx=0,
                          metadata=("bench", i, 1)) for i, t in enumerate(texts)]
    times, outputs = [], []
    for _ in range(args.repeats):
        started = time.perf_counter()
        outputs = lm.generate_until(instances, disable_tqdm=True)
        times.append(time.perf_counter() - started)
    tokens = sum(len(lm.tok_encode(o, add_special_tokens=False)) for o in outputs)
    med = statistics.median(times)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            for o in outputs:
                handle.write(json.dumps({"response": o}, ensure_ascii=False) + "\n")
    print(json.dumps({"prompts": len(texts), "max_new_tokens": args.max_new_tokens, "batch_size": args.batch_size,
                      "threads": torch.get_num_threads(), "load_s": round(loaded - STARTED, 2),
                      "lmeval_generate_until": {"tokens": tokens, "seconds": [round(t, 3) for t in times],
                                                "tokens_per_s": round(tokens / med, 1)},
                      "total_s": round(time.perf_counter() - STARTED, 2)}))


if __name__ == "__main__":
    main()
