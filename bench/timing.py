"""Whole-process timing, side by side: run commands in turn (A B A B ...), report min/median/max of
wall and CPU seconds and, for two commands, the ratio B/A pair by pair (A's speed-up over B).

    python bench/timing.py [--runs 3] [--warmup 1] --name ours 'CMD A' [--name lm-eval 'CMD B']

Each run is a fresh process; its CPU time (user + sys) and peak memory come from the operating
system (wait4). The commands' own output is discarded unless ``--show-output``; a JSON report with
every figure goes to standard output.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time


def run_once(cmd: list[str], show: bool) -> dict[str, float]:
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=None if show else subprocess.DEVNULL, stderr=None if show else subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"command failed ({proc.returncode}): {shlex.join(cmd)}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "maxrss_mb": usage.ru_maxrss / 1024}


def summary(values: list[float]) -> dict[str, float]:
    return {"min": round(min(values), 3), "median": round(statistics.median(values), 3), "max": round(max(values), 3)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--show-output", action="store_true")
    parser.add_argument("--name", action="append", required=True, help="a label for the next command")
    parser.add_argument("command", nargs="+", help="a command line, one shell-quoted string each")
    args = parser.parse_args(argv)
    if len(args.name) != len(args.command) or len(args.command) > 2:
        parser.error("give one --name per command, one or two commands")
    commands = [(name, shlex.split(cmd)) for name, cmd in zip(args.name, args.command)]

    for _ in range(args.warmup):
        for _, cmd in commands:
            run_once(cmd, args.show_output)
    results: dict[str, list[dict[str, float]]] = {name: [] for name, _ in commands}
    for number in range(args.runs):
        for name, cmd in commands:
            results[name].append(run_once(cmd, args.show_output))
            print(f"run {number + 1}/{args.runs} {name}: wall {results[name][-1]['wall']:.2f} s, "
                  f"cpu {results[name][-1]['cpu']:.2f} s", file=sys.stderr)
    report: dict = {"runs": args.runs, "warmup": args.warmup, "commands": {}}
    for name, cmd in commands:
        report["commands"][name] = {"cmd": shlex.join(cmd), **{key: summary([r[key] for r in results[name]])
                                                                for key in ("wall", "cpu", "maxrss_mb")}}
    if len(commands) == 2:
        (a, _), (b, _) = commands
        for key in ("wall", "cpu"):
            report[f"{b}/{a} {key}"] = summary([rb[key] / ra[key] for ra, rb in zip(results[a], results[b])])
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
