"""Long steps say how far they got: scoring a large combination and the analysis loops over the grid log
progress lines with a bar, rate and ETA (the job's log file and console both carry the babeleval logger)."""

import functools
import itertools
import logging
import re

from analysis_data import write_results
from babeleval.analysis import leaderboard as aggregate
from babeleval.score import job as scoring
from babeleval.analysis import significance
from babeleval.analysis.records import load_outcomes, load_scores
from babeleval.core.jsonl import write_jsonl
from babeleval.core.progress import Progress
from babeleval.analysis.settings import AnalysisSettings
from resolved_record import record_for

# answers as models write them: a bare letter, a letter with its text, a sentence, and one in another script
RESPONSES = ["B", "C. Paris", "I would say A", "उत्तर (ख) है"]


def test_a_large_combination_logs_progress_while_it_is_scored(repo_root, tmp_path, monkeypatch, caplog):
    n = 3000
    records = [{"id": f"q{i}", "language": "eng_Latn", "prompt": f"prompt {i}", "exemplar_ids": [],
                "choices": ["a", "b", "c", "d"], "answer": 1, "response": RESPONSES[i % len(RESPONSES)],
                "settings": {"mode": "generate"}, "model_fingerprint": {"backend": "test"}} for i in range(n)]
    generations = tmp_path / "generations.jsonl"
    write_jsonl(generations, records)
    ticks = itertools.count()
    # a clock that moves 10 ms each time it is read: a line every 10 s is a line every ~1000 records
    monkeypatch.setattr(scoring, "Progress", functools.partial(Progress, clock=lambda: next(ticks) / 100))
    monkeypatch.chdir(repo_root)
    with caplog.at_level(logging.INFO, logger="babeleval"):
        summary = scoring.score_files(generations=str(generations), record=record_for("belebele", "eng_Latn", "instruct"),
                                      raw_out=str(tmp_path / "raw.jsonl"),
                                      scores_out=str(tmp_path / "scores.json"), labels={"model": "m"})
    assert summary["n"] == n and summary["parse_failures"] == n // 2  # the sentence and the Devanagari letter
    lines = [m for m in caplog.messages if m.startswith("scored ")]
    assert 3 <= len(lines) <= 4, lines  # every ~10 s of the fake clock, and once at the end
    pattern = r"scored (\d+)/3000 items \[[#-]{20}\] \d+%, [\d.]+/s, elapsed \d+:\d\d(, ETA \d+:\d\d)?"
    assert all(re.fullmatch(pattern, line) for line in lines), lines
    assert "ETA" in lines[0] and lines[-1].startswith("scored 3000/3000 items [" + "#" * 20 + "] 100%")
    assert "ETA" not in lines[-1]


def test_the_analysis_loops_over_the_grid_say_what_they_count(tmp_path, caplog):
    raws, scores = write_results(tmp_path)  # 3 models x 2 languages x 2 templates
    with caplog.at_level(logging.INFO, logger="babeleval"):
        aggregate.write_outputs(scores, tmp_path / "lb.csv", tmp_path / "lb.md", tmp_path / "m.json",
                                outcome_files=raws,
                                settings=AnalysisSettings(seed=3, samples=50, confidence=0.9))
        significance.pairwise(load_outcomes(raws), load_scores(scores), seed=0, n_samples=50)
    full = "[" + "#" * 20 + "] 100%"
    finished = [m.split(",")[0] for m in caplog.messages if full in m]
    # 12 combinations; groups: 6 (model, language) pairs of templates and 4 (template, language) sets of models
    assert finished == [f"bootstrapped intervals of 12/12 combinations {full}",
                        f"bootstrapped parsed-item accuracy of 12/12 combinations {full}",
                        f"compared 10/10 groups of templates or models {full}"]
