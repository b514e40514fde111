"""Reading a reply: where in a model's free text an answer may stand, before a kind of answer is read there.

What models really write, and what ``final_letter`` / ``final_number`` read:

- the reply is split first (``structure``): every reasoning family's wrapper
  (``<think>``, ``[THINK]``, harmony's analysis channel, ...) is set aside and
  leaked chat turns are cut off; an answer inside the last block counts when
  nothing follows it; a reply cut inside its reasoning gives an answer only
  from an explicit marker inside it, else it is ``cut while reasoning``;
- ``<final_answer>X</final_answer>`` (or the placeholder's own tags,
  ``<letter>C</letter>``, ``<number>18</number>``) wins; then the ``####``
  marker (the last readable one; on its own line, the answer on the next);
  the instruction's placeholder copied literally (``#### <letter>``) is
  skipped, and the line after it read if it is nothing but an answer;
- then ``\\boxed{X}``, an answer phrase ("the answer is (B)", "Die Antwort
  ist B", "答えはBです", "คำตอบคือ 18", "Bが正解", "【答案】 C"): those of the
  item's language and English first, then those of any other language; a
  bold ``**X**``; or a reply that is nothing but the answer;
- LaTeX and markdown around an answer (``\\(F\\)``, ``\\text{Answer: } 350``,
  ``**B**``, ``$18$``), brackets (``[6]``) and a copied placeholder word
  (``[num] 117``) are peeled off;
- a reply that stopped at the token limit is read only from an explicit
  marker (tag, ``####``, ``\\boxed``) or from its first line, never from
  inside its reasoning; else it is ``cut at the length limit``;
- the most explicit place that names an answer decides; where it names two
  ("A or B", "18 or 20"), an unevaluated expression ("5000 + 600"), or a
  number whose separator could be a thousands or a decimal one ("5.600",
  unless the reply's other numbers show which), the result is ``ambiguous``.
  An equation's result is its answer ("5000 + 600 = 5600" is 5600).

The letter and number parsers give ``read_reply`` a function that reads their kind of answer from one place;
the others use ``strip_reasoning`` and ``answer_candidates`` directly.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Union

from .. import answer_phrases
from .registry import AMBIGUOUS, CUT, EMPTY, NO_ANSWER, PLACEHOLDER, UNFINISHED, Parsed, failure
from .structure import split_reply


def strip_reasoning(response: str) -> tuple[str | None, str | None]:
    """The reply outside reasoning blocks and leaked turns, for free-text parsers: (text, None) or (None, reason)."""
    reply = split_reply(response)
    if reply.unfinished is not None:
        return None, f"{UNFINISHED}: the reply ends inside its reasoning"
    return reply.text, None


# -- answer candidates: where in a reply an answer may be read, most explicit first ----------------

# The protocol's own answer tag, which a translation is read from too; an unclosed one runs to the end.
_FINAL_ANSWER = r"<final_answer>(.*?)(?:</final_answer>|$)"
FINAL_ANSWER_TAG = re.compile(_FINAL_ANSWER, re.IGNORECASE | re.DOTALL)
# Any answer tag: the protocol's own, or the instruction's placeholder written as a tag ("<letter>C</letter>").
_ANSWER_TAG = re.compile(_FINAL_ANSWER + r"|<(answer|letter|number)>([^<]*)</\2>", re.IGNORECASE | re.DOTALL)
_MARKER = "####"
# Closing tags, end tokens and markdown that may surround an answer.
_CLOSING = re.compile(r"</?[A-Za-z_][\w-]*>|<\|[^|>]*\|>")
# The instruction's placeholder copied after the marker ("#### <letter>").
_PLACEHOLDER_WORDS = r"letter|number|num|answer|reasoning|topic|label|final[ _]answer|your[ _]answer"
_PLACEHOLDER = re.compile(rf"^\s*[<\[{{]\s*(?:{_PLACEHOLDER_WORDS})\s*[>\]}}]", re.IGNORECASE)
_BOXED = re.compile(r"\\boxed\s*\{((?:[^{}]|\{[^{}]*\})*)\}")
_BOLD = re.compile(r"\*\*([^*\n]{1,200})\*\*")  # a bold choice may carry its long option text

TAG, MARKER, NEXT_LINE, BOXED, LABEL, PHRASE, PHRASE_AFTER, BOLD, WHOLE = (
    "answer tag", "####", "line after a copied placeholder", "\\boxed", "answer label", "answer phrase",
    "phrase after the answer", "bold", "whole reply")
# Answer phrases: a label is one that ends in a colon or a bracket ("Answer:", "答案：", "【答案】"), which may
# introduce a sentence that holds the answer ("答案：他一共花了 2,340 元。").
PHRASES = (LABEL, PHRASE, PHRASE_AFTER)
MARKERS = (TAG, MARKER, NEXT_LINE)
# The only sources languagebench's published parsers read (hash_letter, hash_number).
MARKER_ONLY = (MARKER, NEXT_LINE)
# Sources whose text is nothing but the answer, where a lower-case letter ("#### b") is read.
EXPLICIT = (TAG, MARKER, BOXED)
# What a reply that stopped at the token limit is read from, anywhere in it (else only from its first line).
CUT_SOURCES = (TAG, MARKER, NEXT_LINE, BOXED)


@dataclass(frozen=True)
class Candidates:
    found: list[tuple[str, str]]
    placeholders: int  # copied placeholders with no answer on their own line
    final: frozenset[int] = frozenset()  # the places in ``found`` a phrase names as the final answer


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


def _is_final(text: str, start: int, end: int) -> bool:
    """Whether the phrase at ``start:end`` is a final answer's ("The final answer is", "最终答案是"), in its sentence."""
    sentence = re.split(r"[.。!?！？\n]", text[max(0, start - 40):end])[-1]
    return answer_phrases.FINAL.search(sentence) is not None


def _phrase_matches(before: re.Pattern | None, after: re.Pattern | None, text: str
                    ) -> list[tuple[int, str, str, bool]]:
    """(position, source, segment, final) of every phrase: the rest of the line after a "before" phrase (a label's
    next line where it ends its own: "The correct answer is:\n(B) Paris"), the line up to an "after" phrase."""
    found = []
    for m in before.finditer(text) if before is not None else ():
        rest, _, after_line = text[m.end():m.end() + _PHRASE_REACH].partition("\n")
        label = m.group(0).rstrip().endswith((":", "：", "】", "]"))
        if label and not rest.strip():
            rest = _first_line(after_line)
        if rest.strip():
            found.append((m.end(), LABEL if label else PHRASE, rest, _is_final(text, m.start(), m.end())))
    for m in after.finditer(text) if after is not None else ():
        rest = text[max(0, m.start() - _PHRASE_REACH):m.start()].rsplit("\n", 1)[-1]
        if rest.strip():
            found.append((m.start(), PHRASE_AFTER, rest.strip(), _is_final(text, m.start(), m.end())))
    return found


def _phrase_candidates(text: str, language: str | None) -> list[tuple[str, str, bool]]:
    """Answer phrases, last first: those of the item's language and English ("La réponse est B", "Bが正解"), then
    those of every other language (a Russian reply to an English question), where they stand elsewhere."""
    patterns = answer_phrases.patterns(language)
    first = _phrase_matches(patterns.before, patterns.after, text)
    taken = {where for where, _, _, _ in first}
    others = [f for f in _phrase_matches(patterns.other_before, patterns.other_after, text) if f[0] not in taken]
    ranked = sorted(first, key=lambda f: f[0], reverse=True) + sorted(others, key=lambda f: f[0], reverse=True)
    return [(where, segment, final) for _, where, segment, final in ranked]


# LaTeX that wraps text without changing it: inline and display math delimiters, text and font commands.
_LATEX_DELIMITER = re.compile(r"\\[()\[\]]")
_LATEX_TEXT = re.compile(r"\\(?:text|textbf|textit|mathrm|mathbf|operatorname|mbox)\s*\{([^{}]*)\}")


def plain(text: str) -> str:
    """A reply without LaTeX wrappers: ``\\(F\\)`` is "F", ``\\text{Answer: } 350`` is "Answer:  350"."""
    return _LATEX_DELIMITER.sub(" ", _LATEX_TEXT.sub(lambda m: m.group(1), text))


def answer_candidates(text: str, language: str | None = None) -> Candidates:
    """Places an answer may be read from in a reply (reasoning already split off), most explicit first."""
    text = plain(text)
    found: list[tuple[str, str]] = []
    for match in reversed(list(_ANSWER_TAG.finditer(text))):
        found.append((TAG, (match.group(1) if match.group(1) is not None else match.group(3)).strip()))
    markers, placeholders = _marker_candidates(text)
    found += markers
    found += [(BOXED, inner.strip()) for inner in reversed(_BOXED.findall(text))]
    final = set()
    for where, segment, is_final in _phrase_candidates(text, language):
        if is_final:
            final.add(len(found))
        found.append((where, segment))
    found += [(BOLD, inner.strip()) for inner in reversed(_BOLD.findall(text))]
    found.append((WHOLE, clean_segment(text)))
    return Candidates(found, placeholders, frozenset(final))


def clean_segment(segment: str) -> str:
    """A place's text without the tags and end tokens around it."""
    return _CLOSING.sub(" ", segment).strip()


# Brackets and quotes around a whole answer ("[6]", "「18」"); a parenthesised letter is read as it is.
_AROUND = re.compile(r"^[\[【「『“\"](.*)[\]】」』”\"]$", re.DOTALL)


def strip_decoration(text: str) -> str:
    """An answer without the markdown, LaTeX, ``\\boxed{}``, brackets and copied placeholder word a model wraps it in
    ("**B**", "$18$", "[6]", "[num] 117")."""
    for _ in range(3):  # wrappers nest: "**\\boxed{18}**", "$\\boxed{[6]}$"
        before = text
        text = plain(text).strip()
        text = re.sub(r"^[*_`$\s]+|[*_`$\s]+$", "", text)
        text = _BOXED.sub(lambda m: m.group(1), text).strip()
        placeholder = _PLACEHOLDER.match(text)
        if placeholder and text[placeholder.end():].strip():
            text = text[placeholder.end():].strip()
        around = _AROUND.match(text)
        if around:
            text = around.group(1).strip()
        if text == before:
            break
    return text


@dataclass(frozen=True)
class Refused:
    """A place that names an answer that cannot be taken (two answers, a number that reads two ways, an expression):
    a failure with its reason, never a guess."""

    detail: str
    reason: str = AMBIGUOUS
    settled: bool = False  # the reply gives no answer, as the rules decided (``Parsed.settled``)


@dataclass(frozen=True)
class Ambiguous(Refused):
    """A place that names more than one answer, or one that reads two ways."""


Reading = Union[str, Refused, None]  # an answer, a refusal, or nothing readable here


def read_reply(response: str, sources: tuple[str, ...] | None, read: Callable[[str, str, str], Reading],
               kind: str, not_after_marker: str, no_marker: str, language: str | None, cut: bool = False) -> Parsed:
    """Read a reply's answer: outside reasoning blocks; inside the last block when nothing follows it; inside an
    unclosed ``<think>`` block only from an explicit marker; in a reply cut at the token limit only from an explicit
    marker or its first line. Else say why, most specific reason first."""
    reply = split_reply(response)
    if cut and reply.unfinished is None and reply.text.strip():
        return _read_cut(reply.text, sources, read, response, language)
    if reply.unfinished is not None:
        parsed = _walk(answer_candidates(reply.unfinished, language), (TAG, MARKER, NEXT_LINE, BOXED), read, response)
        if parsed is None and reply.text.strip():
            parsed = _walk(answer_candidates(reply.text, language), sources, read, response)
        return parsed or failure(UNFINISHED, "the reply ends inside its reasoning, with no answer marker in it")
    if not reply.text.strip():
        if not reply.reasoning.strip():
            return failure(EMPTY)
        parsed = _walk(answer_candidates(reply.reasoning, language), sources, read, response)
        return parsed or failure(NO_ANSWER, "only a reasoning block, with no answer in it and nothing after it")
    candidates = answer_candidates(reply.text, language)
    parsed = _walk(candidates, sources, read, response)
    if parsed is not None:
        return parsed
    if sources == MARKER_ONLY and not any(w in MARKER_ONLY for w, _ in candidates.found) \
            and not candidates.placeholders:
        return failure(NO_ANSWER, "no '####' marker")
    if candidates.placeholders and not any(w in (TAG, MARKER) for w, _ in candidates.found):
        return failure(PLACEHOLDER, f"only the instruction's '#### <{kind}>' copied, with no answer after it")
    if any(w in MARKERS for w, _ in candidates.found):
        return failure(NO_ANSWER, not_after_marker)
    return failure(NO_ANSWER, f"no answer marker (####, <final_answer>, \\boxed, an answer phrase) and {no_marker}")


_PIECES = re.compile(r"\n+|(?<=[.。!?！？])\s*")


def loops(text: str) -> bool:
    """Whether a reply repeats itself: of four lines or sentences or more, one stands three times or more."""
    pieces = [piece.strip() for piece in _PIECES.split(text) if piece.strip()]
    return len(pieces) >= 4 and max(Counter(pieces).values()) >= 3


def _read_cut(text: str, sources: tuple[str, ...] | None, read: Callable[[str, str, str], Reading],
              context: str, language: str | None) -> Parsed:
    """A reply that stopped at the token limit: an explicit marker anywhere, else an answer its first line gives
    ("B. Because ...") where that line ended; what follows is reasoning that never reached its end."""
    explicit = CUT_SOURCES if sources is None else tuple(s for s in sources if s in CUT_SOURCES)
    parsed = _walk(answer_candidates(text, language), explicit, read, context)
    first, _, after = text.strip().partition("\n")
    if parsed is None and loops(text):
        return failure(CUT, "the reply went round in a loop until the token limit; its first line is not its answer")
    if parsed is None and "=" not in first:
        # a first line that is not a step of the reasoning may open the reply with its answer ("B. Because ..."); one
        # the limit cut may name it with a phrase only where it ended ("ответ: B может" goes on)
        opening = sources if after.strip() else tuple(s for s in (sources or (WHOLE,)) if s == WHOLE)
        parsed = _walk(answer_candidates(first, language), opening, read, context)
    return parsed or failure(CUT, "the reply stopped at the token limit with no answer marker and no answer on its "
                                  "first line")


def _walk(candidates: Candidates, sources: tuple[str, ...] | None, read: Callable[[str, str, str], Reading],
          context: str) -> Parsed | None:
    """The first candidate that reads as an answer or as ambiguous, as a result; None if none does."""
    found = [(where, segment, index in candidates.final) for index, (where, segment) in enumerate(candidates.found)
             if sources is None or where in sources]
    for index, (where, segment, final) in enumerate(found):
        reading = read(where, segment, context)
        if isinstance(reading, Refused):
            return failure(reading.reason, reading.detail, reading.settled)
        if reading:
            if where in PHRASES:
                # without a marker, phrases that name different answers ("A is correct if ..., C is correct
                # otherwise") leave the answer open; a final answer's phrase ("The final answer is 40") is weighed
                # only against other final ones: the intermediate answers before it are not rivals
                others = {read(w, s, context) for w, s, f in found[index + 1:] if w in PHRASES and f >= final}
                others = sorted(o for o in others if isinstance(o, str) and o and o != reading)
                if others:
                    return failure(AMBIGUOUS, f"answer phrases name {reading} and {', '.join(others)}")
            return Parsed(reading)
    return None
