"""Catalogue of bad inputs, part 4: model outputs. A bad output is that item's parse failure, with a reason;
scoring always completes (table: tests/README.md)."""

import json

import pytest

from babeleval.core.errors import DataError
from babeleval.core.jsonl import read_jsonl, write_jsonl
from babeleval.score.job import score_files
from resolved_record import record_for

BINARY = bytes(range(256)).decode("latin-1") + "\udfff\ud800"  # every byte value, NUL included, and two lone surrogates

# (case id, template, response, the parse error the item records)
CASES = [
    ("empty", "instruct", "", "empty response"),
    ("whitespace-only", "instruct", " \n\t ", "empty response"),
    ("null-content", "instruct", None, "no text response: got null"),
    ("not-text", "instruct", {"content": "B"}, "no text response: got dict"),
    ("enormous", "instruct", "The passage says many things. " * 200_000,
     "no answer: no choice letter (A, B, C, D) at the start of the answer"),
    ("enormous-first-line", "blog", "x" * 6_000_000 + "\nB", "no answer: first line does not start with a choice letter"),
    ("binary", "instruct", BINARY, "no answer: no choice letter (A, B, C, D) at the start of the answer"),
    ("binary-blog", "blog", "\x00\x01B\xff", "no answer: first line does not start with a choice letter"),
    ("another-script", "instruct", "उत्तर (ख) है", "no answer: no choice letter (A, B, C, D) at the start of the answer"),
    ("fullwidth-letter", "blog", "Ｂ", "no answer: first line does not start with a choice letter"),
    ("letter-out-of-range", "instruct", "E", "no answer: no choice letter (A, B, C, D) at the start of the answer"),
]


def generation(i, response):
    return {"id": f"q{i}", "language": "eng_Latn", "prompt": f"prompt {i}", "exemplar_ids": [],
            "choices": ["a", "b", "c", "d"], "answer": 1, "response": response, "prompt_tokens": 10,
            "completion_tokens": 3, "finish_reason": "length", "settings": {"mode": "generate"},
            "model_fingerprint": {"backend": "test"}}


def score(tmp_path, template, records):
    generations = tmp_path / "generations.jsonl"
    write_jsonl(generations, records)
    return score_files(generations=str(generations), record=record_for("belebele", "eng_Latn", template),
                       raw_out=str(tmp_path / "raw.jsonl"), scores_out=str(tmp_path / "scores.json"),
                       labels={"model": "m", "task": "belebele", "language": "eng_Latn", "template": template})


@pytest.mark.parametrize("template, response, reason", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_output_is_a_parse_failure(template, response, reason, repo_root, tmp_path, monkeypatch):
    monkeypatch.chdir(repo_root)
    summary = score(tmp_path, template, [generation(0, "B"), generation(1, response)])
    good, bad = read_jsonl(tmp_path / "raw.jsonl")
    assert good["parsed"] and good["correct"]
    assert bad["parsed"] is False and bad["correct"] is False and bad["prediction"] is None
    assert bad["parse_error"].startswith(reason)
    assert bad["response"] == response  # kept as the model wrote it, for inspection
    assert summary["parse_failures"] == 1
    assert summary["metrics"] == {"acc": 0.5, "parse_failure_rate": 0.5}
    written = json.loads((tmp_path / "scores.json").read_text(encoding="utf-8"))
    assert written["metrics"]["parse_failure_rate"] == 0.5
    (tmp_path / "raw.jsonl").read_bytes().decode("utf-8")  # the files stay valid UTF-8, whatever the model wrote


def test_damaged_generations_file_names_the_record(repo_root, tmp_path, monkeypatch):
    """Not a model output but our own file, damaged (edited, or a disk error): a clear stop, not a crash."""
    monkeypatch.chdir(repo_root)
    records = [generation(0, "B"), generation(1, "C")]
    del records[1]["choices"]
    with pytest.raises(DataError, match=r"generations\.jsonl: record 2: missing choices \(a damaged generations file"):
        score(tmp_path, "instruct", records)


def test_truncated_generations_file_names_the_line(repo_root, tmp_path, monkeypatch):
    monkeypatch.chdir(repo_root)
    generations = tmp_path / "generations.jsonl"
    write_jsonl(generations, [generation(0, "B"), generation(1, "C")])
    generations.write_bytes(generations.read_bytes()[:-40])
    with pytest.raises(DataError, match=r"generations\.jsonl: line 2: not valid JSON"):
        score_files(generations=str(generations), record=record_for("belebele", "eng_Latn", "instruct"),
                    raw_out=str(tmp_path / "raw.jsonl"), scores_out=str(tmp_path / "scores.json"), labels={})
