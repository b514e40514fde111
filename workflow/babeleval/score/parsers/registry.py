"""The parser registry: what a parser is, the failure a reply that cannot be read gives, and running one.

A parser reads a model's free text and returns its answer, or says why not. It is a function registered by
name (``register``) with the *kind* of answer it reads, which decides what it is given besides the response:

- ``letter``: ``(response, n_choices)`` -> a choice letter ("A".."Z"); a parser registered with
  ``reads_labels`` also gets the template's ``choice_labels`` (A-D, 1-4, ক খ গ ঘ ...: it returns one of them) and
  the options' texts (``options``, to read a line that restates one: "(B) Paris"); one registered with
  ``reads_options`` gets only the options' texts (to tell a letter from another option's text beside it);
- ``label``:  ``(response, labels)``    -> one of the labels (a topic name);
- ``number``: ``(response)``            -> a canonical number string ("1234", "-0.5");
- ``text``:   ``(response)``            -> the cleaned answer text (a span, a translation).

Parsers registered with ``uses_language`` also get the item's language
(a FLORES-200 code), which decides the precedence of answer phrases
(``babeleval.score.answer_phrases``) and how numbers are written; parsers
registered with ``reads_cut`` are told when the reply stopped at the token
limit (``finish_reason`` "length"), and then read only an explicit answer.

A response that cannot be read is an explicit failure, never silently scored
as a wrong answer and never a guess. Its reason starts with one of the names in
``REASONS`` (``no answer``, ``ambiguous``, ``placeholder only``, ``empty
response``, ``cut while reasoning``, ``cut at the length limit``, ``not a
number``, ``no text response``), then ": " and what was seen; scores count it as a parse failure and the analysis groups
failures by it. Templates name their parser; ``python -m babeleval parse``
runs any parser over a file of model outputs.

The built-in parsers are this package's modules, one per kind of answer (``letters``, ``numbers``,
``labels``, ``text``), which register here; what they share in reading a reply (reasoning blocks, leaked
turns, answer markers) is ``reply``. A parser can also live in an extension file params.yaml names under
``modules`` (``babeleval.core.extensions``; docs/extending.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from ...core.choices import LETTERS
from ...core.errors import ConfigError
from ...core.registry import Registry

KINDS = ("letter", "label", "number", "text")

# Failure reasons: every failure's text starts with one of these names.
EMPTY = "empty response"              # nothing but whitespace (or only closed tags)
NO_TEXT = "no text response"          # an API's null content, or a damaged record
NO_ANSWER = "no answer"               # text, but nothing that reads as an answer
AMBIGUOUS = "ambiguous"               # the answer place names two answers, or a number that reads two ways
PLACEHOLDER = "placeholder only"      # the instruction's "#### <letter>" copied, and no answer with it
UNFINISHED = "cut while reasoning"    # the reply ends inside its reasoning block (any family's wrapper)
CUT = "cut at the length limit"       # the reply stopped at the token limit with no explicit answer marker
NOT_A_NUMBER = "not a number"         # an expression with a variable, a root or a fraction where a number is asked
REASONS = (EMPTY, NO_TEXT, NO_ANSWER, AMBIGUOUS, PLACEHOLDER, UNFINISHED, CUT, NOT_A_NUMBER)


@dataclass(frozen=True)
class Parsed:
    answer: str | None
    error: str | None = None
    # a failure the rules decided rather than one they could not read: the reply restates the options or topics
    # without picking one. No extractor model is asked to find an answer in it (babeleval.score.extraction)
    settled: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None


def failure(reason: str, detail: str = "", settled: bool = False) -> Parsed:
    assert reason in REASONS, reason
    return Parsed(None, f"{reason}: {detail}" if detail else reason, settled)


def reason_of(error: str) -> str:
    """A failure's name (one of ``REASONS``, or a scorer's own such as "question cut"), without the detail."""
    return error.split(":", 1)[0]


@dataclass(frozen=True)
class Parser:
    """A registered parser: its function, the kind of answer it reads and its docstring's first paragraph."""

    name: str
    kind: str
    func: Callable[..., Parsed]
    doc: str
    uses_language: bool = False
    reads_cut: bool = False
    reads_labels: bool = False
    reads_options: bool = False


PARSERS: Registry[Parser] = Registry("parser")


def register(name: str, kind: str, uses_language: bool = False, reads_cut: bool = False, reads_labels: bool = False,
             reads_options: bool = False) -> Callable[[Callable[..., Parsed]], Callable[..., Parsed]]:
    """Register the decorated function as parser ``name``, reading answers of ``kind`` (one of ``KINDS``)."""
    if kind not in KINDS:
        raise ConfigError(f"parser '{name}' reads kind '{kind}' (known: {', '.join(KINDS)})")

    def decorate(func: Callable[..., Parsed]) -> Callable[..., Parsed]:
        doc = " ".join((func.__doc__ or "").strip().split("\n\n")[0].split())
        PARSERS.add(name, Parser(name, kind, func, doc, uses_language, reads_cut, reads_labels, reads_options))
        return func
    return decorate


def get_parser(name: str) -> Parser:
    return PARSERS[name]


def parse(name: str, response: str | None, *, n_choices: int = 4, labels: Sequence[str] = (),
          language: str | None = None, finish_reason: str | None = None,
          choice_labels: Sequence[str] | None = None, options: Sequence[str] | None = None) -> Parsed:
    """Run parser ``name`` on a response, giving it what its kind needs (and the item's language, whether the
    reply stopped at the token limit, and the template's choice labels and the options' texts, where it reads
    them). A letter parser that reads only A, B, C ... is given no other labels (``ConfigError``)."""
    parser = get_parser(name)
    if not isinstance(response, str):  # an API's null content, or a damaged record
        return failure(NO_TEXT, f"got {'null' if response is None else type(response).__name__}")
    extra: dict = {"language": language} if parser.uses_language else {}
    if parser.reads_cut:
        extra["cut"] = finish_reason == "length"
    if parser.kind == "letter":
        if parser.reads_options:
            extra["options"] = options
        if parser.reads_labels:
            extra.update(choice_labels=choice_labels, options=options)
        elif choice_labels is not None and list(choice_labels) != list(LETTERS[:n_choices]):
            raise ConfigError(f"parser '{name}' reads only the letters A, B, C ...; the template's choice labels "
                              f"({', '.join(choice_labels)}) need one that reads them (final_letter, hash_letter)")
        return parser.func(response, n_choices, **extra)
    if parser.kind == "label":
        if not labels:
            return failure(NO_ANSWER, "no labels to choose from")
        return parser.func(response, list(labels), **extra)
    return parser.func(response, **extra)
