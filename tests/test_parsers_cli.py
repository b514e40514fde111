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
