"""Catalogue of bad inputs, part 3: dataset files. Local data is read at start-up, so each case stops the run
before any job, with the file and the row or line (table: tests/README.md)."""

import re

import pytest

from badinput_support import Case, edit_lines, edit_params, edit_rows, fresh_copy, pristine, run_broken
from conftest import snakemake

pytestmark = pytest.mark.slow

JPN = r"data/samples/belebele/jpn_Jpan\.jsonl: "


def _row(number, **changes):
    """Change row ``number`` (1-based); a value of None deletes the field."""
    def change(rows):
        row = rows[number - 1]
        for key, value in changes.items():
            if value is None:
                row.pop(key)
            else:
                row[key] = value
        return rows
    return change


def _duplicate(source, target):
    def change(rows):
        rows[target - 1] = dict(rows[source - 1])
        return rows
    return change


def _line(number, raw):
    def change(lines):
        lines[number - 1] = raw
        return lines
    return change


CASES = [
    Case("missing-field", edit_rows("jpn_Jpan", _row(3, question=None)),
         [JPN + r"row 3: missing field question"]),
    Case("missing-fields", edit_rows("jpn_Jpan", _row(4, mc_answer3=None, mc_answer4=None)),
         [JPN + r"row 4: missing fields mc_answer3, mc_answer4"]),
    Case("null-field", edit_rows("jpn_Jpan", _row(2, flores_passage=None)),
         [JPN + r"row 2: missing field flores_passage"]),
    Case("empty-text-field", edit_rows("jpn_Jpan", _row(5, mc_answer2="  ")),
         [JPN + r"row 5: empty or non-text field mc_answer2"]),
    Case("answer-out-of-range", edit_rows("jpn_Jpan", _row(2, correct_answer_num="5")),
         [JPN + r"row 2: correct_answer_num must be \"1\"..\"4\", got '5'"]),
    Case("answer-not-a-number", edit_rows("jpn_Jpan", _row(6, correct_answer_num="B")),
         [JPN + r"row 6: correct_answer_num must be \"1\"..\"4\", got 'B'"]),
    Case("duplicate-id", edit_rows("jpn_Jpan", _duplicate(1, 4)),
         [JPN + r"row 4: duplicate item \(link, question_number\) already at row 1: https://example\.org/babeleval-sample/p01#1"]),
    Case("wrong-language-file", edit_rows("jpn_Jpan", _row(1, dialect="hin_Deva")),
         [JPN + r"row 1: dialect 'hin_Deva' does not match the language 'jpn_Jpan'"]),
    Case("empty-file", lambda wd: (wd / "data/samples/belebele/jpn_Jpan.jsonl").write_bytes(b""),
         [JPN + r"the file is empty \(no rows for language 'jpn_Jpan'\)"]),
    Case("invalid-utf8", edit_lines("jpn_Jpan", _line(7, b'{"link": "\xff\xfe broken"}\n')),
         [JPN + r"line 7: not valid UTF-8 \(byte 11 of the line\)"]),
    Case("truncated-json-line", edit_lines("jpn_Jpan", _line(8, b'{"link": "https://example.org/x", "question_n\n')),
         [JPN + r"line 8: not valid JSON \(Invalid control character, column 46\)"]),
    Case("line-not-an-object", edit_lines("jpn_Jpan", _line(9, b'["a", "list"]\n')),
         [JPN + r"line 9: expected a JSON object, got list"]),
    Case("broken-exemplar-language", edit_rows("eng_Latn", _row(10, correct_answer_num="0")),
         [r"data/samples/belebele/eng_Latn\.jsonl: row 10: correct_answer_num must be \"1\"..\"4\", got '0'"]),
]


@pytest.fixture(scope="module")
def pristine_dir(tmp_path_factory):
    return pristine(tmp_path_factory)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_bad_data(case, pristine_dir, tmp_path):
    workdir = fresh_copy(pristine_dir, tmp_path)
    case.breaks(workdir)
    seen = run_broken(workdir, case)
    # found before any job: not even the data preparation ran
    assert not (workdir / "data" / "prepared").exists(), seen[-2000:]


def test_too_few_exemplars_stops_before_generation(pristine_dir, tmp_path):
    """Found when the prompts are rendered (a job, not start-up): the job logs one line, no generation starts."""
    workdir = fresh_copy(pristine_dir, tmp_path)
    edit_rows("eng_Latn", lambda rows: rows[:4])(workdir)  # two passages: the paper template needs 5 exemplars
    # (the blog template would fail too, on too few rows to evaluate: left out so the one message is the paper's)
    edit_params(lambda params: params["tasks"]["belebele"].update(templates=["paper"]))(workdir)
    proc = snakemake(workdir, check=False, timeout=600)
    seen = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert re.search(r"ERROR babeleval: language eng_Latn: only 2 exemplar candidates for item \S+, 5 needed", seen), seen
    assert "Traceback" not in seen
    # whichever language's paper prompts were rendered first (they all draw English exemplars) says so in its log
    logs = [p.read_text(encoding="utf-8") for p in (workdir / "results/logs/render_prompts/belebele").glob("*/paper.log")]
    assert any("only 2 exemplar candidates" in log for log in logs)
    assert not (workdir / "results/generations").exists() and not (workdir / "results/cache").exists()
