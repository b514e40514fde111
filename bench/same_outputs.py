"""Two finished runs of the workflow, compared file by file: the check that a restructuring changed nothing.

    python bench/same_outputs.py every-task-grid COPY      # writes COPY/params.yaml: every task, variants, lm-eval
    python bench/same_outputs.py compare BEFORE AFTER      # exit 1 on any difference

Run the same grid in two copies of the repository (the code before and after a change), then compare: every file
under results/ (prompts, generations, raw records, scores with their provenance, outcome tables, usage, tables,
leaderboard, metrics, report), less the logs, the response caches, the built models and the figures' pixels. Each
file is read by its kind (JSON, JSON Lines, Parquet, text) and compared whole, after removing what differs between
any two runs: wall-clock fields (``seconds``, ``started``, ...), the code's commit, the copy's own path, and the
report's timestamps. The first difference of each file is printed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

# fields that differ between any two runs of the same code and grid
VOLATILE = {"commit", "seconds", "elapsed", "started", "finished", "created", "timestamp", "wall_seconds"}
NOT_COMPARED = ("results/logs", "results/cache", "results/models", "results/spend")
LMEVAL = {"afrimmlu": ("afrimmlu_direct_yor_prompt_1", "afrimmlu", "yor_Latn"),
          "afrimgsm": ("afrimgsm_yor_prompt_1", "afrimgsm", "yor_Latn"),
          "mmlu_prox": ("mmlu_prox_lite_ja_math", "mmlu_prox_lite", "jpn_Jpan")}


def every_task_grid(copy: Path) -> None:
    """The tests' grid (tests/grids/tiny.yaml) with every task of the bundled samples, a variant set answered with
    shared prefixes, and lm-eval tasks of both kinds (log-likelihood and generate_until)."""
    params = yaml.safe_load((copy / "tests/grids/tiny.yaml").read_text(encoding="utf-8"))
    tasks = params["tasks"]
    tasks["belebele"].update(templates=["paper", "instruct", "blog", "formatspread"],
                             variants={"formatspread": {"sample": 4}})
    flores = {"kind": "local", "path": "data/samples/flores_plus", "split": "dev"}
    tasks.update({
        "marc_ja": {"languages": ["jpn_Jpan"], "templates": ["0.2", "0.6"], "limit": 4,
                    "source": {"kind": "local", "path": "data/samples/marc_ja"}},
        "translation_from": {"languages": ["jpn_Jpan", "hin_Deva"], "partner": "eng_Latn", "templates": ["en_zeroshot"],
                             "source": flores, "limit": 3},
        **{task: {"languages": ["eng_Latn", language], "templates": ["en_zeroshot"], "limit": 3,
                  "source": {"kind": "local", "path": f"data/samples/{task}"}}
           for task, language in (("sib200", "jpn_Jpan"), ("arc", "swh_Latn"), ("truthfulqa", "swh_Latn"))}})
    for task, (name, folder, language) in LMEVAL.items():
        tasks[task] = {"lmeval": name, "languages": [language], "templates": [name],
                       "source": {"kind": "local", "path": f"data/samples/lmeval/{folder}"}}
    (copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")


def _plain(value: Any, root: Path) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v, root) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_plain(v, root) for v in value]
    return value.replace(str(root), "<COPY>") if isinstance(value, str) else value


def _read(path: Path, root: Path) -> Any:
    if path.suffix == ".json":
        return _plain(json.loads(path.read_text(encoding="utf-8")), root)
    if path.suffix == ".jsonl":
        return [_plain(json.loads(line), root) for line in path.read_text(encoding="utf-8").splitlines() if line]
    if path.suffix == ".parquet":
        return pd.read_parquet(path).to_json(orient="records")
    text = path.read_text(encoding="utf-8", errors="replace").replace(str(root), "<COPY>")
    if path.suffix == ".html":  # the report's time stamps and its figures' pixels
        text = re.sub(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d)?(\.\d+)?(Z|[+-]\d\d:\d\d)?", "<TIME>", text)
        text = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "<PNG>", text)
    return text


def first_difference(a: Any, b: Any, where: str = "") -> str | None:
    if type(a) is not type(b):
        return f"{where}: {str(a)[:200]!r} != {str(b)[:200]!r}"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            found = (f"{where}.{key}: in one file only" if key not in a or key not in b
                     else first_difference(a[key], b[key], f"{where}.{key}"))
            if found:
                return found
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{where}: {len(a)} entries != {len(b)}"
        return next(filter(None, (first_difference(x, y, f"{where}[{n}]") for n, (x, y) in enumerate(zip(a, b)))),
                    None)
    return None if a == b else f"{where}: {str(a)[:300]!r} != {str(b)[:300]!r}"


def _outputs(root: Path) -> dict[str, Path]:
    return {str(p.relative_to(root)): p for p in (root / "results").rglob("*")
            if p.is_file() and p.suffix != ".png" and not str(p.relative_to(root)).startswith(NOT_COMPARED)}


def compare(before: Path, after: Path) -> int:
    a, b = _outputs(before), _outputs(after)
    problems = [f"only in {'before' if name in a else 'after'}: {name}" for name in sorted(set(a) ^ set(b))]
    for name in sorted(set(a) & set(b)):
        found = first_difference(_read(a[name], before), _read(b[name], after))
        if found:
            problems.append(f"{name}{found}")
    print("\n".join(problems))
    print(f"{len(set(a) & set(b)) - len(problems)} of {len(set(a) | set(b))} files the same")
    return 1 if problems else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("every-task-grid").add_argument("copy", type=Path)
    both = commands.add_parser("compare")
    both.add_argument("before", type=Path)
    both.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "every-task-grid":
        every_task_grid(args.copy)
        return 0
    return compare(args.before.resolve(), args.after.resolve())


if __name__ == "__main__":
    sys.exit(main())
