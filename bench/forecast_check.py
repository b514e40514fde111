"""Is `plan`'s token forecast within 10% of what the run then reports? A pilot, the forecast, the run, side by side.

    python bench/forecast_check.py                # a grid of a scripted API chat model (tests/fake_openai.py)
    python bench/forecast_check.py --demo         # the default grid (params.yaml: SmolLM2-135M, minutes on a CPU)

Each case runs in a copy of the workflow under a temporary directory: a pilot run of the grid with fewer items
(``--pilot-limit``), then ``python -m babeleval plan --pilot <the pilot's copy>`` on the full grid (its forecast, the
pilot giving the completions' average and, for a model without a tokenizer on disk, the tokens per byte), then the
full run; it prints each model's forecast tokens beside the tokens of all requests its usage files report (what the
run summary adds up), and their distance. The API grid's model is a chat model served by the tests' scripted
server, whose token counts are whitespace words: its prompts have no tokenizer, so they are estimated from the
pilot. The demo grid needs the built model: it is copied from ``results/models`` where a run built it.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from fake_openai import FakeOpenAI  # noqa: E402  (the tests' scripted server)

FILES = ["Snakefile", "workflow", "prompts", "data", "envs", "params.yaml", "pyproject.toml", "profiles"]


def copy_workflow(dest: Path, params: dict) -> Path:
    dest.mkdir(parents=True)
    for name in FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        elif source.exists():
            shutil.copy2(source, dest / name)
    (dest / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")
    if (ROOT / "results" / "models").is_dir():
        shutil.copytree(ROOT / "results" / "models", dest / "results" / "models")
    return dest


def with_limit(params: dict, limit: int | None, belebele_limit: int | None) -> dict:
    params = json.loads(json.dumps(params))
    for name, task in params["tasks"].items():
        if limit is not None:
            task["limit"] = belebele_limit if name == "belebele" else limit
    return params


def snakemake(workdir: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2", "--resources", "gpu=1"], cwd=workdir,
                          capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"snakemake failed in {workdir}:\n{proc.stderr[-3000:]}")


def planned(workdir: Path, pilot: Path) -> dict[str, int]:
    """Each model's forecast tokens (prompt + completion), from the plan's cost lines."""
    proc = subprocess.run([sys.executable, "-m", "babeleval", "plan", "--pilot", str(pilot)], cwd=workdir,
                          capture_output=True, text=True, check=True)
    print(proc.stdout[proc.stdout.index("Cost:"):])
    found = re.findall(r"^## (\S+): [\d,]+ requests; prompt tokens ([\d,]+) .*?completion tokens ([\d,]+)",
                       proc.stdout, re.MULTILINE)
    return {model: int(p.replace(",", "")) + int(c.replace(",", "")) for model, p, c in found}


def reported(workdir: Path) -> dict[str, int]:
    """Each model's tokens of all requests, from the run's usage files."""
    out: dict[str, int] = {}
    for path in (workdir / "results" / "usage").glob("*/*/*.json"):
        tokens = json.loads(path.read_text(encoding="utf-8"))["tokens_all_requests"]
        model = path.relative_to(workdir / "results" / "usage").parts[0]
        out[model] = out.get(model, 0) + tokens["prompt"] + tokens["completion"]
    return out


def case(name: str, params: dict, pilot_limit: int, pilot_belebele: int, scratch: Path) -> None:
    pilot = copy_workflow(scratch / f"{name}-pilot", with_limit(params, pilot_limit, pilot_belebele))
    snakemake(pilot)
    full = copy_workflow(scratch / f"{name}-full", params)
    forecast = planned(full, pilot)
    snakemake(full)
    actual = reported(full)
    print(f"### {name}: forecast (pilot: {pilot_limit} items a language, Belebele {pilot_belebele}) against the run")
    print("| model | forecast tokens | the run's tokens (all requests) | forecast - run |")
    print("|:--|--:|--:|--:|")
    for model in sorted(forecast):
        run = actual.get(model, 0)
        print(f"| {model} | {forecast[model]:,} | {run:,} | {100 * (forecast[model] - run) / run:+.1f}% |")
    print()


def api_params(base_url: str) -> dict:
    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    params["models"] = {"api-chat": {"backend": "openai", "model": "chat-model-2024-01-01", "base_url": base_url,
                                     "chat": True, "concurrency": 4, "max_new_tokens": 64,
                                     "prices": {"prompt": 0.15, "completion": 0.60}}}
    for task in params["tasks"].values():
        task["templates"] = [t for t in task["templates"] if t != "paper"]  # a chat endpoint: generated only
    params["tasks"]["belebele"]["limit"] = 24
    return params


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--demo", action="store_true", help="the default grid instead of the scripted API grid")
    parser.add_argument("--pilot-limit", type=int, default=1, help="items a language in the pilot (Belebele: 3x)")
    parser.add_argument("--keep", action="store_true", help="keep the copies (their path is printed)")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="forecast-check-"))
    try:
        if args.demo:
            params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
            case("demo grid", params, args.pilot_limit, 3 * args.pilot_limit, scratch)
        else:
            with FakeOpenAI() as server:
                case("scripted API grid", api_params(server.base_url), args.pilot_limit, 3 * args.pilot_limit, scratch)
    finally:
        if args.keep:
            print(f"copies kept in {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
