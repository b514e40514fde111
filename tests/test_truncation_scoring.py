"""Prompts cut to fit a model's context: counted per combination, and a cut question fails its item."""

from pathlib import Path

from babeleval.generate.backends.base import keep_last
from babeleval.score.job import score_combination
from babeleval.prompts.templates import Template
from resolved_record import record_for


def test_keep_last_counts_the_cut_and_asks_for_the_question_only_when_something_is_cut():
    asked = []
    assert keep_last([1, 2, 3], 5, lambda: asked.append(1) or 99) == ([1, 2, 3], 0, False)
    assert asked == []
    assert keep_last(list(range(10)), 4, lambda: 3) == ([6, 7, 8, 9], 6, False)
    assert keep_last(list(range(10)), 4, lambda: 5) == ([6, 7, 8, 9], 6, True)


def _template(mode, parser=None):
    return Template(task="t", name="n", path=Path("prompts/t/n.yaml"), mode=mode, prompt="", target="",
                    parser=parser)


def test_a_cut_question_is_a_failure_with_its_reason_not_a_score():
    records = [
        {"id": "1", "answer": 1, "choices": ["東京", "大阪"], "response": "#### B"},
        {"id": "2", "answer": 0, "choices": ["東京", "大阪"], "response": "#### A", "truncated_tokens": 12},
        {"id": "3", "answer": 0, "choices": ["東京", "大阪"], "response": "#### A", "truncated_tokens": 230,
         "question_cut": True},
    ]
    template = _template("generate", "hash_letter")
    scored, metrics, _ = score_combination(records, template, "multiple_choice", {}, template.metrics)
    assert [r["correct"] for r in scored] == [True, True, False]
    assert scored[2]["parsed"] is False and scored[2]["prediction"] is None
    assert scored[2]["parse_error"].startswith("question cut: the prompt did not fit the model's context and the 230")
    assert metrics["parse_failure_rate"] == 1 / 3


def test_loglikelihood_and_translation_records_with_a_cut_question():
    ll = [{"id": "a", "answer": 0, "choices": ["はい", "いいえ"], "continuations": [" はい", " いいえ"],
           "loglikelihoods": [-0.1, -5.0], "truncated_tokens": 40, "question_cut": True}]
    template = _template("loglikelihood")
    scored, metrics, _ = score_combination(ll, template, "multiple_choice", {}, template.metrics)
    assert scored[0]["correct"] is False and scored[0]["correct_norm"] is False and metrics["acc"] == 0.0
    tr = [{"id": "b", "answer": "猫が寝ている。", "response": "猫が寝ている。", "truncated_tokens": 9, "question_cut": True}]
    template = _template("generate", "translation")
    scored, _, _ = score_combination(tr, template, "translation", {}, template.metrics)
    assert scored[0]["prediction"] is None and scored[0]["correct"] is None and not scored[0]["parsed"]


def test_the_score_file_counts_truncated_prompts(tmp_path, monkeypatch):
    from babeleval.score import job as scoring
    from babeleval.core.jsonl import write_jsonl

    generations = tmp_path / "gen.jsonl"
    write_jsonl(generations, [
        {"id": "1", "answer": 1, "choices": ["a", "b", "c", "d"], "response": "#### B"},
        {"id": "2", "answer": 2, "choices": ["a", "b", "c", "d"], "response": "#### C", "truncated_tokens": 3},
        {"id": "3", "answer": 3, "choices": ["a", "b", "c", "d"], "response": "#### D", "truncated_tokens": 90,
         "question_cut": True},
    ])
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)
    summary = scoring.score_files(generations=str(generations), record=record_for("mmlu", "eng_Latn", "en_zeroshot"),
                                  raw_out=str(tmp_path / "raw.jsonl"), scores_out=str(tmp_path / "scores.json"),
                                  labels={"model": "m"})
    assert summary["truncated_prompts"] == 2 and summary["questions_cut"] == 1
    assert summary["parse_failures"] == 1 and summary["metrics"]["acc"] == 2 / 3
