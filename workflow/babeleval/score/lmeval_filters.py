"""An lm-eval generate_until task's reply, read and scored as lm-eval reads and scores it.

The reply goes through each of the task's filter pipelines (its ``filter_list``: regex, take_first,
remove_whitespace ...), built with lm-eval's own ``build_filter_ensemble`` from the task's config, and each
pipeline's answer is compared with the item's reference by lm-eval's own ``exact_match`` with the task's options
(ignore_case, ignore_punctuation, regexes_to_ignore): the numbers are lm-eval's by construction. Each pipeline's
value is kept under its metric's name (``exact_match,<pipeline>``, as lm-eval reports it:
``babeleval.score.metrics.filtered_exact_match``).

A pipeline that could not read the reply is a named parse failure, never a wrong answer read: a regex filter
that found nothing returns its fallback ("[invalid]"), which is ``no answer``; an empty reply is ``empty
response``. The headline pipeline (the one whose metric is the headline, ``babeleval.score.metrics``) gives the
record's ``prediction``, ``parsed``, ``parse_error`` and ``correct``, which the parse-failure tables and the
paired tests read; every pipeline's answer and failure stay in the record (``lmeval_filters``).

lm-eval is imported here only when a reply is scored; it does not import torch.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

from ..prompts.templates import Template
from ..tasks import get_task
from ..tasks import lmeval_catalogue as catalogue
from .metrics import FILTERED_EXACT_MATCH, headline_metric
from .parsers import EMPTY, NO_ANSWER, NO_TEXT, failure

FILTERED = "lmeval_filters"  # a scored record's field: each pipeline's answer and failure


@dataclass(frozen=True)
class Reading:
    """One pipeline's reading of a reply: lm-eval's filtered answer, the failure where it read none, and lm-eval's
    exact_match of the answer against the reference."""

    answer: str | None
    error: str | None
    exact_match: float


def _steps(pipeline: str, filters_json: str) -> tuple[Any, ...]:
    """The filter classes of one pipeline, each with its arguments, as lm-eval's ``ConfigurableTask`` builds
    them (``build_filter_ensemble`` over the ``filter_list`` entry's functions)."""
    return _ensemble(pipeline, filters_json).filters


@functools.cache
def _ensemble(pipeline: str, filters_json: str) -> Any:
    from lm_eval.filters import build_filter_ensemble

    components = [[step["function"], {key: value for key, value in step.items() if key != "function"}]
                  for step in json.loads(filters_json)]
    return build_filter_ensemble(pipeline, components)


@functools.cache
def _exact_match(options_json: str) -> Any:
    """lm-eval's registered ``exact_match`` with the task's options, scoring one reply against its reference (or
    references) as ``ConfigurableTask.process_results`` does."""
    from lm_eval.api.registry import get_metric

    metric = get_metric("exact_match")
    options = json.loads(options_json)

    def score(answer: str, reference: str | list[Any]) -> float:
        if not isinstance(reference, list):
            return float(metric(references=[reference], predictions=[answer], **options)["exact_match"])
        # several references (lm-eval's multiple_target): right where the answer matches any of them
        matched = metric(references=reference, predictions=[answer] * len(reference), **options)["exact_match"]
        return 1.0 if matched > 0.0 else 0.0
    return score


def read(leaf: catalogue.Leaf, response: Any, reference: str | list[Any]) -> dict[str, Reading]:
    """Each filter pipeline's reading of ``response``, by pipeline name, in the task's order."""
    score = _exact_match(json.dumps(leaf.metric_options, sort_keys=True))
    readings = {}
    for pipeline in leaf.filter_list:
        name = str(pipeline["name"])
        answer, error = apply(_steps(name, json.dumps(pipeline["filter"])), response)
        readings[name] = Reading(answer, error, score(answer, reference))
    return readings


def apply(steps: tuple[Any, ...], response: Any) -> tuple[str, str | None]:
    """A reply through one pipeline's filters (one document, one reply, as lm-eval's ensemble applies them): the
    answer, and the failure where a step fell back (a regex that found nothing) or there was no reply."""
    if not isinstance(response, str):
        reply = "" if response is None else str(response)
        error = failure(NO_TEXT, f"got {'null' if response is None else type(response).__name__}").error
    else:
        reply, error = response, (failure(EMPTY).error if not response.strip() else None)
    resps: Any = [[reply]]
    for step in steps:
        made = step()
        # the filters babeleval runs read the reply alone (catalogue.FILTERS): no document is passed
        resps = list(made.apply(resps, [None]))
        fallback = getattr(made, "fallback", None)
        current = resps[0][0] if isinstance(resps[0], list) else resps[0]
        if error is None and fallback is not None and current == fallback:
            error = failure(NO_ANSWER, f"lm-eval filter {type(made).__name__} ({getattr(made, 'regex_pattern', '')}) "
                                       f"found nothing and gave its fallback {fallback!r}").error
    return resps[0], error  # a string: every pipeline ends with take_first (catalogue.generation_refusal)


def leaf_of(template: Template, record: dict[str, Any]) -> catalogue.Leaf:
    """The lm-eval task an item came from: its id is ``<lm-eval task>#<document>`` (babeleval.tasks.lmeval)."""
    name = str(record["id"]).rsplit("#", 1)[0]
    leaves = get_task(template.task).leaves(record["language"])
    return next(leaf for leaf in leaves if leaf.name == name)


def headline_pipeline(leaf: catalogue.Leaf) -> str:
    """The pipeline whose metric is the headline among the task's (``babeleval.score.metrics.headline_metric``)."""
    return headline_metric([FILTERED_EXACT_MATCH + name for name in leaf.pipelines])[len(FILTERED_EXACT_MATCH):]


def score_filtered(record: dict[str, Any], template: Template, parsed: Any = None) -> dict[str, Any]:
    """A scored record of an lm-eval generate_until item (the scorer of its family, ``babeleval.score.scorers``)."""
    leaf = leaf_of(template, record)
    readings = read(leaf, record.get("response"), record["answer"])
    headline = readings[headline_pipeline(leaf)]
    return {"prediction": headline.answer if headline.error is None else None, "parsed": headline.error is None,
            "parse_error": headline.error, "gold": record["answer"], "correct": headline.exact_match == 1.0,
            **{FILTERED_EXACT_MATCH + name: reading.exact_match for name, reading in readings.items()},
            FILTERED: {name: {"answer": reading.answer, "error": reading.error} for name, reading in readings.items()}}
