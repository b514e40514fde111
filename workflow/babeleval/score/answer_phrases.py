"""How models say "the answer is" in the languages babeleval evaluates: one row per language.

Models asked in English for ``#### <letter>`` often answer in the language of
the question instead ("Die Antwort ist B", "答えはBです", "คำตอบคือ 18"). Each
row holds regular-expression fragments, matched case-insensitively:

- ``before``: phrases the answer follows ("la réponse est", "答案是", "정답은");
  a closing bracket (``【答案】 C``) and a colon or dash after them are allowed,
  a dash only where no digit follows it: in "The answer is -5" it is the sign;
- ``after``: phrases the answer precedes ("B est la bonne réponse", "Bが正解").

Rows are keyed by ISO 639-3 code, the first part of a FLORES-200 code
(``deu_Latn`` -> ``deu``); ``ALIASES`` maps the macrolanguage and dataset codes
the grid may use (``cmn``, ``ja``, ``ara``). Every row is read for every reply:
models answer in English, in the item's language, and now and then in a third
one (a Russian reply to an English question). The item's language and English
come first (``patterns``); another language's phrase counts where neither names
an answer. ``spaced`` is False for scripts written without
spaces between words, where a phrase may follow a letter directly
("所以答案是B").

The phrases are our own renderings of ordinary wording, not taken from any
dataset; add a language by adding a row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from ..core.languages import LANGUAGES


@dataclass(frozen=True)
class Phrases:
    before: tuple[str, ...]
    after: tuple[str, ...] = ()
    spaced: bool = True


TABLE: dict[str, Phrases] = {
    # "answer" alone must be followed by a verb or a colon: "answer choice A" is a reply discussing option A
    "eng": Phrases((r"(?:the\s+)?(?:final\s+|correct\s+|right\s+|best\s+)?answer(?:\s+(?:is|would\s+be|will\s+be|should\s+be)|(?=\s*[:：]))",
                    r"(?:the\s+)?(?:correct|right|best)\s+(?:option|choice)\s+is", r"i\s+(?:choose|pick|select)"),
                   (r"is\s+(?:the\s+)?(?:correct|right)(?:\s+(?:answer|option|choice))?",)),
    "deu": Phrases((r"(?:die\s+)?(?:richtige\s+|korrekte\s+|endgültige\s+)?antwort(?:\s+(?:ist|lautet|wäre))?",
                    r"(?:die\s+)?lösung(?:\s+(?:ist|lautet))?", r"(?:das\s+)?ergebnis(?:\s+(?:ist|lautet))?",
                    r"(?:ich\s+)?(?:entscheide\s+mich\s+für|wähle)", r"(?:entscheide\s+ich\s+mich\s+für|wähle\s+ich)"),
                   (r"ist\s+(?:die\s+)?(?:richtige\s+antwort|richtig|korrekt)",)),
    "fra": Phrases((r"(?:la\s+)?(?:bonne\s+)?réponse(?:\s+(?:finale|correcte))?(?:\s+(?:est|serait))?",
                    r"(?:le\s+)?résultat(?:\s+(?:final\s+)?est)?", r"je\s+(?:choisis|retiens)"),
                   (r"est\s+la\s+bonne\s+réponse", r"est\s+(?:correcte?|juste)")),
    "spa": Phrases((r"(?:la\s+)?respuesta(?:\s+(?:correcta|final))?(?:\s+(?:es|sería))?",
                    r"(?:el\s+)?resultado(?:\s+(?:final\s+)?es)?", r"elijo"),
                   (r"es\s+la\s+(?:respuesta\s+)?correcta",)),
    "por": Phrases((r"(?:a\s+)?resposta(?:\s+(?:correta|certa|final))?(?:\s+(?:é|seria))?",
                    r"(?:o\s+)?resultado(?:\s+(?:final\s+)?é)?"),
                   (r"é\s+a\s+(?:resposta\s+)?correta",)),
    "ita": Phrases((r"(?:la\s+)?risposta(?:\s+(?:corretta|giusta|finale))?(?:\s+(?:è|e'|sarebbe))?",
                    r"(?:il\s+)?risultato(?:\s+(?:finale\s+)?è)?"),
                   (r"è\s+la\s+risposta\s+(?:corretta|giusta)",)),
    "nld": Phrases((r"(?:het\s+)?(?:juiste\s+)?antwoord(?:\s+is)?", r"(?:de\s+)?uitkomst(?:\s+is)?"),),
    "pol": Phrases((r"(?:poprawna\s+|prawidłowa\s+)?odpowiedź(?:\s+(?:to|brzmi))?", r"wynik(?:\s+to)?"),
                   (r"jest\s+poprawn[aey]",)),
    "ron": Phrases((r"(?:răspunsul(?:\s+corect)?|rezultatul)(?:\s+este)?",),),
    "tur": Phrases((r"(?:doğru\s+)?(?:cevap|yanıt)(?:\s+(?:şudur|şu))?", r"sonuç"),
                   (r"(?:şıkkı\s+)?doğru\s+(?:cevaptır|cevap|yanıttır)",)),
    "ind": Phrases((r"jawaban(?:nya)?(?:\s+(?:yang\s+)?(?:benar|tepat|akhir))?(?:\s+(?:adalah|ialah|yaitu))?",
                    r"hasil(?:nya)?(?:\s+(?:akhir\s+)?adalah)?"),),
    "zsm": Phrases((r"jawapan(?:nya)?(?:\s+(?:yang\s+)?(?:betul|tepat|akhir))?(?:\s+(?:ialah|adalah))?",
                    r"hasil(?:nya)?(?:\s+ialah)?"),),
    "swh": Phrases((r"jibu(?:\s+(?:sahihi|sahi|sahihi\s+ni|la\s+mwisho))?(?:\s+ni)?", r"matokeo(?:\s+ni)?"),),
    "vie": Phrases((r"(?:đáp\s+án|câu\s+trả\s+lời)(?:\s+(?:đúng|chính\s+xác|cuối\s+cùng))?(?:\s+là)?",
                    r"kết\s+quả(?:\s+(?:cuối\s+cùng\s+)?là)?"),
                   (r"là\s+đáp\s+án\s+đúng",)),
    "fil": Phrases((r"(?:ang\s+)?(?:tamang\s+)?sagot(?:\s+ay)?",),),
    "rus": Phrases((r"(?:правильный\s+|верный\s+|окончательный\s+|итоговый\s+)?ответ(?:\s+(?:это|будет))?",
                    r"(?:итого|результат)"),
                   (r"[—–-]?\s*(?:правильный\s+ответ|верный\s+ответ)",)),
    "ukr": Phrases((r"(?:правильна\s+|остаточна\s+)?відповідь(?:\s+(?:це|буде))?", r"результат"),
                   (r"[—–-]?\s*правильна\s+відповідь",)),
    "srp": Phrases((r"(?:тачан\s+)?одговор(?:\s+је)?",),),
    "ell": Phrases((r"(?:η\s+)?(?:σωστή\s+)?απάντηση(?:\s+είναι)?",),),
    "heb": Phrases((r"התשובה(?:\s+(?:הנכונה|היא))*",),),
    "arb": Phrases((r"(?:ال)?(?:إجابة|اجابة|جواب)(?:\s+(?:ال)?(?:صحيحة|صحيح|نهائية))?(?:\s+(?:هي|هو))?",
                    r"النتيجة(?:\s+هي)?"),),
    "urd": Phrases((r"(?:صحیح\s+|درست\s+)?(?:جواب|جوابات)(?:\s+(?:ہے))?",),),
    "pes": Phrases((r"(?:پاسخ|جواب)(?:\s+(?:صحیح|درست|نهایی))?(?:\s+(?:است|برابر\s+است\s+با))?",),),
    "hin": Phrases((r"(?:सही\s+)?(?:उत्तर|जवाब)(?:\s+(?:है))?",),
                   (r"सही\s+(?:उत्तर\s+)?है",)),
    "mar": Phrases((r"(?:योग्य\s+|बरोबर\s+|अचूक\s+)?उत्तर(?:\s+(?:आहे))?",),),
    "npi": Phrases((r"(?:सही\s+)?उत्तर(?:\s+(?:हो))?",),),
    "ben": Phrases((r"(?:সঠিক\s+)?(?:উত্তর|উত্তরটি)(?:\s+(?:হলো|হল|হচ্ছে))?",),),
    "guj": Phrases((r"(?:સાચો\s+)?(?:જવાબ|ઉત્તર)(?:\s+(?:છે))?",),),
    "pan": Phrases((r"(?:ਸਹੀ\s+)?(?:ਜਵਾਬ|ਉੱਤਰ)(?:\s+(?:ਹੈ))?",),),
    "tel": Phrases((r"(?:సరైన\s+)?(?:సమాధానం|జవాబు)",),),
    "tam": Phrases((r"(?:சரியான\s+)?(?:பதில்|விடை)",),),
    "kan": Phrases((r"(?:ಸರಿಯಾದ\s+)?(?:ಉತ್ತರ)",),),
    "mal": Phrases((r"(?:ശരിയായ\s+)?(?:ഉത്തരം)",),),
    "amh": Phrases((r"(?:ትክክለኛው\s+)?መልሱ?",),),
    "jpn": Phrases((r"(?:正しい|最終的な)?(?:答え|解答|回答|正解)(?:は|：|:)?",),
                   (r"(?:が|は)(?:正解|正しい)",), spaced=False),
    "zho": Phrases((r"(?:正确|正確|最终|最終)?(?:的)?(?:答案|答)(?:应该|應該)?(?:是|为|為|：|:)", r"选择?", r"選擇?",
                    r"(?:正确|正確|最终|最終)?答案(?=\s*[】\]])"),
                   (r"(?:是|为|為)(?:正确|正確)(?:答案|的)?",), spaced=False),
    "kor": Phrases((r"(?:정답|최종\s*답|답)(?:은|는|:)?",),
                   (r"(?:이|가)\s*정답",), spaced=False),
    "tha": Phrases((r"คำตอบ(?:ที่ถูกต้อง|สุดท้าย)?(?:\s*(?:คือ|ได้แก่|:))?", r"ตอบ(?:\s*(?:คือ|:))?"),
                   (r"(?:เป็น)?คำตอบที่ถูกต้อง", r"ถูกต้อง"), spaced=False),
}

# Codes the grid or a dataset may use for a row above.
ALIASES = {"cmn": "zho", "yue": "zho", "ara": "arb", "fas": "pes", "prs": "pes", "swa": "swh", "msa": "zsm",
           "tgl": "fil", "nep": "npi"}

# Words that may stand between the phrase and a choice letter ("la réponse est l'option B", "选项B"): those
# of spaced scripts are followed by a space or colon, those of unspaced scripts may touch the letter.
OPTION_WORDS = (
    r"option|choice|letter|answer|la|el|le|l'|die|de|opción|opção|opzione|variante|вариант|варіант|pilihan|"
    r"chaguo|seçenek|şık|phương\s+án|đáp\s+án|câu|opsyon|विकल्प|পছন্দ|خيار|الخيار|گزینه|آپشن"
)
OPTION_WORDS_UNSPACED = r"选项|選項|選択肢|선택지|보기|ตัวเลือก|ข้อ"

# Words joining two alternatives ("A or B", "A oder B", "A 或 B", "AかB"): an answer that names two is ambiguous.
ALTERNATIVE_JOINERS = (
    r"or|and|/|,|&|oder|und|ou|et|o|y|e|или|и|або|чи|atau|dan|au|na|veya|ya\s+da|ve|hoặc|và|lub|i|of|en|"
    r"sau|și|या|और|अथवा|বা|অথবা|یا|أو|و|或者?|和|か|또는|와|과|หรือ|และ"
)
# Hedges between a joiner and the second alternative ("B or maybe C", "18 oder vielleicht 20").
HEDGES = (r"maybe|perhaps|possibly|even|vielleicht|eventuell|peut-être|quizás|tal\s+vez|talvez|forse|может\s+быть|"
          r"возможно|也许|可能|たぶん|아마|शायद|ربما|อาจจะ|mungkin")
# Words that make an answer phrase the reply's last word on its answer ("The final answer is 40", "最终答案",
# "итоговый ответ"): a final answer after intermediate ones is the answer, not a second one.
_FINAL_SPACED = (r"final|finally|finale|finales|finais|endgültige?[nrs]?|schließlich|letztlich|итогов\w*|"
                 r"окончательн\w*|अंतिम|চূড়ান্ত|نهائي\w*|النهائي\w*|akhir|akhirnya|nihai|ostateczn\w*|"
                 r"definitiv\w*|hatimaye|mwisho|cuối\s+cùng|kesimpulannya|jadi\s+jawaban\s+akhir")
_FINAL_UNSPACED = r"最终|最終|最后|最後|최종|สุดท้าย"
FINAL = re.compile(rf"(?<![^\W\d_])(?:{_FINAL_SPACED})(?![^\W\d_])|{_FINAL_UNSPACED}", re.IGNORECASE)
# Words opening two alternatives ("either A or B", "both A and B").
ALTERNATIVE_OPENERS = r"either|both|entweder|sowohl|soit|o\s+bien|либо|или|要么|ou\s+bien"


def row_key(language: str | None) -> str | None:
    """The table key for a FLORES-200 code (``deu_Latn``), an ISO 639-3 code, or a dataset's short code (``de``)."""
    if not language:
        return None
    code = language.split("_")[0].lower()
    if len(code) == 2 or code not in TABLE and code not in ALIASES:
        for flores, (_, short) in LANGUAGES.items():
            if short.lower() == language.lower():
                code = flores.split("_")[0]
                break
    return ALIASES.get(code, code)


def _alternatives(rows: list[Phrases], side: str) -> str:
    parts = []
    for row in rows:
        for phrase in getattr(row, side):
            # on spaced scripts a phrase starts a word ("answer", not "reanswer"); CJK and Thai have no word edges
            parts.append(rf"(?<![^\W\d_]){phrase}" if row.spaced else phrase)
    return "|".join(f"(?:{p})" for p in parts)


class Patterns(NamedTuple):
    """Phrase patterns: ``before`` / ``after`` of the first rank (the item's language and English, or every row
    where the language is unknown), ``other_before`` / ``other_after`` of every other row (None where none)."""

    before: re.Pattern
    after: re.Pattern | None
    other_before: re.Pattern | None
    other_after: re.Pattern | None


# What may stand between a "before" phrase and its answer: a closing bracket ("【答案】 C"), then a colon, or a
# dash that is not a minus sign ("Answer - B", but "The answer is -5" keeps its sign).
_AFTER_PHRASE = r"[ \t]*[】\]」』]?[ \t]*(?:[:：]|[—–\-](?![\d.]))?[ \t]*"


def _compiled(rows: list[Phrases]) -> tuple[re.Pattern | None, re.Pattern | None]:
    before = _alternatives(rows, "before")
    after = _alternatives(rows, "after")
    return (re.compile(rf"(?:{before}){_AFTER_PHRASE}", re.IGNORECASE) if before else None,
            re.compile(after, re.IGNORECASE) if after else None)


# The word "answer" in the languages of the table, for a preamble that announces one however it goes on ("The
# answer to your question is:", "La respuesta a tu pregunta es:", "Jibu la swali lako ni:").
_ANSWER_NOUNS = re.compile(
    r"(?<![^\W\d_])(?:answer|antwort|réponse|respuesta|resposta|risposta|antwoord|odpowied[źz]|ответ|відповідь|"
    r"jibu|jawaban|jawapan|cevap|cevab\w*|yanıt|câu\s+trả\s+lời|đáp\s+án|उत्तर|জবাব|উত্তর|إجابة|الإجابة|جواب|پاسخ|"
    r"sagot|απάντηση|תשובה)|答え|答案|回答|解答|정답|답변|คำตอบ", re.IGNORECASE)


def names_answer(text: str) -> bool:
    """Whether a text announces an answer in any language ("The answer to your question is", "Die Antwort")."""
    return patterns(None).before.search(text) is not None or _ANSWER_NOUNS.search(text) is not None


@lru_cache(maxsize=None)
def patterns(language: str | None) -> Patterns:
    """The phrase patterns for a language: its own row and English first, every other row after them.

    Each matches the phrase alone: the answer is the rest of the line after it, or the line before it (capturing
    the line in the pattern would hide a later phrase on the same line, or make the search quadratic)."""
    key = row_key(language)
    if key is None or key not in TABLE:
        first, others = list(TABLE.values()), []
    else:
        first = [TABLE["eng"]] + ([TABLE[key]] if key != "eng" else [])
        others = [row for code, row in TABLE.items() if code not in ("eng", key)]
    before, after = _compiled(first)
    assert before is not None
    other_before, other_after = _compiled(others)
    return Patterns(before, after, other_before, other_after)
