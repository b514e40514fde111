"""Adding a task is one task module, its templates and a params.yaml entry (docs/tasks.md, "Adding a task").

A small multiple-choice quiz task is written to a temporary directory outside the package, registered through
params.yaml's ``modules``, and run end to end through Snakemake on a tiny local model: preparation,
rendering, generation, scoring, tables and the analysis report pick it up with no other edit.
"""

from __future__ import annotations

import json
import os
import textwrap

import pytest
import yaml

from conftest import copy_workflow, snakemake

from babeleval.analysis.records import read_table

TASK_MODULE = '''
"""A tiny quiz: one JSONL file per language, rows {"id", "question", "choices", "answer"}."""

from pathlib import Path

from babeleval.core.errors import DataError
from babeleval.tasks.base import Task


class Quiz(Task):
    NAME = "quiz"
    FAMILY = "multiple_choice"

    def local_files(self, source, language, root, split, options):
        return [Path(root) / source["path"] / f"{language}.jsonl"]

    def items(self, rows, language, where, options):
        items = []
        for number, row in enumerate(rows, start=1):
            if row.get("answer") not in range(len(row.get("choices") or ())):
                raise DataError(f"{where}: row {number}: answer must index choices")
            items.append({"id": row["id"], "task": "quiz", "language": language, "group": row["id"],
                          "question": row["question"], "choices": row["choices"], "answer": row["answer"]})
        return items
'''

TEMPLATE = '''
description: The question and its lettered choices; the letter's log-likelihood is scored.
reference: Written for the test of adding a task.
mode: loglikelihood
fewshot:
  n: 1
prompt: |-
  Question: {{ question }}
  A: {{ choices[0] }}
  B: {{ choices[1] }}
  C: {{ choices[2] }}
  Answer:
target: " {{ answer_letter }}"
continuation: " {{ letter }}"
'''

ROWS = {
    "eng_Latn": [("e1", "Which of these is a colour?", ["blue", "seven", "walking"], 0),
                 ("e2", "How many legs does a spider have?", ["six", "eight", "ten"], 1),
                 ("e3", "Which season is the coldest?", ["summer", "spring", "winter"], 2)],
    "jpn_Jpan": [("j1", "日本の首都はどこですか。", ["大阪", "東京", "札幌"], 1),
                 ("j2", "一週間は何日ですか。", ["七日", "五日", "十日"], 0),
                 ("j3", "水が凍る温度は何度ですか。", ["百度", "五十度", "零度"], 2)],
    "hin_Deva": [("h1", "एक दिन में कितने घंटे होते हैं?", ["बारह", "चौबीस", "छत्तीस"], 1),
                 ("h2", "सूरज किस दिशा में उगता है?", ["पूर्व", "पश्चिम", "उत्तर"], 0),
                 ("h3", "इनमें से कौन सा फल है?", ["पत्थर", "कुर्सी", "आम"], 2)],
}


@pytest.mark.workflow
@pytest.mark.slow
def test_a_task_from_a_temporary_directory_runs_end_to_end(tmp_path, tiny_model_dir, built_tiny_model):
    outside = tmp_path / "my_tasks"
    outside.mkdir()
    (outside / "quiz.py").write_text(TASK_MODULE, encoding="utf-8")
    workdir = copy_workflow(tmp_path / "wf", tasks=(), built=built_tiny_model)
    (workdir / "prompts/quiz").mkdir()
    (workdir / "prompts/quiz/lettered.yaml").write_text(textwrap.dedent(TEMPLATE).lstrip(), encoding="utf-8")
    (workdir / "data/quiz").mkdir(parents=True)
    for language, rows in ROWS.items():
        lines = [json.dumps({"id": i, "question": q, "choices": c, "answer": a}, ensure_ascii=False)
                 for i, q, c, a in rows]
        (workdir / f"data/quiz/{language}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    params = yaml.safe_load((workdir / "params.yaml").read_text(encoding="utf-8"))
    params["models"] = {"tiny-llama": {"backend": "hf", "model": str(tiny_model_dir), "dtype": "float32",
                                       "device": "cpu", "batch_size": 8}}
    params["modules"] = [str(outside / "quiz.py")]
    params["tasks"] = {"quiz": {"languages": list(ROWS), "templates": ["lettered"],
                                "source": {"kind": "local", "path": "data/quiz"}}}
    (workdir / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")
    env_before = os.environ.get("BABELEVAL_MODULES")

    snakemake(workdir)  # the default target: metrics, tables and the analysis report

    assert os.environ.get("BABELEVAL_MODULES") == env_before  # registration stays in the workflow's processes
    metrics = json.loads((workdir / "results/metrics.json").read_text(encoding="utf-8"))
    assert set(metrics["tiny-llama"]["quiz"]) == {"acc"} and 0.0 <= metrics["tiny-llama"]["quiz"]["acc"] <= 100.0
    board = read_table(workdir / "results/leaderboard.csv")
    quiz = board[(board.task == "quiz") & (board.template == "lettered")]
    assert set(quiz.language) == set(ROWS) and {"acc", "acc_norm"} <= set(quiz.metric)
    scores = json.loads((workdir / "results/scores/tiny-llama/quiz/jpn_Jpan/lettered.json").read_text())
    assert scores["n"] == 3 and scores["family"] == "multiple_choice"
    resolved = scores["provenance"]["spec"]
    assert resolved["prompts"]["exemplar_files"] == ["data/prepared/quiz/jpn_Jpan.jsonl"]
    assert [m["name"] for m in resolved["metrics"] if m["headline"]] == ["acc"]
    prompts = (workdir / "results/prompts/quiz/jpn_Jpan/lettered.jsonl").read_text(encoding="utf-8")
    assert "日本の首都はどこですか。" in prompts or "一週間は何日ですか。" in prompts
    assert "quiz" in (workdir / "results/leaderboard.csv").read_text(encoding="utf-8")
    assert "quiz" in (workdir / "results/report.html").read_text(encoding="utf-8")


def test_a_task_module_that_defines_no_task_is_refused(tmp_path):
    from babeleval.grid.params import validate
    from babeleval.core.errors import ConfigError

    empty = tmp_path / "nothing.py"
    empty.write_text("X = 1\n", encoding="utf-8")
    params = {"seed": 1, "modules": [str(empty)], "models": {}, "tasks": {}, "decoding": {}}
    with pytest.raises(ConfigError, match=r"params\.yaml: modules: .*nothing\.py: defines no task, task family, "
                                          r"metric, parser or backend"):
        validate(params)
    with pytest.raises(ConfigError, match=r"modules: .*absent\.py: no such file"):
        validate({**params, "modules": [str(tmp_path / "absent.py")]})
    # the older name of the key reads the same files
    with pytest.raises(ConfigError, match=r"params\.yaml: task_modules: .*absent\.py: no such file"):
        validate({"seed": 1, "task_modules": [str(tmp_path / "absent.py")], "models": {}, "tasks": {}, "decoding": {}})
