"""Analysis at a study's size: each analysis step's wall time and peak memory beside the memory its job declares.

    python bench/analysis_scale.py                                  # 5 models x 122 and x 12 languages
    python bench/analysis_scale.py --languages 12 --raw --code /work/old-checkout --steps leaderboard significance

Lays out a Belebele study of ``--models`` x ``--languages`` (each size given) x 4 templates x ``--items`` items
as scoring leaves it (the same numbers in every run: a seeded model of who gets what right): per combination
the outcome table (``results/outcomes``), the scores file and, with ``--raw``, the raw file with its prompt;
the prepared items and an empty ``results/plan/omitted.tsv``. The records are scored by the real scorer
(``babeleval.score.job.score_combination``) with the real templates: ``paper`` (log-likelihood), ``instruct``
and ``blog`` (generated, parsed), and ``instruct`` once more as a fourth template. Languages are made-up codes
(``bench/pipeline_overhead.languages``), English first.

Then runs each analysis step as its own process, in the order the workflow runs them: the workflow's own
script (``workflow/scripts/<step>.py``) with the inputs, outputs and params its rule would hand it, and
prints the step's wall time and peak resident memory (``wait4``'s ``ru_maxrss``) beside the memory its job
declares (``workflow/resources.yaml`` via ``babeleval.grid.resources``) and the machine's load average.

``--code DIR [DIR ...]`` runs each step with each checkout's scripts and package (its ``workflow/``) in turn, on the
same files: an older checkout reads the raw files (``params.raw``: build with ``--raw``) where this one reads the
outcome tables (``params.outcomes``); both are handed. The last checkout runs every step, the others the steps
that read per-item outcomes (``PER_ITEM_STEPS``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "workflow"))
sys.path.insert(0, str(ROOT / "bench"))

from pipeline_overhead import languages  # noqa: E402

TASK = "belebele"
# template label -> the template it is scored with (the fourth: a copy, as a study's fourth published template)
TEMPLATES = {"paper": "paper", "instruct": "instruct", "blog": "blog", "instruct2": "instruct"}
# the steps that read per-item outcomes (the others read the leaderboard's and their CSVs): what an older checkout
# given with --code runs beside this one
PER_ITEM_STEPS = ["leaderboard", "significance", "parse_failures", "item_difficulty", "variation_analysis"]
STEPS = ["leaderboard", "significance", "parse_failures", "item_difficulty", "variation_analysis",
         "template_sensitivity", "summary_tables", "plots", "report"]
LETTERS = "ABCD"


# -- the study's files -------------------------------------------------------------------------------------------


def generations(model: int, language: int, template: str, n_items: int, passages: list[dict]) -> list[dict]:
    """A combination's generation records: who gets an item right is seeded by (model, language, template)."""
    import numpy as np

    rng = np.random.default_rng([model, language, sum(map(ord, template))])
    skill = 0.35 + 0.1 * model - 0.002 * language
    out = []
    for k in range(n_items):
        item = passages[k % len(passages)]
        answer = int(rng.integers(4))
        right = rng.random() < skill + 0.3 * (k % 7 == 0)
        chosen = answer if right else (answer + 1 + int(rng.integers(3))) % 4
        record = {"id": f"{k:04d}", "language": f"lang{language}", "answer": answer, "choices": item["choices"],
                  "prompt": item["prompt"] * (3 if template == "blog" else 1), "prompt_tokens": 420,
                  "settings": {"temperature": 0.0, "max_new_tokens": 24}, "model_fingerprint": f"model-{model}"}
        if TEMPLATES[template] == "paper":
            record["loglikelihoods"] = [-1.0 if c == chosen else -2.0 - c for c in range(4)]
            record["continuations"] = [f" {c}" for c in item["choices"]]
        else:
            roll = rng.random()
            record["response"] = ("I am not sure which one." if roll < 0.05 else
                                  f"{LETTERS[chosen]} or {LETTERS[answer]}" if roll < 0.08 else
                                  f"{LETTERS[chosen]}. {item['choices'][chosen]}")
        out.append(record)
    return out


def sample_passages() -> list[dict]:
    rows = [json.loads(line) for line in (ROOT / "data/samples/belebele/eng_Latn.jsonl").read_text().splitlines()
            if line.strip()]
    return [{"prompt": f"P: {r['flores_passage']}\nQ: {r['question']}\n" +
             "".join(f"{LETTERS[i]}: {r[f'mc_answer{i + 1}']}\n" for i in range(4)) + "Answer:",
             "choices": [r[f"mc_answer{i + 1}"] for i in range(4)]} for r in rows]


def write_combination(root: Path, model: int, language: int, code: str, template: str, n_items: int,
                      raw: bool) -> None:
    from babeleval.core import paths
    from babeleval.core.jsonl import write_json, write_jsonl
    from babeleval.prompts.templates import load_template
    from babeleval.score import outcomes
    from babeleval.score.job import score_combination

    labels = {"model": f"m{model}", "task": TASK, "language": code, "template": template}
    loaded = load_template(TASK, TEMPLATES[template])
    scored, metrics, _ = score_combination(generations(model, language, template, n_items, sample_passages()),
                                           loaded, "multiple_choice", {}, loaded.metrics)
    outcomes.write(root / paths.OUTCOMES.format(**labels), scored)
    if raw:
        write_jsonl(root / paths.RAW.format(**labels), scored)
    write_json(root / paths.SCORES.format(**labels), {
        **labels, "n": len(scored), "metrics": metrics, "parse_failures": sum(not r["parsed"] for r in scored),
        "truncated_prompts": 0, "questions_cut": 0, "mode": load_template(TASK, TEMPLATES[template]).mode})


def write_study(root: Path, n_models: int, n_languages: int, n_items: int, raw: bool) -> list[tuple]:
    """Every combination's files under ``root`` (two processes); the combinations, in the grid's order."""
    from babeleval.core import paths

    codes = languages(n_languages)
    combos = [(m, k, code, t) for m in range(1, n_models + 1) for k, code in enumerate(codes) for t in TEMPLATES]
    with ProcessPoolExecutor(2) as pool:
        for future in [pool.submit(write_combination, root, m, k, code, t, n_items, raw) for m, k, code, t in combos]:
            future.result()
    passages = sample_passages()
    for code in codes:
        items = [{"id": f"{k:04d}", "question": passages[k % len(passages)]["prompt"].split("\n")[1],
                  "choices": passages[k % len(passages)]["choices"], "answer": 0} for k in range(n_items)]
        prepared = root / paths.PREPARED.format(task=TASK, language=code)
        prepared.parent.mkdir(parents=True, exist_ok=True)
        prepared.write_text("".join(json.dumps(r) + "\n" for r in items), encoding="utf-8")
    (root / paths.PLAN_OMITTED).parent.mkdir(parents=True, exist_ok=True)
    (root / paths.PLAN_OMITTED).write_text("model\ttask\tlanguage\ttemplate\treason\n", encoding="utf-8")
    return [(f"m{m}", TASK, code, t) for m, _, code, t in combos]


# -- each step as its rule runs it ------------------------------------------------------------------------------


def step_io(root: Path, combos: list[tuple]) -> dict[str, dict]:
    """Each step's input, output and params, as its rule (workflow/rules/analysis.smk and friends) hands them."""
    from babeleval.analysis.settings import DEFAULT_SETTINGS
    from babeleval.core import paths

    files = {name: [str(root / p) for p in paths.combination_files(pattern, combos)]
             for name, pattern in (("raw", paths.RAW), ("scores", paths.SCORES), ("outcomes", paths.OUTCOMES))}
    table = {name: str(root / paths.ANALYSIS.format(name=name)) for name in (
        "template_sensitivity", "rank_stability", "significance_templates", "significance_models", "parse_failures",
        "parse_failure_reasons", "reasoning", "extractor_agreement", "item_difficulty", "difficulty_buckets",
        "difficulty_patterns", "crosslingual_gaps", "crosslingual_items")}
    board = str(root / paths.LEADERBOARD_CSV)
    figures = [str(root / paths.PLOT.format(task=TASK, name=n)) for n in ("heatmap", "template_spread",
                                                                          "parse_failures")]
    variation = {n: str(root / paths.VARIATION_TABLE.format(name=n))
                 for n in ("spread", "axes", "decomposition", "ranks", "sensitivity")}
    settings = {k: v for k, v in vars(DEFAULT_SETTINGS).items()}
    prepared = sorted({str(root / paths.PREPARED.format(task=TASK, language=c[2])) for c in combos})
    return {
        "leaderboard": dict(input={"scores": files["scores"], "omitted": str(root / paths.PLAN_OMITTED)},
                            output={"csv": board, "md": str(root / paths.LEADERBOARD_MD),
                                    "metrics": str(root / paths.METRICS_JSON),
                                    "headline": str(root / paths.HEADLINE_JSON)},
                            params={"raw": files["raw"], "outcomes": files["outcomes"], "settings": settings}),
        "significance": dict(input={"leaderboard": board},
                             output={"templates": table["significance_templates"],
                                     "models": table["significance_models"]},
                             params={"raw": files["raw"], "outcomes": files["outcomes"], "scores": files["scores"],
                                     "settings": settings}),
        "parse_failures": dict(input={"leaderboard": board},
                               output={"rates": table["parse_failures"], "reasons": table["parse_failure_reasons"],
                                       "reasoning": table["reasoning"], "extractor": table["extractor_agreement"]},
                               params={"raw": files["raw"], "outcomes": files["outcomes"]}),
        "item_difficulty": dict(input={"leaderboard": board, "prepared": prepared},
                                output={"per_item": table["item_difficulty"], "buckets": table["difficulty_buckets"],
                                        "patterns": table["difficulty_patterns"], "gaps": table["crosslingual_gaps"],
                                        "gap_items": table["crosslingual_items"]},
                                params={"raw": files["raw"], "outcomes": files["outcomes"],
                                        "pivot": settings["pivot_language"]}),
        "variation_analysis": dict(input={"leaderboard": board},
                                   output={**variation, "figure": str(root / paths.VARIATION_FIGURE),
                                           "fragment": str(root / paths.VARIATION_SECTION)},
                                   params={"raw": files["raw"], "outcomes": files["outcomes"], "settings": settings}),
        "template_sensitivity": dict(input={"leaderboard": board},
                                     output={"sensitivity": table["template_sensitivity"],
                                             "ranks": table["rank_stability"]}, params={}),
        "summary_tables": dict(input={"leaderboard": board},
                               output={"by_template": str(root / paths.BY_TEMPLATE),
                                       "by_language": str(root / paths.BY_LANGUAGE)}, params={}),
        "plots": dict(input={"leaderboard": board, "rates": table["parse_failures"]}, output=figures,
                      params={"tasks": [TASK]}),
        "report": dict(input={**{k: table[v] for k, v in (
            ("sensitivity", "template_sensitivity"), ("rank_stability", "rank_stability"),
            ("significance_templates", "significance_templates"), ("significance_models", "significance_models"),
            ("parse_failures", "parse_failures"), ("parse_failure_reasons", "parse_failure_reasons"),
            ("reasoning", "reasoning"), ("extractor_agreement", "extractor_agreement"),
            ("difficulty_buckets", "difficulty_buckets"), ("difficulty_patterns", "difficulty_patterns"),
            ("crosslingual_gaps", "crosslingual_gaps"), ("crosslingual_items", "crosslingual_items"))},
            "leaderboard": board, "plots": figures, "variation": [], "omitted": str(root / paths.PLAN_OMITTED)},
            output=[str(root / paths.REPORT)], params={"settings": settings, "usage": [], "prices": {}}),
    }


def run_script(step: str, io_file: str, code: str) -> None:
    """In the step's own process: the workflow's script, with the ``snakemake`` object its rule would give it."""
    sys.path.insert(0, str(Path(code) / "workflow"))  # that checkout's package, before this one's
    from snakemake.iocontainers import Namedlist

    io = json.loads(Path(io_file).read_text())[step]

    def named(value):
        return Namedlist(fromdict=value) if isinstance(value, dict) else Namedlist(toclone=value)

    snakemake = argparse.Namespace(input=named(io["input"]), output=named(io["output"]), params=named(io["params"]),
                                   log=[str(Path(io_file).parent / f"{step}.log")], wildcards=Namedlist())
    for path in io["output"].values() if isinstance(io["output"], dict) else io["output"]:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    script = Path(code) / "workflow" / "scripts" / f"{step}.py"
    exec(compile(script.read_text(), str(script), "exec"), {"snakemake": snakemake, "__name__": "__main__"})


def measure(step: str, io_file: Path, code: Path) -> dict:
    """Wall time and peak resident memory of one step, run in a process of its own."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(code / "workflow"), str(ROOT / "workflow")])}
    load = os.getloadavg()[0]
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, __file__, "step", step, str(io_file), "--code", str(code)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    output = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{step} failed:\n{output.decode(errors='replace')[-3000:]}")
    return {"step": step, "wall_s": round(wall, 1), "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
            "peak_mb": round(usage.ru_maxrss / 1024), "load": round(load, 1)}


def declared_mem_mb() -> int:
    """What each analysis job asks for: the rules give every analysis step the ``cpu`` entry's memory."""
    from babeleval.grid import resources

    return resources.for_job(resources.load(ROOT / "workflow/resources.yaml"), "cpu")["mem_mb"]


def study(root: Path, n_models: int, n_languages: int, n_items: int, raw: bool, steps: list[str],
          codes: list[Path]) -> list[dict]:
    started = time.perf_counter()
    combos = write_study(root, n_models, n_languages, n_items, raw)
    print(f"# {n_models} models x {n_languages} languages x {len(TEMPLATES)} templates x {n_items} items: "
          f"{len(combos)} combinations laid out in {time.perf_counter() - started:.0f} s; outcome tables "
          f"{sum(f.stat().st_size for f in (root / 'results/outcomes').rglob('*.parquet')) / 1e6:.0f} MB"
          + (f", raw files {sum(f.stat().st_size for f in (root / 'results/raw').rglob('*.jsonl')) / 1e6:.0f} MB"
             if raw else ""), flush=True)
    io_file = root / "step_io.json"
    io_file.write_text(json.dumps(step_io(root, combos)))
    rows = []
    for step in [s for s in STEPS if s in steps]:
        # side by side: the other checkouts' run of a step, then this one's
        for code in codes if step in PER_ITEM_STEPS else codes[-1:]:
            row = {"size": f"{n_models}x{n_languages}x{len(TEMPLATES)}x{n_items}", "code": str(code),
                   **measure(step, io_file, code), "declared_mb": declared_mem_mb()}
            print(json.dumps(row), flush=True)
            rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=int, default=5)
    parser.add_argument("--languages", type=int, nargs="+", default=[12, 122])
    parser.add_argument("--items", type=int, default=900)
    parser.add_argument("--raw", action="store_true", help="also write the raw files (for a checkout that reads them)")
    parser.add_argument("--code", type=Path, nargs="+", default=[ROOT],
                        help="the checkouts whose scripts and package run the steps, each in turn")
    parser.add_argument("--steps", nargs="+", default=STEPS, choices=STEPS)
    parser.add_argument("--root", type=Path, help="the folder to lay the study out in (a temporary directory, removed after)")
    parser.add_argument("--keep", action="store_true", help="keep each study, in <root>/<languages> (to profile a step)")
    args = parser.parse_args(argv)
    codes = [c.resolve() for c in args.code]
    for n_languages in args.languages:
        if args.keep:
            study((args.root or Path(".")) / str(n_languages), args.models, n_languages, args.items, args.raw,
                  args.steps, codes)
            continue
        with tempfile.TemporaryDirectory(dir=args.root) as tmp:
            study(Path(tmp), args.models, n_languages, args.items, args.raw, args.steps, codes)


if __name__ == "__main__":
    if sys.argv[1:2] == ["step"]:
        step_parser = argparse.ArgumentParser()
        step_parser.add_argument("step")
        step_parser.add_argument("io_file")
        step_parser.add_argument("--code", default=str(ROOT))
        step_args = step_parser.parse_args(sys.argv[2:])
        run_script(step_args.step, step_args.io_file, step_args.code)
    else:
        main()
