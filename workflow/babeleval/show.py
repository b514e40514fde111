"""Show the exact prompts a model will see for a (task, language, template).

    python -m babeleval.show --task belebele --language jpn_Jpan --template paper -n 2

Reads params.yaml (for the data source, seed and item limit) and the template
file as they are now, so a template author sees the effect of an edit at once,
without running the workflow.
"""

from __future__ import annotations

import argparse
import sys

from .config import load_params
from .errors import BabelevalError
from .parsers import LETTERS
from .render import build_requests
from .tasks import get_task
from .templates import load_template


def render_for(params: str, task_name: str, language: str, template_name: str) -> list[dict]:
    grid = load_params(params)
    if task_name not in grid.tasks:
        raise BabelevalError(f"{params}: task '{task_name}' is not in the grid (tasks: {', '.join(grid.tasks)})")
    spec = grid.tasks[task_name]
    if template_name in spec.templates:
        template = spec.templates[template_name]
    elif "~" in template_name:  # any variant of a template file can be previewed before it enters the grid
        template = load_template(task_name, template_name)
    else:
        raise BabelevalError(f"{params}: tasks.{task_name}.templates has no '{template_name}' "
                             f"(templates: {', '.join(spec.templates)})")
    task = get_task(task_name)
    items = task.load(spec.source, language, options=spec.options)
    pool: list[dict] = []
    if template.fewshot.n:
        pool_language = template.fewshot.language or language
        if task.FEWSHOT_PART:
            pool = task.load(spec.source, pool_language, part="fewshot", options=spec.options)
        else:
            pool = task.load(spec.source, pool_language, options=spec.options) if template.fewshot.language else items
    return build_requests(template, items, pool, seed=grid.seed, limit=spec.limit,
                          shuffle_seed=task.EVAL_SHUFFLE_SEED)


def format_request(request: dict, number: int) -> str:
    gold = request.get("enumerators", LETTERS)[request["answer"]] if request.get("choices") else request["answer"]
    lines = [f"===== item {number}: {request['id']} (gold: {gold}) =====", request["prompt"]]
    if "continuations" in request:
        lines.append("----- continuations scored: " + ", ".join(repr(c) for c in request["continuations"]))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m babeleval.show", description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", required=True)
    parser.add_argument("--language", required=True)
    parser.add_argument("--template", required=True)
    parser.add_argument("-n", type=int, default=1, help="how many items (default 1)")
    parser.add_argument("--params", default="params.yaml")
    args = parser.parse_args(argv)
    try:
        requests = render_for(args.params, args.task, args.language, args.template)
    except BabelevalError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for number, request in enumerate(requests[: args.n], start=1):
        print(format_request(request, number), end="\n\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
