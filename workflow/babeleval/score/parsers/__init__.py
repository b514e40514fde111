"""Answer parsers: read a model's free text and return its answer, or say why not.

What a parser is, its kinds and its failures, and how one is run: ``registry``. The built-in parsers are
this package's modules, one per kind of answer (``letters``, ``numbers``, ``labels``, ``text``); what they
share in reading a reply is ``reply``. This face hands the registry's names on.
"""

from __future__ import annotations

# The built-in parsers register themselves when imported: importing this package gives the whole registry.
from . import labels, letters, numbers, text  # noqa: F401
from .registry import (AMBIGUOUS, CUT, EMPTY, KINDS, NO_ANSWER, NO_TEXT, NOT_A_NUMBER, PARSERS, PLACEHOLDER, REASONS,
                       UNFINISHED, Parsed, Parser, failure, get_parser, parse, reason_of, register)

__all__ = ["AMBIGUOUS", "CUT", "EMPTY", "KINDS", "NO_ANSWER", "NO_TEXT", "NOT_A_NUMBER", "PARSERS", "PLACEHOLDER",
           "REASONS", "UNFINISHED", "Parsed", "Parser", "failure", "get_parser", "parse", "reason_of", "register"]
