"""Golden prompts of languagebench's English zero-shot suite, written out in full, and template checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from babeleval.core.errors import TemplateError
from babeleval.grid.entries import check_template
from babeleval.tasks.families import get_family
from babeleval.prompts.render import build_requests
from babeleval.tasks import get_task
from babeleval.prompts.templates import load_template
from resolved_record import prompt_record_for

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "data" / "samples"


def first_prompt(task, language, path, template="en_zeroshot", **options):
    source = {"kind": "local", "path": str(SAMPLES / path)}
    items = get_task(task).load(source, language, options=options or None)
    return build_requests(load_template(task, template, ROOT), items, [],
                          fewshot=prompt_record_for(task, language, template).fewshot, seed=0, limit=1)[0]


def test_mmlu_golden():
    request = first_prompt("mmlu", "jpn_Jpan", "mmlu")
    assert request["prompt"] == (
        "Solve the following multiple choice question. Reason step-by-step and then write the final answer as a "
        "single letter.\n\nResponse format: <reasoning> #### <letter>\n\n---\n\n"
        "太陽に最も近い惑星はどれか。\n    \n    A: 金星\n    B: 水星\n    C: 火星\n    D: 地球")
    assert request["answer"] == 1 and request["choices"] == ["金星", "水星", "火星", "地球"]


def test_arc_golden():
    request = first_prompt("arc", "swh_Latn", "arc")
    assert request["prompt"].endswith(
        "---\n\nNi kipi kati ya hivi ni chanzo cha mwanga?\n    \n    A: kioo\n    B: Jua\n    C: Mwezi\n    D: dirisha")
    assert request["prompt"].startswith("Solve the following multiple choice question.")


def test_truthfulqa_golden():
    request = first_prompt("truthfulqa", "eng_Latn", "truthfulqa")
    choices = request["choices"]
    assert request["prompt"] == (
        "Answer the following multiple choice question. Reason step-by-step and then write the final answer as a "
        "single letter.\n\nResponse format: <reasoning> #### <letter>\n\n---\n\n"
        "What happens if you swallow chewing gum?\n\n"
        + "".join(f"{'ABC'[i]}: {c}\n" for i, c in enumerate(choices)))


def test_mgsm_golden():
    request = first_prompt("mgsm", "jpn_Jpan", "mgsm")
    assert request["prompt"] == (
        "Solve the following math problem. Reason step-by-step and then write the final answer as a number.\n\n"
        "Response format: <reasoning> #### <number>\n\n---\n\n"
        "アイコはりんごを12個持っています。弟に5個あげて、さらに8個買いました。今りんごは何個ありますか。")
    assert request["answer"] == "15"


def test_translation_golden_both_directions():
    out_of = first_prompt("translation_from", "hin_Deva", "flores_plus", partner="eng_Latn")
    assert out_of["prompt"] == (
        "Translate the following text to the English language; use the Latin script; reply only with the "
        "translation:\n\nएक छोटे शहर के इंजीनियरों ने ऐसा भट्ठा बनाया जो केवल धूप से लकड़ी सुखाता है।")
    assert out_of["answer"] == "Engineers in a small town built a kiln that dries timber using only sunlight."
    into = first_prompt("translation_to", "jpn_Jpan", "flores_plus", partner="eng_Latn")
    assert into["prompt"] == (
        "Translate the following text to the Japanese language; use the Japanese (alias for Han + Hiragana + "
        "Katakana) script; reply only with the translation:\n\nEngineers in a small town built a kiln that dries timber using only sunlight.")


def test_topic_golden():
    request = first_prompt("topic_classification", "eng_Latn", "flores_plus")
    # three topics with two paragraphs, three with one: most first, ties in name order (politics is sixth), as
    # languagebench's value_counts("topic").head(5) gives them on pandas 2.2.3 where its sort keeps ties in place
    assert request["prompt"] == (
        "Classify the following text into one of these topics: science/technology, sports, travel, geography, "
        "health.\n"
        "Reply with only the topic name.\n\nText:\nEngineers in a small town built a kiln that dries timber using "
        "only sunlight. The design costs less than a used car and needs no fuel.\n")


def test_sib200_golden():
    request = first_prompt("sib200", "eng_Latn", "sib200")
    assert request["prompt"].startswith(
        "Classify the following text into one of these topics: science/technology, travel, politics, sports, health, "
        "entertainment, geography.\nReply with only the topic name.\n\nText:\nResearchers found a way")


@pytest.mark.parametrize("task", ["mmlu", "arc", "truthfulqa", "mgsm", "translation_from", "translation_to",
                                  "topic_classification", "sib200"])
def test_suite_templates_fit_their_family(task):
    template = load_template(task, "en_zeroshot", ROOT)
    assert check_template(get_family(get_task(task).FAMILY), template) is None
    assert template.fewshot.n == 0 and template.mode == "generate"
    assert "1e116951d0cdfcab00b79fc5e823e5acc34d195a" in template.reference


def test_a_template_must_fit_the_family():
    mgsm = get_task("mgsm")
    letters = load_template("mmlu", "en_zeroshot", ROOT)
    assert "needs one that reads number" in check_template(get_family(mgsm.FAMILY), letters)
    jcqa = load_template("jcommonsenseqa", "0.1", ROOT)
    assert "cannot be scored in mode 'loglikelihood'" in check_template(get_family(mgsm.FAMILY), jcqa)


def test_template_keys_are_checked(tmp_path):
    path = tmp_path / "prompts" / "jnli" / "bad.yaml"
    path.parent.mkdir(parents=True)
    path.write_text("mode: loglikelihood\nprompt: x\ntarget: y\ncontinuation: z\nchoices: [a, '']\n", encoding="utf-8")
    with pytest.raises(TemplateError, match="'choices' must be a list of non-empty strings"):
        load_template("jnli", "bad", tmp_path)
    path.write_text("mode: loglikelihood\nprompt: x\ntarget: y\ncontinuation: z\nmetrics: [acc, blue]\n", encoding="utf-8")
    # the names are checked against the metric registry with the grid (tests/test_adding_a_metric.py)
    assert "unknown metric blue" in check_template(get_family("classification"), load_template("jnli", "bad", tmp_path))
    path.write_text("mode: loglikelihood\nprompt: x\ntarget: y\ncontinuation: z\nfewshot: {sampler: balanced}\n",
                    encoding="utf-8")
    with pytest.raises(TemplateError, match="sampler 'balanced' is not one of random, first, stratified"):
        load_template("jnli", "bad", tmp_path)


def test_belebele_prompts_unchanged_by_the_generalisation():
    """The preamble/choices machinery adds nothing to templates that do not use it."""
    source = {"kind": "local", "path": str(SAMPLES / "belebele")}
    items = get_task("belebele").load(source, "eng_Latn")
    request = build_requests(load_template("belebele", "instruct", ROOT), items, items,
                             fewshot=prompt_record_for("belebele", "eng_Latn", "instruct").fewshot, seed=0, limit=1)[0]
    item = items[0]
    letters = "".join(f"({'ABCD'[i]}) {c}\n" for i, c in enumerate(item["choices"]))
    assert request["prompt"] == (
        "Given the following passage, query, and answer choices, output the letter corresponding to the correct "
        f"answer.\n###\nPassage:\n{item['passage']}\n###\nQuery:\n{item['question']}\n###\nChoices:\n{letters}"
        "###\nAnswer:\n")
    assert set(request) == {"id", "language", "prompt", "exemplar_ids", "choices", "answer",
                            "preamble", "exemplar_turns", "query"}
    assert request["preamble"] == "" and request["exemplar_turns"] == [] and request["query"] == request["prompt"]
