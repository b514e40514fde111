"""The labels choices are shown and read as: A, B, C ... in order, one per choice, unless a template declares its
own (``babeleval.prompts.templates.Template.choice_labels``); and how two spellings of a label compare."""

import re
import string
import unicodedata

LETTERS = string.ascii_uppercase


def normal_label(text: str) -> str:
    """A label as labels compare: Unicode NFKC (full-width "Ｂ" is "B"), case folded, no whitespace ("ক " is "ক")."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text)).casefold()


def same_label(a: str, b: str) -> bool:
    return normal_label(a) == normal_label(b)
