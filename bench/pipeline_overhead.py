"""Pipeline overhead: what Snakemake and per-job processes cost on top of the jobs' own work.

    python bench/pipeline_overhead.py run [--cores 1]     # the default grid (tiny model), whole run
    python bench/pipeline_overhead.py dryrun [--runs 3]   # 10 models x 122 languages x 4 templates, -n

``run`` copies the workflow into a temporary directory and runs the default grid from scratch. It
reports the run's wall time, the sum of the jobs' durations (Snakemake's own record of each job: from
its start to its last output's write), the sum of in-job compute (each job's log from its first to
its last timestamped line: the work after the job's imports; the jobs that log at least two lines,
i.e. the GPU jobs: model load and inference), their ratios, and the model loads (generate jobs that loaded a model) against
models x tasks x templates.

``dryrun`` writes a 10 x 122 x 4 Belebele grid (fake language codes, each with a copy of the English
sample; a fourth template copied from ``paper``) and times ``snakemake -n`` on it against a bare
Snakefile of the same shape (the same rules, wildcards and file counts, no Python helpers, no params
validation), each as a whole process, alternately.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW_FILES = ["Snakefile", "params.yaml", "workflow", "prompts", "data/samples", "envs"]
LOG_TIME = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) ")


def copy_workflow(dest: Path) -> Path:
    for name in WORKFLOW_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        elif source.exists():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


def snakemake(cwd: Path, *args: str) -> float:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "snakemake", *args], cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"snakemake {' '.join(args)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return time.perf_counter() - started


def log_span(path: Path) -> float | None:
    stamps = [datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f")
              for line in path.read_text(errors="replace").splitlines() if (m := LOG_TIME.match(line))]
    return (stamps[-1] - stamps[0]).total_seconds() if len(stamps) >= 2 else None


def job_durations(wf: Path) -> dict[str, list[float]]:
    """rule -> each job's duration, from Snakemake's own record (.snakemake/metadata: one record per output file,
    a job's outputs merged): from the job's start to its last output's write."""
    jobs: dict[tuple, tuple[float, float]] = {}
    for meta in (wf / ".snakemake" / "metadata").iterdir():
        record = json.loads(meta.read_text())
        key = (record.get("rule"), record.get("job_hash"))
        start, end = record.get("starttime") or 0, record.get("endtime") or 0
        if key in jobs:
            start, end = min(start, jobs[key][0]), max(end, jobs[key][1])
        jobs[key] = (start, end)
    by_rule: dict[str, list[float]] = {}
    for (rule, _), (start, end) in jobs.items():
        by_rule.setdefault(rule, []).append(end - start)
    return by_rule


def whole_run(cores: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        wf = copy_workflow(Path(tmp))
        wall = snakemake(wf, "--cores", str(cores), "--resources", "gpu=1")
        by_rule = job_durations(wf)
        spans, loads = {}, 0
        for log in (wf / "results" / "logs").rglob("*.log"):
            rule = log.relative_to(wf / "results" / "logs").parts[0]
            span = log_span(log)
            if span is not None:
                spans.setdefault(rule, []).append(span)
            loads += sum("model loaded in" in line for line in log.read_text(errors="replace").splitlines())
        import yaml

        params = yaml.safe_load((wf / "params.yaml").read_text())
        expected = sum(len(t["templates"]) for t in params["tasks"].values()) * len(params["models"])
    job_sum = sum(sum(v) for v in by_rule.values())
    compute = sum(sum(v) for v in spans.values())
    return {"cores": cores, "wall_s": round(wall, 2), "jobs": sum(len(v) for v in by_rule.values()),
            "job_seconds_sum": round(job_sum, 2), "in_job_compute_sum": round(compute, 2),
            "wall_over_job_sum": round(wall / job_sum, 3), "wall_over_in_job_compute": round(wall / compute, 3),
            "job_seconds_by_rule": {k: round(sum(v), 2) for k, v in sorted(by_rule.items())},
            "in_job_compute_by_rule": {k: round(sum(v), 2) for k, v in sorted(spans.items())},
            "model_loads": loads, "models_x_tasks_x_templates": expected}


def languages(n: int) -> list[str]:
    """English (the paper template's exemplars come from it) and n - 1 made-up FLORES-style codes."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["eng_Latn"] + [f"{a}{b}{c}_Xxxx" for a, b, c in itertools.islice(itertools.product(letters, repeat=3), n - 1)]


def write_grid(wf: Path, n_models: int, n_langs: int, n_templates: int) -> tuple[list[str], list[str], list[str]]:
    import yaml

    langs = languages(n_langs)
    data = wf / "data" / "grid"
    data.mkdir(parents=True)
    sample = (ROOT / "data" / "samples" / "belebele" / "eng_Latn.jsonl").read_text().splitlines()
    for lang in langs:
        (data / f"{lang}.jsonl").write_text("".join(
            json.dumps({**json.loads(line), "dialect": lang}) + "\n" for line in sample if line.strip()))
    templates = sorted(p.stem for p in (wf / "prompts" / "belebele").glob("*.yaml"))
    for k in range(n_templates - len(templates)):
        shutil.copy(wf / "prompts" / "belebele" / "paper.yaml", wf / "prompts" / "belebele" / f"paper{k + 2}.yaml")
    templates = sorted(p.stem for p in (wf / "prompts" / "belebele").glob("*.yaml"))[:n_templates]
    params = yaml.safe_load((wf / "params.yaml").read_text())
    tiny = next(iter(params["models"].values()))
    params["models"] = {f"model{i:02d}": dict(tiny) for i in range(n_models)}
    params["tasks"] = {"belebele": {**params["tasks"]["belebele"], "languages": langs, "templates": templates,
                                    "source": {"kind": "local", "path": "data/grid"}}}
    (wf / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True))
    return [f"model{i:02d}" for i in range(n_models)], langs, templates


BARE = '''# A bare Snakefile of the same shape as babeleval's: the same rules and file counts, nothing else.
MODELS = {models!r}
LANGS = {langs!r}
TEMPLATES = {templates!r}


rule all:
    input:
        "results/leaderboard.csv",


rule build_tiny_model:
    output:
        directory("results/models/{{builtin}}"),
    shell:
        "mkdir -p {{output}}"


rule prepare_data:
    output:
        "data/prepared/belebele/{{language}}.jsonl",
    input:
        "data/grid/{{language}}.jsonl",
    log:
        "results/logs/prepare_data/belebele/{{language}}.log",
    shell:
        "cp {{input}} {{output}}"


rule render_prompts:
    output:
        "results/prompts/belebele/{{language}}/{{template}}.jsonl",
    input:
        data="data/prepared/belebele/{{language}}.jsonl",
        exemplars="data/prepared/belebele/eng_Latn.jsonl",
        tmpl="prompts/belebele/{{template}}.yaml",
    log:
        "results/logs/render_prompts/belebele/{{language}}/{{template}}.log",
    shell:
        "cp {{input.data}} {{output}}"


rule generate_belebele:
    output:
        expand("results/generations/{{{{model}}}}/belebele/{{language}}/{{{{template}}}}.jsonl", language=LANGS),
    input:
        prompts=expand("results/prompts/belebele/{{language}}/{{{{template}}}}.jsonl", language=LANGS),
        model="results/models/tiny-llama",
    resources:
        gpu=1,
    log:
        "results/logs/generate/{{model}}/belebele/{{template}}.log",
    shell:
        "touch {{output}}"


rule score:
    output:
        raw="results/raw/{{model}}/belebele/{{language}}/{{template}}.jsonl",
        scores="results/scores/{{model}}/belebele/{{language}}/{{template}}.json",
    input:
        generations=ancient("results/generations/{{model}}/belebele/{{language}}/{{template}}.jsonl"),
        prompts="results/prompts/belebele/{{language}}/{{template}}.jsonl",
        tmpl="prompts/belebele/{{template}}.yaml",
    log:
        "results/logs/score/{{model}}/belebele/{{language}}/{{template}}.log",
    shell:
        "touch {{output}}"


rule leaderboard:
    output:
        "results/leaderboard.csv",
    input:
        expand("results/scores/{{model}}/belebele/{{language}}/{{template}}.json", model=MODELS, language=LANGS,
               template=TEMPLATES),
    log:
        "results/logs/leaderboard.log",
    shell:
        "touch {{output}}"
'''


def dryrun(runs: int, n_models: int, n_langs: int, n_templates: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        wf = copy_workflow(Path(tmp) / "babeleval")
        models, langs, templates = write_grid(wf, n_models, n_langs, n_templates)
        bare = Path(tmp) / "bare"
        (bare / "data").mkdir(parents=True)
        shutil.copytree(wf / "data" / "grid", bare / "data" / "grid")
        shutil.copytree(wf / "prompts", bare / "prompts")
        (bare / "Snakefile").write_text(BARE.format(models=models, langs=langs, templates=templates))
        times: dict[str, list[float]] = {"babeleval": [], "bare": []}
        jobs = {}
        for name, where in (("babeleval", wf), ("bare", bare)):  # warm-up, and the job count
            proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--resources", "gpu=1"],
                                  cwd=where, capture_output=True, text=True)
            if proc.returncode != 0:
                raise SystemExit(f"{name}: snakemake -n failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
            total = re.search(r"^total\s+(\d+)", proc.stdout + proc.stderr, re.M)
            jobs[name] = int(total.group(1)) if total else None
        for _ in range(runs):
            for name, where in (("babeleval", wf), ("bare", bare)):
                times[name].append(snakemake(where, "-n", "--cores", "1", "--resources", "gpu=1", "--quiet"))
    med = {k: statistics.median(v) for k, v in times.items()}
    return {"grid": f"{n_models} models x {n_langs} languages x {n_templates} templates", "jobs": jobs,
            "seconds": {k: [round(t, 2) for t in v] for k, v in times.items()},
            "median_s": {k: round(v, 2) for k, v in med.items()}, "babeleval_over_bare": round(med["babeleval"] / med["bare"], 3)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    run = sub.add_parser("run")
    run.add_argument("--cores", type=int, default=1)
    dry = sub.add_parser("dryrun")
    dry.add_argument("--runs", type=int, default=3)
    dry.add_argument("--models", type=int, default=10)
    dry.add_argument("--languages", type=int, default=122)
    dry.add_argument("--templates", type=int, default=4)
    args = parser.parse_args(argv)
    if args.what == "run":
        print(json.dumps(whole_run(args.cores)))
    else:
        print(json.dumps(dryrun(args.runs, args.models, args.languages, args.templates)))


if __name__ == "__main__":
    main()
