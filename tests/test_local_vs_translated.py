"""Translated against locally written tests (babeleval.analysis.local_vs_translated): the gap with its interval,
the models' ranks on each task, and the note where chance levels or formats differ."""

from __future__ import annotations

import pandas as pd
import pytest

from babeleval.analysis import local_vs_translated as lvt
from babeleval.analysis.settings import AnalysisSettings
from babeleval.core.errors import ConfigError
from babeleval.core.paths import Combo

SETTINGS = AnalysisSettings(seed=7, samples=2000)
MC = lvt.Format("loglikelihood", 0)


def items(right: int, n: int, choices: int) -> pd.DataFrame:
    return pd.DataFrame({"correct": [True] * right + [False] * (n - right), "n_choices": [choices] * n})


def outcomes() -> dict[Combo, pd.DataFrame]:
    return {
        Combo("strong", "belebele", "jpn_Jpan", "paper"): items(30, 40, 4),
        Combo("strong", "global_piqa", "jpn_Jpan", "cloze"): items(12, 40, 2),
        Combo("weak", "belebele", "jpn_Jpan", "paper"): items(10, 40, 4),
        Combo("weak", "global_piqa", "jpn_Jpan", "cloze"): items(28, 40, 2),
    }


def test_the_gap_is_local_minus_translated_with_an_interval_that_holds_it():
    formats = {("belebele", "paper"): lvt.Format("loglikelihood", 5), ("global_piqa", "cloze"): MC}
    table = lvt.compare({"belebele": "global_piqa"}, outcomes(), formats, SETTINGS)
    strong = table[table["model"] == "strong"].iloc[0]
    assert strong["acc_translated"] == 0.75 and strong["acc_local"] == 0.30
    assert strong["gap"] == pytest.approx(-0.45)
    assert strong["gap_low"] < -0.45 < strong["gap_high"] < 0  # two independent samples of 40: about +-0.2
    assert strong["gap_high"] - strong["gap_low"] == pytest.approx(0.4, abs=0.1)
    assert strong["note"] == ("chance differs: 25.0% translated, 50.0% local; "
                              "format differs: loglikelihood, 5-shot translated, loglikelihood, 0-shot local")


def test_ranks_per_task_and_their_change():
    formats = {("belebele", "paper"): MC, ("global_piqa", "cloze"): MC}
    table = lvt.compare({"belebele": "global_piqa"}, outcomes(), formats, SETTINGS).set_index("model")
    assert table.loc["strong", ["rank_translated", "rank_local", "rank_change"]].tolist() == [1, 2, -1]
    assert table.loc["weak", ["rank_translated", "rank_local", "rank_change"]].tolist() == [2, 1, 1]
    lines = lvt.findings(table.reset_index())
    assert "strong, jpn_Jpan: rank 1 on belebele, 2 on global_piqa" in lines


def test_the_same_chance_and_format_leave_no_note():
    same = {Combo("m", "a", "jpn_Jpan", "t"): items(5, 10, 4), Combo("m", "b", "jpn_Jpan", "u"): items(5, 10, 4)}
    table = lvt.compare({"a": "b"}, same, {("a", "t"): MC, ("b", "u"): MC}, SETTINGS)
    assert table["note"].tolist() == [""] and table["gap"].tolist() == [0.0]


def test_a_pair_must_name_tasks_of_the_grid_that_share_a_language():
    from babeleval.grid.params import check_pairs
    from types import SimpleNamespace

    tasks = {"belebele": SimpleNamespace(languages=("jpn_Jpan",)), "include": SimpleNamespace(languages=("hin_Deva",))}
    with pytest.raises(ConfigError, match="analysis.local_vs_translated.belebele: no task global_piqa"):
        check_pairs({"belebele": "global_piqa"}, tasks, "params.yaml")
    with pytest.raises(ConfigError, match="belebele and include share no language"):
        check_pairs({"belebele": "include"}, tasks, "params.yaml")
