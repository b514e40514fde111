"""Scoring one combination per task family: the raw-record and scores-file contracts, on made-up outputs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from babeleval.core.jsonl import read_jsonl, write_jsonl
from babeleval.prompts.render import build_requests
from babeleval.score.job import score_files
from babeleval.tasks import get_task
from babeleval.prompts.templates import load_template
from resolved_record import prompt_record_for, record_for

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "data" / "samples"
RAW_KEYS = {"id", "language", "parsed", "parse_error", "prediction", "gold", "correct"}
# the prompt's text stays in the generations file (babeleval.core.record_fields.PROMPT_TEXT)
PROMPT_TEXT = {"prompt", "preamble", "exemplar_turns", "query", "messages", "rendered_prompt"}
SCORE_KEYS = {"model", "task", "language", "template", "n", "metrics", "parse_failures"}


def requests_for(task, language, template, path, limit=None, **options):
    source = {"kind": "local", "path": str(SAMPLES / path)}
    obj = get_task(task)
    items = obj.load(source, language, options=options or None)
    pool = obj.load(source, language, part="fewshot") if obj.FEWSHOT_PART else items
    return build_requests(load_template(task, template, ROOT), items, pool,
                          fewshot=prompt_record_for(task, language, template).fewshot, seed=1, limit=limit,
                          shuffle_seed=obj.EVAL_SHUFFLE_SEED)


def score(tmp_path, task, language, template, generations, **kwargs):
    gen = tmp_path / "gen.jsonl"
    write_jsonl(gen, generations)
    cwd = os.getcwd()
    os.chdir(ROOT)  # templates are read from prompts/ of the repository
    try:
        summary = score_files(generations=str(gen), record=record_for(task, language, template),
                              raw_out=str(tmp_path / "raw.jsonl"), scores_out=str(tmp_path / "scores.json"),
                              labels={"model": "m", "task": task, "language": language, "template": template}, **kwargs)
    finally:
        os.chdir(cwd)
    raw = read_jsonl(tmp_path / "raw.jsonl")
    written = json.loads((tmp_path / "scores.json").read_text(encoding="utf-8"))
    assert written == summary
    assert SCORE_KEYS <= set(summary)
    for record in raw:
        assert RAW_KEYS <= set(record)
        assert not PROMPT_TEXT & set(record)
        assert ("response" in record) or ("loglikelihoods" in record)
        assert isinstance(record["parsed"], bool)
        assert (record["parse_error"] is None) == record["parsed"]
    return raw, summary


def test_multiple_choice_by_choice_text_loglikelihood(tmp_path):
    requests = requests_for("jcommonsenseqa", "jpn_Jpan", "0.1", "jcommonsenseqa", limit=4)
    gens = []
    for k, r in enumerate(requests):
        lls = [-5.0] * 5
        lls[r["answer"] if k % 2 == 0 else (r["answer"] + 1) % 5] = -1.0
        gens.append({**r, "loglikelihoods": lls})
    raw, summary = score(tmp_path, "jcommonsenseqa", "jpn_Jpan", "0.1", gens)
    assert summary["metrics"]["acc"] == 0.5 and set(summary["metrics"]) == {"acc", "acc_norm"}
    assert raw[0]["gold"] == raw[0]["choices"][raw[0]["answer"]]  # the gold choice text
    assert raw[0]["correct"] is True and raw[1]["correct"] is False


def test_classification_reports_balanced_accuracy_and_macro_f1(tmp_path):
    requests = requests_for("marc_ja", "jpn_Jpan", "0.3", "marc_ja")
    # always "ポジティブ": balanced accuracy 0.5, macro-F1 of a constant predictor
    gens = [{**r, "loglikelihoods": [-1.0, -3.0]} for r in requests]
    raw, summary = score(tmp_path, "marc_ja", "jpn_Jpan", "0.3", gens)
    assert summary["metrics"]["acc"] == 0.5
    assert summary["metrics"]["balanced_acc"] == 0.5
    assert summary["metrics"]["macro_f1"] == pytest.approx((2 / 3 + 0) / 2)
    assert {r["gold"] for r in raw} == {"ポジティブ", "ネガティブ"}


def test_extractive_qa(tmp_path):
    requests = requests_for("jsquad", "jpn_Jpan", "0.1", "jsquad")
    responses = {r["id"]: r["answer"][0] for r in requests}
    ids = list(responses)
    responses[ids[1]] = "\n"                     # nothing before the separator: a parse failure
    responses[ids[2]] = "まったく違う答え\n次の質問"  # wrong
    gens = [{**r, "response": responses[r["id"]]} for r in requests]
    raw, summary = score(tmp_path, "jsquad", "jpn_Jpan", "0.1", gens)
    n = len(requests)
    assert summary["metrics"]["exact_match"] == pytest.approx(100 * (n - 2) / n)
    assert summary["parse_failures"] == 1 and summary["metrics"]["parse_failure_rate"] == pytest.approx(1 / n)
    assert "mecab" in summary["signatures"]["f1"]
    failed = next(r for r in raw if r["id"] == ids[1])
    assert failed["parsed"] is False and failed["correct"] is False and failed["parse_error"] == "empty response: nothing before the separator"
    assert isinstance(failed["gold"], list)


def test_translation_has_no_per_item_correctness(tmp_path):
    requests = requests_for("translation_to", "jpn_Jpan", "en_zeroshot", "flores_plus", limit=4)
    gens = [{**r, "response": r["answer"] if i else ""} for i, r in enumerate(requests)]
    raw, summary = score(tmp_path, "translation_to", "jpn_Jpan", "en_zeroshot", gens)
    assert all(r["correct"] is None for r in raw)
    assert raw[0]["parsed"] is False and raw[1]["prediction"] == raw[1]["gold"]
    assert set(summary["metrics"]) == {"bleu", "chrf", "parse_failure_rate"}
    assert "tok:" in summary["signatures"]["bleu"] and "nc:6" in summary["signatures"]["chrf"]
    assert 0 < summary["metrics"]["chrf"] < 100


def test_math(tmp_path):
    requests = requests_for("mgsm", "jpn_Jpan", "en_zeroshot", "mgsm")
    responses = ["計算: 12-5+8 = 15\n#### 15", "#### 40人", "maybe 29, maybe 30", "#### 1,200", "#### <number>", "#### 6.0"]
    gens = [{**r, "response": text} for r, text in zip(requests, responses)]
    raw, summary = score(tmp_path, "mgsm", "jpn_Jpan", "en_zeroshot", gens)
    assert [r["correct"] for r in raw] == [True, True, False, False, False, True]
    assert [r["parsed"] for r in raw] == [True, True, False, True, False, True]
    assert summary["metrics"]["acc"] == 0.5 and summary["parse_failures"] == 2


def test_multiple_choice_by_letter_generated(tmp_path):
    requests = requests_for("mmlu", "hin_Deva", "en_zeroshot", "mmlu")
    gens = [{**r, "response": f"सोचते हैं...\n#### {'ABCD'[r['answer']]}"} for r in requests]
    gens[0]["response"] = "Let me think step by step <think>"
    raw, summary = score(tmp_path, "mmlu", "hin_Deva", "en_zeroshot", gens)
    assert summary["metrics"]["acc"] == pytest.approx(5 / 6)
    assert raw[1]["gold"] == "ABCD"[raw[1]["answer"]] and raw[1]["prediction"] == raw[1]["answer"]
    assert raw[0]["parse_error"].startswith("cut while reasoning")


def test_topic_classification(tmp_path):
    requests = requests_for("topic_classification", "jpn_Jpan", "en_zeroshot", "flores_plus")
    gens = [{**r, "response": r["choices"][r["answer"]].title()} for r in requests]
    gens[0]["response"] = "Maybe travel, maybe sports."
    raw, summary = score(tmp_path, "topic_classification", "jpn_Jpan", "en_zeroshot", gens)
    assert summary["metrics"]["acc"] == pytest.approx(7 / 8)
    assert raw[1]["gold"] == raw[1]["choices"][raw[1]["answer"]]
    assert "several topics" in raw[0]["parse_error"]
