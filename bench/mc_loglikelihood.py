"""Score Belebele-format multiple-choice items with babeleval's own log-likelihood scorer (the hf backend).

    python bench/mc_loglikelihood.py --model DIR --data FILE.jsonl --choices texts|letters --out OUT.jsonl

Writes one JSON line per item, in file order: ``{"id": ..., "logprobs": [four floats]}``, the summed
log-probability of each continuation (see belebele_prompts.py for the exact strings). Tokenisation
is lm-evaluation-harness's (trailing context spaces move to the continuation; the continuation's
tokens are those of encode(context + continuation) past encode(context)); ``--add-bos-token``
mirrors lm-eval's ``add_bos_token`` model argument (default: the tokenizer's own setting, as lm-eval).
Timings (import, load, compute) go to standard error.
"""

from __future__ import annotations

import argparse
import sys
import time

STARTED = time.perf_counter()

from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "workflow"))

import belebele_prompts as prompts  # noqa: E402


def parse_bool(value: str) -> bool | None:
    return {"auto": None, "true": True, "false": False}[value.lower()]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    prompts.add_model_arguments(parser)
    parser.add_argument("--choices", required=True, choices=prompts.CHOICES)
    parser.add_argument("--out", required=True)
    parser.add_argument("--add-bos-token", type=parse_bool, default=None, metavar="auto|true|false")
    parser.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's)")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--torch-linear", action="store_true",
                        help="leave the linear layers on torch's own matmul (on a CPU the backend routes them "
                             "through oneDNN): the whole-process A/B of bench/RESULTS.md")
    args = parser.parse_args(argv)

    from babeleval.generate.backends import load_backend, onednn_linear
    from babeleval.generate.backends.base import LoglikelihoodRequest
    from babeleval.generate.backends.config import HFConfig

    if args.torch_linear:
        onednn_linear.usable = lambda: False
    imported = time.perf_counter()
    config = HFConfig(model=args.model, device=args.device, dtype=args.dtype, batch_size=args.batch_size,
                      add_bos_token=args.add_bos_token)  # None: the tokenizer's default
    backend = load_backend(config, args.model)  # imports torch and transformers, as a generation job does
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    loaded = time.perf_counter()

    rows = prompts.read_items(args.data, args.limit)
    ids, requests = [], []
    for id_, context, continuations in prompts.requests(rows, args.choices):
        ids.append(id_)
        requests.append(LoglikelihoodRequest(context, tuple(continuations)))
    results = backend.loglikelihood(requests)
    computed = time.perf_counter()
    prompts.write_results(args.out, ids, [r.logprobs for r in results])
    print(f"babeleval: {len(rows)} items, choices={args.choices}, batch_size={args.batch_size}, "
          f"threads={torch.get_num_threads()}; import {imported - STARTED:.2f} s, load {loaded - imported:.2f} s, "
          f"score {computed - loaded:.2f} s, total {time.perf_counter() - STARTED:.2f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
