"""The CPU side of a full-size study, end to end with the real workflow: every job but generation.

    python bench/cpu_side.py                    # 5 models x 122 languages x 4 templates x 900 items
    python bench/cpu_side.py --languages 12     # a tenth of it

A Belebele study of 5 models x ``--languages`` x the four published templates (``blog``, ``formatspread``,
``instruct``, ``paper``) x ``--items`` items, in a copy of the workflow in a temporary directory
(``pipeline_overhead.copy_workflow`` and ``write_grid``: made-up language codes, English first); each language's
file holds the same ``--items`` Belebele rows (``make_data.make_items``: the bundled sample recombined under new
links). The models are API entries (``backend: openai``, ``endpoint: completions``, which answers both modes), so
no model is built. Then, each ``snakemake --cores 2`` as a child process of this script:

1. ``render``: ``--until`` the rendering rule: preparing the items and rendering every prompt (CPU side, timed);
2. the generations: every generation job's files written by the workflow's own generation code
   (``babeleval.generate.job.run``, as the job calls it, with the job's settings and files) with a stand-in
   backend that answers at once (an answer seeded by the prompt); should Snakemake plan a generation job for them,
   ``--touch`` up to the generation rule marks them made. Not timed: not CPU side;
3. ``rest``: ``snakemake -n`` first (the jobs it plans, by rule: no generation job may be among them), then every
   remaining job: scoring, the analysis steps, leaderboard, summaries, report (CPU side, timed).

For each timed phase: wall seconds, the CPU seconds of Snakemake's main process itself (its threads included,
its children not: read from ``/proc/<pid>/stat`` once it has exited and before it is reaped) and of its children
(its jobs: ``wait4``'s usage less the main process's own), the CPU seconds the rest of the machine spent meanwhile
(``/proc/stat``: how quiet the machine was), the load average before and after, the jobs planned by rule, and each
rule's summed job seconds (Snakemake's record in ``.snakemake/metadata``). One JSON line, then a table.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import zlib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from make_data import make_items  # noqa: E402  (bench scripts beside this one)
from pipeline_overhead import copy_workflow, job_durations, write_grid  # noqa: E402

MODELS = 5
TEMPLATES = 4
TASK = "belebele"
CORES = "2"
# an address nothing answers at: the stand-in backend writes the generations, the workflow never calls it
BASE_URL = "http://127.0.0.1:9/v1"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


# -- the study ----------------------------------------------------------------------------------------------------


def write_study(wf: Path, n_languages: int, n_items: int) -> list[str]:
    """The workflow copied into ``wf``, its params.yaml the study's grid; the models' names."""
    copy_workflow(wf)
    models, langs, _ = write_grid(wf, MODELS, n_languages, TEMPLATES)
    items = make_items(n_items, seed=0)
    for lang in langs:  # the grid's copies of the 24-row sample, replaced by n_items rows
        (wf / "data" / "grid" / f"{lang}.jsonl").write_text("".join(
            json.dumps({**item, "dialect": lang}, ensure_ascii=False) + "\n" for item in items), encoding="utf-8")
    params = yaml.safe_load((wf / "params.yaml").read_text(encoding="utf-8"))
    params["models"] = {name: {"backend": "openai", "model": f"bench/{name}", "base_url": BASE_URL,
                               "endpoint": "completions"} for name in models}
    (wf / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return models


class InstantModel:
    """A stand-in backend: answers at once, the choice seeded by the prompt; one generated answer in twenty is not
    a letter (a parse failure)."""

    @staticmethod
    def _choice(prompt: str, n: int) -> int:
        return zlib.crc32(prompt.encode("utf-8")) % n

    def loglikelihood(self, requests: list) -> list:
        from babeleval.generate.backends.base import LoglikelihoodResult

        out = []
        for request in requests:
            n = len(request.continuations)
            chosen = self._choice(request.context, n)
            out.append(LoglikelihoodResult(logprobs=[-1.0 if k == chosen else -2.0 - k for k in range(n)],
                                           greedy=[k == chosen for k in range(n)], n_tokens=[1] * n,
                                           n_context_tokens=len(request.context) // 4))
        return out

    def generate(self, requests: list, decoding: object) -> list:
        from babeleval.generate.backends.base import GenerationResult

        out = []
        for request in requests:
            roll = self._choice(request.prompt, 80)
            text = "I am not sure." if roll % 20 == 0 else "ABCD"[roll % 4]
            out.append(GenerationResult(text=text, n_prompt_tokens=len(request.prompt) // 4, n_completion_tokens=1,
                                        finish_reason="stop"))
        return out


def write_generations(wf: Path, model: str, template: str) -> None:
    """One generation job's files, written as the job writes them (``babeleval.generate.job.run``), in ``wf``."""
    os.chdir(wf)
    sys.path.insert(0, str(wf / "workflow"))
    from babeleval.core import paths
    from babeleval.generate import job
    from babeleval.generate.backends import model_config
    from babeleval.grid import rules
    from babeleval.grid.params import validate

    params = yaml.safe_load(Path("params.yaml").read_text(encoding="utf-8"))
    grid = validate(params, source_file="params.yaml")
    settings = rules.generation_settings(grid, model, TASK, template)
    languages = grid.tasks[TASK].languages
    job.run(job.JobModel(model_config(params["models"][model]), rules.model_path(grid, model),
                         loader=lambda config, path: InstantModel()),
            settings["mode"], settings,
            job.JobFiles({lang: paths.PROMPTS.format(task=TASK, language=lang, template=template) for lang in languages},
                         {lang: paths.GENERATIONS.format(model=model, task=TASK, language=lang, template=template)
                          for lang in languages},
                         None, paths.USAGE.format(model=model, task=TASK, template=template)))


# -- Snakemake as a child process -----------------------------------------------------------------------------------


def busy_seconds() -> float:
    """CPU seconds the whole machine has spent busy since boot (``/proc/stat``: all but idle and iowait)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / CLOCK_TICKS


def snakemake(wf: Path, log: Path, *args: str) -> dict:
    """One ``snakemake`` run as a child: wall, its main process's own CPU seconds and its children's."""
    env = {**os.environ, "PYTHONPATH": str(wf / "workflow")}  # the jobs import the copy's package
    load, busy = os.getloadavg()[0], busy_seconds()
    started = time.perf_counter()
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "snakemake", *args], cwd=wf, env=env, stdout=out,
                                stderr=subprocess.STDOUT)
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # exited, not reaped: its /proc entry still reads
        wall = time.perf_counter() - started
        stat = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        own = (int(stat[11]) + int(stat[12])) / CLOCK_TICKS  # utime, stime: fields 14 and 15 of proc(5)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"snakemake {' '.join(args)} failed (exit {proc.returncode}):\n{log.read_text()[-3000:]}")
    total = usage.ru_utime + usage.ru_stime
    return {"wall_s": round(wall, 1), "main_cpu_s": round(own, 1), "children_cpu_s": round(total - own, 1),
            "others_cpu_s": round(busy_seconds() - busy - total, 1), "load_before": round(load, 2),
            "load_after": round(os.getloadavg()[0], 2)}


def planned(wf: Path, *args: str) -> dict[str, int]:
    """The jobs ``snakemake -n`` plans, by rule (its "Job stats" table)."""
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", CORES, *args], cwd=wf,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(wf / "workflow")})
    out = proc.stdout + proc.stderr
    if proc.returncode != 0:
        raise SystemExit(f"snakemake -n {' '.join(args)} failed:\n{out[-3000:]}")
    table = out.split("Job stats:", 1)[1] if "Job stats:" in out else ""
    return {rule: int(n) for rule, n in re.findall(r"^(\w+)\s+(\d+)\s*$", table, re.M)}


def phase(wf: Path, name: str, *args: str) -> dict:
    jobs = planned(wf, *args)
    row = {"phase": name, "jobs": jobs.get("total", 0), "jobs_by_rule": {k: v for k, v in jobs.items() if k != "total"},
           **snakemake(wf, wf / f"{name}.log", "--cores", CORES, *args)}
    # each rule's jobs run in one phase only
    row["job_seconds_by_rule"] = {rule: round(sum(seconds), 1)
                                  for rule, seconds in job_durations(wf).items() if rule in row["jobs_by_rule"]}
    print(json.dumps(row), flush=True)
    return row


def study(wf: Path, n_languages: int, n_items: int) -> dict:
    models = write_study(wf, n_languages, n_items)
    render = phase(wf, "render", "--until", f"render_prompts_{TASK}")
    started = time.perf_counter()
    templates = yaml.safe_load((wf / "params.yaml").read_text(encoding="utf-8"))["tasks"][TASK]["templates"]
    with ProcessPoolExecutor(int(CORES)) as pool:
        for future in [pool.submit(write_generations, wf, m, t) for m in models for t in templates]:
            future.result()
    touched = planned(wf, "--touch", "--until", f"generate_{TASK}")
    if touched.get("total"):  # files newer than their inputs with no record of a job: Snakemake plans none, then
        snakemake(wf, wf / "touch.log", "--cores", CORES, "--touch", "--until", f"generate_{TASK}")
    print(f"# generations written in {time.perf_counter() - started:.0f} s (not CPU side); --touch: {touched}",
          flush=True)
    rest = phase(wf, "rest")
    if any(rule.startswith("generate") for rule in rest["jobs_by_rule"]):
        raise SystemExit(f"generation jobs planned in the timed run: {rest['jobs_by_rule']}")
    return {"size": f"{MODELS} models x {n_languages} languages x {TEMPLATES} templates x {n_items} items",
            "phases": [render, rest], "jobs": render["jobs"] + rest["jobs"],
            **{key: round(render[key] + rest[key], 1) for key in ("wall_s", "main_cpu_s", "children_cpu_s",
                                                                  "others_cpu_s")}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--languages", type=int, default=122)
    parser.add_argument("--items", type=int, default=900)
    parser.add_argument("--root", type=Path, help="where the temporary study goes (default: the system's)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(dir=args.root) as tmp:
        result = study(Path(tmp) / "study", args.languages, args.items)
    print(json.dumps(result))
    print(f"\n{result['size']}, --cores {CORES}\n{'phase':>8} {'jobs':>6} {'wall s':>7} {'main CPU s':>10} "
          f"{'jobs CPU s':>10} {'others CPU s':>12} {'load before':>11} {'after':>6}")
    for row in [*result["phases"], {"phase": "total", "load_before": "", "load_after": "", **result}]:
        print(f"{row['phase']:>8} {row['jobs']:>6} {row['wall_s']:>7} {row['main_cpu_s']:>10} "
              f"{row['children_cpu_s']:>10} {row['others_cpu_s']:>12} {row['load_before']:>11} {row['load_after']:>6}")


if __name__ == "__main__":
    main()
