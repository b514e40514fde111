"""Model loads and wall time of one (model, task) with five templates: one generation job per template
(``generation_job: template``) against one job for all of them (``generation_job: task``).

    python bench/model_loads.py [--runs 1] [--cores 2]

The grid: the builtin tiny model, MARC-ja's five JGLUE templates (0.2-0.6) on the bundled sample. Each mode
runs from scratch in its own copy of the workflow, with the model built beforehand (so both time the same
work) and no response cache shared between them. Reported per mode: the generation jobs, the model loads
(the generation logs' "model load" lines), the summed wall time of the generation jobs (Snakemake's record:
job start to last output) and the whole run's wall time. The tiny model loads in well under a second, so the
saving here is mostly the per-job process start (Python, torch and transformers imports); for an 8B model each
avoided load also saves the 10-60 s of reading its weights.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW_FILES = ["Snakefile", "params.yaml", "workflow", "prompts", "data/samples", "envs"]
TEMPLATES = ["0.2", "0.3", "0.4", "0.5", "0.6"]


def workflow_copy(dest: Path, generation_job: str) -> Path:
    for name in WORKFLOW_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    params = yaml.safe_load((dest / "params.yaml").read_text(encoding="utf-8"))
    params["tasks"] = {"marc_ja": {"languages": ["jpn_Jpan"], "templates": TEMPLATES,
                                   "source": {"kind": "local", "path": "data/samples/marc_ja"}}}
    (dest / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")
    table = dest / "workflow/resources.yaml"
    table.write_text(re.sub(r"(?m)^generation_job: \w+$", f"generation_job: {generation_job}",
                            table.read_text(encoding="utf-8")), encoding="utf-8")
    return dest


def snakemake(workdir: Path, cores: int, *targets: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "snakemake", *targets, "--cores", str(cores), "--resources", "gpu=1"],
                   cwd=workdir, check=True, capture_output=True, text=True)
    return time.perf_counter() - started


def generation_job_seconds(workdir: Path) -> tuple[int, float]:
    """(jobs, summed seconds) of the generation jobs, from Snakemake's metadata: one record per output file, each
    with the job's end time and its own start time (a few microseconds apart): a job is its end time."""
    starts: dict[float, float] = {}
    for record in (workdir / ".snakemake/metadata").iterdir():
        meta = json.loads(record.read_text())
        if meta.get("rule") == "generate_marc_ja":
            starts[meta["endtime"]] = min(starts.get(meta["endtime"], meta["starttime"]), meta["starttime"])
    return len(starts), sum(end - start for end, start in starts.items())


def measure(generation_job: str, cores: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        workdir = workflow_copy(Path(tmp) / "wf", generation_job)
        snakemake(workdir, cores, "results/models/tiny-llama")
        wall = snakemake(workdir, cores)
        loads = sum(log.read_text(encoding="utf-8").count("model load ")
                    for log in (workdir / "results/logs/generate").rglob("*.log"))
        jobs, seconds = generation_job_seconds(workdir)
        return {"mode": generation_job, "generation_jobs": jobs, "model_loads": loads,
                "generation_job_seconds": round(seconds, 1), "run_seconds": round(wall, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args()
    print(f"{'mode':10} {'jobs':>5} {'loads':>6} {'generation s':>13} {'run s':>7}")
    for _ in range(args.runs):
        for mode in ("template", "task"):
            r = measure(mode, args.cores)
            print(f"{r['mode']:10} {r['generation_jobs']:>5} {r['model_loads']:>6} "
                  f"{r['generation_job_seconds']:>13} {r['run_seconds']:>7}", flush=True)


if __name__ == "__main__":
    main()
