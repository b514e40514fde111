"""languagebench's text, as its code writes it (evals/tasks.py, evals/languages.py at commit 1e116951): language
names from langcodes' ``display_name``, script names from its ``data/ScriptCodes.csv``, FLORES sentences stripped
for translation and joined unstripped into topic paragraphs, and the five most frequent topics of
``paragraphs.value_counts("topic").head(5)`` (pandas 2.2.3, the version its lock file pins: topics grouped in
name order, then sorted by count, descending, ties kept in name order where the sort keeps them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from babeleval.core.languages import language_name, script_name
from babeleval.prompts.render import build_requests
from babeleval.prompts.templates import load_template
from babeleval.tasks import get_task
from babeleval.tasks.suite import most_frequent_topics
from resolved_record import prompt_record_for

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("code, language, script", [
    # ScriptCodes.csv "English Name" column; langcodes 3.5.0 / language-data 1.3.0 display names
    ("jpn_Jpan", "Japanese", "Japanese (alias for Han + Hiragana + Katakana)"),
    ("hin_Deva", "Hindi", "Devanagari (Nagari)"),
    ("ben_Beng", "Bangla", "Bengali (Bangla)"),
    ("tgl_Latn", "Filipino", "Latin"),  # langcodes reads tgl as fil
    ("fil_Latn", "Filipino", "Latin"),
    ("amh_Ethi", "Amharic", "Ethiopic (Geʻez)"),
    ("kor_Hang", "Korean", "Hangul (Hangŭl, Hangeul)"),
    ("zho_Hans", "Chinese", "Han (Simplified variant)"),
    ("zho_Hant", "Chinese", "Han (Traditional variant)"),
    ("rus_Cyrl", "Russian", "Cyrillic"),
])
def test_names_are_languagebenchs(code, language, script):
    assert (language_name(code), script_name(code)) == (language, script)


def flores(tmp_path: Path, rows: dict[str, list[dict]]) -> dict:
    for code, lines in rows.items():
        path = tmp_path / "dev" / f"{code}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in lines), encoding="utf-8")
    return {"kind": "local", "path": str(tmp_path)}


def test_translation_prompt_into_bangla(tmp_path):
    source = flores(tmp_path, {"eng_Latn": [{"id": 1, "text": " The river rose overnight.\n"}],
                               "ben_Beng": [{"id": 1, "text": "নদী রাতারাতি ফুলে উঠল। "}]})
    items = get_task("translation_to").load(source, "ben_Beng", options={"partner": "eng_Latn"})
    [request] = build_requests(load_template("translation_to", "en_zeroshot", ROOT), items, [],
                               fewshot=prompt_record_for("translation_to", "ben_Beng", "en_zeroshot").fewshot, seed=0)
    # f"Translate the following text to the {language_name} language; use the {script} script; reply only with
    # the translation:\n\n{original_sentence}", original_sentence = flores_sentences(...)["text"][nr].strip()
    assert request["prompt"] == ("Translate the following text to the Bangla language; use the Bengali (Bangla) "
                                 "script; reply only with the translation:\n\nThe river rose overnight.")
    assert request["answer"] == "নদী রাতারাতি ফুলে উঠল।"


def test_topic_paragraphs_are_joined_unstripped_with_the_five_topics_in_languagebenchs_order(tmp_path):
    rows, number = [], 0
    # paragraphs per topic: travel 3, health 2, crime 2, sports 2, politics 1, geography 1, nature 1
    for topic, paragraphs in (("Travel", 3), ("sports", 2), ("health", 2), ("crime", 2), ("politics", 1),
                              ("nature", 1), ("geography", 1)):
        for k in range(paragraphs):
            for sentence in (f"{topic} {k} starts here. ", " It ends.\n"):
                number += 1
                rows.append({"id": number, "text": sentence, "url": f"https://x.test/{topic}/{k}", "topic": topic})
    items = get_task("topic_classification").load(flores(tmp_path, {"eng_Latn": rows}), "eng_Latn",
                                                  options={"topics": 5})
    # value_counts: travel 3, then the three 2s in name order, then the first of the 1s by name (geography)
    topics = ["travel", "crime", "health", "sports", "geography"]
    assert {tuple(item["choices"]) for item in items} == {tuple(topics)}
    first = next(item for item in items if item["id"] == "https://x.test/Travel/0")
    assert first["text"] == "Travel 0 starts here.   It ends.\n"  # " ".join of the sentences as they are
    [request] = build_requests(load_template("topic_classification", "en_zeroshot", ROOT), [first], [],
                               fewshot=prompt_record_for("topic_classification", "eng_Latn", "en_zeroshot").fewshot,
                               seed=0)
    assert request["prompt"] == ("Classify the following text into one of these topics: travel, crime, health, "
                                 "sports, geography.\nReply with only the topic name.\n\nText:\n"
                                 "Travel 0 starts here.   It ends.\n\n")


@pytest.mark.parametrize("topics, expected", [
    (["b", "a", "c", "a", "b", "c", "d"], ["a", "b", "c", "d"]),
    (["c", "b", "a"], ["a", "b", "c"]),
    (list("edcbaedcbaffg"), ["a", "b", "c", "d", "e"]),
    (["z", "y", "y", "x", "x", "x"], ["x", "y", "z"]),
])
def test_most_frequent_topics_break_ties_by_name(topics, expected):
    # pandas 2.2.3 (numpy 2.2.5 without its SIMD sort) gives these for DataFrame({"topic": topics})
    # .value_counts("topic").head(5).index
    assert most_frequent_topics(topics, 5) == expected
