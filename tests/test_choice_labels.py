"""Choice labels belong to the template: declared once (``choice_labels``), shown by the prompt, read by the letter
parser and named by the score; validated before any model loads."""

from __future__ import annotations

from pathlib import Path

import pytest

from babeleval.core.errors import ConfigError, TemplateError
from babeleval.grid.entries import check_template
from babeleval.prompts.render import prompt_variables
from babeleval.prompts.templates import load_template
from babeleval.score import scorers
from babeleval.score.parsers import parse
from babeleval.tasks.families import get_family

PROMPT = ("prompt: |-\n  {{ question }}\n  {% for c in choices %}{{ letters[loop.index0] }}) {{ c }}\n  {% endfor %}"
          "উত্তর:\ntarget: '{{ answer_letter }}'\ngeneration: {max_new_tokens: 8}\n")


def write(root: Path, body: str, name: str = "bn") -> None:
    path = root / "prompts" / "mmlu" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body, encoding="utf-8")


def bengali(root: Path, parser: str = "final_letter"):
    write(root, f"mode: generate\nchoice_labels: [ক, খ, গ, ঘ]\nparser: {parser}\n" + PROMPT)
    return load_template("mmlu", "bn", root)


ITEM = {"id": "q1", "language": "ben_Beng", "question": "বাংলাদেশের রাজধানী কোনটি?",
        "choices": ["চট্টগ্রাম", "ঢাকা", "খুলনা", "সিলেট"], "answer": 1}


def test_the_prompt_shows_the_templates_labels(tmp_path):
    template = bengali(tmp_path)
    text = template.render_prompt(prompt_variables(ITEM, template))
    assert "ক) চট্টগ্রাম\nখ) ঢাকা\nগ) খুলনা\nঘ) সিলেট" in text
    assert template.choice_labels(4) == ["ক", "খ", "গ", "ঘ"]


@pytest.mark.parametrize("response, prediction", [
    ("উত্তর: খ", 1), ("সঠিক উত্তর হলো (গ)", 2), ("#### ঘ", 3), ("খ) ঢাকা", 1),
    ("উত্তর: B", None),               # a Latin letter the prompt did not offer
    ("কম তাপমাত্রায়", None),          # a word that starts with the label's letter
])
def test_the_score_reads_and_names_the_same_labels(tmp_path, response, prediction):
    template = bengali(tmp_path)
    scored = scorers.score_record("multiple_choice", {**ITEM, "response": response}, template)
    assert scored["gold"] == "খ"
    assert scored["prediction"] == prediction
    assert scored["correct"] == (prediction == 1)
    assert scored["cut_while_reasoning"] is False and "reasoning_chars" in scored  # the reply's structure


def test_labels_compare_after_unicode_and_space_normalisation():
    assert parse("final_letter", "答え：（ ｳ ）", choice_labels=["ア", "イ", "ウ", "エ"], n_choices=4).answer == "ウ"
    assert parse("final_letter", "Ответ: ( б )", choice_labels=list("АБВГ"), n_choices=4).ok is False
    assert parse("final_letter", "#### б", choice_labels=list("АБВГ"), n_choices=4).answer == "Б"


@pytest.mark.parametrize("labels, message", [
    ("[A, Ａ, C, D]", "read as the same label"),
    ("[ক]", "at least two non-empty strings"),
    ("ক খ গ ঘ", "at least two non-empty strings"),
])
def test_declared_labels_are_checked(tmp_path, labels, message):
    write(tmp_path, f"mode: generate\nchoice_labels: {labels}\nparser: final_letter\n" + PROMPT)
    with pytest.raises(TemplateError, match=message):
        load_template("mmlu", "bn", tmp_path)


def test_an_item_with_more_choices_than_labels_is_named(tmp_path):
    write(tmp_path, "mode: generate\nchoice_labels: [ক, খ, গ]\nparser: final_letter\n" + PROMPT)
    with pytest.raises(TemplateError, match="4 choices and 'choice_labels' names 3"):
        prompt_variables(ITEM, load_template("mmlu", "bn", tmp_path))


def test_a_parser_that_reads_only_latin_letters_is_refused_before_any_model(tmp_path):
    template = bengali(tmp_path, parser="belebele_instruct")
    assert "reads only the letters A, B, C" in check_template(get_family("multiple_choice"), template)
    assert check_template(get_family("multiple_choice"), bengali(tmp_path)) is None
    with pytest.raises(ConfigError, match="reads only the letters"):
        parse("belebele_instruct", "খ", choice_labels=list("কখগঘ"), n_choices=4)
