"""Summary sentences: significance from the paired tests, parsing told apart from answering, honest about what
cannot be compared."""

import pandas as pd

from babeleval.analysis import findings

COLUMNS = ["model", "task", "language", "template", "metric", "value", "n"]
SIG = ["comparison", "task", "language", "fixed", "a", "b", "metric", "n_items", "score_a", "score_b", "diff", "test",
       "p_value", "p_holm", "significant"]


def board(rows):
    return pd.DataFrame(rows, columns=COLUMNS)


def test_a_gap_made_by_unparsable_answers_is_called_parsing():
    # chat template: 60% of answers unreadable, but 80% right among the readable ones; paper: log-likelihood
    lb = board([("m", "belebele", "yor_Latn", "chat", "acc", 0.32, 50),
                ("m", "belebele", "yor_Latn", "chat", "parse_failure_rate", 0.6, 50),
                ("m", "belebele", "yor_Latn", "chat", "acc_parsed", 0.8, 20),
                ("m", "belebele", "yor_Latn", "paper", "acc", 0.7, 50)])
    sig = pd.DataFrame([("template vs template", "belebele", "yor_Latn", "m", "chat", "paper", "acc", 50, 0.32, 0.7,
                         -0.38, "exact McNemar", 0.0001, 0.0002, True)], columns=SIG)
    [line] = [s for s in findings.per_task(lb, sig, pd.DataFrame(columns=SIG))["belebele"] if "template effect" in s]
    assert "template chat 32.0 vs paper 70.0 (-38.0 points on 50 paired items), significant under the paired test" in line
    assert "Parse failures: chat 60.0%, paper 0.0%; over parsed items chat 80.0%, paper 70.0%" in line
    assert line.endswith("mostly a difference in parsing (format), not in answering.")


def test_equal_spreads_name_no_most_robust_language():
    rows = []
    for lang in ("eng_Latn", "hin_Deva"):
        rows += [("m", "t", lang, "a", "acc", 0.5, 10), ("m", "t", lang, "b", "acc", 0.25, 10)]
    lines = findings.per_task(board(rows), pd.DataFrame(columns=SIG), pd.DataFrame(columns=SIG))["t"]
    assert any("every language moves alike with the template (acc by 25.0 points" in s for s in lines)
    assert not any("most robust" in s for s in lines)


def test_one_template_one_model_says_nothing_to_compare():
    lines = findings.per_task(board([("m", "mt", "jpn_Jpan", "en_zeroshot", "chrf", 31.5, 8)]),
                              pd.DataFrame(columns=SIG), pd.DataFrame(columns=SIG))["mt"]
    assert lines == ["mt, m: chrf 31.5 over all items (mean over 1 language(s) and 1 template(s)).",
                     "mt: one template and one model in the grid, so there is nothing to compare (add templates or "
                     "models to params.yaml)."]
