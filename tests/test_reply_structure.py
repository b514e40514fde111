"""A reply's structure before its answer (``babeleval.score.parsers.structure``): each reasoning family's wrapper
split into reasoning and answer, leaked turns cut off, what the record keeps, and the report's reasoning table."""

from __future__ import annotations

import pytest

from babeleval.analysis.parse_failures import reasoning_table
from babeleval.core.paths import Combo
from babeleval.score.outcomes import slim
from babeleval.score.parsers import parse
from babeleval.score.parsers.structure import WRAPPERS, facts, in_script, script, split_reply


@pytest.mark.parametrize("response", [
    "<think>weighing the options</think>#### B",
    "weighing the options</think>#### B",                                   # the template opened the block
    "[THINK]weighing the options[/THINK]#### B",                             # Magistral
    "◁think▷weighing the options◁/think▷#### B",                             # Kimi
    "<|im_start|>think\nweighing the options\n<|im_start|>answer\n#### B",   # s1
    "<|channel|>analysis<|message|>weighing the options<|end|><|start|>assistant<|channel|>final<|message|>#### B"
    "<|return|>",                                                           # gpt-oss, harmony
    "analysisweighing the optionsassistantfinal#### B",                     # harmony without special tokens
    "Here is my thought process:\nweighing the options\nHere is my response:\n#### B",  # Granite 3.2
])
def test_every_wrapper_splits_reasoning_from_answer(response):
    reply = split_reply(response)
    assert reply.text.strip() == "#### B"
    assert reply.thought == "weighing the options"
    assert reply.unfinished is None


def test_every_wrapper_names_its_source():
    assert all(wrapper.source for wrapper in WRAPPERS)


@pytest.mark.parametrize("response", ["<think>still weighing", "[THINK]still weighing",
                                      "<|channel|>analysis<|message|>still weighing<|end|>",
                                      "<|im_start|>think\nstill weighing"])
def test_a_reply_cut_inside_its_reasoning_is_named(response):
    assert split_reply(response).unfinished is not None
    assert parse("final_letter", response).error.startswith("cut while reasoning")
    assert parse("topic", response, labels=["sports"]).error.startswith("cut while reasoning")


@pytest.mark.parametrize("response, text", [
    ("The answer is B.\nuser\nNext one?\nassistant\nThe answer is C.", "The answer is B."),
    ("assistant\nThe answer is B.", "The answer is B."),
    ("<|im_start|>assistant\nThe answer is B.<|im_end|>", "The answer is B."),
])
def test_leaked_turns_are_cut_and_an_own_header_dropped(response, text):
    assert split_reply(response).text.strip() == text


def test_scripts():
    assert script("東京は日本の首都です。とても大きい都市です。") == "Jpan"
    assert script("北京是中国的首都，也是一座很大的城市。") == "Hani"
    assert script("Москва — столица России.") == "Cyrl"
    assert script("#### B") is None  # a label alone shows no language's script
    assert in_script("Hani", "zho_Hans") and in_script("Hani", "jpn_Jpan") and in_script("Latn", "fra_Latn")
    assert in_script("Latn", "rus_Cyrl") is False and in_script(None, "rus_Cyrl") is None


def test_facts_the_record_keeps():
    kept = facts("<think>Let me think about the capital of Russia carefully.</think>The answer is Moscow, B.",
                 "rus_Cyrl")
    assert kept == {"reasoning_chars": 51, "reasoning_script": "Latn", "cut_while_reasoning": False,
                    "answer_script": "Latn", "answer_in_script": False}
    assert facts("<think>Думаю", "rus_Cyrl")["cut_while_reasoning"] is True
    assert facts(None, "rus_Cyrl") == {}
    assert {"reasoning_script", "answer_script", "reasoning_chars", "answer_in_script"} <= set(slim(kept))


def test_the_reasoning_table_per_model_and_language():
    combo = Combo("m1", "mmlu", "rus_Cyrl", "en_zeroshot")
    records = [{"id": i, **facts(r, "rus_Cyrl")} for i, r in enumerate([
        "<think>Подумаю о столице России.</think>Ответ: Москва, это вариант B.",
        "<think>Let me think about the capital of Russia.</think>The answer is Moscow, option B.",
        "<think>Думаю",
        "#### B"])]
    row = reasoning_table({combo: records, Combo("m1", "mmlu", "rus_Cyrl", "paper"): [{"id": 1}]}).iloc[0]
    assert (row["n"], row["with_reasoning"]) == (4, 3)
    assert row["cut_while_reasoning_pct"] == 25.0
    assert (row["answers_with_script"], row["answer_off_script_pct"]) == (2, 50.0)
    assert len(reasoning_table({Combo("m1", "mmlu", "rus_Cyrl", "paper"): [{"id": 1}]})) == 0
