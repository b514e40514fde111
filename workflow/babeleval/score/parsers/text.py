"""Text parsers: the answer text itself, cleaned (an extractive QA span, a translation)."""

from __future__ import annotations

import re

from . import EMPTY, Parsed, failure, register
from .reply import FINAL_ANSWER_TAG, strip_reasoning


@register("jsquad_span", "text")
def jsquad_span(response: str) -> Parsed:
    """JGLUE JSQuAD: the generation up to the separator (a newline or '<NL>'), stripped; empty is a failure."""
    text = re.split(r"\n|<NL>", response, maxsplit=1)[0].strip()
    if not text:
        return failure(EMPTY, "nothing before the separator")
    return Parsed(text)


@register("translation", "text")
def translation(response: str) -> Parsed:
    """The reply as a translation: reasoning blocks, leaked turns and surrounding whitespace removed; empty is a failure."""
    text, error = strip_reasoning(response)
    if error:
        return Parsed(None, error)
    assert text is not None
    tags = FINAL_ANSWER_TAG.findall(text)
    if tags:
        text = tags[-1]
    text = text.strip()
    if not text:
        return failure(EMPTY)
    return Parsed(text)
