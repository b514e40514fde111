"""Render the prompts of one (task, language, template): the requests a model answers.

A request holds everything needed to score it later without the model: the
item id, the exact prompt, the continuations scored (log-likelihood) or the
generation settings' owner template (generate), the choices and the gold answer.
"""

from __future__ import annotations

from typing import Any, Sequence

from .errors import DataError
from .fewshot import first_exemplars, random_exemplars
from .parsers import LETTERS
from .templates import Template


def prompt_variables(item: dict[str, Any]) -> dict[str, Any]:
    """What a template may use for an item: its fields except the gold answer, plus the choice letters."""
    variables = {key: value for key, value in item.items() if key != "answer"}
    variables["letters"] = list(LETTERS[: len(item.get("choices", []))])
    return variables


def target_variables(item: dict[str, Any]) -> dict[str, Any]:
    """Prompt variables plus the gold answer, for an exemplar's target."""
    variables = prompt_variables(item)
    answer = item["answer"]
    variables["answer"] = answer
    if "choices" in item:
        variables["answer_letter"] = variables["letters"][answer]
        variables["answer_text"] = item["choices"][answer]
    return variables


def render_exemplar(template: Template, item: dict[str, Any]) -> str:
    return template.render_prompt(prompt_variables(item)) + template.render_target(target_variables(item))


def continuations(template: Template, item: dict[str, Any]) -> list[str]:
    base = prompt_variables(item)
    return [
        template.render_continuation({**base, "choice": choice, "letter": base["letters"][index], "index": index})
        for index, choice in enumerate(item["choices"])
    ]


def build_requests(
    template: Template,
    items: Sequence[dict[str, Any]],
    pool: Sequence[dict[str, Any]],
    seed: int,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """Requests for the items of one language.

    ``pool`` holds the rows exemplars are drawn from (the same language's items,
    or another language's where the template says so). With the ``first``
    sampler the exemplars are the pool's first rows and are removed from the
    evaluated items, as in seed 001; ``limit`` then applies to what is left.
    """
    fewshot = template.fewshot
    fixed: list[dict[str, Any]] | None = None
    if fewshot.n and fewshot.sampler == "first":
        fixed = first_exemplars(fewshot, pool)
        used = {row["id"] for row in fixed}
        items = [item for item in items if item["id"] not in used]
    if limit is not None:
        items = items[:limit]
    if not items:
        raise DataError(f"{template.path}: no items left to evaluate for this language after removing exemplars")

    requests = []
    for item in items:
        if not fewshot.n:
            exemplars = []
        elif fixed is not None:
            exemplars = fixed
        else:
            exemplars = random_exemplars(fewshot, pool, item, seed)
        turns = [{"user": template.render_prompt(prompt_variables(ex)),
                  "assistant": template.render_target(target_variables(ex))} for ex in exemplars]
        query = template.render_prompt(prompt_variables(item))
        prompt = fewshot.separator.join([*(t["user"] + t["assistant"] for t in turns), query])
        request = {
            "id": item["id"],
            "language": item["language"],
            "prompt": prompt,
            "exemplar_ids": [ex["id"] for ex in exemplars],
            # the same prompt in parts, for chat models that take exemplars as earlier turns (backends/chat.py)
            "exemplar_turns": turns,
            "query": query,
            "choices": item.get("choices"),
            "answer": item["answer"],
        }
        if template.mode == "loglikelihood":
            request["continuations"] = continuations(template, item)
        requests.append(request)
    return requests
