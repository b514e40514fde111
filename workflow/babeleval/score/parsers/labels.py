"""Label parsers: one of the item's labels (a topic name), for a classification item."""

from __future__ import annotations

import re
from typing import Sequence

from . import AMBIGUOUS, EMPTY, NO_ANSWER, Parsed, failure, register
from .reply import MARKER, TAG, answer_candidates, clean_segment, strip_reasoning


@register("topic", "label")
def topic(response: str, labels: Sequence[str]) -> Parsed:
    """languagebench's topic rule: the reply starts with a topic, or names exactly one of them (case-insensitive)."""
    text, error = strip_reasoning(response)
    if error:
        return Parsed(None, error)
    assert text is not None
    marked = [segment for where, segment in answer_candidates(text).found if where in (TAG, MARKER)]
    pred = clean_segment(marked[0] if marked else text).lower().strip()
    pred = re.sub(r"^[\s*_`\"'“”「『(\[]+", "", pred)
    if not pred:
        return failure(EMPTY)
    by_length = sorted(labels, key=len, reverse=True)
    for label in by_length:
        if pred.startswith(label.lower().strip()):
            return Parsed(label)
    named = [label for label in labels if label.lower().strip() in pred]
    # a label inside a longer named label ("science" in "science/technology") is not a second mention
    named = [label for label in named if not any(label != other and label.lower() in other.lower() for other in named)]
    if len(named) == 1:
        return Parsed(named[0])
    if len(named) > 1:
        return failure(AMBIGUOUS, f"names several topics ({', '.join(named)})")
    return failure(NO_ANSWER, f"names none of the topics ({', '.join(labels)})")
