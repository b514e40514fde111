"""The parser corpus: real-shaped responses in many languages and scripts, each with the outcome the model meant.

``tests/data/parser_corpus.yaml`` holds the responses (written for these tests) with their class and expected
outcome (``finish: length`` marks a reply that stopped at the token limit; label parsers choose among the SIB-200
topics): the answer, or ``FAIL <reason name>`` where no answer can be read unambiguously. A failure must come
back as that named reason (``reason_of(error)``), never as an answer.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from babeleval.score.parsers import REASONS, parse, reason_of

CORPUS = yaml.safe_load((Path(__file__).parent / "data" / "parser_corpus.yaml").read_text(encoding="utf-8"))
FAIL = "FAIL "


TOPICS = ["science/technology", "travel", "politics", "sports", "health", "entertainment", "geography"]


def outcome(entry: dict) -> str:
    labels = entry.get("labels")
    parsed = parse(entry["parser"], entry["response"], n_choices=len(labels) if labels else entry.get("n", 4),
                   labels=TOPICS, language=entry["lang"], finish_reason=entry.get("finish"), choice_labels=labels,
                   options=entry.get("options"))
    return parsed.answer if parsed.ok else FAIL + reason_of(parsed.error)


@pytest.mark.parametrize("entry", CORPUS, ids=[e["id"] for e in CORPUS])
def test_corpus_entry(entry):
    assert outcome(entry) == str(entry["expect"]), entry["response"]


def test_corpus_is_broad():
    """At least 150 responses, 12 languages and 6 scripts; every expected failure is a named reason."""
    assert len(CORPUS) >= 150
    assert len({e["id"] for e in CORPUS}) == len(CORPUS)
    assert len({e["lang"] for e in CORPUS}) >= 12
    assert len({e["lang"].split("_")[1] for e in CORPUS}) >= 6
    for entry in CORPUS:
        expect = str(entry["expect"])
        if expect.startswith(FAIL):
            assert expect[len(FAIL):] in REASONS, entry["id"]
    classes = Counter(e["class"] for e in CORPUS)
    assert min(classes.values()) >= 8, classes


# Classes of replies that real models write and the parsers read since the reply's structure and the template's labels
# (reasoning wrappers, bare turns, option lines, native labels ...): each in ten languages or more.
WIDE_CLASSES = ("reasoning_format", "bare_turn", "option_line", "native_labels", "echo", "separator_conflict",
                "label_space", "span_preamble", "final_after", "in_sentence", "loop", "variable")


@pytest.mark.parametrize("name", WIDE_CLASSES)
def test_class_spans_ten_languages(name):
    assert len({e["lang"] for e in CORPUS if e["class"] == name}) >= 10


# The largest languages of the default Belebele set (FLORES-200 codes), CJK and Thai included.
LARGEST = ["eng_Latn", "zho_Hans", "hin_Deva", "spa_Latn", "fra_Latn", "arb_Arab", "ben_Beng", "rus_Cyrl",
           "por_Latn", "urd_Arab", "ind_Latn", "deu_Latn", "jpn_Jpan", "swh_Latn", "mar_Deva", "tel_Telu",
           "tur_Latn", "tam_Taml", "vie_Latn", "kor_Hang", "ita_Latn", "tha_Thai", "pol_Latn", "ukr_Cyrl",
           "pes_Arab", "zho_Hant"]


@pytest.mark.parametrize("code", LARGEST)
def test_phrase_table_covers_the_largest_languages(code):
    from babeleval.score import answer_phrases

    assert answer_phrases.row_key(code) in answer_phrases.TABLE


def test_phrase_table_takes_dataset_codes():
    from babeleval.score import answer_phrases

    assert answer_phrases.row_key("ja") == "jpn" and answer_phrases.row_key("cmn_Hans") == "zho"
    assert answer_phrases.row_key("fas") == "pes" and answer_phrases.row_key(None) is None


def test_phrases_of_a_third_language_are_read():
    """A reply in neither the item's language nor English is read from its own phrases (a Russian reply to an
    English question); the item's language and English come first."""
    assert parse("final_letter", "答えはBです", language="deu_Latn").answer == "B"
    assert parse("final_number", "Итак, ответ: 45 рублей.", language="eng_Latn").answer == "45"
    assert parse("final_letter", "The answer is B", language="jpn_Jpan").answer == "B"
    assert parse("final_letter", "答えはBです").answer == "B"
    first = answer_phrases_patterns("deu_Latn")
    assert first.before.search("Die Antwort ist B") and not first.before.search("Ответ: B")
    assert first.other_before.search("Ответ: B")


def answer_phrases_patterns(language):
    from babeleval.score import answer_phrases

    return answer_phrases.patterns(language)
