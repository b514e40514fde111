"""The hf backend's log-likelihood passes on a GPU under several settings, side by side in one process: eager
against torch.compile (the backend's ``torch_compile`` setting), at several batch sizes, on one model and one
set of items (the Llama-3-8B-shaped random model and Belebele-format items of bench/gpu_bench.py).

    bash bench/gpu.sh is the benchmark; this compares settings of ours only:
    PYTHONPATH=workflow python bench/gpu_prefill.py --out DIR [--items 900] [--configs eager:256 compiled:256]
                                                    [--repeats 2] [--budget-s 540]
    ... --cpu-check   # a tiny model on the CPU: checks the script runs

Each setting loads the backend through its constructor; each (setting, batch size, choices) is run
``--repeats`` times, each run after a warm-up batch (with torch.compile the first runs compile). Reports
seconds, TFLOP/s over the whole call and inside the passes (bench/gpu_bench.py's counter), and each
setting's log-probs against the first setting's (largest difference, argmax agreement); how far bf16
rounding alone moves them is what ``bash bench/gpu.sh --dtype float32 --save-logprobs`` gives.
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import gpu_bench
from gpu_bench import Run

MODES = {"eager": False, "compiled": True}


def parse_configs(texts: list[str]) -> list[tuple[str, int]]:
    configs = []
    for text in texts:
        mode, _, batch = text.partition(":")
        if mode not in MODES or not batch.isdigit():
            raise SystemExit(f"--configs {text!r}: give MODE:BATCH with MODE one of {', '.join(MODES)}")
        configs.append((mode, int(batch)))
    return configs


def agreement(a: list[list[float]], b: list[list[float]]) -> dict:
    differences = [abs(x - y) for xs, ys in zip(a, b) for x, y in zip(xs, ys)]
    same = sum(max(range(len(x)), key=x.__getitem__) == max(range(len(y)), key=y.__getitem__) for x, y in zip(a, b))
    return {"largest_logprob_difference": float(f"{max(differences):.3g}"), "same_argmax": f"{same} / {len(a)}"}


def run_mode(run: Run, mode: str, batches: list[int], args: argparse.Namespace, rows: list[dict], where: Path,
             logprobs: dict) -> None:
    """Every batch size and choice format of one setting on one loaded backend, ``--repeats`` times."""
    from babeleval.generate.backends.config import HFConfig
    from babeleval.generate.backends.hf import HFBackend

    config = HFConfig(model=str(where), device=run.device, dtype=args.dtype, batch_size=batches[0],
                      torch_compile=MODES[mode])
    backend, load_s = run.timed(lambda: HFBackend(config, str(where)))
    run.report["steps"][f"{mode}_load"] = {"seconds": round(load_s, 2)}
    for repeat in range(args.repeats):
        for batch in batches:
            backend.batch_size = batch  # a speed setting: the items a pass holds
            for choices in gpu_bench.prompts.CHOICES:
                out: dict[str, list] = {}
                run.step(f"{mode}_b{batch}_{choices}_r{repeat}",
                         lambda c=choices, o=out: gpu_bench.mc_ours(run, backend, rows, c, o))
                logprobs.setdefault(f"{mode}_b{batch}_{choices}", out.get(choices))
    if MODES[mode]:
        from torch._dynamo.utils import counters

        run.report["dynamo_stats"] = {k: v for k, v in counters["stats"].items()}
    backend = None
    gpu_bench.release(run)


def markdown(report: dict) -> str:
    lines = [f"# The hf backend's passes on {report['device']}", "",
             f"{report['date']}; {report['model_shape']} in {report['dtype']}; {report['items']} items; torch "
             f"{report['torch']}; whole run {report['total_s']} s.", "",
             "| run | batch | first batch s | seconds | in passes s | positions | TFLOP/s | of peak | "
             "TFLOP/s in passes | peak GiB |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, s in report["steps"].items():
        if "positions_run" in s:
            lines.append(f"| {name} | {s['batch_size']} | {s['first_batch_s']} | {s['seconds']} | {s['forward_s']} | "
                         f"{s['positions_run']} | {s['tflops']} | {s['fraction_of_peak']} | {s['forward_tflops']} | "
                         f"{s.get('peak_memory_gib')} |")
    lines.append("")
    for name, a in report.get("agreement", {}).items():
        lines.append(f"- {name}: largest log-prob difference {a['largest_logprob_difference']}, "
                     f"same argmax {a['same_argmax']}")
    if report.get("dynamo_stats"):
        lines.append(f"- torch.compile: {report['dynamo_stats']}")
    lines += [f"- skipped {name}: {why}" for name, why in report.get("skipped", {}).items()]
    if "error" in report:
        lines.append(f"- **the run failed**: {report['error']}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(gpu_bench.HERE / "out" / "gpu_prefill"))
    parser.add_argument("--items", type=int, default=900)
    parser.add_argument("--configs", nargs="+", default=["eager:256", "eager:512", "compiled:256", "compiled:512"])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--dtype", choices=("bfloat16", "float32"), default="bfloat16")
    parser.add_argument("--budget-s", type=float, default=540, help="start no run after this many seconds")
    parser.add_argument("--cpu-check", action="store_true", help="a tiny model on the CPU: checks the script runs")
    args = parser.parse_args(argv)
    configs = parse_configs(args.configs)

    import torch
    from make_data import make_items

    if args.cpu_check:
        device, dtype, shape, args.dtype = "cpu", torch.float32, gpu_bench.TINY, "float32"
        args.items, configs = 12, [(mode, 4) for mode, _ in configs]
    elif torch.cuda.is_available():
        device, dtype, shape = "cuda", torch.bfloat16, gpu_bench.LLAMA3_8B
    else:
        raise SystemExit("no CUDA GPU here (--cpu-check runs it on a tiny model)")
    name = torch.cuda.get_device_name(0) if device == "cuda" else f"CPU ({platform.processor() or platform.machine()})"
    run = Run(torch, device, args.budget_s, gpu_bench.published_peak(name) if device == "cuda" else None)
    run.report.update({"device": name, "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                       "torch": torch.__version__, "model_shape": "Llama-3-8B" if device == "cuda" else "tiny",
                       "dtype": args.dtype, "items": args.items, "configs": args.configs, "steps": {}})
    where = gpu_bench.scratch_dir(16.1 if device == "cuda" else 0.1)
    logprobs: dict[str, list] = {}
    try:
        run.step("matmul", lambda: gpu_bench.matmul_rate(run, dtype, 8192 if device == "cuda" else 256))
        run.step("model", lambda: gpu_bench.build_model(run, shape, dtype, where))
        rows = make_items(args.items, seed=1)
        modes = list(dict.fromkeys(mode for mode, _ in configs))
        for mode in modes:
            run_mode(run, mode, [b for m, b in configs if m == mode], args, rows, where, logprobs)
        first = next(iter(logprobs)).rsplit("_", 1)[0]
        run.report["agreement"] = {f"{key} vs {first}_{key.rsplit('_', 1)[1]}": agreement(
            value, logprobs[f"{first}_{key.rsplit('_', 1)[1]}"])
            for key, value in logprobs.items() if value is not None and not key.startswith(first + "_")}
    except BaseException as exc:
        run.report["error"] = f"{type(exc).__name__}: {exc}"
        raise
    finally:
        shutil.rmtree(where, ignore_errors=True)
        run.report["total_s"] = round(time.perf_counter() - run.started, 1)
        run.report["logprobs"] = logprobs
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "gpu_prefill.json").write_text(json.dumps(run.report, indent=1) + "\n", encoding="utf-8")
        (out / "gpu_prefill.md").write_text(markdown(run.report), encoding="utf-8")
        print(markdown(run.report))
    return run.report


if __name__ == "__main__":
    main()
