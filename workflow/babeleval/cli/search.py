"""Budgeted search for a base template's best and worst variant (FormatSpread-style Thompson sampling).

Evaluating every variant on every item costs variants x items model calls. Instead, with a budget of B
evaluated items, each round draws an accuracy for every candidate variant from its Beta posterior
(successes + 1, failures + 1) and spends one batch of items on the variant that looks best (for the upper
end) or worst (for the lower end), alternating. Every variant walks the same seeded item order, so the
variants' estimates rest on the same items as far as each got. The result is the **interval** the search
found (the worst and best variants' accuracies, each with a Beta credible interval), next to every
variant tried and how many items it received.

    python -m babeleval search --params examples/formatspread.yaml --model tiny-llama --task belebele \\
        --language hin_Deva --template formatspread --candidates 40 --budget 600 --batch 12

The CLI renders prompts as the workflow does, answers them with the model's backend through the same
response cache (``results/cache/<model>.sqlite``: prompts the workflow already ran are free, and prompts
the search ran are free for the workflow), scores them with the task's family scorer, and writes
``results/search/<model>/<task>/<language>/<base>.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
from scipy.stats import beta

from ..core import paths
from ..core.errors import BabelevalError
from ..core.jsonl import read_jsonl, write_json, write_jsonl
from ..generate.backends import load_backend
from ..generate.job import JobFiles, JobModel, run as generate_run
from ..grid import rules as grid_rules
from ..grid.params import load_params
from ..grid.resolve import decoding_for, prompt_record
from ..prompts.render import requests_for
from ..prompts.templates import load_template, template_fields
from ..prompts.variants import declared_axes, sample_settings, variant_name
from ..score import scorers
from ..score.metrics import ACCURACY, get_metric
from ..tasks import get_task
from .show import task_rows

CREDIBLE = 0.95


@dataclass
class Arm:
    name: str
    successes: int = 0
    failures: int = 0
    evaluated: int = 0  # items of the shared order this variant has been scored on

    def credible(self, level: float = CREDIBLE) -> tuple[float, float]:
        a, b = self.successes + 1, self.failures + 1
        return float(beta.ppf((1 - level) / 2, a, b)), float(beta.ppf(1 - (1 - level) / 2, a, b))

    @property
    def accuracy(self) -> float:
        return self.successes / self.evaluated if self.evaluated else float("nan")


@dataclass
class SearchResult:
    arms: list[Arm]
    budget: int
    spent: int
    rounds: list[tuple[str, str, int]] = field(default_factory=list)  # (goal, variant, items)

    def _pick(self, best: bool) -> Arm:
        tried = [arm for arm in self.arms if arm.evaluated]
        mean = lambda arm: (arm.successes + 1) / (arm.evaluated + 2)  # posterior mean: few items pull to 0.5
        return max(tried, key=mean) if best else min(tried, key=mean)

    def summary(self) -> dict:
        best, worst = self._pick(True), self._pick(False)
        describe = lambda arm: {"variant": arm.name, "accuracy": arm.accuracy, "items": arm.evaluated,
                                "credible_interval": list(arm.credible())}
        return {
            "interval": [worst.accuracy, best.accuracy],
            # the range the format may span given how few items the extremes got: worst's low, best's high end
            "interval_credible": [worst.credible()[0], best.credible()[1]],
            "spread": best.accuracy - worst.accuracy,
            "best": describe(best), "worst": describe(worst),
            "budget": self.budget, "spent": self.spent, "candidates": len(self.arms),
            "tried": [describe(arm) for arm in sorted(self.arms, key=lambda a: -a.evaluated) if arm.evaluated],
            "credible_level": CREDIBLE,
        }


def thompson_search(variants: Sequence[str], n_items: int, evaluate: Callable[[str, Sequence[int]], Sequence[bool]],
                    budget: int, batch: int, seed: int) -> SearchResult:
    """Spend at most ``budget`` item evaluations finding the best and the worst of ``variants``.

    ``evaluate(variant, item_indices)`` scores one variant on those items (True = correct). Items are taken
    in one seeded order shared by all variants; a variant that has seen every item is not drawn again.
    """
    if batch < 1 or budget < 1:
        raise BabelevalError("search: budget and batch must be at least 1")
    order = list(range(n_items))
    random.Random(seed).shuffle(order)
    rng = np.random.default_rng(seed)
    arms = [Arm(name) for name in variants]
    result = SearchResult(arms, budget, 0)
    goals = ("best", "worst")
    round_number = 0
    while result.spent < budget:
        open_arms = [arm for arm in arms if arm.evaluated < n_items]
        if not open_arms:
            break
        goal = goals[round_number % 2]
        draws = rng.beta([a.successes + 1 for a in open_arms], [a.failures + 1 for a in open_arms])
        arm = open_arms[int(np.argmax(draws) if goal == "best" else np.argmin(draws))]
        take = min(batch, n_items - arm.evaluated, budget - result.spent)
        indices = order[arm.evaluated: arm.evaluated + take]
        outcomes = list(evaluate(arm.name, indices))
        arm.successes += sum(map(bool, outcomes))
        arm.failures += len(outcomes) - sum(map(bool, outcomes))
        arm.evaluated += take
        result.spent += take
        result.rounds.append((goal, arm.name, take))
        round_number += 1
    return result


# -- the CLI: the workflow's rendering, cache, backend and scorer -------------------------------------


def _seed(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).digest()[:8], "big")


def _candidate_requests(grid, task_name: str, language: str, base: str, candidates: int | None):
    """The sampled variants of a base template: their names, templates and the requests of each."""
    entry = grid.tasks[task_name]
    fields, path = template_fields(task_name, base)
    axes = declared_axes(fields, path)
    if not axes:
        raise BabelevalError(f"{path}: declares no 'variations' to search over")
    names = [variant_name(base, point) for point in sample_settings(axes, candidates, grid.seed, task_name, base)]
    templates = {name: load_template(task_name, name) for name in names}
    rows = task_rows(grid, task_name)
    # each candidate resolved by the workflow's own rules (babeleval.grid.resolve), as if it were in the grid
    requests = {name: requests_for(template, prompt_record(entry, name, language, grid.seed, template=template), rows)
                for name, template in templates.items()}
    return names, templates, requests


def run_search(params: str, model: str, task_name: str, language: str, base: str, candidates: int | None,
               budget: int, batch: int, workdir: str | Path) -> dict:
    grid = load_params(params)
    if model not in grid.models or task_name not in grid.tasks:
        raise BabelevalError(f"{params}: model '{model}' or task '{task_name}' is not in the grid")
    task = get_task(task_name)
    names, templates, requests = _candidate_requests(grid, task_name, language, base, candidates)
    n_items = min(len(r) for r in requests.values())
    backend_holder: dict = {}

    def backend_loader(config, model_path):  # one model load for the whole search
        if "backend" not in backend_holder:
            backend_holder["backend"] = load_backend(config, model_path)
        return backend_holder["backend"]

    cache = paths.CACHE.format(model=model) if grid.cache_enabled else None
    counts = {"requests": 0, "cache_hits": 0, "computed": 0}
    tmp = Path(tempfile.mkdtemp(prefix="search-", dir=workdir))

    def evaluate(name: str, indices: Sequence[int]) -> list[bool]:
        template = templates[name]
        chosen = [requests[name][i] for i in indices]
        write_jsonl(tmp / "requests.jsonl", chosen)
        done = generate_run(JobModel(grid.models[model], grid_rules.model_path(grid, model), loader=backend_loader),
                            template.mode, decoding_for(template, grid.models[model], grid.decoding, grid.seed),
                            JobFiles({language: str(tmp / "requests.jsonl")}, {language: str(tmp / "answers.jsonl")},
                                     cache))
        for key in counts:
            counts[key] += done[key]
        return [scorers.score_record(task.FAMILY, record, template)["correct"] is True
                for record in read_jsonl(tmp / "answers.jsonl")]

    try:
        result = thompson_search(names, n_items, evaluate, budget, batch,
                                 _seed(grid.seed, model, task_name, language, base))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"model": model, "task": task_name, "language": language, "base": base, "items": n_items,
            **result.summary(), "calls": counts}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m babeleval search", description=__doc__.split("\n\n")[0])
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--model", required=True)
    parser.add_argument("--task", required=True)
    parser.add_argument("--language", required=True)
    parser.add_argument("--template", "--family", dest="base", required=True,
                        help="the base template whose variants are searched (--family: its older name)")
    parser.add_argument("--candidates", type=int, default=None, help="variants drawn with the seed (default: all)")
    parser.add_argument("--budget", type=int, required=True, help="item evaluations to spend")
    parser.add_argument("--batch", type=int, default=10, help="items per round")
    parser.add_argument("--out", default=None, help=f"default {paths.SEARCH}")
    args = parser.parse_args(argv)
    out = Path(args.out or paths.SEARCH.format(model=args.model, task=args.task, language=args.language, base=args.base))
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        summary = run_search(args.params, args.model, args.task, args.language, args.base, args.candidates,
                             args.budget, args.batch, out.parent)
    except BabelevalError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    write_json(out, summary)
    low, high = summary["interval"]
    shown = get_metric(ACCURACY).shown  # the tables' scale: accuracy in percent
    print(f"{args.base} on {args.task}/{args.language}: accuracy from {shown(low):.1f}% ({summary['worst']['variant']}) "
          f"to {shown(high):.1f}% ({summary['best']['variant']}) after {summary['spent']} of {summary['budget']} items "
          f"over {len(summary['tried'])} of {summary['candidates']} variants; model calls {summary['calls']}")
    print(f"wrote {out}")
    return 0

