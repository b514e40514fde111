"""Like with like: every model's headline over the same (language, template) cells, or marked not comparable; and
the report's first screen: per task the score with interval and n, chance, parse failures, what went in and one
line on what stands out, in the page before anything else."""

from __future__ import annotations

import math

import pandas as pd

from analysis_data import report_tables, write_results
from babeleval.analysis import first_screen, paper_tables, report
from babeleval.analysis.comparable import headline_cells
from babeleval.analysis.settings import AnalysisSettings


def board(rows):
    frame = pd.DataFrame(rows, columns=["model", "task", "language", "template", "metric", "value", "n"])
    frame["ci_low"], frame["ci_high"] = frame["value"] - 0.05, frame["value"] + 0.05
    frame["chance"] = [0.25 if m == "acc" else math.nan for m in frame["metric"]]
    return frame


# a chat model cannot score the log-likelihood template (paper); both local models run all three
GRID = [(model, "belebele", lang, template, "acc", value, 24)
        for model, template, value in [("chat", "instruct", 0.6), ("chat", "blog", 0.5),
                                       ("m1", "instruct", 0.2), ("m1", "blog", 0.1), ("m1", "paper", 0.9),
                                       ("m2", "instruct", 0.3), ("m2", "blog", 0.3), ("m2", "paper", 0.3)]
        for lang in ("eng_Latn", "jpn_Jpan")]
PF = [(model, "belebele", lang, template, "parse_failure_rate", rate, 24)
      for model, template, rate in [("chat", "instruct", 0.0), ("chat", "blog", 0.0), ("m1", "instruct", 0.75),
                                    ("m1", "blog", 1.0), ("m2", "instruct", 0.0), ("m2", "blog", 0.0)]
      for lang in ("eng_Latn", "jpn_Jpan")]


def test_each_model_is_averaged_over_the_cells_every_model_has():
    lb = board(GRID + PF)
    cells = headline_cells(lb[lb["metric"] == "acc"])
    assert {m: c.templates for m, c in cells.items()} == {"chat": ("blog", "instruct"), "m1": ("blog", "instruct"),
                                                          "m2": ("blog", "instruct")}
    assert cells["m1"].left_out_text() == "template paper (2 languages)" and not cells["chat"].left_out
    table = paper_tables.overall_table(lb)
    # m1 over blog and instruct: 15.0, not 40.0 with its paper template's 90
    assert table.loc[0, "languages × templates"] == "2 × 2"
    assert table.loc[0, "m1"].startswith("15.0 [") and table.loc[0, "chat"].startswith("55.0 [")
    assert "not comparable" not in " ".join(table.loc[0, ["chat", "m1", "m2"]])
    assert paper_tables.left_out_of_headline(lb) == [
        "belebele, m1: left out of the headline, so that every model is averaged over the same cells: template paper "
        "(2 languages) (in the per-template tables).",
        "belebele, m2: left out of the headline, so that every model is averaged over the same cells: template paper "
        "(2 languages) (in the per-template tables)."]


def test_models_with_no_cell_in_common_say_what_they_hold_and_are_not_comparable():
    lb = board([("chat", "belebele", "eng_Latn", "instruct", "acc", 0.6, 24),
                ("local", "belebele", "eng_Latn", "paper", "acc", 0.4, 24)])
    table = paper_tables.overall_table(lb)
    assert table.loc[0, "languages × templates"] == "differs: see cells"
    assert table.loc[0, "chat"].endswith("(not comparable: templates instruct; languages eng_Latn)")
    assert table.loc[0, "local"].endswith("(not comparable: templates paper; languages eng_Latn)")
    assert "not comparable" in paper_tables.left_out_of_headline(lb)[0]
    screen = first_screen.table(lb, pd.DataFrame(), pd.DataFrame())
    assert screen.loc[0, first_screen.WENT_IN].startswith("differs by model (not comparable): chat: templates instruct")


def test_the_first_screen_row_holds_score_chance_parse_failures_and_what_stands_out():
    lb = board(GRID + PF)
    screen = first_screen.table(lb, pd.DataFrame(), pd.DataFrame())
    row = screen.iloc[0]
    assert list(screen.columns) == ["task", "metric", "chance", "templates × languages", "chat", "m1", "m2",
                                    "what stands out"]
    assert (row["metric"], row["chance"]) == ("acc, %", "25.0")
    assert row["templates × languages"] == "blog, instruct × eng_Latn, jpn_Jpan"
    # m1: 15.0 over blog and instruct, 48 items in two languages... n is per language summed: 24 + 24
    assert row["m1"].startswith("15.0 [") and row["m1"].endswith("n=48† · pf 87.5")
    assert row["chat"].endswith("· pf 0.0")
    assert row["what stands out"].startswith("m1: parse failures blog 100%, instruct 75%, so its score there is "
                                             "mostly parsing, not answering; ")
    assert row["what stands out"].count(";") == 1 and row["what stands out"].endswith(".")  # two findings at most


def test_no_chance_level_and_log_likelihood_say_so():
    lb = board([("m", "jsquad", "jpn_Jpan", "0.1", "f1", 30.0, 4)])
    lb.loc[:, ["ci_low", "ci_high"]] = [[20.0, 40.0]]
    row = first_screen.table(lb, pd.DataFrame(), pd.DataFrame()).iloc[0]
    assert row["chance"] == "none" and row["m"].endswith("· pf –")
    assert row["what stands out"] == "One model and one template: nothing to compare."


def test_the_report_opens_with_the_first_screen_and_names_what_the_grid_left_out(tmp_path):
    tables = report_tables(*write_results(tmp_path))
    omitted = pd.DataFrame([{"task": "belebele", "template": "paper", "model": "chat", "languages": 2,
                             "why": "the openai backend cannot score log-likelihood templates"}])
    page = report.render(tables, {"belebele": {}}, AnalysisSettings(seed=1), omitted=omitted)
    first = page.index('id="first-screen"')
    assert first < page.index('id="method"') < page.index('id="leaderboard"') < page.index('id="figures"')
    assert page.index('id="overall-table"') < page.index('id="method"')
    assert "Left out of the grid</a>: 1 (model, task, template) pair(s)" in page
    assert 'id="omitted-table"' in page and "cannot score log-likelihood templates" in page
    # each per-template table once: accuracy over parsed items is inside the accuracy cells, not a second table
    assert "paper-belebele-acc_parsed-instruct" not in page and "· parsed " in page
    assert "No rows." not in page
    # the pairwise interval beside the Holm-adjusted p-value is adjusted like it, and says over how many tests
    assert "points adjusted over " in page and "Holm-adjusted p = " in page and "unadjusted interval" not in page


def test_a_task_without_chance_has_no_chance_mark_in_its_captions(tmp_path):
    png = tmp_path / "heatmap.png"
    import struct
    import zlib

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
                    + chunk(b"IDAT", zlib.compress(b"\x00\x00")) + chunk(b"IEND", b""))
    items = report.figure_items({"mt": {"heatmap": png}, "qa": {"heatmap": png}}, ["mt", "qa"], frozenset({"qa"}))
    assert "chance" not in str(items["mt"][0]["figure"]) and "red mark on the colour bar: chance" in str(items["qa"][0]["figure"])


def test_the_summary_sentences_use_the_same_cells_as_the_headline():
    from babeleval.analysis import findings

    lines = findings.per_task(board(GRID + PF), pd.DataFrame(), pd.DataFrame())["belebele"]
    m1 = next(line for line in lines if line.startswith("belebele, m1:"))
    assert m1.startswith("belebele, m1: acc 15.0% over all items (mean over 2 language(s) and 2 template(s));")


def test_two_unparsed_models_leave_room_for_the_chance_level():
    """The 3-model grid's case: two local models unparsed on both generated templates, the chat model's interval
    holding chance. Both kinds are said, each once."""
    rows = [(m, "belebele", "eng_Latn", t, "acc", v, 32) for m, t, v in
            [("chat", "blog", 0.2), ("chat", "instruct", 0.2), ("a", "blog", 0.0), ("a", "instruct", 0.0),
             ("b", "blog", 0.0), ("b", "instruct", 0.0)]]
    rows += [(m, "belebele", "eng_Latn", t, "parse_failure_rate", 1.0 if m != "chat" else 0.0, 32)
             for m in ("chat", "a", "b") for t in ("blog", "instruct")]
    line = first_screen.table(board(rows), pd.DataFrame(), pd.DataFrame()).loc[0, "what stands out"]
    assert line == ("a: parse failures blog 100%, instruct 100% and b: parse failures blog 100%, instruct 100%, so "
                    "their scores there are mostly parsing, not answering; chat is not distinguishable from chance "
                    "(25.0).")
