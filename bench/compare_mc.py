"""Compare two log-prob files of bench/mc_loglikelihood.py's format: largest difference and argmax agreement.

    python bench/compare_mc.py OURS.jsonl REFERENCE.jsonl [--tolerance 1e-3]

Exits 1 when an id differs, a log-prob differs by more than the tolerance, or an argmax differs.
"""

from __future__ import annotations

import argparse
import json
import sys


def read(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def argmax(values: list[float]) -> int:
    return max(range(len(values)), key=values.__getitem__)


def compare(ours: list[dict], ref: list[dict]) -> dict:
    if [r["id"] for r in ours] != [r["id"] for r in ref]:
        raise SystemExit("the two files do not list the same items in the same order")
    diffs = [abs(a - b) for x, y in zip(ours, ref) for a, b in zip(x["logprobs"], y["logprobs"], strict=True)]
    same = sum(argmax(x["logprobs"]) == argmax(y["logprobs"]) for x, y in zip(ours, ref))
    margins = []
    for y in ref:
        top = sorted(y["logprobs"], reverse=True)
        margins.append(top[0] - top[1])
    return {"items": len(ours), "max_abs_diff": max(diffs), "mean_abs_diff": sum(diffs) / len(diffs),
            "same_argmax": same, "smallest_reference_margin": min(margins)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("ours")
    parser.add_argument("reference")
    parser.add_argument("--tolerance", type=float, default=1e-3)
    args = parser.parse_args(argv)
    report = compare(read(args.ours), read(args.reference))
    ok = report["max_abs_diff"] <= args.tolerance and report["same_argmax"] == report["items"]
    print(json.dumps({**report, "tolerance": args.tolerance, "ok": ok}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
