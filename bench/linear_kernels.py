"""Linear layers through oneDNN (the hf backend's CPU default) against torch's own matmul, in one process.

    python bench/linear_kernels.py --model DIR --data FILE.jsonl [--repeats 3] [--prompts 64]

Each measurement alternates the two ways ``--repeats`` times, after one warm-up round:
(1) ``products``: matrix products of the model's widths, as in a scoring pass (16 rows of 256 positions) and a
    decoding step (16 rows), through ``torch.nn.functional.linear`` and through oneDNN's operator: GFLOP/s;
(2) ``texts`` and ``letters``: the hf backend's ``loglikelihood`` on the items, one backend routed to oneDNN and
    one on torch's matmul (the same weights): seconds, and the largest log-prob difference;
(3) ``generation``: its ``generate`` on the first ``--prompts`` items (``--max-new-tokens``): seconds, and how
    many texts are the same.
Prints one JSON; ``torch_over_onednn`` is the ratio of medians (above 1: oneDNN faster).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "workflow"))

import belebele_prompts as prompts  # noqa: E402


def alternate(ways: dict[str, Callable[[], Any]], repeats: int) -> tuple[dict[str, list[float]], dict[str, Any]]:
    """Seconds of each way, run in turn ``repeats`` times after a warm-up round, and each way's last result."""
    results = {name: fn() for name, fn in ways.items()}
    times: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(repeats):
        for name, fn in ways.items():
            started = time.perf_counter()
            results[name] = fn()
            times[name].append(time.perf_counter() - started)
    return times, results


def summary(times: dict[str, list[float]]) -> dict[str, Any]:
    med = {name: statistics.median(t) for name, t in times.items()}
    return {**{f"{name}_s": [round(t, 4) for t in ts] for name, ts in times.items()},
            "torch_over_onednn": round(med["torch"] / med["onednn"], 3)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    prompts.add_model_arguments(parser, repeats=3)
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--limit", type=int, default=None, help="score only the first N items")
    args = parser.parse_args(argv)

    import torch

    from babeleval.generate.backends import onednn_linear
    from babeleval.generate.backends.base import Decoding, GenerationRequest, LoglikelihoodRequest
    from babeleval.generate.backends.config import HFConfig
    from babeleval.generate.backends.hf import HFBackend

    if args.device != "cpu" or not onednn_linear.usable():
        raise SystemExit("linear_kernels: oneDNN's linear operator is used on a CPU only; run with --device cpu "
                         "on a torch built with oneDNN (torch.backends.mkldnn.is_available())")
    config = HFConfig(model=args.model, device=args.device, dtype=args.dtype, batch_size=args.batch_size)
    routed = HFBackend(config, args.model)
    usable, onednn_linear.usable = onednn_linear.usable, lambda: False
    try:
        plain = HFBackend(config, args.model)
    finally:
        onednn_linear.usable = usable
    report: dict[str, Any] = {"threads": torch.get_num_threads(), "linear_layers": routed.onednn_linears}

    hidden, inner, vocab = (getattr(routed.model.config, key) for key in ("hidden_size", "intermediate_size",
                                                                          "vocab_size"))
    products = {}
    for rows, k, n in ((16 * 256, hidden, hidden), (16 * 256, hidden, inner), (16 * 256, inner, hidden),
                       (16, hidden, inner), (16, hidden, vocab)):
        x, weight = torch.randn(rows, k), torch.randn(n, k)
        with torch.inference_mode():
            times, _ = alternate({"torch": lambda: torch.nn.functional.linear(x, weight),
                                  "onednn": lambda: onednn_linear.linear(x, weight)}, 10 * args.repeats)
        # three significant figures: the tiny model's small products run at well under 0.1 GFLOP/s on a busy
        # machine, which one decimal printed as 0.0
        gflops = {name: float(f"{2 * rows * k * n / statistics.median(t) / 1e9:.3g}") for name, t in times.items()}
        products[f"{rows}x{k} @ {k}x{n}"] = {"torch_gflops": gflops["torch"], "onednn_gflops": gflops["onednn"]}
    report["products"] = products

    rows = prompts.read_items(args.data, args.limit)
    for choices in prompts.CHOICES:
        requests = [LoglikelihoodRequest(c, tuple(k)) for _, c, k in prompts.requests(rows, choices)]
        times, results = alternate({"torch": lambda: plain.loglikelihood(requests),
                                    "onednn": lambda: routed.loglikelihood(requests)}, args.repeats)
        largest = max(abs(a - b) for x, y in zip(results["torch"], results["onednn"])
                      for a, b in zip(x.logprobs, y.logprobs))
        report[choices] = {"items": len(rows), **summary(times), "largest_logprob_difference": largest}

    texts = [prompts.context(row, "letters") for row in rows[: args.prompts]]
    requests = [GenerationRequest(text, args.max_new_tokens) for text in texts]
    times, results = alternate({"torch": lambda: [r.text for r in plain.generate(requests, Decoding())],
                                "onednn": lambda: [r.text for r in routed.generate(requests, Decoding())]},
                               args.repeats)
    same = sum(a == b for a, b in zip(results["torch"], results["onednn"]))
    report["generation"] = {"prompts": len(texts), **summary(times), "same_texts": same}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
