"""The command line says numbers in the units the tables use: accuracy in percent, as leaderboard.md, the report and
``compare`` show it, not as a share."""

from __future__ import annotations

from babeleval.cli import search


def test_search_prints_accuracy_in_percent(monkeypatch, tmp_path, capsys):
    summary = {"interval": [0.25, 0.625], "worst": {"variant": "fs-a"}, "best": {"variant": "fs-b"}, "spent": 40,
               "budget": 40, "tried": ["fs-a", "fs-b"], "candidates": 12, "calls": 40}
    monkeypatch.setattr(search, "run_search", lambda *args: summary)
    assert search.main(["--model", "m", "--task", "belebele", "--language", "eng_Latn", "--template", "formatspread",
                        "--budget", "40", "--out", str(tmp_path / "s.json")]) == 0
    out = capsys.readouterr().out
    assert "accuracy from 25.0% (fs-a) to 62.5% (fs-b) after 40 of 40 items" in out
