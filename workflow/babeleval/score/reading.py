"""Reading a generated reply with the template's rule parser: one call per task family, given what the family's
parser kind needs (the item's choices and the labels the prompt showed, its language, whether the reply stopped
at the token limit).

The model's own reply and an extractor model's reply (``babeleval.score.extraction``) are read by this same
call, so an extracted answer is held to the template's labels and answer kind exactly as the reply is.
"""

from __future__ import annotations

from typing import Any

from ..prompts.templates import Template
from ..tasks.families import get_family
from .parsers import Parsed, parse


def shown_labels(record: dict[str, Any], template: Template) -> list[str]:
    """The labels the prompt showed for the item's choices (the template's own, a variant's, else A, B, C ...)."""
    return template.choice_labels(len(record["choices"]), record.get("language"))


def read(family: str, record: dict[str, Any], template: Template, response: Any, finish_reason: str | None
         ) -> Parsed:
    """``response`` read by the template's parser as an answer to ``record``'s item."""
    if has_choices(family):
        choices = record["choices"]
        return parse(template.parser, response, n_choices=len(choices), labels=choices,
                     language=record.get("language"), finish_reason=finish_reason,
                     choice_labels=shown_labels(record, template), options=choices)
    # the language and the stop reason reach only a parser registered to read them (uses_language, reads_cut)
    return parse(template.parser, response, language=record.get("language"), finish_reason=finish_reason)


def has_choices(family: str) -> bool:
    """Whether the family's items carry choices, which its parser reads the answer among."""
    return get_family(family).choices
