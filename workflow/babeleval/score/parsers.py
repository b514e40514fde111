"""Answer parsers: read a model's free text and return its answer, or say why not.

A parser is registered by name with the *kind* of answer it reads, which
decides what it is given besides the response:

- ``letter``: ``(response, n_choices)`` -> a choice letter ("A".."Z");
- ``label``:  ``(response, labels)``    -> one of the labels (a topic name);
- ``number``: ``(response)``            -> a canonical number string ("1234", "-0.5");
- ``text``:   ``(response)``            -> the cleaned answer text (a span, a translation).

Parsers registered with ``uses_language`` also get the item's language
(a FLORES-200 code), for answer phrases in that language
(``babeleval.answer_phrases``).

A response that cannot be read is an explicit failure, never silently scored
as a wrong answer and never a guess. Its reason starts with one of the names in
``REASONS`` (``no answer``, ``ambiguous``, ``placeholder only``, ``empty
response``, ``unfinished reasoning``, ``no text response``), then ": " and
what was seen; scores count it as a parse failure and the analysis groups
failures by it. Templates name their parser; ``python -m babeleval parse``
runs any parser over a file of model outputs.

What models really write, and what ``final_letter`` / ``final_number`` read:

- reasoning in ``<think>``, ``<thinking>`` or ``<reasoning>`` blocks (a block
  closed with another of these names counts, so does a lone closing tag) is
  set aside; an answer inside the last block counts when nothing follows it;
  an unclosed ``<think>`` gives an answer only from an explicit marker inside
  it, else the reply is unfinished reasoning;
- a reply is cut at the first leaked chat turn or end-of-turn token
  (``<|im_end|>``, ``</s>``, ``<|eot_id|>``, ``[INST]``, "\\nUser:" ...);
- ``<final_answer>X</final_answer>`` (or the placeholder's own tags,
  ``<letter>C</letter>``, ``<number>18</number>``) wins; then the ``####``
  marker (the last readable one; on its own line, the answer on the next);
  the instruction's placeholder copied literally (``#### <letter>``) is
  skipped, and the line after it read if it is nothing but an answer;
- then ``\\boxed{X}``, an answer phrase in the item's language or English
  ("the answer is (B)", "Die Antwort ist B", "答えはBです", "คำตอบคือ 18",
  "Bが正解"), a bold ``**X**``, or a reply that is nothing but the answer;
- the most explicit place that names an answer decides; where it names two
  ("A or B", "18 or 20"), an unevaluated expression ("5000 + 600"), or a
  number whose separator could be a thousands or a decimal one ("5.600",
  unless the reply's other numbers show which), the result is ``ambiguous``.
  An equation's result is its answer ("5000 + 600 = 5600" is 5600).
"""

from __future__ import annotations

import re
import string
import unicodedata
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Callable, Sequence, Union

from ..core.choices import LETTERS
from ..core.numbers import canonical_number
from . import answer_phrases

KINDS = ("letter", "label", "number", "text")

# Failure reasons: every failure's text starts with one of these names.
EMPTY = "empty response"              # nothing but whitespace (or only closed tags)
NO_TEXT = "no text response"          # an API's null content, or a damaged record
NO_ANSWER = "no answer"               # text, but nothing that reads as an answer
AMBIGUOUS = "ambiguous"               # the answer place names two answers, or a number that reads two ways
PLACEHOLDER = "placeholder only"      # the instruction's "#### <letter>" copied, and no answer with it
UNFINISHED = "unfinished reasoning"   # the reply ends inside a <think> block
REASONS = (EMPTY, NO_TEXT, NO_ANSWER, AMBIGUOUS, PLACEHOLDER, UNFINISHED)


@dataclass(frozen=True)
class Parsed:
    answer: str | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def reason(self) -> str | None:
        """The failure's name (one of ``REASONS``), without the detail."""
        return None if self.error is None else self.error.split(":", 1)[0]


def failure(reason: str, detail: str = "") -> Parsed:
    assert reason in REASONS, reason
    return Parsed(None, f"{reason}: {detail}" if detail else reason)


@dataclass(frozen=True)
class ParserSpec:
    name: str
    kind: str
    func: Callable[..., Parsed]
    doc: str
    uses_language: bool = False

    def __call__(self, response: str, *args, **kwargs) -> Parsed:
        return self.func(response, *args, **kwargs)


PARSERS: dict[str, ParserSpec] = {}


def register(name: str, kind: str = "letter", uses_language: bool = False
             ) -> Callable[[Callable[..., Parsed]], Callable[..., Parsed]]:
    assert kind in KINDS, kind

    def decorate(func: Callable[..., Parsed]) -> Callable[..., Parsed]:
        doc = " ".join((func.__doc__ or "").strip().split("\n\n")[0].split())
        PARSERS[name] = ParserSpec(name, kind, func, doc, uses_language)
        return func
    return decorate


def get_parser(name: str) -> ParserSpec:
    try:
        return PARSERS[name]
    except KeyError:
        raise KeyError(f"unknown parser '{name}' (known: {', '.join(sorted(PARSERS))})") from None


def parse(name: str, response: str | None, *, n_choices: int = 4, labels: Sequence[str] = (),
          language: str | None = None) -> Parsed:
    """Run parser ``name`` on a response, giving it what its kind needs (and the item's language if it reads it)."""
    spec = get_parser(name)
    if not isinstance(response, str):  # an API's null content, or a damaged record
        return failure(NO_TEXT, f"got {'null' if response is None else type(response).__name__}")
    extra = {"language": language} if spec.uses_language else {}
    if spec.kind == "letter":
        return spec.func(response, n_choices, **extra)
    if spec.kind == "label":
        if not labels:
            return failure(NO_ANSWER, "no labels to choose from")
        return spec.func(response, list(labels), **extra)
    return spec.func(response, **extra)


# -- Belebele (the Belebele authors and the Belebele tutorial blog) ---------------------------------------


def _letter_at_start(text: str, letters: str) -> str | None:
    """The choice letter that opens ``text`` as a word of its own ("B", "B.", "B) ..."), else None."""
    if text and text[0] in letters and (len(text) == 1 or not text[1].isalpha()):
        return text[0]
    return None


@register("belebele_instruct", "letter")
def belebele_instruct(response: str, n_choices: int = 4) -> Parsed:
    """The Belebele authors' post-processing for chat models asked for a letter.

    It drops parentheses, so "(B)" reads as "B", and, when the answer does not
    start with a letter, drops the prefix "The correct answer is ". Where the
    original fell back to the first character whatever it was, this takes a
    first character only when it is a choice letter standing alone ("B. text"),
    and otherwise reports the failure instead of scoring it as wrong.
    """
    letters = LETTERS[:n_choices]
    text = response.replace("(", "").replace(")", "").strip()
    if not text:
        return failure(EMPTY)
    if text in letters:
        return Parsed(text)
    prefix = "the correct answer is "
    if text.lower().startswith(prefix):
        text = text[len(prefix):].strip()
    letter = _letter_at_start(text, letters)
    if letter is None:
        return failure(NO_ANSWER, f"no choice letter ({', '.join(letters)}) at the start of the answer")
    return Parsed(letter)


@register("belebele_blog", "letter")
def belebele_blog(response: str, n_choices: int = 4) -> Parsed:
    """The Belebele tutorial blog's ``parse_choice``: the first line, stripped; a lone letter, or a letter not followed by a letter."""
    letters = LETTERS[:n_choices]
    text = response.split("\n")[0].strip()
    if not text:
        return failure(EMPTY)
    letter = _letter_at_start(text, letters)
    if letter is None:
        return failure(NO_ANSWER, f"first line does not start with a choice letter ({', '.join(letters)}) standing alone")
    return Parsed(letter)


# -- reasoning blocks and leaked turns --------------------------------------------------------------

# Any of these opens or closes a reasoning block; a block opened with one name and closed with another counts.
_REASONING_TAG = re.compile(r"<(/?)(think|thinking|reasoning)>", re.IGNORECASE)

# Where a chat model's turn ends, or a next turn it made up begins: nothing after it is the answer.
_TURN_END = re.compile(
    r"<\|im_end\|>|<\|im_start\|>|<\|eot_id\|>|<\|end\|>|<\|endoftext\|>|<\|end_of_text\|>|<\|user\|>"
    r"|<\|start_header_id\|>|<end_of_turn>|<start_of_turn>|</s>|\[INST\]|<\|assistant\|>"
    r"|\n\s*(?:User|USER|Human|HUMAN|Question|### (?:Human|User|Instruction))\s*:",
)


@dataclass(frozen=True)
class Reply:
    """A response split by its reasoning tags.

    ``text``: what the model wrote outside reasoning blocks, cut at a leaked turn; ``reasoning``: the content of
    the last closed block (read only when ``text`` is empty: an answer inside a block counts when nothing
    follows it); ``unfinished``: the content of a ``<think>`` block never closed, else None.
    """

    text: str
    reasoning: str = ""
    unfinished: str | None = None


def _cut_turn(text: str) -> str:
    turn = _TURN_END.search(text)
    return text[: turn.start()] if turn else text


def split_reasoning(response: str) -> Reply:
    """Walk the reasoning tags in order: text at depth 0 is the reply; a block closes with any reasoning tag."""
    outside: list[str] = []
    last_block = ""
    pos = depth = start = 0
    opener = ""
    for tag in _REASONING_TAG.finditer(response):
        if tag.group(1) != "/":
            if depth == 0:
                outside.append(response[pos:tag.start()])
                start, opener = tag.end(), tag.group(2).lower()
            depth += 1
        elif depth == 0:
            # a close with no open: the template opened the block, so everything before it was reasoning
            last_block, outside, pos = response[pos:tag.start()], [], tag.end()
        else:
            depth -= 1
            if depth == 0:
                last_block, pos = response[start:tag.start()], tag.end()
    unfinished = None
    if depth:
        if opener == "reasoning":
            # the instruction's "<reasoning> #### <letter>" copied as a heading: what follows is the reply itself
            outside.append(response[start:])
        else:
            unfinished = _cut_turn(response[start:])
    else:
        outside.append(response[pos:])
    return Reply(_cut_turn("".join(outside)), _cut_turn(last_block), unfinished)


def strip_reasoning(response: str) -> tuple[str | None, str | None]:
    """The reply outside reasoning blocks and leaked turns, for free-text parsers: (text, None) or (None, reason)."""
    reply = split_reasoning(response)
    if reply.unfinished is not None:
        return None, f"{UNFINISHED}: the reply ends inside a <think> block"
    return reply.text, None


# -- answer candidates: where in a reply an answer may be read, most explicit first ----------------

_ANSWER_TAG = re.compile(r"<final_answer>(.*?)(?:</final_answer>|$)|<(answer|letter|number)>([^<]*)</\2>",
                         re.IGNORECASE | re.DOTALL)
_MARKER = "####"
# Closing tags, end tokens and markdown that may surround an answer.
_CLOSING = re.compile(r"</?[A-Za-z_][\w-]*>|<\|[^|>]*\|>")
# The instruction's placeholder copied after the marker ("#### <letter>").
_PLACEHOLDER = re.compile(r"^\s*[<\[{]\s*(letter|number|answer|reasoning|topic|final[ _]answer)\s*[>\]}]", re.IGNORECASE)
_BOXED = re.compile(r"\\boxed\s*\{((?:[^{}]|\{[^{}]*\})*)\}")
_BOLD = re.compile(r"\*\*([^*\n]{1,80})\*\*")

TAG, MARKER, NEXT_LINE, BOXED, PHRASE, PHRASE_AFTER, BOLD, WHOLE = (
    "answer tag", "####", "line after a copied placeholder", "\\boxed", "answer phrase", "phrase after the answer",
    "bold", "whole reply")
MARKERS = (TAG, MARKER, NEXT_LINE)
# Sources whose text is nothing but the answer, where a lower-case letter ("#### b") is read.
EXPLICIT = (TAG, MARKER, BOXED)


@dataclass(frozen=True)
class Candidates:
    found: list[tuple[str, str]]
    placeholders: int  # copied placeholders with no answer on their own line


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.split("\n") if line.strip()), "")


def _marker_candidates(text: str) -> tuple[list[tuple[str, str]], int]:
    """What follows each ``####``, last first: the rest of its line, else the next non-empty line; a copied
    placeholder ("#### <number>") is skipped and the line after it read, if it is nothing but an answer."""
    found, placeholders = [], 0
    for part in reversed(text.split(_MARKER)[1:]):
        part = part.lstrip("#")  # "#####"
        line, _, after = part.partition("\n")
        placeholder = _PLACEHOLDER.match(line)
        if placeholder:
            rest = _CLOSING.sub(" ", line[placeholder.end():]).strip()
            if rest:
                found.append((MARKER, rest))
                continue
            placeholders += 1
            if _first_line(after):
                found.append((NEXT_LINE, _first_line(after)))
            continue
        found.append((MARKER, line.strip() or _first_line(after)))
    return found, placeholders


# How far from an answer phrase its answer is looked for: the answer stands next to the phrase, and a bound keeps
# a long reply with many phrases linear.
_PHRASE_REACH = 200


def _phrase_candidates(text: str, language: str | None) -> list[tuple[str, str]]:
    """Answer phrases of the item's language and English ("La réponse est B", "Bが正解"), last first."""
    before, after = answer_phrases.patterns(language)
    # ordered by where the answer itself stands: after a "before" phrase, before an "after" phrase
    found = []
    for m in before.finditer(text):
        rest = text[m.end():m.end() + _PHRASE_REACH].split("\n", 1)[0]
        if rest.strip():
            found.append((m.end(), PHRASE, rest))
    if after is not None:
        for m in after.finditer(text):
            rest = text[max(0, m.start() - _PHRASE_REACH):m.start()].rsplit("\n", 1)[-1]
            if rest.strip():
                found.append((m.start(), PHRASE_AFTER, rest.strip()))
    return [(where, segment) for _, where, segment in sorted(found, key=lambda f: f[0], reverse=True)]


def answer_candidates(text: str, language: str | None = None) -> Candidates:
    """Places an answer may be read from in a reply (reasoning already split off), most explicit first."""
    found: list[tuple[str, str]] = []
    for match in reversed(list(_ANSWER_TAG.finditer(text))):
        found.append((TAG, (match.group(1) if match.group(1) is not None else match.group(3)).strip()))
    markers, placeholders = _marker_candidates(text)
    found += markers
    found += [(BOXED, inner.strip()) for inner in reversed(_BOXED.findall(text))]
    found += _phrase_candidates(text, language)
    found += [(BOLD, inner.strip()) for inner in reversed(_BOLD.findall(text))]
    found.append((WHOLE, _clean_segment(text)))
    return Candidates(found, placeholders)


def _clean_segment(segment: str) -> str:
    return _CLOSING.sub(" ", segment).strip()


def _strip_decoration(text: str) -> str:
    text = text.strip()
    text = re.sub(r"^[*_`$\s]+|[*_`$\s]+$", "", text)
    text = _BOXED.sub(lambda m: m.group(1), text)
    return text.strip()


@dataclass(frozen=True)
class Ambiguous:
    """A place that names more than one answer: a failure, never one of them."""

    detail: str


Reading = Union[str, Ambiguous, None]  # an answer, an ambiguity, or nothing readable here


def _read_reply(response: str, sources: tuple[str, ...] | None, read: Callable[[str, str, str], Reading],
                kind: str, not_after_marker: str, no_marker: str, language: str | None) -> Parsed:
    """Read a reply's answer: outside reasoning blocks; inside the last block when nothing follows it; inside an
    unclosed ``<think>`` block only from an explicit marker. Else say why, most specific reason first."""
    reply = split_reasoning(response)
    if reply.unfinished is not None:
        parsed = _walk(answer_candidates(reply.unfinished, language), (TAG, MARKER, NEXT_LINE, BOXED), read, response)
        if parsed is None and reply.text.strip():
            parsed = _walk(answer_candidates(reply.text, language), sources, read, response)
        return parsed or failure(UNFINISHED, "the reply ends inside a <think> block with no answer marker in it")
    if not reply.text.strip():
        if not reply.reasoning.strip():
            return failure(EMPTY)
        parsed = _walk(answer_candidates(reply.reasoning, language), sources, read, response)
        return parsed or failure(NO_ANSWER, "only a reasoning block, with no answer in it and nothing after it")
    candidates = answer_candidates(reply.text, language)
    parsed = _walk(candidates, sources, read, response)
    if parsed is not None:
        return parsed
    if sources == (MARKER, NEXT_LINE) and not any(w in (MARKER, NEXT_LINE) for w, _ in candidates.found) \
            and not candidates.placeholders:
        return failure(NO_ANSWER, "no '####' marker")
    if candidates.placeholders and not any(w in (TAG, MARKER) for w, _ in candidates.found):
        return failure(PLACEHOLDER, f"only the instruction's '#### <{kind}>' copied, with no answer after it")
    if any(w in MARKERS for w, _ in candidates.found):
        return failure(NO_ANSWER, not_after_marker)
    return failure(NO_ANSWER, f"no answer marker (####, <final_answer>, \\boxed, an answer phrase) and {no_marker}")


def _walk(candidates: Candidates, sources: tuple[str, ...] | None, read: Callable[[str, str, str], Reading],
          context: str) -> Parsed | None:
    """The first candidate that reads as an answer or as ambiguous, as a result; None if none does."""
    found = [(where, segment) for where, segment in candidates.found if sources is None or where in sources]
    for index, (where, segment) in enumerate(found):
        reading = read(where, segment, context)
        if isinstance(reading, Ambiguous):
            return failure(AMBIGUOUS, reading.detail)
        if reading:
            if where in (PHRASE, PHRASE_AFTER):
                # without a marker, phrases that name different answers ("A is correct if ..., C is correct
                # otherwise") leave the answer open
                others = {read(w, s, context) for w, s in found[index + 1:] if w in (PHRASE, PHRASE_AFTER)}
                others = sorted(o for o in others if isinstance(o, str) and o and o != reading)
                if others:
                    return failure(AMBIGUOUS, f"answer phrases name {reading} and {', '.join(others)}")
            return Parsed(reading)
    return None


# -- letters ---------------------------------------------------------------------------------------

_OPTION_WORD = re.compile(rf"^(?:(?:{answer_phrases.OPTION_WORDS})(?:\s*[:：]\s*|\s+)"
                          rf"|(?:{answer_phrases.OPTION_WORDS_UNSPACED})\s*[:：]?\s*)+", re.IGNORECASE)
_OPENER = re.compile(rf"^(?:{answer_phrases.ALTERNATIVE_OPENERS})\s+", re.IGNORECASE)
_LETTER = re.compile(r"^[\(\[（【]?\s*([A-Za-z])(?:\s*[\)\]）】])?")
# After a letter that is the whole answer: the end, punctuation, or a new line ("B", "B.", "B) text", "B:")
_LETTER_END_STRICT = re.compile(r"$|[.:：)\]）】,;、。]|\s*\n")
# After a letter an answer phrase introduced: anything but a Latin letter or digit ("B because", "Bです", "B है")
_LETTER_END = re.compile(r"$|[^A-Za-z0-9]")
_ALTERNATIVE = re.compile(rf"^\s*[\)\]）】]?\s*(?:{answer_phrases.ALTERNATIVE_JOINERS})\s*[\(\[]?\s*([A-Z])(?![A-Za-z])")
# Cyrillic capitals that look like choice letters, as a Russian or Ukrainian reply may write them ("Ответ: В").
_CYRILLIC_LOOKALIKES = str.maketrans("АВСЕ", "ABCE")


_LAST_LETTER = re.compile(r"(?<![A-Za-z])[\(\[（【]?([A-Z])[\)\]）】]?\s*$")
_ALTERNATIVE_BEFORE = re.compile(rf"(?<![A-Za-z])([A-Z])[\)\]）】]?\s*(?:{answer_phrases.ALTERNATIVE_JOINERS})\s*$")


def _letter_before(text: str, letters: str) -> Reading:
    """The choice letter a phrase follows ("So B is correct", "Cが正解"): the last thing before the phrase."""
    match = _LAST_LETTER.search(text)
    if not match or match.group(1) not in letters:
        return None
    other = _ALTERNATIVE_BEFORE.search(text[: match.start()])
    if other and other.group(1) in letters and other.group(1) != match.group(1):
        return Ambiguous(f"names both {other.group(1)} and {match.group(1)}")
    return match.group(1)


def _letter_in(segment: str, letters: str, where: str) -> Reading:
    """A choice letter standing as the answer: "B", "(B)", "B)", "B.", "B: text", "**B**", "Option B", "la B"."""
    text = _strip_decoration(unicodedata.normalize("NFKC", _clean_segment(segment)))  # full-width "Ｂ" is "B"
    if where == PHRASE_AFTER:
        return _letter_before(text, letters)
    text = _strip_decoration(_OPTION_WORD.sub("", text))
    text = _OPENER.sub("", text)
    if re.fullmatch(r"[АВСЕ][.)]?", text):
        text = text.translate(_CYRILLIC_LOOKALIKES)
    match = _LETTER.match(text)
    if not match:
        return None
    rest = text[match.end():]
    strict = where in (WHOLE, NEXT_LINE, BOLD)
    if not (_LETTER_END_STRICT if strict else _LETTER_END).match(rest):
        return None
    letter = match.group(1)
    if letter.upper() not in letters:
        return None
    # a lone lower-case letter is read only where it is plainly the answer ("#### b"), not the article "a"
    if letter.islower() and (where not in EXPLICIT or text.strip(" .") != letter):
        return None
    other = _ALTERNATIVE.match(rest)
    if other and other.group(1) in letters and other.group(1) != letter.upper():
        return Ambiguous(f"names both {letter.upper()} and {other.group(1)}")
    return letter.upper()


def _read_letter(response: str, n_choices: int, sources: tuple[str, ...] | None, language: str | None) -> Parsed:
    letters = LETTERS[:n_choices]

    def read(where: str, segment: str, context: str) -> Reading:
        return _letter_in(segment, letters, where)

    span = f"{letters[0]}-{letters[-1]}"
    return _read_reply(response, sources, read, "letter", f"no choice letter ({span}) after the answer marker",
                       f"no lone choice letter ({span})", language)


@register("final_letter", "letter", uses_language=True)
def final_letter(response: str, n_choices: int = 4, language: str | None = None) -> Parsed:
    """A choice letter after '####' or in <final_answer>, else boxed / an answer phrase in the item's language
    ("the answer is (B)", "La réponse est B", "答えはBです") / bold / a lone letter."""
    return _read_letter(response, n_choices, None, language)


@register("hash_letter", "letter")
def hash_letter(response: str, n_choices: int = 4) -> Parsed:
    """languagebench as published: the letter after the last '####' and nothing else (reasoning blocks, leaked turns and
    copied placeholders handled as final_letter does)."""
    return _read_letter(response, n_choices, (MARKER, NEXT_LINE), None)


# -- numbers ---------------------------------------------------------------------------------------

_NUMBER = re.compile(
    r"(?<![0-9A-Za-z_.])([-+−–]?)\s?("                       # a number may touch CJK or Thai text: 答えは18です
    r"\d{1,3}(?:[,\u00a0\u202f\u2009' ’]\d{3})+(?:\.\d+)?"   # 1,234,567.89  1 234  1'234
    r"|\d{1,3}(?:\.\d{3})+,\d+"                              # 1.234,5 (decimal comma with thousands dots)
    r"|\d{1,3}(?:\.\d{3}){2,}(?![\d.])"                      # 1.234.567 (thousands dots)
    r"|\d+,\d{1,2}(?!\d)"                                    # 3,5 (decimal comma)
    r"|\d+(?:\.\d+)?"                                        # 1234  3.75
    r"|\.\d+"                                                # .5
    r")"
)
# "5.600": 5600 with a thousands dot (German, Spanish, Indonesian ...) or 5.6 with a decimal point.
_DOT_THOUSAND = re.compile(r"[1-9]\d{0,2}\.\d{3}")
_DOTS_ARE_THOUSANDS = re.compile(r"(?<![\d.,])\d{1,3}(?:\.\d{3}){2,}(?![\d.])|\d{1,3}(?:\.\d{3})+,\d")
_DOTS_ARE_DECIMAL = re.compile(r"(?<![\d.,])\d+\.\d{1,2}(?!\d)|\d\.\d{4,}|\d{1,3}(?:,\d{3})+\.\d")
_EXPRESSION_GOES_ON = re.compile(r"^\s*[-+*/×÷xX]\s*[-+]?\d")
_SECOND_NUMBER = re.compile(rf"^\s*(?:{answer_phrases.ALTERNATIVE_JOINERS})\s*[-+]?\d", re.IGNORECASE)
_CURRENCY = "$€£¥₹₩฿₫₺₽"


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
    return (text.replace("٫", ".").replace("٬", ",").replace("，", ",").replace("．", ".").replace("−", "-")
            .replace("＝", "=").replace("＋", "+"))


def number_value(match: re.Match) -> Decimal | None:
    sign, digits = match.group(1), match.group(2)
    if re.fullmatch(r"\d{1,3}(?:\.\d{3})+,\d+", digits):
        digits = digits.replace(".", "").replace(",", ".")
    elif re.fullmatch(r"\d{1,3}(?:\.\d{3}){2,}", digits):
        digits = digits.replace(".", "")
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


def _dot_reading(digits: str, context: str) -> Reading:
    """"5.600" as the rest of the reply writes numbers: thousands dots, decimal points, or ambiguous."""
    context = _ascii_digits(context)
    thousands, decimal = bool(_DOTS_ARE_THOUSANDS.search(context)), bool(_DOTS_ARE_DECIMAL.search(context))
    if thousands != decimal:
        return canonical_number(Decimal(digits.replace(".", "") if thousands else digits))
    return Ambiguous(f"'{digits}' reads as {canonical_number(Decimal(digits.replace('.', '')))} with a thousands "
                     f"separator or {canonical_number(Decimal(digits))} with a decimal point")


def _number_in(segment: str, where: str, context: str) -> Reading:
    """The answer number of a segment: the result of an equation ("5000 + 600 = 5600" is 5600), never a part
    of an unevaluated expression or one of two numbers; "" where the segment holds no number."""
    text = _strip_decoration(_ascii_digits(_clean_segment(segment)))
    if "=" in text:
        text = text.rsplit("=", 1)[1]
    text = text.strip().lstrip(_CURRENCY).strip()
    strict = where in (WHOLE, NEXT_LINE)
    if where == WHOLE:
        text = text.split("\n")[-1].strip()  # the last line: "... = 5600"
    match = _NUMBER.search(text)
    if match is None:
        return None
    if where in (PHRASE, BOLD, WHOLE, NEXT_LINE) and text[: match.start()].strip():
        return None  # "the answer depends on 3 factors": the number must open what the phrase introduces
    if where == PHRASE_AFTER:
        match = list(_NUMBER.finditer(text))[-1]
    rest = text[match.end():]
    if strict and (re.search(r"\d", rest) or len(rest.strip()) > 20):
        return None  # a reply (or the line after a placeholder) counts only when it is the number and a unit
    if _EXPRESSION_GOES_ON.match(rest):
        return Ambiguous(f"an unevaluated expression ('{text.strip()[:40]}'), not a number")
    if _SECOND_NUMBER.match(rest):
        return Ambiguous(f"names more than one number ('{text.strip()[:40]}')")
    digits = match.group(2)
    if _DOT_THOUSAND.fullmatch(digits):
        reading = _dot_reading(digits, context)
        if isinstance(reading, str) and match.group(1) in ("-", "−", "–"):
            return canonical_number(-Decimal(reading))
        return reading
    value = number_value(match)
    return canonical_number(value) if value is not None else None


def _read_number(response: str, sources: tuple[str, ...] | None, language: str | None) -> Parsed:
    def read(where: str, segment: str, context: str) -> Reading:
        return _number_in(segment, where, context)

    return _read_reply(response, sources, read, "number", "no number after the answer marker",
                       "the reply is not a number", language)


@register("final_number", "number", uses_language=True)
def final_number(response: str, language: str | None = None) -> Parsed:
    """A number after '####' or in <final_answer>, else boxed / an answer phrase in the item's language
    ("the answer is 42", "答えは18です") / bold / a bare number; an equation's result, never a guess."""
    return _read_number(response, None, language)


@register("hash_number", "number")
def hash_number(response: str) -> Parsed:
    """languagebench as published: the number after '####' and nothing else (reasoning blocks, leaked turns and
    copied placeholders handled as final_number does)."""
    return _read_number(response, (MARKER, NEXT_LINE), None)


# -- labels (topic classification) -------------------------------------------------------------------


@register("topic", "label")
def topic(response: str, labels: Sequence[str]) -> Parsed:
    """languagebench's topic rule: the reply starts with a topic, or names exactly one of them (case-insensitive)."""
    text, error = strip_reasoning(response)
    if error:
        return Parsed(None, error)
    assert text is not None
    marked = [segment for where, segment in answer_candidates(text).found if where in (TAG, MARKER)]
    pred = _clean_segment(marked[0] if marked else text).lower().strip()
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


# -- free text (extractive QA spans, translations) -----------------------------------------------------


@register("jsquad_span", "text")
def jsquad_span(response: str) -> Parsed:
    """JGLUE JSQuAD: the generation up to the separator (a newline or '<NL>'), stripped; empty is a failure."""
    text = re.split(r"\n|<NL>", response, maxsplit=1)[0].strip()
    if not text:
        return failure(EMPTY, "nothing before the separator")
    return Parsed(text)


_FINAL_TAG = re.compile(r"<final_answer>(.*?)(?:</final_answer>|$)", re.IGNORECASE | re.DOTALL)


@register("translation", "text")
def translation(response: str) -> Parsed:
    """The reply as a translation: reasoning blocks, leaked turns and surrounding whitespace removed; empty is a failure."""
    text, error = strip_reasoning(response)
    if error:
        return Parsed(None, error)
    assert text is not None
    tags = _FINAL_TAG.findall(text)
    if tags:
        text = tags[-1]
    text = text.strip()
    if not text:
        return failure(EMPTY)
    return Parsed(text)
