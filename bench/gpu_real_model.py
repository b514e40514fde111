"""The builtin real model (SmolLM2-135M-Instruct, ``smollm2-135m-instruct``) on a GPU against the CPU, on the
bundled grid: every generation job of ``params.yaml``'s entries of it, run by the workflow's own job function
(``babeleval.generate.job.generation_job``, what ``workflow/scripts/generate.py`` calls) on the prompt files the
workflow rendered, with the entry's device and dtype set: log-likelihoods (Belebele ``paper``, JCommonsenseQA,
JNLI) and greedy replies through the chat template (Belebele ``instruct``, JSQuAD, translation, topics,
Global-MMLU, MGSM).

    .venv/bin/python bench/gpu_real_model.py plan --out DIR            # here, with the project's .venv: the grid's
                                                                        # jobs and their prompt files into DIR
    python bench/gpu_real_model.py convert GGUF MODEL_DIR               # the workflow's conversion (gguf.convert)
    python bench/gpu_real_model.py run --plan DIR --model MODEL_DIR --device cuda --dtype float32 --out OUT.jsonl
    python bench/gpu_real_model.py compare OUT.jsonl REFERENCE.jsonl [--tolerance 1e-4]

``plan`` needs the grid's packages (jsonschema, the rendered prompts under results/prompts/: ``make run``);
``run`` needs only torch, transformers, accelerate and what the generation job imports, so it runs on a machine
that has no Snakemake. ``run`` writes one line per request: model entry, task, language, template, id, gold, the
log-likelihoods or the reply. ``compare`` prints one JSON object per template and the totals: the largest
log-likelihood difference, the items whose argmax (the scored answer) differs, the replies that differ; it exits 1
where an argmax or a reply differs or a log-likelihood differs by more than the tolerance.
bench/gpu_real_model.sh runs it all on a GPU machine against a CPU reference made here.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "workflow"))

BUILTIN = "smollm2-135m-instruct"


def plan(out: Path, params: str) -> None:
    """The grid's generation jobs of the builtin model (one per entry and task, as the workflow groups them),
    their arguments and their prompt files, copied into ``out``."""
    import yaml

    from babeleval.core import paths
    from babeleval.grid import rules
    from babeleval.grid.params import load_params

    grid = load_params(params)
    raw = yaml.safe_load(Path(params).read_text(encoding="utf-8"))["models"]
    jobs = []
    for model, entry in raw.items():
        if entry.get("builtin") != BUILTIN:
            continue
        combos = sorted({(t, lang, tpl) for m, t, lang, tpl in grid.combinations() if m == model})
        for task in dict.fromkeys(t for t, _, _ in combos):
            templates = list(dict.fromkeys(tpl for t, _, tpl in combos if t == task))
            languages = list(grid.tasks[task].languages)
            prompts = []
            for template in templates:
                for language in languages:
                    source = paths.PROMPTS.format(task=task, language=language, template=template)
                    target = out / "prompts" / source
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(source, target)
                    prompts.append(str(Path("prompts") / source))
            jobs.append({"model": model, "task": task, "entry": entry, "templates": templates, "languages": languages,
                         "settings": {tpl: rules.generation_settings(grid, model, task, tpl) for tpl in templates},
                         "prompts": prompts})
    (out / "jobs.json").write_text(json.dumps(jobs, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(jobs)} generation jobs, {sum(len(j['prompts']) for j in jobs)} prompt files -> {out}")


def convert(gguf_file: str, model_dir: str) -> None:
    from babeleval.generate import gguf

    started = time.perf_counter()
    gguf.convert(gguf_file, model_dir)
    print(f"converted {gguf_file} -> {model_dir} in {time.perf_counter() - started:.1f} s", file=sys.stderr)


def run(plan_dir: Path, model_dir: str, device: str, dtype: str, out: str, threads: int | None) -> None:
    """Every planned job through ``generation_job`` with the entry's device and dtype replaced; cache off."""
    from babeleval.core.jsonl import read_jsonl, write_jsonl
    from babeleval.core.layout import job_pairs
    from babeleval.generate.job import generation_job

    jobs = json.loads((plan_dir / "jobs.json").read_text(encoding="utf-8"))
    rows = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        for k, job in enumerate(jobs):
            outputs = [f"{scratch}/{k}-{n}.jsonl" for n in range(len(job["prompts"]))]
            usage = [f"{scratch}/{k}-{t}.usage.json" for t in range(len(job["templates"]))]
            begun = time.perf_counter()
            generation_job(entry={**job["entry"], "device": device, "dtype": dtype}, model_path=model_dir,
                           templates=job["templates"], settings=job["settings"], languages=job["languages"],
                           prompts=[str(plan_dir / p) for p in job["prompts"]], generations=outputs, usage=usage,
                           cache_path=None, threads=threads, model=job["model"])
            print(f"{job['model']} {job['task']} ({', '.join(job['templates'])}): "
                  f"{time.perf_counter() - begun:.1f} s", file=sys.stderr, flush=True)
            for (template, language), path in zip(job_pairs(job["templates"], job["languages"]), outputs, strict=True):
                for record in read_jsonl(path):
                    row = {"model": job["model"], "task": job["task"], "language": language, "template": template,
                           "id": record["id"], "gold": record.get("answer")}
                    if record.get("loglikelihoods") is not None:
                        row["logprobs"] = record["loglikelihoods"]
                    else:
                        row["response"] = record["response"]
                    rows.append(row)
    write_jsonl(out, rows)
    print(f"{device} {dtype}: {len(rows)} requests in {time.perf_counter() - started:.1f} s -> {out}",
          file=sys.stderr)


def argmax(values: list[float]) -> int:
    return max(range(len(values)), key=values.__getitem__)


def compare(ours: list[dict], ref: list[dict], tolerance: float) -> tuple[dict, bool]:
    key = lambda r: (r["model"], r["task"], r["language"], r["template"], r["id"])  # noqa: E731
    if [key(r) for r in ours] != [key(r) for r in ref]:
        return {"requests_differ": True}, True
    groups: dict[str, dict] = {}
    for a, b in zip(ours, ref):
        g = groups.setdefault(f"{a['model']}/{a['task']}/{a['template']}", {"requests": 0})
        g["requests"] += 1
        if "logprobs" in a:
            diff = max(abs(x - y) for x, y in zip(a["logprobs"], b["logprobs"], strict=True))
            g["largest_difference"] = max(g.get("largest_difference", 0.0), diff)
            g["argmax_differs"] = g.get("argmax_differs", 0) + (argmax(a["logprobs"]) != argmax(b["logprobs"]))
            g["correct"] = g.get("correct", 0) + (argmax(a["logprobs"]) == a["gold"])
            g["correct_reference"] = g.get("correct_reference", 0) + (argmax(b["logprobs"]) == b["gold"])
        else:
            g["responses_differ"] = g.get("responses_differ", 0) + (a["response"] != b["response"])
    scored = [g for g in groups.values() if "largest_difference" in g]
    total = {"requests": len(ours),
             "loglikelihood_requests": sum(g["requests"] for g in scored),
             "largest_difference": max((g["largest_difference"] for g in scored), default=None),
             "argmax_differs": sum(g.get("argmax_differs", 0) for g in groups.values()),
             "generated_requests": sum(g["requests"] for g in groups.values() if "responses_differ" in g),
             "responses_differ": sum(g.get("responses_differ", 0) for g in groups.values())}
    failed = bool(total["argmax_differs"] or total["responses_differ"]
                  or (total["largest_difference"] or 0) > tolerance)
    return {"groups": groups, "total": total}, failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("plan")
    p.add_argument("--out", required=True)
    p.add_argument("--params", default="params.yaml")
    c = sub.add_parser("convert")
    c.add_argument("gguf")
    c.add_argument("model_dir")
    r = sub.add_parser("run")
    r.add_argument("--plan", required=True)
    r.add_argument("--model", required=True)
    r.add_argument("--device", default="cuda")
    r.add_argument("--dtype", default="float32")
    r.add_argument("--threads", type=int, default=None)
    r.add_argument("--out", required=True)
    k = sub.add_parser("compare")
    k.add_argument("ours")
    k.add_argument("reference")
    k.add_argument("--tolerance", type=float, default=1e-4)
    args = parser.parse_args(argv)
    if args.command == "plan":
        plan(Path(args.out), args.params)
    elif args.command == "convert":
        convert(args.gguf, args.model_dir)
    elif args.command == "run":
        run(Path(args.plan), args.model, args.device, args.dtype, args.out, args.threads)
    else:
        read = lambda path: [json.loads(line) for line in open(path, encoding="utf-8")]  # noqa: E731
        report, failed = compare(read(args.ours), read(args.reference), args.tolerance)
        print(json.dumps(report, ensure_ascii=False))
        return 1 if failed else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
