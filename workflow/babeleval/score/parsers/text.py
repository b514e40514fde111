"""Text parsers: the answer text itself, cleaned (an extractive QA span, a translation)."""

from __future__ import annotations

import re

from .. import answer_phrases
from .registry import EMPTY, NO_ANSWER, Parsed, failure, register
from .reply import FINAL_ANSWER_TAG, MARKER, PHRASES, TAG, answer_candidates, plain, strip_decoration, strip_reasoning

# A chat model's opening courtesy, or its announcement of what follows: never the span ("Sure, I can help with
# that.", "Here is the answer:", "はい、お答えします。", "以下が回答です：").
_PREAMBLE = re.compile(
    r"^(?:(?:sure|certainly|of course|okay|ok|absolutely|great question|here(?:'s| is| are)|i can help|i'd be happy|"
    r"based on (?:the|this) (?:passage|context|text)|according to the (?:passage|context|text)|"
    r"claro|bien sûr|natürlich|gerne|конечно|好的|当然|はい|もちろん|承知|以下|了解|かしこまりました|"
    r"문맥|네[,、])[^\n]*|[^\n]*[:：])\s*$", re.IGNORECASE)
# A restatement of the question ("Question: ...", "質問：...", "問題：...").
_RESTATEMENT = re.compile(r"^\s*(?:question|q|質問|問題|問い|设问|问题|문제|질문)\s*[:：]", re.IGNORECASE)
# A span wrapped in a sentence that only announces it: "答えは「栄西」です。", "The answer is "Eisai"."
_QUOTED = re.compile(r"[「『“\"]([^「」『』“”\"]{1,80})[」』”\"]")
_SENTENCE_END = re.compile(r"[。！？!?]\s*\S|\.\s+\S")
_TRAILING = re.compile(r"(?:です|でした|である|だ|となります|になります)?[。．.!！]*$")
# Past this length, a reply with more than one sentence is an explanation, not a span.
_SPAN_REACH = 40
# A preamble before a colon that holds an answer phrase of any language ("The answer to your question is: Tokyo",
# "La respuesta a tu pregunta es: Madrid"): the span is what follows the colon.
_PREAMBLE_COLON = re.compile(r"^([^\n:：]{1,80})[:：]\s*(\S.*)$")


def _without_preamble(line: str) -> str:
    """A span line without an answer preamble before its colon, in any language."""
    match = _PREAMBLE_COLON.match(line.strip())
    if match and answer_phrases.names_answer(match.group(1) + ":"):
        return match.group(2)
    return line


def _span_line(text: str) -> str | None:
    """The line that holds the span: the answer after a tag, '####' or an answer phrase, else the first line that
    is not a preamble or a restatement of the question; None where the reply has none."""
    found = answer_candidates(text).found
    for where, segment in found:
        if where in (TAG, MARKER) and segment.strip():
            return segment
    for line in text.split("\n"):
        if _without_preamble(line) != line:
            return _without_preamble(line)
    for where, segment in found:
        # an announcement ("以下が回答です：") names the phrase but not the span
        if (where in (TAG, MARKER) or where in PHRASES) and _TRAILING.sub("", segment.strip(" \t:：")).strip():
            return segment
    for line in text.split("\n"):
        if line.strip() and not _PREAMBLE.match(line.strip()) and not _RESTATEMENT.match(line):
            return line
    return None


@register("jsquad_span", "text")
def jsquad_span(response: str) -> Parsed:
    """JGLUE JSQuAD: the generation up to the separator (a newline or '<NL>'), stripped; chat preambles, restated
    questions and answer phrases around the span set aside; several sentences and no span are a failure."""
    text, error = strip_reasoning(response.split("<NL>", 1)[0])
    if error:
        return Parsed(None, error)
    assert text is not None
    text = plain(text)
    if not text.strip():
        return failure(EMPTY, "nothing before the separator")
    line = _span_line(text)
    if line is None:
        return failure(NO_ANSWER, "only a preamble or the question restated, no span")
    span = strip_decoration(line)
    quoted = _QUOTED.search(span)
    if quoted and len(_QUOTED.findall(span)) == 1:
        span = quoted.group(1)
    if _SENTENCE_END.search(span) and len(span) > _SPAN_REACH:
        return failure(NO_ANSWER, f"several sentences, no span-like answer ('{span[:40]}...')")
    span = _TRAILING.sub("", span).strip() if _QUOTED.search(line) or len(span) > 1 else span
    if not span:
        return failure(EMPTY, "nothing before the separator")
    return Parsed(span)


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
