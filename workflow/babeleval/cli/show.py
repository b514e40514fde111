"""Show the exact prompts a model will see for a (task, language, template).

    python -m babeleval show --task belebele --language jpn_Jpan --template paper -n 2
    python -m babeleval show --task belebele --language jpn_Jpan --template paper --record --model tiny-llama

Reads params.yaml (for the data source, seed and item limit) and the template
file as they are now, so a template author sees the effect of an edit at once,
without running the workflow; the template need not be in the grid yet (any file
under ``prompts/<task>/``, or a variant of one), nor the task (its entry left commented out in params.yaml, or its
bundled sample under ``data/samples/<task>``). ``--record`` prints the combination's resolved record
instead (``babeleval.grid.records``: the one its scores file's provenance holds under ``spec``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import yaml

from ..grid.params import read_params_file, validate
from ..core.choices import LETTERS
from ..core.errors import BabelevalError, ConfigError
from ..grid.resolve import prompt_record
from ..prompts.render import requests_for
from ..prompts.templates import load_template
from ..tasks import TASKS, get_task


def commented_entry(text: str, task_name: str) -> dict | None:
    """The task's entry left commented out in a params file (``  # sib200:`` then ``  #   key: value`` lines: the
    tasks params.yaml keeps ready to add), or None where it has none."""
    lines = text.splitlines()
    start = next((k for k, line in enumerate(lines) if re.match(rf"^  # {re.escape(task_name)}:\s*(#.*)?$", line)),
                 None)
    if start is None:
        return None
    body = []
    for line in lines[start + 1:]:
        if not line.startswith("  #   "):
            break
        body.append(line[len("  # "):])
    entry = yaml.safe_load("\n".join(body)) if body else None
    return entry if isinstance(entry, dict) else None


def entry_outside_the_grid(params: str, task_name: str, language: str, template_name: str) -> dict:
    """A task entry for a task not in the grid: its commented-out entry in the params file, else its bundled
    sample (``data/samples/<task>``); either way with only the language and template asked for."""
    if task_name not in TASKS:
        raise ConfigError(TASKS.unknown(task_name))
    entry = commented_entry(Path(params).read_text(encoding="utf-8"), task_name)
    if entry is None:
        sample = Path("data/samples") / task_name
        if not sample.is_dir():
            raise BabelevalError(f"{params}: task '{task_name}' is not in the grid and has no entry left commented "
                                 f"out there and no bundled sample ({sample}): add it under tasks to preview it")
        entry = {"source": {"kind": "local", "path": str(sample)}}
    return {**entry, "languages": [language], "templates": [template_name]}


def resolved_for(params: str, task_name: str, language: str, template_name: str):
    """The grid, the template and its prompt record (``babeleval.prompts.record``): the grid's own where the
    combination is in the grid, else resolved by the same rules (another language, a variant not yet in it, a task
    not yet in it: ``entry_outside_the_grid``)."""
    values = read_params_file(params)
    if task_name not in (values.get("tasks") or {}):
        values["tasks"][task_name] = entry_outside_the_grid(params, task_name, language, template_name)
    grid = validate(values, source_file=params)
    entry = grid.tasks[task_name]
    # any template file under prompts/<task>/ (or a variant of one) can be previewed before it enters the grid;
    # a name with no file says which files there are
    template = entry.templates.get(template_name) or load_template(task_name, template_name)
    record = grid.prompts.get((task_name, language, template_name))
    return grid, template, record or prompt_record(entry, template_name, language, grid.seed, template=template)


def render_for(params: str, task_name: str, language: str, template_name: str) -> list[dict]:
    grid, template, record = resolved_for(params, task_name, language, template_name)
    return requests_for(template, record, task_rows(grid, task_name))


def task_rows(grid, task_name: str):
    """``rows(language, part)`` for ``requests_for``, read from the task's source, each part once."""
    entry, task = grid.tasks[task_name], get_task(task_name)
    loaded: dict[tuple[str, str], list[dict]] = {}

    def rows(language: str, part: str) -> list[dict]:
        if (language, part) not in loaded:
            loaded[language, part] = task.load(entry.source, language, part=part, options=entry.options)
        return loaded[language, part]
    return rows


def record_for(params: str, task_name: str, language: str, template_name: str, model: str | None) -> dict:
    """The combination's record with a model (as its scores file holds it), else the prompt record."""
    grid, _, record = resolved_for(params, task_name, language, template_name)
    if model is None:
        return record.as_json()
    if (model, task_name, language, template_name) not in grid.records:
        raise BabelevalError(f"{params}: ({model}, {task_name}, {language}, {template_name}) is not a combination "
                             f"of the grid (models: {', '.join(grid.models)})")
    return grid.record(model, task_name, language, template_name).as_json()


def format_request(request: dict, number: int) -> str:
    gold = request.get("enumerators", LETTERS)[request["answer"]] if request.get("choices") else request["answer"]
    lines = [f"===== item {number}: {request['id']} (gold: {gold}) =====", request["prompt"]]
    if "continuations" in request:
        lines.append("----- continuations scored: " + ", ".join(repr(c) for c in request["continuations"]))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m babeleval show", description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", required=True)
    parser.add_argument("--language", required=True)
    parser.add_argument("--template", required=True)
    parser.add_argument("-n", type=int, default=1, help="how many items (default 1)")
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--record", "--spec", dest="record", action="store_true",
                        help="print the resolved record instead of prompts (--spec: its older name)")
    parser.add_argument("--model", help="with --record: the model whose combination record to print")
    args = parser.parse_args(argv)
    try:
        if args.record:
            print(json.dumps(record_for(args.params, args.task, args.language, args.template, args.model),
                             indent=2, ensure_ascii=False))
            return 0
        requests = render_for(args.params, args.task, args.language, args.template)
    except BabelevalError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for number, request in enumerate(requests[: args.n], start=1):
        print(format_request(request, number), end="\n\n")
    return 0

