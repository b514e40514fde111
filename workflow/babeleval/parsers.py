"""Answer parsers: read a model's free text and return its answer, or say why not.

A parser is registered by name with the *kind* of answer it reads, which
decides what it is given besides the response:

- ``letter``: ``(response, n_choices)`` -> a choice letter ("A".."Z");
- ``label``:  ``(response, labels)``    -> one of the labels (a topic name);
- ``number``: ``(response)``            -> a canonical number string ("1234", "-0.5");
- ``text``:   ``(response)``            -> the cleaned answer text (a span, a translation).

A response that cannot be read is an explicit failure with a reason, counted
as a parse failure next to the task's metrics, never silently scored as a
wrong answer. Templates name their parser; ``python -m babeleval.parse``
runs any parser over a file of model outputs.

What models really write, and what the parsers here read (seed 003 and its
later ``<final_answer>`` version, reasoning models, chat models that keep
talking after their answer):

- reasoning in ``<think>...</think>`` (or only a closing ``</think>``) is dropped;
  an unclosed ``<think>`` means the model never answered;
- a reply is cut at the first leaked chat turn or end-of-turn token
  (``<|im_end|>``, ``</s>``, ``<|eot_id|>``, ``[INST]``, "\\nUser:" ...);
- ``<final_answer>X</final_answer>`` wins; then the ``####`` marker (first,
  last, repeated, on its own line with the answer on the next line); copies
  of the instruction's placeholder (``#### <letter>``) are skipped;
- then ``\\boxed{X}``, "the answer is (X)" / "Answer: X", a bold ``**X**``,
  or a reply that is nothing but the answer.
"""

from __future__ import annotations

import re
import string
import unicodedata
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Callable, Sequence

LETTERS = string.ascii_uppercase
KINDS = ("letter", "label", "number", "text")


@dataclass(frozen=True)
class Parsed:
    answer: str | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def failure(reason: str) -> Parsed:
    return Parsed(None, reason)


@dataclass(frozen=True)
class ParserSpec:
    name: str
    kind: str
    func: Callable[..., Parsed]
    doc: str

    def __call__(self, response: str, *args) -> Parsed:
        return self.func(response, *args)


PARSERS: dict[str, ParserSpec] = {}


def register(name: str, kind: str = "letter") -> Callable[[Callable[..., Parsed]], Callable[..., Parsed]]:
    assert kind in KINDS, kind

    def decorate(func: Callable[..., Parsed]) -> Callable[..., Parsed]:
        doc = (func.__doc__ or "").strip().split("\n")[0]
        PARSERS[name] = ParserSpec(name, kind, func, doc)
        return func
    return decorate


def get_parser(name: str) -> ParserSpec:
    try:
        return PARSERS[name]
    except KeyError:
        raise KeyError(f"unknown parser '{name}' (known: {', '.join(sorted(PARSERS))})") from None


def parse(name: str, response: str | None, *, n_choices: int = 4, labels: Sequence[str] = ()) -> Parsed:
    """Run parser ``name`` on a response, giving it what its kind needs."""
    spec = get_parser(name)
    if not isinstance(response, str):  # an API's null content, or a damaged record
        return failure(f"no text response (got {'null' if response is None else type(response).__name__})")
    if spec.kind == "letter":
        return spec.func(response, n_choices)
    if spec.kind == "label":
        if not labels:
            return failure("no labels to choose from")
        return spec.func(response, list(labels))
    return spec.func(response)


# -- Belebele (seeds 000 and 001) ------------------------------------------------------------------


def _letter_at_start(text: str, letters: str) -> str | None:
    """The choice letter that opens ``text`` as a word of its own ("B", "B.", "B) ..."), else None."""
    if text and text[0] in letters and (len(text) == 1 or not text[1].isalpha()):
        return text[0]
    return None


@register("belebele_instruct", "letter")
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


@register("belebele_blog", "letter")
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


# -- shared clean-up: think blocks, leaked turns, answer markers ------------------------------------

_THINK_OPEN = re.compile(r"<(think|thinking)>", re.IGNORECASE)  # "<reasoning>" alone is often the copied placeholder
_THINK_BLOCK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.IGNORECASE | re.DOTALL)
_THINK_CLOSE = re.compile(r"</(think|thinking)>", re.IGNORECASE)

# Where a chat model's turn ends, or a next turn it made up begins: nothing after it is the answer.
_TURN_END = re.compile(
    r"<\|im_end\|>|<\|im_start\|>|<\|eot_id\|>|<\|end\|>|<\|endoftext\|>|<\|end_of_text\|>|<\|user\|>"
    r"|<\|start_header_id\|>|<end_of_turn>|<start_of_turn>|</s>|\[INST\]|<\|assistant\|>"
    r"|\n\s*(?:User|USER|Human|HUMAN|Question|### (?:Human|User|Instruction))\s*:",
)
_FINAL_TAG = re.compile(r"<final_answer>(.*?)(?:</final_answer>|$)", re.IGNORECASE | re.DOTALL)
_MARKER = "####"
# Closing tags, end tokens and markdown that may surround an answer.
_CLOSING = re.compile(r"</?[A-Za-z_][\w-]*>|<\|[^|>]*\|>")
_PLACEHOLDER = re.compile(r"^\s*<\s*(letter|number|answer|reasoning|topic|final[ _]answer)\s*>", re.IGNORECASE)
_BOXED = re.compile(r"\\boxed\s*\{((?:[^{}]|\{[^{}]*\})*)\}")
_ANSWER_PHRASE = re.compile(
    r"(?:final answer|correct answer|the answer|answer|respuesta|réponse|antwort|jibu|答え|答案|回答|正解|उत्तर)"
    r"(?:\s+(?:is|would be|will be|:|：|es|est|ist|ni|は|是|为|為))?\s*[:：]?\s*"
    r"(?:option\s+|choice\s+)?(.+)",
    re.IGNORECASE,
)
_BOLD = re.compile(r"\*\*([^*\n]{1,80})\*\*")


def strip_reasoning(response: str) -> tuple[str | None, str | None]:
    """The reply without reasoning blocks and leaked turns: (text, None) or (None, reason)."""
    text = _THINK_BLOCK.sub(" ", response)
    close = list(_THINK_CLOSE.finditer(text))
    if close:  # the template opened the think block, the model closed it
        text = text[close[-1].end():]
    if _THINK_OPEN.search(text):
        return None, "unfinished think block: the reply ends while still reasoning"
    turn = _TURN_END.search(text)
    if turn:
        text = text[: turn.start()]
    return text, None


def _clean_segment(segment: str) -> str:
    segment = _CLOSING.sub(" ", segment)
    return segment.strip()


def _marker_segments(text: str) -> list[str]:
    """What follows each ``####``, last first; an empty rest of line takes the next non-empty line."""
    parts = text.split(_MARKER)[1:]
    segments = []
    for part in parts:
        part = part.lstrip("#")  # "#####"
        lines = [line for line in part.split("\n")]
        first = lines[0].strip()
        if not first and len(lines) > 1:
            following = [line.strip() for line in lines[1:] if line.strip()]
            first = following[0] if following else ""
        segments.append(first)
    return segments[::-1]


def answer_candidates(response: str) -> tuple[list[tuple[str, str]], str | None, str]:
    """Places an answer may be read from, most explicit first: [(where, text)], an error, and the cleaned reply."""
    text, error = strip_reasoning(response)
    if error:
        return [], error, ""
    assert text is not None
    found: list[tuple[str, str]] = []
    tags = [m.group(1) for m in _FINAL_TAG.finditer(text)]
    for inner in reversed(tags):
        found.append(("<final_answer>", inner.strip()))
    if _MARKER in text:
        for segment in _marker_segments(text):
            found.append(("####", segment.strip()))
    for inner in reversed(_BOXED.findall(text)):
        found.append(("\\boxed", inner.strip()))
    for match in reversed(list(_ANSWER_PHRASE.finditer(text))):
        found.append(("answer phrase", _clean_segment(match.group(1).split("\n")[0])))
    for inner in reversed(_BOLD.findall(text)):
        found.append(("bold", inner.strip()))
    found.append(("whole reply", _clean_segment(text)))
    return found, None, text


def _is_placeholder(segment: str) -> bool:
    return bool(_PLACEHOLDER.match(segment))


def _strip_decoration(text: str) -> str:
    text = text.strip()
    text = re.sub(r"^[*_`$\s]+|[*_`$\s]+$", "", text)
    text = _BOXED.sub(lambda m: m.group(1), text)
    return text.strip()


# -- letters ---------------------------------------------------------------------------------------


def _letter_in(segment: str, letters: str, whole: bool) -> str | None:
    """A choice letter standing as the answer: "B", "(B)", "B)", "B.", "B: text", "**B**", "Option B"."""
    text = _strip_decoration(segment)
    text = re.sub(r"^(?:option|choice|answer|letter)\s*[:：]?\s*", "", text, flags=re.IGNORECASE)
    text = _strip_decoration(text)
    match = re.match(r"^[\(\[（【]?\s*([A-Za-z])\s*[\)\]）】]?(?=$|[\s.:：,;、。)\]）*])", text)
    if not match:
        return None
    letter = match.group(1)
    if letter.upper() not in letters:
        return None
    if letter.islower():
        # a lone lower-case letter is read only where it is clearly the answer ("#### b"), not the article "a"
        if whole or len(text.strip()) != 1:
            return None
    return letter.upper()


MARKERS = ("<final_answer>", "####")


def _read_final(response: str, sources: tuple[str, ...] | None, read: Callable[[str, str], str | None],
                kind: str, not_after_marker: str, no_marker: str) -> Parsed:
    """Walk a reply's answer candidates (markers first, see ``answer_candidates``) and read the first that gives
    an answer with ``read(where, segment)``; else say why, from the most to the least specific reason."""
    candidates, error, text = answer_candidates(response)
    if error:
        return failure(error)
    if not text.strip():
        return failure("empty response")
    placeholders = 0
    looked = []
    for where, segment in candidates:
        if sources is not None and where not in sources:
            continue
        if where in MARKERS and _is_placeholder(segment):
            placeholders += 1
            continue
        answer = read(where, segment)
        if answer is not None:
            looked.append(where)
            if answer:
                return Parsed(answer)
    if sources == ("####",) and not any(w == "####" for w, _ in candidates):
        return failure("no '####' marker")
    if placeholders and not any(w in MARKERS for w in looked):
        return failure(f"only the copied placeholder (e.g. '#### <{kind}>') follows the marker")
    if any(w in MARKERS for w, _ in candidates):
        return failure(not_after_marker)
    return failure(f"no answer marker (####, <final_answer>, \\boxed, 'answer is') and {no_marker}")


def _read_letter(response: str, n_choices: int, sources: tuple[str, ...] | None) -> Parsed:
    letters = LETTERS[:n_choices]

    def read(where: str, segment: str) -> str:
        return _letter_in(_clean_segment(segment), letters, whole=(where == "whole reply")) or ""

    span = f"{letters[0]}-{letters[-1]}"
    return _read_final(response, sources, read, "letter", f"no choice letter ({span}) after the answer marker",
                       f"no lone choice letter ({span})")


@register("final_letter", "letter")
def final_letter(response: str, n_choices: int = 4) -> Parsed:
    """A choice letter after '####' or in <final_answer>, else boxed / 'the answer is (B)' / bold / a lone letter."""
    return _read_letter(response, n_choices, None)


@register("hash_letter", "letter")
def hash_letter(response: str, n_choices: int = 4) -> Parsed:
    """Seed 003 as published: the letter after the last '####' (think blocks, leaked turns and placeholders skipped)."""
    return _read_letter(response, n_choices, ("####",))


# -- numbers ---------------------------------------------------------------------------------------

_NUMBER = re.compile(
    r"(?<![\w.])([-+−–]?)\s?("
    r"\d{1,3}(?:[,\u00a0\u202f\u2009' ’]\d{3})+(?:\.\d+)?"   # 1,234,567.89  1 234  1'234
    r"|\d{1,3}(?:\.\d{3})+,\d+"                              # 1.234,5 (decimal comma with thousands dots)
    r"|\d+,\d{1,2}(?!\d)"                                    # 3,5 (decimal comma)
    r"|\d+(?:\.\d+)?"                                        # 1234  3.75
    r"|\.\d+"                                                # .5
    r")"
)


def _ascii_digits(text: str) -> str:
    """Any Unicode decimal digit (Arabic-Indic, Devanagari, full-width ...) as its ASCII digit."""
    out = []
    for char in text:
        if char.isdigit() and not ("0" <= char <= "9"):
            try:
                out.append(str(unicodedata.decimal(char)))
                continue
            except (TypeError, ValueError):
                pass
        out.append(char)
    text = "".join(out)
    return text.replace("٫", ".").replace("٬", ",").replace("，", ",").replace("．", ".").replace("−", "-")


def canonical_number(value: Decimal) -> str:
    """One spelling per number: no exponent, no trailing zeros, no "-0"."""
    if value == 0:
        return "0"
    text = format(value.normalize(), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def number_value(match: re.Match) -> Decimal | None:
    sign, digits = match.group(1), match.group(2)
    if re.fullmatch(r"\d{1,3}(?:\.\d{3})+,\d+", digits):
        digits = digits.replace(".", "").replace(",", ".")
    elif re.fullmatch(r"\d+,\d{1,2}", digits):
        digits = digits.replace(",", ".")
    else:
        digits = re.sub(r"[,\u00a0\u202f\u2009' ’]", "", digits)
    try:
        value = Decimal(digits)
    except InvalidOperation:
        return None
    return -value if sign in ("-", "−", "–") else value


def first_number(text: str) -> str | None:
    """The first number written in ``text``, canonical, or None."""
    for match in _NUMBER.finditer(_ascii_digits(text)):
        value = number_value(match)
        if value is not None:
            return canonical_number(value)
    return None


def _read_number(response: str, sources: tuple[str, ...] | None) -> Parsed:
    def read(where: str, segment: str) -> str | None:
        if where == "whole reply":
            # only a reply that is nothing but a number counts
            bare = _strip_decoration(_ascii_digits(segment))
            if not _NUMBER.fullmatch(bare):
                return None
        return first_number(_strip_decoration(_clean_segment(segment))) or ""

    return _read_final(response, sources, read, "number", "no number after the answer marker",
                       "the reply is not a number")


@register("final_number", "number")
def final_number(response: str) -> Parsed:
    """A number after '####' or in <final_answer>, else boxed / 'the answer is 42' / bold / a bare number."""
    return _read_number(response, None)


@register("hash_number", "number")
def hash_number(response: str) -> Parsed:
    """Seed 003 as published: the number after '####' (think blocks, leaked turns and placeholders skipped)."""
    return _read_number(response, ("####",))


# -- labels (topic classification) -------------------------------------------------------------------


@register("topic", "label")
def topic(response: str, labels: Sequence[str]) -> Parsed:
    """Seed 003's topic rule: the reply starts with a topic, or names exactly one of them (case-insensitive)."""
    text, error = strip_reasoning(response)
    if error:
        return failure(error)
    assert text is not None
    marked = [segment for where, segment in answer_candidates(text)[0]
              if where in ("<final_answer>", "####") and not _is_placeholder(segment)]
    pred = _clean_segment(marked[0] if marked else text).lower().strip()
    pred = re.sub(r"^[\s*_`\"'“”「『(\[]+", "", pred)
    if not pred:
        return failure("empty response")
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
        return failure(f"names several topics ({', '.join(named)})")
    return failure(f"names none of the topics ({', '.join(labels)})")


# -- free text (extractive QA spans, translations) -----------------------------------------------------


@register("jsquad_span", "text")
def jsquad_span(response: str) -> Parsed:
    """JGLUE JSQuAD: the generation up to the separator (a newline or '<NL>'), stripped; empty is a failure."""
    text = re.split(r"\n|<NL>", response, maxsplit=1)[0].strip()
    if not text:
        return failure("empty answer")
    return Parsed(text)


@register("translation", "text")
def translation(response: str) -> Parsed:
    """The reply as a translation: reasoning blocks, leaked turns and surrounding whitespace removed; empty is a failure."""
    text, error = strip_reasoning(response)
    if error:
        return failure(error)
    assert text is not None
    tags = _FINAL_TAG.findall(text)
    if tags:
        text = tags[-1]
    text = text.strip()
    if not text:
        return failure("empty response")
    return Parsed(text)
