"""Render the prompts of one (task, language, template): the requests a model answers.

A request holds everything needed to score it later without the model: the
item id, the exact prompt, the continuations scored (log-likelihood) or the
generation settings' owner template (generate), the choices and the gold answer;
and what its template's protocol decides beyond the text (``babeleval.prompts.protocols``):
the encoding where it is not the default, the gold answers that cap a generation's length.
"""

from __future__ import annotations

import random
from typing import Any, Callable, Mapping, Sequence

from ..core.errors import DataError, TemplateError
from .fewshot import check_pool, first_exemplars, random_exemplars, stratified_exemplars
from ..core.choices import LETTERS
from .answer_slot import slot_for
from ..tasks.base import EVAL
from .budget_design import StudyPlan
from .protocols import request_fields
from .record import PromptRecord
from .templates import FewShot, Template
from .variants import bind

# Fields of an item that hold its gold answer in some form: never shown for the item asked about.
GOLD_FIELDS = ("answer", "label")


def prompt_variables(item: dict[str, Any], template: Template | None = None) -> dict[str, Any]:
    """What a template may use for an item: its fields except the gold, plus the choices and their letters.

    ``choices`` are the template's words for the classes where it gives them
    (JNLI's 含意/矛盾/中立), else the item's own.
    """
    variables = {key: value for key, value in item.items() if key not in GOLD_FIELDS}
    if template is not None and template.choices is not None:
        variables["choices"] = list(template.choices)
    n_choices = len(variables.get("choices", []) or [])
    # the template's labels (A, B, C ... unless it declares its own): the parser reads and the score names these
    variables["letters"] = (template.choice_labels(n_choices, item.get("language")) if template is not None
                            else list(LETTERS[:n_choices]))
    if template is not None and template.variant is not None:  # a variant's enumerators, labels, instruction
        variant = template.variant if template.variant.language else template.variant.bound(item["language"])
        variables.update(variant.variables(len(variables.get("choices", []) or [])))
    return variables


def target_variables(item: dict[str, Any], template: Template | None = None) -> dict[str, Any]:
    """Prompt variables plus the gold answer, for an exemplar's target.

    ``answer`` is the gold as the item holds it (an index, the gold spans, the
    reference, the number); ``answer_text`` is its text (the gold choice, the
    first gold span, the reference); ``answer_letter`` the gold choice's letter.
    """
    variables = prompt_variables(item, template)
    answer = item["answer"]
    variables["answer"] = answer
    if variables.get("choices") and isinstance(answer, int):
        variables["answer_letter"] = variables["letters"][answer]
        variables["answer_text"] = variables["choices"][answer]
    elif isinstance(answer, list):
        variables["answer_text"] = answer[0]
    else:
        variables["answer_text"] = str(answer)
    return variables


def continuations(template: Template, item: dict[str, Any]) -> list[str]:
    base = prompt_variables(item, template)
    texts = [
        template.render_continuation({**base, "choice": choice, "letter": base["letters"][index], "index": index})
        for index, choice in enumerate(base["choices"])
    ]
    empty = [index for index, text in enumerate(texts) if not text]
    if empty:  # nothing to score: every model would give it log-probability 0
        raise TemplateError(f"{template.path}: 'continuation' renders to an empty text for choice "
                            f"{base['letters'][empty[0]]} of item {item['id']}")
    return texts


def check_query(template: Template, query: str, item_id: Any) -> str:
    """The item's own part of the prompt; one that renders to nothing (or only spaces) stops the run."""
    if not query.strip():
        raise TemplateError(f"{template.path}: 'prompt' renders to an empty text for item {item_id}: "
                            "nothing would be asked")
    return query


def shuffled(items: Sequence[dict[str, Any]], seed: int | None) -> list[dict[str, Any]]:
    """The items in the order a protocol evaluates them: as given, or shuffled with its own seed (JGLUE: 42)."""
    items = list(items)
    if seed is not None:
        random.Random(seed).shuffle(items)
    return items


def evaluated_items(items: Sequence[dict[str, Any]], shuffle_seed: int | None, limit: int | None
                    ) -> list[dict[str, Any]]:
    """The items a template evaluates, in order: shuffled with the protocol's seed, then the first ``limit``."""
    items = shuffled(items, shuffle_seed)
    return items[:limit] if limit is not None else items


def requests_for(template: Template, record: PromptRecord, rows: Callable[[str, str], Sequence[dict[str, Any]]]
                 ) -> list[dict[str, Any]]:
    """The requests of one (task, language, template) as its prompt record says, for the rendering job, ``show``
    and ``search`` alike. ``rows(language, part)``: a part's items (from the prepared files in the job, from the
    task's source in the command-line tools)."""
    items = rows(record.language, EVAL)
    pool = [row for language in record.exemplar_languages for row in rows(language, record.exemplar_part)]
    return build_requests(template, items, pool, fewshot=record.fewshot, seed=record.seed, limit=record.limit,
                          shuffle_seed=record.shuffle_seed)


def budgeted_requests(plan: StudyPlan, template: str, requests: Mapping[str, list[dict[str, Any]]]
                      ) -> dict[str, list[dict[str, Any]]]:
    """language -> the requests of a budgeted variant that its set's design keeps (``babeleval.prompts.budget_design``).

    ``requests``: every language's requests of the full set of evaluated items; the design is drawn from their ids
    (the same for every variant of the set, so each variant's rendering job draws the same design).
    """
    cells = plan.cells({language: [request["id"] for request in rows] for language, rows in requests.items()})
    return {language: [request for request in rows if str(request["id"]) in set(cells[language][template])]
            for language, rows in requests.items()}


def build_requests(
    template: Template,
    items: Sequence[dict[str, Any]],
    pool: Sequence[dict[str, Any]],
    *,
    fewshot: FewShot,
    seed: int,
    limit: int | None = None,
    shuffle_seed: int | None = None,
) -> list[dict[str, Any]]:
    """Requests for the items of one language.

    ``fewshot``: the few-shot plan, the prompt record's (``requests_for``); the caller always says which, so that no
    rendering reads the plan from the template's file behind the record's back.

    ``pool`` holds the rows exemplars are drawn from (the same language's items,
    or another language's where the template says so). With the ``first``
    sampler the exemplars are the pool's first rows and are removed from the
    evaluated items, as in the Belebele tutorial blog; ``limit`` then applies to what is left.
    With ``shuffle_seed`` the items are shuffled with it before the limit, as
    JGLUE's harness does with 42.
    """
    if template.variant is not None:  # choices in the variant's order, gold remapped; bound to the language
        template, items, pool = bind(template, items, pool)
    if fewshot.n:
        check_pool(template.path, fewshot, len(pool), f"language {pool[0]['language']}" if pool else "no rows")
    fixed: list[dict[str, Any]] | None = None
    if fewshot.n and fewshot.sampler == "first":
        fixed = first_exemplars(fewshot, pool)
        used = {row["id"] for row in fixed}
        items = [item for item in items if item["id"] not in used]
    items = evaluated_items(items, shuffle_seed, limit)
    if not items:
        raise DataError(f"{template.path}: no items left to evaluate for this language after removing exemplars")

    return [_request(template, fewshot.separator, item, _exemplars(template, fewshot, pool, item, seed, fixed))
            for item in items]


def _exemplars(template: Template, fewshot: FewShot, pool: Sequence[dict[str, Any]], item: dict[str, Any], seed: int,
               fixed: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """The exemplars shown before ``item``: the plan's sampler over the pool, in the variant's order."""
    if not fewshot.n:
        exemplars = []
    elif fixed is not None:
        exemplars = fixed
    elif fewshot.sampler == "stratified":
        exemplars = stratified_exemplars(fewshot, pool, item, seed)
    else:
        exemplars = random_exemplars(fewshot, pool, item, seed)
    if template.variant is not None:
        exemplars = template.variant.order_exemplars(exemplars, item)
    return exemplars


def _request(template: Template, separator: str, item: dict[str, Any], exemplars: list[dict[str, Any]]
             ) -> dict[str, Any]:
    """The request of one item: its prompt, whole and in parts (the exemplars and the query joined by ``separator``),
    its exemplars' ids and its gold."""
    variables = prompt_variables(item, template)
    preamble = template.render_preamble(variables)
    turns = [{"user": template.render_prompt(prompt_variables(ex, template)),
              "assistant": template.render_target(target_variables(ex, template))} for ex in exemplars]
    query = check_query(template, template.render_prompt(variables), item["id"])
    prompt = preamble + separator.join([*(t["user"] + t["assistant"] for t in turns), query])
    request = {
        "id": item["id"],
        "language": item["language"],
        "prompt": prompt,
        "exemplar_ids": [ex["id"] for ex in exemplars],
        # the same prompt in parts, for chat models that take exemplars as earlier turns (backends/chat.py)
        "preamble": preamble,
        "exemplar_turns": turns,
        "query": query,
        "choices": variables.get("choices"),
        "answer": item["answer"],
    }
    if "choice_order" in item:  # the original index of each choice shown (a choice-order variant)
        request["choice_order"] = item["choice_order"]
    if (template.variant is not None or template.labels is not None) and variables.get("choices"):
        request["enumerators"] = variables["letters"]  # the labels shown where not A, B, C (1 2 3 4, ア イ ウ エ)
    if template.answer_slot is not None:  # constrained answers: what the engine may let the model write there
        request["answer_slot"] = slot_for(template.answer_slot, variables["letters"], variables.get("choices")).to_json()
    if template.mode == "loglikelihood":
        request["continuations"] = continuations(template, item)
    request.update(request_fields(template.protocol, template.mode, item))  # its tokens and limits
    return request
