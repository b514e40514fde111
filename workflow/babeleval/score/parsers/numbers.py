"""Number parsers: a number in canonical spelling ("1234", "-0.5"), for a math item.

A number is read as models write it in many languages: thousands separators (",", ".", spaces, "'"),
decimal commas, signs, currency and non-ASCII digits (Arabic-Indic, Devanagari, full-width ...).
``final_number`` reads it wherever a reply may name its answer (``reply``); ``hash_number`` reads only
languagebench's ``####`` marker.
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal, InvalidOperation

from ...core.numbers import canonical_number
from .. import answer_phrases
from . import Parsed, register
from .reply import (BOLD, MARKER_ONLY, NEXT_LINE, PHRASE, PHRASE_AFTER, WHOLE, Ambiguous, Reading, clean_segment,
                    read_reply, strip_decoration)

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
_MINUS = ("-", "−", "–")  # hyphen, minus sign, en dash


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


def _number_value(match: re.Match) -> Decimal | None:
    """The value a ``_NUMBER`` match spells, its separators read as the alternative it matched says."""
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
    return -value if sign in _MINUS else value


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
    text = strip_decoration(_ascii_digits(clean_segment(segment)))
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
        if isinstance(reading, str) and match.group(1) in _MINUS:
            return canonical_number(-Decimal(reading))
        return reading
    value = _number_value(match)
    return canonical_number(value) if value is not None else None


def _read_number(response: str, sources: tuple[str, ...] | None, language: str | None) -> Parsed:
    def read(where: str, segment: str, context: str) -> Reading:
        return _number_in(segment, where, context)

    return read_reply(response, sources, read, "number", "no number after the answer marker",
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
    return _read_number(response, MARKER_ONLY, None)
