"""Compare two outputs of bench/replay_prompts.py's format (ours, then lm-eval's) request by request.

    python bench/compare_replay.py OURS.jsonl REFERENCE.jsonl [--tolerance 1e-4]

Log-likelihoods: the largest per-choice difference, the items whose argmax differs, and each side's accuracy
against the gold answer. Generations: the prompts whose text differs, and the responses that differ. Prints one
JSON object; exits 1 when ids differ, a log-likelihood differs by more than the tolerance, an argmax, a prompt
text or a response differs.
"""

from __future__ import annotations

import argparse
import json
import sys

from compare_mc import argmax, read  # this folder is on the path of a script run from it


def compare(ours: list[dict], ref: list[dict]) -> dict:
    if [r["id"] for r in ours] != [r["id"] for r in ref]:
        return {"ids_differ": True}
    report: dict = {"requests": len(ours), "prompt_texts_differ": sum(a["prompt_text"] != b["prompt_text"]
                                                                       for a, b in zip(ours, ref))}
    if "logprobs" in ours[0]:
        diffs = [abs(x - y) for a, b in zip(ours, ref) for x, y in zip(a["logprobs"], b["logprobs"], strict=True)]
        report.update(
            choices=len(diffs), largest_difference=max(diffs),
            argmax_differs=sum(argmax(a["logprobs"]) != argmax(b["logprobs"]) for a, b in zip(ours, ref)),
            accuracy_ours=sum(argmax(a["logprobs"]) == a["gold"] for a in ours) / len(ours),
            accuracy_reference=sum(argmax(b["logprobs"]) == b["gold"] for b in ref) / len(ref))
    else:
        differ = [a["id"] for a, b in zip(ours, ref) if a["response"] != b["response"]]
        report.update(responses_differ=len(differ), first_differing=differ[:3],
                      empty_responses=sum(not a["response"].strip() for a in ours))
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("ours")
    parser.add_argument("reference")
    parser.add_argument("--tolerance", type=float, default=1e-4)
    args = parser.parse_args(argv)
    report = compare(read(args.ours), read(args.reference))
    print(json.dumps(report, ensure_ascii=False))
    failed = (report.get("ids_differ") or report["prompt_texts_differ"] or report.get("argmax_differs")
              or report.get("responses_differ") or report.get("largest_difference", 0) > args.tolerance)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
