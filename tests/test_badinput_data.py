"""Catalogue of bad inputs, part 3: dataset files. Local data is read at start-up, so each case stops the run
before any job, with the file and the row or line (table: tests/README.md)."""

import json
import re

import pytest
import yaml

from badinput_support import (Case, Checks, edit_lines, edit_params, edit_rows, edit_template, fresh_copy, pristine,
                              plan_broken, witness)
from conftest import copy_workflow, snakemake


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
         [JPN + r"row 4: duplicate item \(link, question_number\) 'https://example\.org/babeleval-sample/p01#1' "
                r"\(already at row 1\)"]),
    Case("wrong-language-file", edit_rows("jpn_Jpan", _row(1, dialect="hin_Deva")),
         [JPN + r"row 1: dialect 'hin_Deva' does not match the language 'jpn_Jpan'"]),
    Case("empty-file", lambda wd: (wd / "data/samples/belebele/jpn_Jpan.jsonl").write_bytes(b""),
         [JPN + r"the file is empty \(no rows for language 'jpn_Jpan'\)"]),
    Case("invalid-utf8", edit_lines("jpn_Jpan", _line(7, b'{"link": "\xff\xfe broken"}\n')),
         [JPN + r"line 7: not valid UTF-8 \(byte 11 of the line\)"]),
    Case("truncated-json-line", edit_lines("jpn_Jpan", _line(8, b'{"link": "https://example.org/x", "question_n\n')),
         [JPN + r"line 8: not valid JSON \(Unterminated string starting, column 35\)"]),
    Case("line-not-an-object", edit_lines("jpn_Jpan", _line(9, b'["a", "list"]\n')),
         [JPN + r"line 9: expected a JSON object, got list"]),
    Case("broken-exemplar-language", edit_rows("eng_Latn", _row(10, correct_answer_num="0")),
         [r"data/samples/belebele/eng_Latn\.jsonl: row 10: correct_answer_num must be \"1\"..\"4\", got '0'"]),
    # what is evaluated never shrinks or empties without a word
    Case("fewshot-larger-than-pool", edit_template("blog", lambda spec: spec["fewshot"].update(n=50)),
         [r"prompts/belebele/blog\.yaml: fewshot\.n is 50, but its exemplar pool \(belebele eng_Latn\) holds only "
          r"24 rows: lower fewshot\.n or give a larger pool"]),
    Case("exemplar-language-too-small", edit_rows("eng_Latn", lambda rows: rows[:4]),
         [r"prompts/belebele/paper\.yaml: fewshot\.n is 5, but its exemplar pool \(belebele eng_Latn\) holds only "
          r"4 rows"]),
    Case("empty-prompt", edit_template("instruct", lambda spec: spec.update(prompt="{{ question[:0] }}  ")),
         [r"prompts/belebele/instruct\.yaml: 'prompt' renders to an empty text for item "
          r"https://example\.org/babeleval-sample/p01#1: nothing would be asked"]),
    Case("metric-not-for-the-family", edit_template("instruct", lambda spec: spec.update(metrics=["acc", "bleu"])),
         [r"prompts/belebele/instruct\.yaml: metric bleu cannot be computed for a multiple_choice task in mode "
          r"'generate' \(it can report: acc, balanced_acc, macro_f1, parse_failure_rate\)"]),
]


@pytest.fixture(scope="module")
def pristine_dir(tmp_path_factory):
    return pristine(tmp_path_factory)


# found before any job, not even the data preparation, and said in a line, not a Python traceback
DATA_CHECKS = Checks(absent=("data/prepared",), hidden=("Traceback",))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_bad_data(case, pristine_dir, tmp_path):
    workdir = fresh_copy(pristine_dir, tmp_path)
    case.breaks(workdir)
    plan_broken(workdir, case, DATA_CHECKS)

@pytest.mark.slow
@pytest.mark.workflow
def test_the_workflow_stops_where_the_plan_does(pristine_dir, tmp_path):
    """The witness: Snakemake, run for real on one case, stops on the message the in-process plan gives."""
    witness(CASES, "missing-field", pristine_dir, tmp_path, DATA_CHECKS)



@pytest.mark.workflow
def test_too_few_exemplars_stops_before_generation(pristine_dir, tmp_path):
    """Found when the prompts are rendered (a job, not start-up): the job logs one line, no generation starts."""
    workdir = fresh_copy(pristine_dir, tmp_path)
    # three passages of two questions: 6 rows are enough for 5 exemplars at start-up, but an item's own
    # passage is never its exemplar, so each item has only 4 candidates
    edit_rows("eng_Latn", lambda rows: rows[:6])(workdir)
    # (the blog template would fail too, on too few rows to evaluate: left out so the one message is the paper's)
    edit_params(lambda params: params["tasks"]["belebele"].update(templates=["paper"]))(workdir)
    proc = snakemake(workdir, check=False, timeout=600)
    seen = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert re.search(r"ERROR babeleval: language eng_Latn: only 4 exemplar candidates for item \S+, 5 needed", seen), seen
    assert "Traceback" not in seen
    # the paper template's rendering job (every language, all drawing English exemplars) says so in its log
    log = (workdir / "results/logs/render_prompts/belebele/paper.log").read_text(encoding="utf-8")
    assert "only 4 exemplar candidates" in log
    assert not (workdir / "results/generations").exists() and not (workdir / "results/cache").exists()


# -- every other task's loader: the same discipline, on the bundled samples of every task ----------------

# Tasks the default grid leaves commented out; their bundled samples are added so their files are read too.
EXTRA_TASKS = {
    "truthfulqa": {"languages": ["eng_Latn", "swh_Latn"], "templates": ["en_zeroshot"],
                   "source": {"kind": "local", "path": "data/samples/truthfulqa"}},
    "arc": {"languages": ["eng_Latn", "swh_Latn"], "templates": ["en_zeroshot"],
            "source": {"kind": "local", "path": "data/samples/arc"}},
    "sib200": {"languages": ["eng_Latn", "jpn_Jpan"], "templates": ["en_zeroshot"],
               "source": {"kind": "local", "path": "data/samples/sib200"}},
}


def _json_lines(relative, number, change):
    """Change JSON line ``number`` of a JSON Lines file (JGLUE's, uhura's and FLORES+'s files are JSON Lines)."""
    def apply(workdir):
        path = workdir / relative
        lines = path.read_text(encoding="utf-8").splitlines()
        row = json.loads(lines[number - 1])
        change(row)
        lines[number - 1] = json.dumps(row, ensure_ascii=False)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return apply


def _set(path, value):
    """A change setting a (dotted) field of a row."""
    def change(row):
        *parents, last = path.split(".")
        for key in parents:
            row = row[key]
        row[last] = value
    return change


def _tsv_cell(relative, line, column, value):
    def apply(workdir):
        path = workdir / relative
        lines = path.read_bytes().split(b"\n")
        cells = lines[line - 1].split(b"\t")
        cells[column] = value
        lines[line - 1] = b"\t".join(cells)
        path.write_bytes(b"\n".join(lines))
    return apply


def _prefix_line(relative, line, raw):
    def apply(workdir):
        path = workdir / relative
        lines = path.read_bytes().split(b"\n")
        lines[line - 1] = raw + lines[line - 1]
        path.write_bytes(b"\n".join(lines))
    return apply


def _copy_json_line(relative, source, target):
    def apply(workdir):
        path = workdir / relative
        lines = path.read_text(encoding="utf-8").splitlines()
        lines[target - 1] = lines[source - 1]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return apply


def _jsquad_answers_as_strings(workdir):
    path = workdir / "data/samples/jsquad/valid-v1.3.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    qa = document["data"][0]["paragraphs"][0]["qas"][1]
    qa["answers"] = [answer["text"] for answer in qa["answers"]]
    path.write_text(json.dumps(document, ensure_ascii=False, indent=1), encoding="utf-8")


MGSM_JA = r"data/samples/mgsm/mgsm_ja\.tsv: "
NUMBER = r"answer_number must be an integer or a plainly written decimal such as 18 or 2\.5"
JCQA = r"data/samples/jcommonsenseqa/valid-v1\.3\.json: "
TQA = r"data/samples/truthfulqa/en_multiple_choice_test\.json: "

SUITE_CASES = [
    Case("mgsm-gold-fraction", _tsv_cell("data/samples/mgsm/mgsm_ja.tsv", 2, 1, b"3/4"),
         [MGSM_JA + r"line 2: " + NUMBER + r".*got '3/4'"]),
    Case("mgsm-gold-with-text", _tsv_cell("data/samples/mgsm/mgsm_ja.tsv", 3, 1, b"40abc"),
         [MGSM_JA + r"line 3: " + NUMBER + r".*got '40abc'"]),
    Case("mgsm-gold-thousands-separator", _tsv_cell("data/samples/mgsm/mgsm_ja.tsv", 1, 1, b"1,000"),
         [MGSM_JA + r"line 1: " + NUMBER + r" \(no fractions, units, exponents or thousands separators\), "
                    r"got '1,000'"]),
    Case("tsv-invalid-utf8", _tsv_cell("data/samples/mgsm/mgsm_ja.tsv", 4, 0, "バス".encode("utf-8") + b"\xff"),
         [MGSM_JA + r"line 4: not valid UTF-8 \(byte 7 of the line\)"]),
    Case("sib200-unknown-category", _tsv_cell("data/samples/sib200/jpn_Jpan/test.tsv", 3, 1, b"Travel"),
         [r"data/samples/sib200/jpn_Jpan/test\.tsv: line 3: category must be one of science/technology, travel, "
          r".*got 'Travel'"]),
    Case("jcommonsenseqa-label-fraction", _json_lines("data/samples/jcommonsenseqa/valid-v1.3.json", 2,
                                                      _set("label", 1.9)),
         [JCQA + r"row 2: label must be an integer 0-4, got 1\.9"]),
    Case("jcommonsenseqa-label-as-text", _json_lines("data/samples/jcommonsenseqa/valid-v1.3.json", 3,
                                                     _set("label", "2")),
         [JCQA + r"row 3: label must be an integer 0-4, got '2'"]),
    Case("jcommonsenseqa-exemplar-label", _json_lines("data/samples/jcommonsenseqa/train-v1.3.json", 1,
                                                      _set("label", 5)),
         [r"data/samples/jcommonsenseqa/train-v1\.3\.json: row 1: label must be an integer 0-4, got 5"]),
    Case("jsquad-answers-as-strings", _jsquad_answers_as_strings,
         [r"data/samples/jsquad/valid-v1\.3\.json: data\[0\]\.paragraphs\[0\]\.qas\[1\]: answers\[0\] must be an "
          r"object \{text, answer_start\}, got '"]),
    Case("truthfulqa-empty-choice", _json_lines("data/samples/truthfulqa/en_multiple_choice_test.json", 1,
                                                _set("mc1_targets.choices", ["It passes through", "", "x"])),
         [TQA + r"row 1: mc1_targets\.choices\[1\] must be a non-empty text, got ''"]),
    Case("truthfulqa-null-choice", _json_lines("data/samples/truthfulqa/en_multiple_choice_test.json", 2,
                                               _set("mc1_targets.choices", ["Nein", None, "Ja"])),
         [TQA + r"row 2: mc1_targets\.choices\[1\] must be a non-empty text, got None"]),
    Case("truthfulqa-labels-as-words", _json_lines("data/samples/truthfulqa/en_multiple_choice_test.json", 1,
                                                   _set("mc1_targets.labels", ["true", "false", "false"])),
         [TQA + r"row 1: mc1_targets\.labels\[0\] must be the integer 0 or 1, got 'true'"]),
    Case("arc-answer-key-not-a-label", _json_lines("data/samples/arc/sw_test.json", 1, _set("answerKey", "E")),
         [r"data/samples/arc/sw_test\.json: row 1: answerKey must be one of A, B, C, D, got 'E'"]),
    Case("flores-duplicate-id", _copy_json_line("data/samples/flores_plus/dev/hin_Deva.jsonl", 2, 5),
         [r"data/samples/flores_plus/dev/hin_Deva\.jsonl: row 5: duplicate id '2' \(already at row 2\)"]),
    Case("mmlu-csv-invalid-utf8", _prefix_line("data/samples/mmlu/hi/test.csv", 3, b"\xc3("),
         [r"data/samples/mmlu/hi/test\.csv: line 3: not valid UTF-8 \(byte 1 of the line\)"]),
]


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory):
    """The default grid (every task family) plus the tasks it leaves commented out."""
    workdir = copy_workflow(tmp_path_factory.mktemp("suite") / "wf")
    params_file = workdir / "params.yaml"
    params = yaml.safe_load(params_file.read_text(encoding="utf-8"))
    params["tasks"].update(EXTRA_TASKS)
    params_file.write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return workdir


@pytest.mark.parametrize("case", SUITE_CASES, ids=lambda c: c.id)
def test_bad_task_data(case, suite_dir, tmp_path):
    workdir = fresh_copy(suite_dir, tmp_path)
    case.breaks(workdir)
    plan_broken(workdir, case, DATA_CHECKS)


@pytest.mark.slow
@pytest.mark.workflow
def test_the_workflow_stops_where_the_plan_does_on_any_task(suite_dir, tmp_path):
    """The witness for the other loaders: Snakemake on the every-task grid stops on the planned message."""
    witness(SUITE_CASES, "mgsm-gold-fraction", suite_dir, tmp_path, DATA_CHECKS)
