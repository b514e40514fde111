"""Answer parsers: read a model's free text and return its answer, or say why not.

Each parser is a pure function ``(response, n_choices) -> Parsed``. A response
that cannot be read is an explicit failure with a reason, counted as a parse
failure next to accuracy, never silently scored as a wrong answer. Parsers are
registered by name; templates refer to them by that name.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Callable

LETTERS = string.ascii_uppercase


@dataclass(frozen=True)
class Parsed:
    answer: str | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def failure(reason: str) -> Parsed:
    return Parsed(None, reason)


Parser = Callable[[str, int], Parsed]
PARSERS: dict[str, Parser] = {}


def register(name: str) -> Callable[[Parser], Parser]:
    def decorate(func: Parser) -> Parser:
        PARSERS[name] = func
        return func
    return decorate


def get_parser(name: str) -> Parser:
    try:
        return PARSERS[name]
    except KeyError:
        raise KeyError(f"unknown parser '{name}' (known: {', '.join(sorted(PARSERS))})") from None


def _letter_at_start(text: str, letters: str) -> str | None:
    """The choice letter that opens ``text`` as a word of its own ("B", "B.", "B) ..."), else None."""
    if text and text[0] in letters and (len(text) == 1 or not text[1].isalpha()):
        return text[0]
    return None


@register("belebele_instruct")
def belebele_instruct(response: str, n_choices: int = 4) -> Parsed:
    """Seed 000's post-processing for chat models asked for a letter.

    It drops parentheses, so "(B)" reads as "B", and, when the answer does not
    start with a letter, drops the prefix "The correct answer is ". Where the
    original fell back to the first character whatever it was, this takes a
    first character only when it is a choice letter standing alone ("B. text"),
    and otherwise reports the failure instead of scoring it as wrong.
    """
    letters = LETTERS[:n_choices]
    text = response.replace("(", "").replace(")", "").strip()
    if not text:
        return failure("empty response")
    if text in letters:
        return Parsed(text)
    prefix = "the correct answer is "
    if text.lower().startswith(prefix):
        text = text[len(prefix):].strip()
    letter = _letter_at_start(text, letters)
    if letter is None:
        return failure(f"no choice letter ({', '.join(letters)}) at the start of the answer")
    return Parsed(letter)


@register("belebele_blog")
def belebele_blog(response: str, n_choices: int = 4) -> Parsed:
    """Seed 001's ``parse_choice``: the first line, stripped; a lone letter, or a letter not followed by a letter."""
    letters = LETTERS[:n_choices]
    text = response.split("\n")[0].strip()
    if not text:
        return failure("empty response")
    letter = _letter_at_start(text, letters)
    if letter is None:
        return failure(f"first line does not start with a choice letter ({', '.join(letters)}) standing alone")
    return Parsed(letter)
