"""Letter parsers: a choice letter ("A".."Z") for a multiple-choice item, given the number of choices.

``final_letter`` reads a letter wherever a reply may name its answer (``reply``); ``hash_letter`` reads only
languagebench's ``####`` marker; ``belebele_instruct`` and ``belebele_blog`` are the Belebele authors' and
the Belebele tutorial blog's own readings.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Sequence

from ...core.choices import LETTERS, normal_label
from .. import answer_phrases
from .registry import AMBIGUOUS, EMPTY, NO_ANSWER, Parsed, failure, register
from .structure import split_reply
from .reply import (BOLD, EXPLICIT, MARKER_ONLY, NEXT_LINE, PHRASE_AFTER, WHOLE, Ambiguous, Reading, Refused,
                    clean_segment, read_reply, strip_decoration)


# -- Belebele (the Belebele authors and the Belebele tutorial blog) ---------------------------------------


def _letter_at_start(text: str, letters: str) -> str | None:
    """The choice letter that opens ``text`` as a word of its own ("B", "B.", "B) ..."), else None."""
    if text and text[0] in letters and (len(text) == 1 or not text[1].isalpha()):
        return text[0]
    return None


# "The correct answer is (B)", "The answer is B", "Answer: B": the prefixes a chat model puts before its letter.
_ANSWER_PREFIX = re.compile(r"^(?:the\s+)?(?:correct\s+)?answer(?:\s+is\s*:?|\s*:)\s*", re.IGNORECASE)


@register("belebele_instruct", "letter", reads_options=True)
def belebele_instruct(response: str, n_choices: int = 4, options: Sequence[str] | None = None) -> Parsed:
    """The Belebele authors' post-processing for chat models asked for a letter.

    It drops parentheses, so "(B)" reads as "B", and, when the answer does not
    start with a letter, drops the prefix "The correct answer is " (here also
    "The answer is " and "Answer: ", as the docs promise). Where the
    original fell back to the first character whatever it was, this takes a
    first character only when it is a choice letter standing alone ("B. text"),
    and otherwise reports the failure instead of scoring it as wrong. A letter
    followed by another option's text ("C. <B's text>") is ambiguous, not C.
    """
    letters = LETTERS[:n_choices]
    text = response.replace("(", "").replace(")", "").strip()
    if not text:
        return failure(EMPTY)
    if text in letters:
        return Parsed(text)
    text = _ANSWER_PREFIX.sub("", text, count=1).strip()
    letter = _letter_at_start(text, letters)
    if letter is None:
        return failure(NO_ANSWER, f"no choice letter ({', '.join(letters)}) at the start of the answer")
    other = _other_options_text(text[1:].lstrip(" .:："), letter, letters, options)
    if other:
        return failure(AMBIGUOUS, f"names {letter} with option {other}'s text")
    return Parsed(letter)


def _other_options_text(rest: str, letter: str, letters: str, options: Sequence[str] | None) -> str | None:
    """The letter of another option whose text ``rest`` restates, where it does not restate ``letter``'s own."""
    if not options or len(options) != len(letters) or _restates(rest, options[letters.index(letter)]):
        return None
    return next((other for other, text in zip(letters, options) if other != letter and _restates(rest, text)), None)


@register("belebele_blog", "letter")
def belebele_blog(response: str, n_choices: int = 4) -> Parsed:
    """The Belebele tutorial blog's ``parse_choice``: the first line, stripped; a lone letter, or a letter not followed
    by a letter. "The answer is (B)" is read too, as the docs promise: the prefix and the brackets around the letter
    after it are dropped."""
    letters = LETTERS[:n_choices]
    text = response.split("\n")[0].strip()
    if not text:
        return failure(EMPTY)
    answered = _ANSWER_PREFIX.sub("", text, count=1)
    if answered != text:
        text = re.sub(r"^\(([A-Z])\)", r"\1", answered.strip())
    letter = _letter_at_start(text, letters)
    if letter is None:
        return failure(NO_ANSWER, f"first line does not start with a choice letter ({', '.join(letters)}) standing alone")
    return Parsed(letter)


# -- a letter wherever a reply names its answer, or only after '####' --------------------------------

_OPTION_WORD = re.compile(rf"^(?:(?:{answer_phrases.OPTION_WORDS})(?:\s*[:：]\s*|\s+)"
                          rf"|(?:{answer_phrases.OPTION_WORDS_UNSPACED})\s*[:：]?\s*)+", re.IGNORECASE)
_OPENER = re.compile(rf"^(?:{answer_phrases.ALTERNATIVE_OPENERS})\s+", re.IGNORECASE)
_OPEN = r"[\(\[（【]?\s*"
_CLOSE = r"(?:\s*[\)\]）】])?"
# After a label that is the whole answer: the end, punctuation, or a new line ("B", "B.", "B) text", "B:")
_LABEL_END_STRICT = re.compile(r"$|[.:：)\]）】,;、。]|\s*\n")
_JOINER = rf"\s*[\)\]）】]?\s*(?:{answer_phrases.ALTERNATIVE_JOINERS})\s*(?:{answer_phrases.HEDGES})?\s*[\(\[]?\s*"
# Cyrillic capitals that look like choice letters, as a Russian or Ukrainian reply may write them ("Ответ: В").
_CYRILLIC_LOOKALIKES = str.maketrans("АВСЕ", "ABCE")
# What may follow a hiragana label in a Japanese sentence ("答えはうです。", "いが正解").
_JAPANESE_COPULA = re.compile(r"(?:です|でした|だ|である)(?:[。、.!！\s]|$)|[がは](?:正解|正しい)")
# A line that opens with a label as a list entry ("A: Paris", "(B) London", "C. Rome", "ক) ঢাকা").
_ENTRY_PUNCT = r"[.:：)\]）】]"


def _script_of(char: str) -> str:
    return unicodedata.name(char, "").split(" ")[0]


class LabelSet:
    """The labels a template shows its choices by (``Template.choice_labels``), as a reply may write them: compared
    after Unicode (NFKC), case and whitespace normalisation; a label stands as a word of its own, not followed by a
    letter or digit of its own script ("ক" is not the start of "কম"; "イ" before "です" is)."""

    def __init__(self, labels: Sequence[str]):
        self.labels = tuple(labels)
        self.by_normal = {normal_label(label): label for label in self.labels}
        spellings = sorted({unicodedata.normalize("NFKC", label).strip() for label in self.labels}, key=len,
                           reverse=True)
        alternation = "|".join(re.escape(spelling) for spelling in spellings)
        self.latin = all(len(label) == 1 and "A" <= label <= "Z" for label in self.labels)
        self.at_start = re.compile(rf"^{_OPEN}({alternation}){_CLOSE}", re.IGNORECASE)
        self.at_end = re.compile(rf"{_OPEN}({alternation}){_CLOSE}\s*$", re.IGNORECASE)
        self.alternative = re.compile(rf"^{_JOINER}({alternation})", re.IGNORECASE)
        self.alternative_before = re.compile(rf"({alternation}){_CLOSE}\s*(?:{answer_phrases.ALTERNATIVE_JOINERS})"
                                             r"\s*$", re.IGNORECASE)
        # a label named with an option word inside brackets, within a sentence: "（选项B）", "(option C)"
        self.in_sentence = re.compile(rf"[（(【\[]\s*(?:{answer_phrases.OPTION_WORDS}|{answer_phrases.OPTION_WORDS_UNSPACED})"
                                      rf"\s*[:：]?\s*({alternation})\s*[）)】\]]", re.IGNORECASE)
        self.entry = re.compile(rf"^\s*{_OPEN}({alternation}){_CLOSE}\s*{_ENTRY_PUNCT}?", re.IGNORECASE | re.MULTILINE)

    def label(self, written: str) -> str | None:
        return self.by_normal.get(normal_label(written))

    def exact(self, written: str) -> bool:
        """Written as the template writes it (not "b" for "B"); a label in another case is read only where a reply
        plainly names its answer ("#### b")."""
        return unicodedata.normalize("NFKC", written) in {unicodedata.normalize("NFKC", x) for x in self.labels}

    @staticmethod
    def stands_alone(label: str, before: str, after: str, strict: bool) -> bool:
        """Whether a label with ``before`` and ``after`` around it is a word of its own. A digit label is not part of
        a number ("12", "2.5"); a lower-case Latin one ends where punctuation or the line does, so that the article
        "a" is not an answer; ``strict``: the label is the whole answer."""
        if label.isdigit() and (re.match(r"\d|[.,]\d", after) or before[-1:].isdigit()):
            return False
        if strict or (label.isascii() and label.islower()):
            return bool(_LABEL_END_STRICT.match(after))
        if _script_of(label[-1]) == "HIRAGANA" and _JAPANESE_COPULA.match(after):
            return True  # "答えはうです": a hiragana label before the copula that ends the sentence
        for neighbour, own in ((after[:1], label[-1]), (before[-1:], label[0])):
            if neighbour and unicodedata.category(neighbour)[0] in "LMN" and (
                    neighbour.isdigit() or _script_of(neighbour) == _script_of(own)):
                return False
        return True


@lru_cache(maxsize=64)
def label_set(labels: tuple[str, ...]) -> LabelSet:
    return LabelSet(labels)


def _restates(rest: str, option: str | None) -> bool:
    """Whether the text after a label restates that option's text and ends there or at punctuation ("(B) Paris",
    "(D) Berlin – die Hauptstadt"), not a sentence about it ("(A) London is wrong")."""
    if not option:
        return False
    line = " ".join(unicodedata.normalize("NFKC", rest.split("\n", 1)[0]).casefold().split())
    text = " ".join(unicodedata.normalize("NFKC", option).casefold().split())
    if not text or not line.startswith(text):
        return False
    after = line[len(text):].lstrip()
    return not after or unicodedata.category(after[0])[0] in "PS"


def _echoes_options(text: str, labels: LabelSet) -> bool:
    """A reply that lists the options ("A: ...\nB: ...\nC: ...") rather than picking one: two or more lines open
    with different labels as list entries."""
    opened = {labels.label(m.group(1)) for m in labels.entry.finditer(text) if labels.exact(m.group(1))}
    return len(opened - {None}) >= 2


def _label_before(text: str, labels: LabelSet) -> Reading:
    """The choice label a phrase follows ("So B is correct", "Cが正解"): the last thing before the phrase."""
    match = labels.at_end.search(text)
    if not match or not labels.exact(match.group(1)) or \
            not labels.stands_alone(match.group(1), text[:match.start(1)], text[match.end(1):], False):
        return None
    chosen = labels.label(match.group(1))
    other = labels.alternative_before.search(text[: match.start()])
    if other and labels.exact(other.group(1)) and labels.label(other.group(1)) != chosen:
        return Ambiguous(f"names both {labels.label(other.group(1))} and {chosen}")
    return chosen


def _label_in(segment: str, labels: LabelSet, where: str, options: Sequence[str] | None) -> Reading:
    """A choice label standing as the answer: "B", "(B)", "B)", "B.", "B: text", "**B**", "Option B", "la B",
    "(B) <B's text>"."""
    text = strip_decoration(unicodedata.normalize("NFKC", clean_segment(segment)))  # full-width "Ｂ" is "B"
    if where == PHRASE_AFTER:
        return _label_before(text, labels)
    text = strip_decoration(_OPTION_WORD.sub("", text))
    text = _OPENER.sub("", text)
    if labels.latin and re.fullmatch(r"[АВСЕ][.)]?", text):
        text = text.translate(_CYRILLIC_LOOKALIKES)
    match = labels.at_start.match(text)
    if not match:
        return None
    written, rest = match.group(1), text[match.end():]
    chosen = labels.label(written)
    if chosen is None:
        return None
    strict = where in (WHOLE, NEXT_LINE, BOLD)
    if strict and _echoes_options(text, labels):
        return Refused("the reply lists the options without picking one", NO_ANSWER, settled=True)
    option = options[labels.labels.index(chosen)] if options and len(options) == len(labels.labels) else None
    if not labels.stands_alone(written, "", rest, strict) and not _restates(rest.lstrip(" .:：)）]】-"), option):
        return None
    # a label in another case is read only where it is plainly the answer ("#### b"), not the article "a"
    if not labels.exact(written) and (where not in EXPLICIT or text.strip(" .") != written):
        return None
    other = labels.alternative.match(rest)
    if other and labels.exact(other.group(1)) and labels.label(other.group(1)) != chosen:
        return Ambiguous(f"names both {chosen} and {labels.label(other.group(1))}")
    return chosen


def _read_letter(response: str, labels: Sequence[str], sources: tuple[str, ...] | None, language: str | None,
                 cut: bool = False, options: Sequence[str] | None = None) -> Parsed:
    found = label_set(tuple(labels))

    def read(where: str, segment: str, context: str) -> Reading:
        return _label_in(segment, found, where, options)

    span, word = (f"{labels[0]}-{labels[-1]}", "letter") if found.latin else (", ".join(labels), "label")
    parsed = read_reply(response, sources, read, "letter", f"no choice {word} ({span}) after the answer marker",
                        f"no lone choice {word} ({span})", language, cut)
    if parsed.ok or sources is not None or cut or not (parsed.error or "").startswith(NO_ANSWER):
        return parsed
    text = split_reply(response).text
    return _named_in_sentence(text, found) or _restated_line(text, found, options) or parsed


def _restated_line(text: str, labels: LabelSet, options: Sequence[str] | None) -> Parsed | None:
    """The one line of a reply that is a label and its option's text ("...so the capital is clear.\n\n(B) Paris"),
    where nothing marks an answer; None where no line is, or several are (the options listed)."""
    if not options or len(options) != len(labels.labels):
        return None
    named = set()
    for line in unicodedata.normalize("NFKC", text).split("\n"):
        match = labels.at_start.match(strip_decoration(line.strip()))
        if match and labels.exact(match.group(1)):
            chosen = labels.label(match.group(1))
            rest = strip_decoration(line.strip())[match.end():].lstrip(" .:：)）]】-")
            if chosen is not None and _restates(rest, options[labels.labels.index(chosen)]):
                named.add(chosen)
    return Parsed(named.pop()) if len(named) == 1 else None


def _named_in_sentence(text: str, labels: LabelSet) -> Parsed | None:
    """The one label a reply names with an option word in brackets ("我认为正确的是（选项B），因为..."), where nothing
    marks an answer; None where it names none, or several."""
    named = {labels.label(m.group(1)) for m in labels.in_sentence.finditer(unicodedata.normalize("NFKC", text))
             if labels.exact(m.group(1))}
    named.discard(None)
    return Parsed(named.pop()) if len(named) == 1 else None


def _labels(n_choices: int, choice_labels: Sequence[str] | None) -> Sequence[str]:
    return list(choice_labels) if choice_labels else LETTERS[:n_choices]


@register("final_letter", "letter", uses_language=True, reads_cut=True, reads_labels=True)
def final_letter(response: str, n_choices: int = 4, language: str | None = None, cut: bool = False,
                 choice_labels: Sequence[str] | None = None, options: Sequence[str] | None = None) -> Parsed:
    """A choice label (the template's: A-D, 1-4, ক খ গ ঘ ...) after '####' or in <final_answer>, else boxed / an
    answer phrase in any language ("the answer is (B)", "La réponse est B", "答えはBです", "【答案】 C") / bold / a
    lone label, or one with its option's text ("(B) Paris")."""
    return _read_letter(response, _labels(n_choices, choice_labels), None, language, cut, options)


@register("hash_letter", "letter", reads_labels=True)
def hash_letter(response: str, n_choices: int = 4, choice_labels: Sequence[str] | None = None,
                options: Sequence[str] | None = None) -> Parsed:
    """languagebench as published: the letter after the last '####' and nothing else (reasoning blocks, leaked turns and
    copied placeholders handled as final_letter does)."""
    return _read_letter(response, _labels(n_choices, choice_labels), MARKER_ONLY, None, options=options)
