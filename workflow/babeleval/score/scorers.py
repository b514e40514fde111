"""Task families: how an item's answer is presented, read and judged.

Each family says, for a template of a given mode, which metrics it reports by
default and how one record (a rendered request plus the model's output) is
scored. A scored record always holds ``prediction``, ``gold``, ``parsed``,
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
=================  ==========================  ===========================  ==============================
"""

from __future__ import annotations

from typing import Any

from .metrics import argmax, length_normalised
from .parsers import LETTERS, get_parser, parse
from ..prompts.templates import Template

DEFAULT_METRICS: dict[str, dict[str, tuple[str, ...]]] = {
    "multiple_choice": {"loglikelihood": ("acc", "acc_norm"), "generate": ("acc", "parse_failure_rate")},
    "classification": {"loglikelihood": ("acc", "acc_norm", "balanced_acc", "macro_f1"),
                       "generate": ("acc", "balanced_acc", "macro_f1", "parse_failure_rate")},
    "extractive_qa": {"generate": ("exact_match", "f1", "parse_failure_rate")},
    "translation": {"generate": ("bleu", "chrf", "parse_failure_rate")},
    "math": {"generate": ("acc", "parse_failure_rate")},
}

# What a template of a family and mode may report (its ``metrics:``): the defaults and what else the
# family's scored records support. acc_norm needs log-likelihoods; accuracy means nothing for a translation.
_CHOICE_METRICS = {"loglikelihood": ("acc", "acc_norm", "balanced_acc", "macro_f1"),
                   "generate": ("acc", "balanced_acc", "macro_f1", "parse_failure_rate")}
APPLICABLE_METRICS: dict[str, dict[str, tuple[str, ...]]] = {
    "multiple_choice": _CHOICE_METRICS,
    "classification": _CHOICE_METRICS,
    "extractive_qa": {"generate": ("exact_match", "f1", "acc", "parse_failure_rate")},
    "translation": {"generate": ("bleu", "chrf", "parse_failure_rate")},
    "math": {"generate": ("acc", "parse_failure_rate")},
}

# What a family's generate templates may parse with (parser kinds).
PARSER_KINDS = {
    "multiple_choice": ("letter", "label"),
    "classification": ("label", "letter"),
    "extractive_qa": ("text",),
    "translation": ("text",),
    "math": ("number",),
}


def default_metrics(family: str, mode: str) -> tuple[str, ...]:
    return DEFAULT_METRICS[family][mode]


def metrics_for(family: str, template: Template) -> tuple[str, ...]:
    return template.metrics if template.metrics is not None else default_metrics(family, template.mode)


def check_template(family: str, template: Template) -> str | None:
    """Why a template cannot serve a task of this family, or None."""
    if template.mode not in DEFAULT_METRICS[family]:
        return f"a {family} task cannot be scored in mode '{template.mode}'"
    if template.mode == "generate":
        kind = get_parser(template.parser).kind
        if kind not in PARSER_KINDS[family]:
            return (f"parser '{template.parser}' reads a {kind}; a {family} task needs one that reads "
                    f"{' or '.join(PARSER_KINDS[family])}")
    allowed = APPLICABLE_METRICS[family][template.mode]
    wrong = [name for name in template.metrics or () if name not in allowed]
    if wrong:
        return (f"metric{'s' if len(wrong) > 1 else ''} {', '.join(wrong)} cannot be computed for a {family} task "
                f"in mode '{template.mode}' (it can report: {', '.join(allowed)})")
    return None


# -- scoring one record ----------------------------------------------------------------------------------


def score_choice(record: dict[str, Any], template: Template) -> dict[str, Any]:
    answer = record["answer"]
    choices = record["choices"]
    if template.mode == "loglikelihood":
        logprobs = record["loglikelihoods"]
        pred = argmax(logprobs)
        pred_norm = argmax(length_normalised(logprobs, record["continuations"]))
        return {"prediction": pred, "prediction_norm": pred_norm, "parsed": True, "parse_error": None,
                "gold": record["continuations"][answer].strip(),
                "correct": pred == answer, "correct_norm": pred_norm == answer}
    spec = get_parser(template.parser)
    response = record.get("response")
    if spec.kind == "letter" and template.variant is not None:  # the variant's enumerators read as A, B, C ...
        response = template.variant.bound(record["language"]).to_letters(response, len(choices))
    parsed = parse(template.parser, response, n_choices=len(choices), labels=choices, language=record.get("language"))
    if spec.kind == "letter":
        gold = LETTERS[answer]
        prediction = LETTERS.index(parsed.answer) if parsed.ok else None
    else:
        gold = choices[answer]
        prediction = choices.index(parsed.answer) if parsed.ok else None
    return {"prediction": prediction, "parsed_answer": parsed.answer, "parsed": parsed.ok,
            "parse_error": parsed.error, "gold": gold, "correct": prediction == answer}


def score_extractive_qa(record: dict[str, Any], template: Template) -> dict[str, Any]:
    from .qa import best_over_golds

    golds = list(record["answer"])
    parsed = parse(template.parser, record.get("response"))
    em, f1 = best_over_golds(parsed.answer if parsed.ok else None, golds)
    return {"prediction": parsed.answer, "parsed": parsed.ok, "parse_error": parsed.error, "gold": golds,
            "correct": em == 1.0, "exact_match": em, "f1": f1}


def score_translation(record: dict[str, Any], template: Template) -> dict[str, Any]:
    parsed = parse(template.parser, record.get("response"))
    return {"prediction": parsed.answer, "parsed": parsed.ok, "parse_error": parsed.error,
            "gold": record["answer"], "correct": None}


def score_math(record: dict[str, Any], template: Template) -> dict[str, Any]:
    parsed = parse(template.parser, record.get("response"), language=record.get("language"))
    gold = record["answer"]
    return {"prediction": parsed.answer, "parsed": parsed.ok, "parse_error": parsed.error, "gold": gold,
            "correct": parsed.ok and parsed.answer == gold}


# Families whose records carry ``choices`` (the options, or the class labels).
CHOICE_FAMILIES = ("multiple_choice", "classification")

SCORERS = {
    "multiple_choice": score_choice,
    "classification": score_choice,
    "extractive_qa": score_extractive_qa,
    "translation": score_translation,
    "math": score_math,
}


def score_record(family: str, record: dict[str, Any], template: Template) -> dict[str, Any]:
    scored = SCORERS[family](record, template)
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


def signatures(family: str, metric_names: tuple[str, ...]) -> dict[str, str]:
    """Settings behind a family's numbers that are not in a metric's own signature."""
    if family == "extractive_qa" and ("f1" in metric_names or "exact_match" in metric_names):
        from .qa import tokenizer_name

        return {"f1": f"SQuAD v1.1 F1 over {tokenizer_name()}; normalisation: emoji removed, neologdn, whitespace"}
    return {}
