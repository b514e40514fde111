"""Label parsers: one of the item's labels (a topic name), for a classification item.

A label is named as a whole word ("health" is not inside "healthy"), by its own name, its singular or plural, or a
declared alias (``ALIASES``: an abbreviation such as "tech", the label in the languages models answer in). The
answer is the label a marked place names (``#### travel``, ``<final_answer>``, "The topic is travel", "Thema:
Reisen"), else the label the reply opens with, else the only label it names; a reply that names two labels and
marks neither is ``ambiguous``.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Sequence

from .. import answer_phrases
from .registry import AMBIGUOUS, EMPTY, NO_ANSWER, Parsed, failure, register
from .reply import BOLD, MARKERS, PHRASES, answer_candidates, clean_segment, plain, strip_reasoning

# Words a reply may name a label by, besides the label itself, keyed by the label as a task spells it (lower case):
# the SIB-200 topics, in English and in languages models answer in. Add a label's words by adding a row.
ALIASES: dict[str, tuple[str, ...]] = {
    "science/technology": (
        "science", "technology", "tech", "sci/tech", "sci-tech", "science and technology", "science & technology",
        "wissenschaft", "technik", "technologie", "wissenschaft/technik", "sciences", "ciencia", "tecnología",
        "ciencia y tecnología", "ciência", "tecnologia", "scienza", "наука", "технологии", "техника", "科学", "科技",
        "技术", "技術", "テクノロジー", "विज्ञान", "प्रौद्योगिकी", "तकनीक", "علوم", "العلوم", "التكنولوجيا",
        "تكنولوجيا", "วิทยาศาสตร์", "เทคโนโลยี", "sains", "teknologi", "bilim", "teknoloji", "khoa học", "công nghệ"),
    "travel": (
        "traveling", "travelling", "tourism", "reise", "reisen", "tourismus", "voyage", "voyages", "tourisme", "viajes",
        "viaje", "turismo", "viagem", "viagens", "viaggi", "viaggio", "путешествия", "путешествие", "туризм", "旅行",
        "旅游", "旅遊", "観光", "यात्रा", "पर्यटन", "سفر", "السفر", "السياحة", "ท่องเที่ยว", "การท่องเที่ยว",
        "perjalanan", "seyahat", "du lịch"),
    "politics": (
        "political", "politik", "politique", "política", "politica", "политика", "政治", "राजनीति", "سياسة",
        "السياسة", "การเมือง", "siyaset", "chính trị"),
    "sports": (
        "sport", "deportes", "deporte", "esporte", "esportes", "desporto", "спорт", "体育", "體育", "スポーツ", "खेल",
        "رياضة", "الرياضة", "กีฬา", "olahraga", "spor", "thể thao"),
    "health": (
        "gesundheit", "santé", "salud", "saúde", "salute", "здоровье", "медицина", "健康", "医疗", "स्वास्थ्य",
        "صحة", "الصحة", "สุขภาพ", "kesehatan", "sağlık", "sức khỏe"),
    "entertainment": (
        "unterhaltung", "divertissement", "entretenimiento", "entretenimento", "intrattenimento", "развлечения",
        "娱乐", "娛樂", "エンターテインメント", "エンタメ", "मनोरंजन", "ترفيه", "الترفيه", "บันเทิง", "ความบันเทิง",
        "hiburan", "eğlence", "giải trí"),
    "geography": (
        "geographie", "geografie", "géographie", "geografía", "geografia", "география", "地理", "भूगोल", "جغرافيا",
        "الجغرافيا", "ภูมิศาสตร์", "geografi", "coğrafya", "địa lý"),
}

# Phrases that mark the label a reply chooses ("The topic is travel", "Thema: Reisen", "主题：体育").
_TOPIC_PHRASE = re.compile(
    r"(?<![^\W\d_])(?:the\s+)?(?:topic|category|label|class|thema|kategorie|sujet|thème|catégorie|tema|categoría|"
    r"categoria|тема|категория|主题|主題|类别|類別|トピック|カテゴリー?|विषय|श्रेणी|الموضوع|الفئة|หัวข้อ|หมวดหมู่|"
    r"topik|kategori|konu|chủ đề)(?:\s+(?:is|would\s+be|ist|est|es|é|è|это|là|adalah))?\s*[:：は是]?\s*",
    re.IGNORECASE)
# Scripts written without spaces between words, where a label has no word edges.
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\u0e00-\u0e7f]")
_OPENING = re.compile(r"^[\s*_`\"'“”「『(\[]+")
_JOINED = re.compile(rf"[\s*_`\"'”」』)\]]*(?:{answer_phrases.ALTERNATIVE_JOINERS}|\s)\s*(?:{answer_phrases.ALTERNATIVE_OPENERS})?"
                     rf"[\s*_`\"'“「『(\[]*", re.IGNORECASE)


# Stray spaces between two characters of an unspaced script ("ス ポ ー ツ", "体 育"): labels compare without them.
_STRAY_SPACE = re.compile(r"(?<=[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\u0e00-\u0e7f])[ \t\u3000]+"
                          r"(?=[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\u0e00-\u0e7f])")


def normalised(text: str) -> str:
    """A reply as labels compare: Unicode NFKC (full-width "Ｓｐｏｒｔｓ" is "Sports"), no stray spaces inside an
    unspaced script's word."""
    return _STRAY_SPACE.sub("", unicodedata.normalize("NFKC", text))


def _lists_labels(text: str, labels: Sequence[str]) -> list[str]:
    """The labels a reply lists one per line as headings ("Science/Technology:\nPolitics:\nHealth:"), the list of
    topics echoed rather than one chosen; empty where fewer than two lines open with a label."""
    listed = []
    for line in text.split("\n"):
        line = _OPENING.sub("", line.strip())
        named = _named(line, labels)
        if named and named[0][0] == 0 and re.fullmatch(r"\s*[:：\-–—]?\s*", line[named[0][1]:]) is not None:
            listed.append(named[0][2])
    return list(dict.fromkeys(listed)) if len(set(listed)) >= 2 else []


def _forms(label: str) -> list[str]:
    """The words that name a label: itself, its singular or plural, its declared aliases."""
    name = label.lower().strip()
    forms = [name, name[:-1] if name.endswith("s") else name + "s"]
    return forms + [alias for alias in ALIASES.get(name, ()) if alias not in forms]


def _pattern(word: str) -> str:
    escaped = re.escape(word).replace(r"\ ", r"\s+")
    return escaped if _UNSPACED.search(word) else rf"(?<![^\W_]){escaped}(?![^\W_])"


def _named(text: str, labels: Sequence[str]) -> list[tuple[int, int, str]]:
    """(start, end, label) of every mention, a mention inside a longer one dropped ("science" in
    "science/technology"), an alias giving way to a label's own name on the same words."""
    found = []
    for label in labels:
        for rank, form in enumerate(_forms(label)):
            for m in re.finditer(_pattern(form), text, re.IGNORECASE):
                found.append((m.start(), m.end(), label, rank > 1))
    kept = []
    for start, end, label, alias in found:
        inside = any(s <= start and end <= e and (e - s > end - start or (not a and alias))
                     for s, e, other, a in found if other != label)
        if not inside:
            kept.append((start, end, label))
    return sorted(set(kept))


def _choose(segment: str, labels: Sequence[str], opening: bool) -> tuple[str | None, list[str]]:
    """The label a place names: the one it opens with (where ``opening``), else the only one; and all it names."""
    text = _OPENING.sub("", plain(clean_segment(segment)))
    named = _named(text, labels)
    names = list(dict.fromkeys(label for _, _, label in named))
    if opening and named and named[0][0] == 0:
        first = named[0][2]
        # the opening label's own words may be named more than once ("science", "technology" and
        # "science/technology"): the next label is the first other one, after the opening's last word
        opening_end = max(end for start, end, label in named if label == first and start < named[0][1])
        following = next(((start, label) for start, _, label in named if label != first), None)
        if following and following[0] >= opening_end and _JOINED.fullmatch(text[opening_end:following[0]]):
            return None, names  # "Sports and health", "Science/Technology, Travel, ...": several labels, none chosen
        return first, names
    return (names[0] if len(names) == 1 else None), names


def _marked(text: str) -> list[str]:
    """The places that mark an answer, most explicit first: tags and '####', topic phrases, answer phrases, bold."""
    candidates = answer_candidates(text).found
    places = [segment for where, segment in candidates if where in MARKERS]
    places += [text[m.end():].split("\n", 1)[0] for m in _TOPIC_PHRASE.finditer(text)][::-1]
    places += [segment for where, segment in candidates if where in PHRASES or where == BOLD]
    return [place for place in places if place.strip()]


def _every_label(names: Sequence[str], labels: Sequence[str]) -> bool:
    """A place that names every topic of three or more, none chosen: the list of topics restated."""
    return len(labels) >= 3 and set(names) >= set(labels)


def _echo(listed: Sequence[str]) -> Parsed:
    return failure(NO_ANSWER, f"lists the topics ({', '.join(listed)}) without choosing one", settled=True)


@register("topic", "label")
def topic(response: str, labels: Sequence[str]) -> Parsed:
    """languagebench's topic rule, made whole-word: a marked label ('####', "The topic is ..."), else the label the
    reply starts with, else the only label it names (aliases such as "tech" and plurals count)."""
    text, error = strip_reasoning(response)
    if error:
        return Parsed(None, error)
    assert text is not None
    own = {normalised(label): label for label in labels}  # the answer is the label as the task spells it
    parsed = _topic(normalised(text), list(own))
    return Parsed(own[parsed.answer]) if parsed.ok else parsed


def _topic(text: str, labels: Sequence[str]) -> Parsed:
    """The topic a reply chooses, reply and labels already normalised."""
    if not _OPENING.sub("", clean_segment(text)).strip():
        return failure(EMPTY)
    for place in _marked(text):
        chosen, names = _choose(place, labels, opening=True)
        if _every_label(names, labels):  # before the opening label: a restated list opens with its first entry
            return _echo(names)
        if chosen:
            return Parsed(chosen)
        if len(names) > 1:
            return failure(AMBIGUOUS, f"the answer names several topics ({', '.join(names)})")
    listed = _lists_labels(text, labels)
    if listed:
        return _echo(listed)
    chosen, names = _choose(text, labels, opening=True)
    if _every_label(names, labels):
        return _echo(names)
    if chosen:
        return Parsed(chosen)
    if len(names) > 1:
        return failure(AMBIGUOUS, f"names several topics ({', '.join(names)}) and marks none")
    return failure(NO_ANSWER, f"names none of the topics ({', '.join(labels)})")
