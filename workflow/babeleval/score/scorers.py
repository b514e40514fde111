"""Scoring one record: how a task family's answer is read and judged (the families: ``babeleval.tasks.families``).

Each family names its scorer when it is registered; ``SCORERS`` is that registry, by family name. The
built-in families' scorers are the functions below (and ``babeleval.score.lmeval_filters.score_filtered``).

A scored record (a rendered request plus the model's output) always holds ``prediction``, ``gold``, ``parsed``,
``parse_error`` and ``correct`` (None where the family has no per-item
correctness, as translation):

=================  ==========================  ===========================  ==============================
family             prediction                  gold                         correct
=================  ==========================  ===========================  ==============================
multiple_choice,   index of the chosen choice  the gold continuation        prediction == answer
classification     (None if unreadable)        (" A" -> "A", a choice text)
                                               or letter / label read
extractive_qa      the answer span             the gold spans [str]         exact match (SQuAD, max)
translation        the translation             the reference                None
math               canonical number string     canonical number string      equal numbers
lmeval_generate    the headline filter's       lm-eval's reference          its exact_match is 1
                   answer (None if unread)     (text)                       (``babeleval.score.lmeval_filters``)
=================  ==========================  ===========================  ==============================

A generated record also keeps its reply's structure (``babeleval.score.parsers.structure.facts``):
``reasoning_chars``, ``reasoning_script``, ``cut_while_reasoning``, ``answer_script``, ``answer_in_script``.
"""

from __future__ import annotations

from typing import Any

from ..prompts.templates import Template
from ..tasks.families import SCORERS, get_family
from . import extraction
from .metrics import argmax, length_normalised
from .parsers import Parsed, get_parser
from .parsers.structure import facts
from .qa import best_over_golds
from .reading import shown_labels


def score_choice(record: dict[str, Any], template: Template, parsed: Parsed | None) -> dict[str, Any]:
    answer = record["answer"]
    choices = record["choices"]
    if template.mode == "loglikelihood":
        logprobs = record["loglikelihoods"]
        pred = argmax(logprobs)
        pred_norm = argmax(length_normalised(logprobs, record["continuations"]))
        return {"prediction": pred, "prediction_norm": pred_norm, "parsed": True, "parse_error": None,
                "gold": record["continuations"][answer].strip(),
                "correct": pred == answer, "correct_norm": pred_norm == answer}
    assert parsed is not None
    if get_parser(template.parser).kind == "letter":
        shown = shown_labels(record, template)
        gold = shown[answer]
        prediction = shown.index(parsed.answer) if parsed.ok else None
    else:
        gold = choices[answer]
        prediction = choices.index(parsed.answer) if parsed.ok else None
    return {"prediction": prediction, "parsed_answer": parsed.answer, "parsed": parsed.ok,
            "parse_error": parsed.error, "gold": gold, "correct": prediction == answer}


def score_extractive_qa(record: dict[str, Any], template: Template, parsed: Parsed) -> dict[str, Any]:
    golds = list(record["answer"])
    em, f1 = best_over_golds(parsed.answer if parsed.ok else None, golds)
    return {"prediction": parsed.answer, "parsed": parsed.ok, "parse_error": parsed.error, "gold": golds,
            "correct": em == 1.0, "exact_match": em, "f1": f1}


def score_translation(record: dict[str, Any], template: Template, parsed: Parsed) -> dict[str, Any]:
    return {"prediction": parsed.answer, "parsed": parsed.ok, "parse_error": parsed.error,
            "gold": record["answer"], "correct": None}


def score_math(record: dict[str, Any], template: Template, parsed: Parsed) -> dict[str, Any]:
    gold = record["answer"]
    return {"prediction": parsed.answer, "parsed": parsed.ok, "parse_error": parsed.error, "gold": gold,
            "correct": parsed.ok and parsed.answer == gold}


def score_record(family: str, record: dict[str, Any], template: Template,
                 extracted: dict[str, Any] | None = None) -> dict[str, Any]:
    """A record scored. ``extracted``: the extractor model's record for the item, where the template names an
    extractor and the item was asked (``babeleval.score.extraction``); its answer counts only where the rule
    parser failed and the extractor's reply parses by the same rule parser."""
    if template.mode != "generate":
        scored = SCORERS[family](record, template, None)
    elif not get_family(family).parser_kinds:  # the family's scorer reads the reply itself (lm-eval's filters)
        scored = SCORERS[family](record, template, None)
        scored.update(facts(record.get("response"), record.get("language")))
    else:
        parsed, sources = extraction.answer(family, record, template, extracted)
        scored = {**SCORERS[family](record, template, parsed), **sources}
        # the reply's structure: reasoning length and script, cut while reasoning
        scored.update(facts(record.get("response"), record.get("language")))
    if record.get("question_cut"):
        scored.update(question_cut(record, scored))
    return scored


def question_cut(record: dict[str, Any], scored: dict[str, Any]) -> dict[str, Any]:
    """An item whose own question was cut to fit the model's context: a failure with its reason, never scored."""
    reason = (f"question cut: the prompt did not fit the model's context and the {record.get('truncated_tokens')} "
              "tokens cut from its left reached the item's own question")
    failed = {"prediction": None, "parsed": False, "parse_error": reason,
              "correct": None if scored["correct"] is None else False}
    for key, value in (("prediction_norm", None), ("correct_norm", False), ("exact_match", 0.0), ("f1", 0.0)):
        if key in scored:
            failed[key] = value
    return failed

