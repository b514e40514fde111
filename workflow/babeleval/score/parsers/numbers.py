"""Number parsers: a number in canonical spelling ("1234", "-0.5"), for a math item.

A number is read whole, as models write it in many languages: thousands separators (",", ".", spaces, "'",
the Indian "1,00,000"), decimal commas, signs wherever they stand ("The answer is -5"), currency, myriad units
("3万4,500", "1억 2000만"), full-width and native digits (Arabic-Indic, Devanagari, Thai ...). Where the item's
language says how its separators read, "70.000" is seventy thousand in German and "1,500" is ambiguous there;
where a separator could read two ways and nothing decides, the result is ``ambiguous``. An expression with a
variable, a root or a fraction ("3x", "4\\sqrt{2}") is ``not a number``, never its coefficient.
``final_number`` reads it wherever a reply may name its answer (``reply``); ``hash_number`` reads only
languagebench's ``####`` marker.
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal, InvalidOperation

from ...core.numbers import canonical_number, decimal_comma
from .. import answer_phrases
from .registry import NOT_A_NUMBER, Parsed, register
from .reply import (BOLD, LABEL, MARKER_ONLY, NEXT_LINE, PHRASE, PHRASE_AFTER, WHOLE, Ambiguous, Reading, Refused,
                    clean_segment, read_reply, strip_decoration)

_SPACES = "\u00a0\u202f\u2009 "
_NUMBER = re.compile(
    r"(?<![0-9A-Za-z_.])([-+−–]?)("                          # a number may touch CJK or Thai text: 答えは18です
    rf"\d{{1,3}}(?:[{_SPACES}]\d{{3}})+,\d+"                  # 1 234,50 (decimal comma with thousands spaces)
    r"|\d{1,2}(?:,\d{2})+,\d{3}(?:\.\d+)?"                    # 1,00,000 (Indian grouping)
    rf"|\d{{1,3}}(?:[,{_SPACES}'’]\d{{3}})+(?:\.\d+)?"        # 1,234,567.89  1 234  1'234
    r"|\d{1,3}(?:\.\d{3})+,\d+"                               # 1.234,5 (decimal comma with thousands dots)
    r"|\d{1,3}(?:\.\d{3}){2,}(?![\d.])"                       # 1.234.567 (thousands dots)
    r"|\d+,\d{1,2}(?!\d)"                                     # 3,5 (decimal comma)
    r"|\d+(?:\.\d+)?"                                         # 1234  3.75
    r"|\.\d+"                                                 # .5
    r")"
)
# Myriad and thousand units after digits ("3万4,500", "2.5億", "1억 2000만"), largest first within a number.
_UNITS = {"兆": 12, "조": 12, "億": 8, "亿": 8, "억": 8, "万": 4, "萬": 4, "만": 4, "千": 3, "천": 3}
_MYRIAD = re.compile(rf"(?:\d+(?:\.\d+)?\s?[{''.join(_UNITS)}]\s?)+(?:\d[\d,]*)?")
_MYRIAD_PART = re.compile(rf"(\d+(?:\.\d+)?)\s?([{''.join(_UNITS)}])")
# "5.600": 5600 with a thousands dot (German, Spanish, Indonesian ...) or 5.6 with a decimal point; "1,500" likewise.
_DOT_THOUSAND = re.compile(r"[1-9]\d{0,2}\.\d{3}")
_COMMA_THOUSAND = re.compile(r"[1-9]\d{0,2},\d{3}")
_DOTS_ARE_THOUSANDS = re.compile(r"(?<![\d.,])\d{1,3}(?:\.\d{3}){2,}(?![\d.])|\d{1,3}(?:\.\d{3})+,\d")
_DOTS_ARE_DECIMAL = re.compile(r"(?<![\d.,])\d+\.\d{1,2}(?!\d)|\d\.\d{4,}|\d{1,3}(?:,\d{3})+\.\d")
_COMMAS_ARE_THOUSANDS = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3}){2,}(?![\d,])|\d{1,3}(?:,\d{3})+\.\d")
_COMMAS_ARE_DECIMAL = re.compile(r"(?<![\d.,])\d+,\d{1,2}(?![\d,])|\d,\d{4,}|\d{1,3}(?:\.\d{3})+,\d")
_EXPRESSION_GOES_ON = re.compile(r"^\s*[-+*/×÷xX^]\s*[-+]?\d")
# A variable touching the number ("3x", "2n + 1"), or a root, pi or an imaginary unit after it.
_VARIABLE = re.compile(r"^(?:[xyznk](?![A-Za-z])(?!\s*\d)|\s*(?:\\sqrt|√|\\pi|π|i(?![A-Za-z])))")
_NOT_A_NUMBER = re.compile(r"\\[dt]?frac|\\sqrt|√")
# A second number joined to the first, directly or after its unit ("18 or 20", "12 apples and 3 pears").
_SECOND_NUMBER = re.compile(rf"^\s*(?:[^\d\W]+\s*){{0,2}}(?:(?:{answer_phrases.ALTERNATIVE_JOINERS})\s*){{1,2}}"
                            rf"(?:{answer_phrases.HEDGES})?\s*[-+]?\d", re.IGNORECASE)
# Where the sentence an answer label introduces ends ("答案：他一共花了 2,340 元。").
_SENTENCE_END = re.compile(r"[。！？!?]|\.(?!\d)")
# A reply that is one short sentence: its one number is its answer.
_ONE_SENTENCE = re.compile(r"[^\n。！？!?]{1,80}(?:[。！？!?]|\.(?!\d))?\s*")
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
            .replace("＝", "=").replace("＋", "+").replace("－", "-"))


def _digits_value(digits: str) -> Decimal | None:
    """The value of a ``_NUMBER`` spelling, its separators read as the alternative it matched says."""
    if re.fullmatch(rf"\d{{1,3}}(?:[{_SPACES}]\d{{3}})+,\d+", digits):
        digits = re.sub(f"[{_SPACES}]", "", digits).replace(",", ".")
    elif re.fullmatch(r"\d{1,3}(?:\.\d{3})+,\d+", digits):
        digits = digits.replace(".", "").replace(",", ".")
    elif re.fullmatch(r"\d{1,3}(?:\.\d{3}){2,}", digits):
        digits = digits.replace(".", "")
    elif re.fullmatch(r"\d+,\d{1,2}", digits):
        digits = digits.replace(",", ".")
    else:
        digits = re.sub(rf"[,{_SPACES}'’]", "", digits)
    try:
        return Decimal(digits)
    except InvalidOperation:
        return None


def _myriad_value(text: str) -> Decimal | None:
    """ "3万4,500" as 34500, "1億2000万" as 120000000: units largest first, the bare rest below the last unit."""
    value, last = Decimal(0), None
    end = 0
    for part in _MYRIAD_PART.finditer(text):
        power = _UNITS[part.group(2)]
        if last is not None and power >= last:
            return None
        value += Decimal(part.group(1)) * (Decimal(10) ** power)
        last, end = power, part.end()
    rest = text[end:].strip()
    if rest:
        tail = _digits_value(rest)
        if tail is None or last is None or tail >= Decimal(10) ** last:
            return None
        value += tail
    return value


def _separator_reading(digits: str, context: str, language: str | None) -> Reading:
    """ "5.600" or "1,500": as the reply's other numbers show and the item's language writes numbers; where the two
    read it differently (a German reply that writes "2.5" and then "1.250"), or neither decides, ``ambiguous``."""
    context = _ascii_digits(context)
    dot = "." in digits
    thousands = bool((_DOTS_ARE_THOUSANDS if dot else _COMMAS_ARE_THOUSANDS).search(context))
    decimal = bool((_DOTS_ARE_DECIMAL if dot else _COMMAS_ARE_DECIMAL).search(context))
    whole = canonical_number(Decimal(re.sub("[.,]", "", digits)))
    point = canonical_number(Decimal(digits.replace(",", ".")))
    comma_language = decimal_comma(language)
    # the language groups thousands with this separator (a German "70.000", an English "1,500"); without a language
    # "1,500" reads as most replies write it
    groups = comma_language == dot or (comma_language is None and not dot)
    if thousands != decimal:
        if decimal and groups and comma_language is not None:
            return Ambiguous(f"'{digits}' reads as {whole} by the language's convention and as {point} by the "
                             "reply's own other numbers")
        return whole if thousands else point
    if groups:
        return whole
    return Ambiguous(f"'{digits}' reads as {whole} with a thousands separator or {point} with a decimal one")


def _label_sentence_number(text: str) -> re.Match | None:
    """The one number of the sentence an answer label introduces ("他一共花了 2,340 元。"), else None."""
    sentence = _SENTENCE_END.split(text, maxsplit=1)[0]
    numbers = list(_NUMBER.finditer(sentence))
    return numbers[0] if len(numbers) == 1 else None


def _names_a_phrase(text: str, language: str | None) -> bool:
    """Whether a reply holds an answer phrase: then its answer is where the phrase says, or nowhere ("The answer
    depends on 3 factors")."""
    patterns = answer_phrases.patterns(language)
    return any(p is not None and p.search(text) for p in patterns)


def _number_in(segment: str, where: str, context: str, language: str | None) -> Reading:
    """The answer number of a segment: the result of an equation ("5000 + 600 = 5600" is 5600), never a part
    of an unevaluated expression or one of two numbers; "" where the segment holds no number."""
    text = strip_decoration(_ascii_digits(clean_segment(segment)))
    if "=" in text:
        text = text.rsplit("=", 1)[1]
    text = strip_decoration(text.strip().lstrip(_CURRENCY))
    strict = where in (WHOLE, NEXT_LINE)
    if where == WHOLE:
        text = text.split("\n")[-1].strip()  # the last line: "... = 5600"
    if _NOT_A_NUMBER.match(text.lstrip("-−+ ")):
        return Refused(f"an expression, not a number ('{text.strip()[:40]}')", NOT_A_NUMBER)
    match = _NUMBER.search(text)
    if match is None:
        return None
    if where == PHRASE_AFTER:
        match = list(_NUMBER.finditer(text))[-1]
    elif text[: match.start()].strip() and where in (LABEL, PHRASE, BOLD, WHOLE, NEXT_LINE):
        # "the answer depends on 3 factors": the number must open what the phrase introduces, unless a label
        # introduces a sentence with one number in it, or the whole reply is such a sentence ("毎日8ドルです。")
        sentence = where == LABEL or (where == WHOLE and _ONE_SENTENCE.fullmatch(clean_segment(segment))
                                      and not _names_a_phrase(segment, language))
        match = _label_sentence_number(text) if sentence else None
        if match is None:
            return None
        strict = where != LABEL  # a whole reply's number ends it, but for a unit ("毎日8ドルです。")
    return _read_match(text, match, strict, context, language)


def _read_match(text: str, match: re.Match, strict: bool, context: str, language: str | None) -> Reading:
    """The number a match starts, read whole (myriad units, separators), or why it cannot be taken."""
    myriad = _MYRIAD.match(text, match.start(2))
    end = myriad.end() if myriad else match.end()
    rest = text[end:]
    if strict and (re.search(r"\d", rest) or len(rest.strip()) > 20):
        return None  # a reply (or the line after a placeholder) counts only when it is the number and a unit
    if _VARIABLE.match(rest) or _NOT_A_NUMBER.search(text[max(0, match.start() - 8):end + 8]):
        return Refused(f"an expression, not a number ('{text.strip()[:40]}')", NOT_A_NUMBER)
    if _EXPRESSION_GOES_ON.match(rest):
        return Ambiguous(f"an unevaluated expression ('{text.strip()[:40]}'), not a number")
    if _SECOND_NUMBER.match(rest):
        return Ambiguous(f"names more than one number ('{text.strip()[:40]}')")
    negative = match.group(1) in _MINUS
    if myriad:
        value = _myriad_value(myriad.group(0))
        if value is None:
            return Ambiguous(f"'{myriad.group(0).strip()}' does not read as one number")
        return canonical_number(-value if negative else value)
    digits = match.group(2)
    if _DOT_THOUSAND.fullmatch(digits) or _COMMA_THOUSAND.fullmatch(digits):
        reading = _separator_reading(digits, context, language)
        if isinstance(reading, str) and negative:
            return canonical_number(-Decimal(reading))
        return reading
    value = _digits_value(digits)
    if value is None:
        return None
    return canonical_number(-value if negative else value)


def _read_number(response: str, sources: tuple[str, ...] | None, language: str | None, cut: bool = False) -> Parsed:
    def read(where: str, segment: str, context: str) -> Reading:
        return _number_in(segment, where, context, language)

    return read_reply(response, sources, read, "number", "no number after the answer marker",
                      "the reply is not a number", language, cut)


@register("final_number", "number", uses_language=True, reads_cut=True)
def final_number(response: str, language: str | None = None, cut: bool = False) -> Parsed:
    """A number after '####' or in <final_answer>, else boxed / an answer phrase in any language
    ("the answer is 42", "答えは18です") / bold / a bare number; an equation's result, never a guess."""
    return _read_number(response, None, language, cut)


@register("hash_number", "number")
def hash_number(response: str) -> Parsed:
    """languagebench as published: the number after '####' and nothing else (reasoning blocks, leaked turns and
    copied placeholders handled as final_number does)."""
    return _read_number(response, MARKER_ONLY, None)
