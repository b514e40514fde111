"""SQuAD-style exact match and F1 for Japanese extractive QA (JSQuAD, JaQuAD).

This follows the JGLUE harness's ``jasquad`` metric (Stability-AI
lm-evaluation-harness, branch jp-stable, ``lm_eval/jasquad/evaluate.py``),
itself the official SQuAD v1.1 script adapted to Japanese:

- normalisation: emoji removed, ``neologdn.normalize`` (width folding of
  ASCII and katakana, long-vowel and tilde runs, spaces between Japanese
  characters removed), whitespace collapsed. English SQuAD's lower-casing and
  article removal do not apply to Japanese and are not done;
- exact match: the normalised strings are equal;
- F1: over MeCab tokens (``fugashi`` with the ``unidic-lite`` dictionary, the
  ``-Owakati`` word segmentation the harness uses), punctuation tokens
  (Japanese and ASCII) removed; token bags compared as in SQuAD;
- each question has several gold answers: the best score over them counts;
  scores are reported on a 0-100 scale, as JGLUE publishes them.

Why MeCab: Japanese has no spaces, so SQuAD's whitespace tokens would make F1
an exact-match score; character F1 would reward partial overlaps that no
Japanese reader counts as the same answer. MeCab words are what the JGLUE
numbers were computed with, so ours stay comparable.

``fugashi`` and ``unidic-lite`` are in the ``ja`` extra. Without them, F1 falls
back to character tokens and says so in ``tokenizer_name()`` (recorded in the
scores file), so a number computed that way is never mistaken for the
published one.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from functools import lru_cache
from typing import Sequence

JA_PUNCT = "！？｡。＂＃＄％＆＇（）＊＋，－／：；＜＝＞＠［＼］＾＿｀｛｜｝～｟｠｢｣､、〃》「」『』【】〔〕〖〗〘〙〚〛〜〝〞〟〰〾〿–—‘’‛“”„‟…‧﹏."
PUNCT = set(JA_PUNCT) | set(string.punctuation)

_EMOJI = re.compile(
    "[\U0001F600-\U0001F64F\U0001F300-\U0001F5FF\U0001F680-\U0001F6FF\U0001F1E0-\U0001F1FF\U00002702-\U000027B0]+",
    flags=re.UNICODE,
)


def _remove_emoji(text: str) -> str:
    try:
        import emoji

        text = "".join("" if emoji.is_emoji(c) else c for c in text)
    except ImportError:
        pass
    return _EMOJI.sub("", text)


def _neologdn(text: str) -> str:
    try:
        import neologdn
    except ImportError:
        return unicodedata.normalize("NFKC", text)
    return neologdn.normalize(text)


def normalize_answer(text: str) -> str:
    """The harness's normalisation: emoji removed, neologdn-normalised, whitespace collapsed."""
    return " ".join(_neologdn(_remove_emoji(text)).split())


@lru_cache(maxsize=1)
def _tagger():
    try:
        from fugashi import Tagger
    except ImportError:
        return None
    try:
        return Tagger("-Owakati")
    except RuntimeError:  # no dictionary installed
        return None


def tokenizer_name() -> str:
    tagger = _tagger()
    if tagger is None:
        return "characters (fugashi/unidic-lite not installed: not comparable with published JGLUE F1)"
    try:
        import unidic_lite  # noqa: F401
        dictionary = "unidic-lite"
    except ImportError:
        dictionary = "system MeCab dictionary"
    return f"mecab -Owakati ({dictionary}), punctuation removed"


def tokenize(text: str) -> list[str]:
    tagger = _tagger()
    if tagger is None:
        tokens = [c for c in text if not c.isspace()]
    else:
        tokens = tagger.parse(text).split()
    return [t for t in tokens if t not in PUNCT]


def exact_match_score(prediction: str, gold: str) -> bool:
    return normalize_answer(prediction) == normalize_answer(gold)


def f1_score(prediction: str, gold: str) -> float:
    pred_tokens = tokenize(normalize_answer(prediction))
    gold_tokens = tokenize(normalize_answer(gold))
    common = Counter(pred_tokens) & Counter(gold_tokens)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision = same / len(pred_tokens)
    recall = same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def best_over_golds(prediction: str | None, golds: Sequence[str]) -> tuple[float, float]:
    """(exact match, F1) of one prediction, each the maximum over the gold answers; 0 for no prediction."""
    if prediction is None or not golds:
        return 0.0, 0.0
    em = max(float(exact_match_score(prediction, g)) for g in golds)
    f1 = max(f1_score(prediction, g) for g in golds)
    return em, f1
