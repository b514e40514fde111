"""Scoring one combination: log-likelihood argmax, length normalisation, parse failures counted apart."""

from pathlib import Path

import pytest

from babeleval.analysis.leaderboard import headline_metrics, leaderboard
from babeleval.grid.headline import headline
from babeleval.prompts.templates import Template
from babeleval.score.job import score_combination


def score_records(records, mode, parser):
    """A multiple-choice combination scored with the family's default metrics."""
    template = Template(task="", name="", path=Path("-"), mode=mode, prompt="", target="", parser=parser)
    scored, metrics, _ = score_combination(records, template, "multiple_choice", {}, template.metrics)
    return scored, metrics


def ll(answer, logprobs, continuations=(" A", " B", " C", " D")):
    return {"id": "x", "answer": answer, "loglikelihoods": logprobs, "continuations": list(continuations),
            "choices": ["a", "b", "c", "d"]}


def test_loglikelihood_acc_and_acc_norm():
    records = [
        ll(0, [-1.0, -2.0, -3.0, -4.0]),
        # raw argmax picks the short choice; per character the long one wins
        ll(1, [-2.0, -3.0, -9.0, -9.0], continuations=(" no", " a much longer answer", " x", " y")),
    ]
    scored, metrics = score_records(records, "loglikelihood", None)
    assert [r["prediction"] for r in scored] == [0, 0]
    assert [r["prediction_norm"] for r in scored] == [0, 1]
    assert metrics == {"acc": 0.5, "acc_norm": 1.0}
    assert scored[0]["gold"] == "A" and all(r["parsed"] for r in scored)


def test_ties_go_to_the_first_choice():
    scored, _ = score_records([ll(2, [-1.0, -1.0, -1.0, -1.0])], "loglikelihood", None)
    assert scored[0]["prediction"] == 0


def test_generation_parse_failures_are_counted_not_hidden():
    records = [{"id": str(i), "answer": 1, "choices": ["a", "b", "c", "d"], "response": r}
               for i, r in enumerate(["B", "(B)", "I am not sure", "", "A"])]
    scored, metrics = score_records(records, "generate", "belebele_instruct")
    assert [r["parsed"] for r in scored] == [True, True, False, False, True]
    assert [r["correct"] for r in scored] == [True, True, False, False, False]
    assert metrics == {"acc": pytest.approx(0.4), "parse_failure_rate": pytest.approx(0.4)}
    assert scored[2]["parse_error"] and scored[2]["prediction"] is None


def test_leaderboard_rows():
    scores = [{"model": "m", "task": "belebele", "language": lang, "template": "paper", "n": 24,
               "metrics": {"acc": 0.25, "acc_norm": 0.5}} for lang in ["jpn_Jpan", "eng_Latn"]]
    frame = leaderboard(scores)
    assert list(frame.columns) == ["model", "task", "language", "template", "metric", "value", "n"]
    assert list(frame["language"]) == ["eng_Latn", "eng_Latn", "jpn_Jpan", "jpn_Jpan"]


def score(model, task, language, template, **metrics):
    return {"model": model, "task": task, "language": language, "template": template, "n": 10, "metrics": metrics}


def test_dvc_metrics_hold_one_headline_number_per_model_and_task():
    """What `dvc exp show` lays out: the headline metric on the leaderboard's scale, mean over languages and
    templates; no per-language or per-template columns, no parse-failure or secondary metrics."""
    scores = [
        score("qwen-7b", "belebele", "yor_Latn", "paper", acc=0.30, acc_norm=0.35),
        score("qwen-7b", "belebele", "yor_Latn", "instruct", acc=0.50, parse_failure_rate=0.2),
        score("qwen-7b", "belebele", "jpn_Jpan", "paper", acc=0.70, acc_norm=0.75),
        score("qwen-7b", "belebele", "jpn_Jpan", "instruct", acc=0.90, parse_failure_rate=0.0),
        score("qwen-7b", "translation_to", "hin_Deva", "en_zeroshot", chrf=41.234, bleu=12.0, parse_failure_rate=0.0),
        score("qwen-7b", "translation_to", "tha_Thai", "en_zeroshot", chrf=30.0, bleu=5.0, parse_failure_rate=0.1),
        score("1e3", "belebele", "yor_Latn", "paper", acc=0.25, acc_norm=0.25),
        score("1e3", "jsquad", "jpn_Jpan", "0.1", exact_match=10.0, f1=20.5, parse_failure_rate=0.0),
    ]
    metrics = headline_metrics(leaderboard(scores))
    # belebele: 1e3 has only (yor_Latn, paper), so qwen-7b is averaged over that cell too (like with like), not
    # over its four (60.0)
    assert metrics == {
        "1e3": {"belebele": {"acc": 25.0}, "jsquad": {"f1": 20.5}},
        "qwen-7b": {"belebele": {"acc": 30.0}, "translation_to": {"chrf": 35.62}},
    }
    # what `dvc exp show` lays out (results/headline.json): the same numbers under short names
    assert headline(metrics) == {"1e3": {"belebele": 25.0, "jsquad": 20.5},
                                 "qwen-7b": {"belebele": 30.0, "translation_to": 35.62}}
    alone = headline_metrics(leaderboard([s for s in scores if s["model"] == "qwen-7b"]))
    assert headline(alone) == {"belebele": 60.0, "translation_to": 35.62}  # one model: every cell of its own


def test_models_that_share_no_cell_are_marked_not_comparable():
    """A chat model that scores only the generated template and a model entry that runs only the log-likelihood
    one share no (language, template) cell: each mean is its own, and its name says it does not compare."""
    scores = [score("chat", "belebele", "eng_Latn", "instruct", acc=0.8, parse_failure_rate=0.1),
              score("local", "belebele", "eng_Latn", "paper", acc=0.4, acc_norm=0.4),
              score("chat", "jsquad", "jpn_Jpan", "0.1", exact_match=10.0, f1=20.0, parse_failure_rate=0.0),
              score("local", "jsquad", "jpn_Jpan", "0.1", exact_match=30.0, f1=40.0, parse_failure_rate=0.0)]
    metrics = headline_metrics(leaderboard(scores))
    assert metrics == {"chat": {"belebele": {"acc_not_comparable": 80.0}, "jsquad": {"f1": 20.0}},
                       "local": {"belebele": {"acc_not_comparable": 40.0}, "jsquad": {"f1": 40.0}}}
    assert headline(metrics) == {"chat": {"belebele_not_comparable": 80.0, "jsquad": 20.0},
                                 "local": {"belebele_not_comparable": 40.0, "jsquad": 40.0}}
