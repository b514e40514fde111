"""The leaderboard a paper prints: models x languages per template, value and interval, stated units, chance level,
parse-failure rate beside generated scores, accuracy over parsed items, names that look like numbers kept as text."""

import json

import pandas as pd

from analysis_data import write_results
from babeleval.analysis import leaderboard as aggregate
from babeleval.analysis import headline, paper_tables
from babeleval.analysis.records import read_table
from babeleval.analysis.settings import AnalysisSettings
from babeleval.score.outcomes import outcome_row


def test_chance_level_from_the_items_choices():
    assert headline.chance_level(rows([{"choices": ["a", "b", "c", "d"]}] * 3)) == 0.25
    assert headline.chance_level(rows([{"choices": ["含意", "矛盾", "中立"]}, {"choices": ["ja", "nein"]}])) \
        == (1 / 3 + 1 / 2) / 2
    assert headline.chance_level(rows([{"gold": "Bonjour"}])) is None  # translation: no chance level


def rows(records: list[dict]) -> list[dict]:
    """Scored records as the outcome table holds them (the number of choices, not the choices)."""
    return [outcome_row(r) for r in records]


def test_parsed_accuracy_counts_only_readable_answers():
    records = [{"id": "1", "response": "B", "parsed": True, "correct": True},
               {"id": "2", "response": "???", "parsed": False, "correct": False},
               {"id": "3", "response": "C", "parsed": True, "correct": False},
               {"id": "4", "response": "", "parsed": False, "correct": False}]
    row = headline.parsed_accuracy_row(("m", "t", "yor_Latn", "instruct"), records, seed=1, n_samples=50)
    assert row["value"] == 0.5 and row["n"] == 2 and row["ci_low"] <= 0.5 <= row["ci_high"]
    loglik = [{"id": "1", "parsed": True, "correct": True, "loglikelihoods": [-1.0, -2.0]}]
    assert headline.parsed_accuracy_row(("m", "t", "yor_Latn", "paper"), loglik, seed=1) is None


def test_leaderboard_markdown_is_pivoted_with_units_intervals_and_parse_failures(tmp_path):
    raws, scores = write_results(tmp_path)
    # one scores file records truncated prompts (older ones do not)
    first = json.loads(scores[0].read_text())
    scores[0].write_text(json.dumps({**first, "truncated_prompts": 3}))
    board = aggregate.write_outputs(scores, tmp_path / "lb.csv", tmp_path / "lb.md", tmp_path / "m.json",
                                    outcome_files=raws, settings=AnalysisSettings(seed=3, samples=200, confidence=0.9))
    md = (tmp_path / "lb.md").read_text(encoding="utf-8")
    assert "## belebele: accuracy over all items, % (a parse failure counts as wrong)" in md
    assert "## belebele: accuracy over parsed items only, %" in md
    assert "chance 25.0." in md and "[90% interval] n=items" in md
    assert "exact Clopper-Pearson binomial interval for acc, acc_norm, acc_parsed, parse_failure_rate" in md
    assert "†: fewer than 30 items" in md
    assert "### template `instruct`" in md and "### template `paper`" in md and "### mean and best over templates" in md
    # m1 / fra_Latn / instruct: 1 right of 10, 8 parse failures; 1 right of the 2 parsed; n in every cell
    instruct = md.split("### template `instruct`")[1]
    m1 = next(line for line in instruct.splitlines() if line.startswith("| m1"))
    assert "10.0 [" in m1 and "] n=10† · pf 80.0" in m1 and "n=20 " in m1  # the mean over languages: 20 items
    # the best over templates says how many it was chosen from, and warns
    best = md.split("### mean and best over templates")[1]
    assert "best of 2: " in best and "biased upward" in best
    # it leads with models x tasks: the mean over 2 languages x 2 templates, an interval and n
    overall = md.split("## Models x tasks")[1].split("## belebele")[0]
    row = next(line for line in overall.splitlines() if line.startswith("| belebele"))
    assert "| acc, % " in row and "| 2 × 2 " in row and row.count(" n=20†") == 3  # a column per model
    paper = md.split("### template `paper`")[1].split("###")[0]
    assert "pf" not in paper  # log-likelihood scoring has nothing to parse
    assert "- m1 / belebele / eng_Latn / paper: 3 of 10" in md
    # the long CSV, read back onto the computed scale, one row per metric, with the new columns
    csv = aggregate.read_leaderboard(tmp_path / "lb.csv")
    assert list(csv.columns) == ["model", "task", "language", "template", "metric", "value", "n", "ci_low",
                                 "ci_high", "chance", "truncated_prompts", "fewer_items_because"]
    assert set(read_table(tmp_path / "lb.csv")["scale"]) == {"percent"}
    row = csv[(csv.model == "m1") & (csv.language == "fra_Latn") & (csv.metric == "acc_parsed")].iloc[0]
    assert row.value == 0.5 and row.n == 2
    assert set(csv[csv.metric == "acc"]["chance"]) == {0.25} and csv[csv.metric == "parse_failure_rate"]["chance"].isna().all()
    # metrics.json holds one headline number per model and task (what `dvc exp show` lays out)
    headline = json.loads((tmp_path / "m.json").read_text())
    assert headline["m1"]["belebele"].keys() == {"acc"}
    assert len(board) == len(csv)


def test_languages_ordered_by_score_and_scales_fixed():
    frame = pd.DataFrame({"model": ["m"] * 3, "task": ["mt"] * 3, "language": ["yor_Latn", "jpn_Jpan", "hin_Deva"],
                          "template": ["0.2"] * 3, "metric": ["chrf"] * 3, "value": [21.0, 48.5, 33.0],
                          "n": [8] * 3, "ci_low": [15.0, 40.0, 25.0], "ci_high": [27.0, 55.0, 40.0]})
    assert paper_tables.language_order(frame) == ["jpn_Jpan", "hin_Deva", "yor_Latn"]
    md = paper_tables.markdown(frame)
    assert "## mt: chrF, 0-100" in md and "no chance level." in md and "48.5 [40.0, 55.0] n=8†" in md
    assert "### template `0.2`" in md and "best over" not in md  # one template: no best-of table
    assert "percentile bootstrap over items for chrf" in md


def test_names_that_look_like_numbers_stay_text(tmp_path):
    path = tmp_path / "lb.csv"
    path.write_text("model,task,language,template,metric,value,n\n007,jnli,jpn_Jpan,0.2,acc,0.5,4\n"
                    "true,jnli,jpn_Jpan,0.10,acc,0.25,4\n", encoding="utf-8")
    board = read_table(path)
    assert list(board["template"]) == ["0.2", "0.10"] and list(board["model"]) == ["007", "true"]


def test_a_template_with_no_parsed_answer_says_so():
    rows = [("m", "mgsm", lang, "en_zeroshot", metric, value, n)
            for lang in ("jpn_Jpan", "swh_Latn")
            for metric, value, n in (("acc", 0.0, 8), ("acc_parsed", float("nan"), 0), ("parse_failure_rate", 1.0, 8))]
    frame = pd.DataFrame(rows, columns=["model", "task", "language", "template", "metric", "value", "n"])
    md = paper_tables.markdown(frame)
    assert md.count("0.0 n=8† · pf 100.0") == 2 and md.count("no parsed answer (n=0)") == 2
    assert "best over" not in md


def test_a_template_scoring_fewer_items_says_why():
    rows = [("m", "belebele", "eng_Latn", template, "acc", 0.25, n, reason)
            for template, n, reason in (("blog", 19, "its 5 few-shot exemplars are the first evaluation items, left "
                                                     "out of what it scores"), ("paper", 24, None))]
    frame = pd.DataFrame(rows, columns=["model", "task", "language", "template", "metric", "value", "n",
                                        "fewer_items_because"])
    assert paper_tables.fewer_items_note(frame, "blog") == (
        "Fewer items than the other templates (eng_Latn 19 of 24): its 5 few-shot exemplars are the first evaluation "
        "items, left out of what it scores.")
    assert paper_tables.fewer_items_note(frame, "paper") == ""


def test_why_fewer_items_comes_from_the_prompt_record():
    spec = {"prompts": {"language": "eng_Latn", "exemplar_languages": ["eng_Latn"], "exemplar_part": "eval",
                        "fewshot": {"n": 5, "sampler": "first"}, "limit": None}}
    assert headline.fewer_items_because({"provenance": {"spec": spec}}).startswith("its 5 few-shot exemplars")
    other = {**spec["prompts"], "exemplar_part": "train", "limit": 3}
    assert headline.fewer_items_because({"provenance": {"spec": {"prompts": other}}}) == "limit 3 items"
    assert headline.fewer_items_because({}) is None


def test_a_bootstrap_interval_of_zero_width_is_not_shown_as_one():
    frame = pd.DataFrame({"model": ["m"] * 2, "task": ["jsquad", "jnli"], "language": ["jpn_Jpan"] * 2,
                          "template": ["t"] * 2, "metric": ["f1", "acc"], "value": [0.0, 0.0], "n": [4, 4],
                          "ci_low": [0.0, 0.0], "ci_high": [0.0, 0.6024]})
    md = paper_tables.markdown(frame)
    assert "0.0 (no interval: every item scores alike" in md and "[0.0, 0.0]" not in md
    assert "0.0 [0.0, 60.2] n=4†" in paper_tables.cell(frame.iloc[1])
