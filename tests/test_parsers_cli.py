"""``python -m babeleval parse``: check a parser against your own outputs."""

from __future__ import annotations

import json
import subprocess
import sys

from babeleval.cli.parse import main


def run(args, stdin):
    return subprocess.run([sys.executable, "-m", "babeleval", "parse", *args], input=stdin, capture_output=True,
                          text=True, timeout=60)


def test_list_names_every_parser(capsys):
    assert main(["--list"]) == 0
    out = capsys.readouterr().out
    for name in ("final_letter", "final_number", "hash_letter", "hash_number", "topic", "jsquad_span", "translation",
                 "belebele_instruct", "belebele_blog"):
        assert name in out


def test_answers_and_failures_per_line():
    lines = [{"id": "a", "response": "Reasoning... #### B"},
             {"id": "b", "response": "no idea"},
             {"id": "c", "response": "#### E", "choices": ["1", "2", "3", "4", "5"]},
             {"id": "d"},
             "not json"]
    stdin = "\n".join(json.dumps(x) if isinstance(x, dict) else x for x in lines) + "\n"
    proc = run(["--parser", "final_letter"], stdin)
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert out[0] == {"line": 1, "id": "a", "answer": "B"}
    assert out[1]["id"] == "b" and "no answer marker" in out[1]["error"]
    assert out[2] == {"line": 3, "id": "c", "answer": "E"}  # the line's own choices: five letters
    assert out[3]["error"] == "no 'response' text field"
    assert out[4]["error"].startswith("not valid JSON")
    assert "5 lines, 2 parsed, 3 failures" in proc.stderr


def test_label_parser_takes_labels(tmp_path):
    path = tmp_path / "topics.jsonl"
    path.write_text(json.dumps({"response": "Travel."}) + "\n" + json.dumps({"response": "It is travel or sports"}) + "\n",
                    encoding="utf-8")
    proc = run(["--parser", "topic", "--labels", "travel,sports,health", str(path)], "")
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert out[0]["answer"] == "travel" and "several topics" in out[1]["error"]
    proc = run(["--parser", "topic", str(path)], "")
    assert "no labels" in proc.stdout


def test_unknown_parser():
    proc = run(["--parser", "nope"], "")
    assert proc.returncode == 2 and "unknown parser 'nope'" in proc.stderr


def test_reads_raw_records_as_they_are(tmp_path):
    raw = {"id": "x", "language": "jpn_Jpan", "prompt": "...", "response": "計算すると\n#### ４２", "parsed": False,
           "parse_error": "old", "prediction": None, "gold": "42", "correct": False}
    proc = run(["--parser", "final_number"], json.dumps(raw, ensure_ascii=False) + "\n")
    assert json.loads(proc.stdout) == {"line": 1, "id": "x", "answer": "42"}


def test_summary_counts_failures_by_reason_name(tmp_path):
    """The summary names each failure reason once, with its count and first lines, whatever each failure's detail."""
    rows = [{"response": "The answer is -5", "language": "eng_Latn"},
            {"response": "Die Antwort ist 1,500", "language": "deu_Latn"},
            {"response": "The answer is 5.600", "language": "eng_Latn"},
            {"response": "First 16 - 3 = 13, then 13 - 4 = 9", "finish_reason": "length"},
            {"response": "First 16 - 3 = 13, then 13 - 4 = 9", "finish_reason": "stop"},
            {"response": "The answer is 3x + 2"},
            {"response": "no idea"}]
    path = tmp_path / "replies.jsonl"
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    proc = run(["--parser", "final_number", str(path)], "")
    assert proc.returncode == 0, proc.stderr
    answers = [json.loads(line).get("answer") for line in proc.stdout.splitlines()]
    assert answers == ["-5", None, None, None, "9", None, None]
    assert "7 lines, 2 parsed, 5 failures" in proc.stderr
    assert "2  error: ambiguous  (lines 2, 3)" in proc.stderr
    assert "1  error: cut at the length limit  (lines 4)" in proc.stderr
    assert "1  error: not a number  (lines 6)" in proc.stderr
    assert "1  error: no answer  (lines 7)" in proc.stderr


def test_a_raw_records_own_labels_and_options_are_read(tmp_path):
    """A raw record of a template with its own labels holds them as ``enumerators``: the letter parser reads those;
    its ``choices`` let a line that restates an option be read; a Latin-only parser is refused by name."""
    path = tmp_path / "raw.jsonl"
    path.write_text("\n".join(json.dumps(row, ensure_ascii=False) for row in [
        {"id": "a", "response": "উত্তর: খ", "choices": ["w", "x", "y", "z"], "enumerators": ["ক", "খ", "গ", "ঘ"]},
        {"id": "b", "response": "(B) Paris", "choices": ["London", "Paris", "Rome", "Berlin"]}]) + "\n",
        encoding="utf-8")
    done = run(["--parser", "final_letter", str(path)], "")
    assert [json.loads(line).get("answer") for line in done.stdout.splitlines()] == ["খ", "B"]
    refused = run(["--parser", "belebele_instruct", str(path)], "")
    assert "reads only the letters" in json.loads(refused.stdout.splitlines()[0])["error"]
