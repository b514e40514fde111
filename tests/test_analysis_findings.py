"""Summary sentences: significance from the paired tests, parsing told apart from answering, honest about what
cannot be compared."""

import pandas as pd

from babeleval.analysis import findings

COLUMNS = ["model", "task", "language", "template", "metric", "value", "n"]
SIG = ["comparison", "task", "language", "fixed", "a", "b", "metric", "n_items", "score_a", "score_b", "diff",
       "diff_low", "diff_high", "test", "p_value", "adj_low", "adj_high", "p_holm", "significant", "family_size"]


def board(rows):
    return pd.DataFrame(rows, columns=COLUMNS)


def test_a_gap_made_by_unparsable_answers_is_called_parsing():
    # chat template: 60% of answers unreadable, but 80% right among the readable ones; paper: log-likelihood
    lb = board([("m", "belebele", "yor_Latn", "chat", "acc", 0.32, 50),
                ("m", "belebele", "yor_Latn", "chat", "parse_failure_rate", 0.6, 50),
                ("m", "belebele", "yor_Latn", "chat", "acc_parsed", 0.8, 20),
                ("m", "belebele", "yor_Latn", "paper", "acc", 0.7, 50)])
    sig = pd.DataFrame([("template vs template", "belebele", "yor_Latn", "m", "chat", "paper", "acc", 50, 0.32, 0.7,
                         -0.38, -0.5, -0.26, "exact McNemar", 0.0001, -0.52, -0.24, 0.0002, True, 2)], columns=SIG)
    [line] = [s for s in findings.per_task(lb, sig, pd.DataFrame(columns=SIG))["belebele"] if "template effect" in s]
    # the interval beside the Holm-adjusted p-value is adjusted like it
    assert ("template chat 32.0 vs paper 70.0 (-38.0 points; interval [-52.0, -24.0] points adjusted over 2 tests, "
            "50 paired items), significant under the paired test (exact McNemar, Holm-adjusted p = 0.0002") in line
    assert "Parse failures: chat 60.0%, paper 0.0%; over parsed items chat 80.0%, paper 70.0%" in line
    assert line.endswith("mostly a difference in parsing (format), not in answering.")


def test_equal_spreads_name_no_most_robust_language():
    rows = []
    for lang in ("eng_Latn", "hin_Deva"):
        rows += [("m", "t", lang, "a", "acc", 0.5, 10), ("m", "t", lang, "b", "acc", 0.25, 10)]
    lines = findings.per_task(board(rows), pd.DataFrame(columns=SIG), pd.DataFrame(columns=SIG))["t"]
    assert any("every language moves alike with the template (acc by 25.0 points" in s for s in lines)
    assert not any("most robust" in s for s in lines)


def test_what_needs_two_templates_or_models_is_said_once_for_the_grid():
    lb = board([("m", "mt", "jpn_Jpan", "en_zeroshot", "chrf", 31.5, 8), ("m", "mgsm", "jpn_Jpan", "zs", "acc", 0.1, 8)])
    lines = findings.per_task(lb, pd.DataFrame(columns=SIG), pd.DataFrame(columns=SIG))
    assert lines["mt"] == ["mt, m: chrf 31.5 over all items (mean over 1 language(s) and 1 template(s))."]
    assert findings.not_measured(lb) == ["Template effects need two templates of a task: 2 of 2 task(s) have one "
                                         "(mgsm, mt).", "Model gaps need two models: this grid has one (m)."]


def test_a_difference_whose_interval_holds_zero_is_not_attributed():
    lb = board([("m", "belebele", "yor_Latn", "chat", "acc", 0.0, 24),
                ("m", "belebele", "yor_Latn", "chat", "parse_failure_rate", 1.0, 24),
                ("m", "belebele", "yor_Latn", "paper", "acc", 0.0, 24)])
    sig = pd.DataFrame([("template vs template", "belebele", "yor_Latn", "m", "chat", "paper", "acc", 24, 0.0, 0.0,
                         0.0, 0.0, 0.0, "exact McNemar", 1.0, 0.0, 0.0, 1.0, False, 1)], columns=SIG)
    [line] = [s for s in findings.per_task(lb, sig, pd.DataFrame(columns=SIG))["belebele"] if "template effect" in s]
    assert line.endswith("chat 0.0 vs paper 0.0: no detectable difference (interval [+0.0, +0.0] points adjusted over "
                         "1 test, 24 paired items; exact McNemar, Holm-adjusted p = 1).")
    assert "parsing" not in line and "answering" not in line


def test_a_test_and_its_adjusted_interval_that_disagree_say_so():
    lb = board([("m", "belebele", "yor_Latn", "chat", "acc", 0.5, 40), ("m", "belebele", "yor_Latn", "paper", "acc", 0.6, 40)])

    def line(p_holm, adjusted, significant):
        sig = pd.DataFrame([("template vs template", "belebele", "yor_Latn", "m", "chat", "paper", "acc", 40, 0.5, 0.6,
                             -0.1, -0.2, -0.01, "exact McNemar", 0.01, *adjusted, p_holm, significant, 3)], columns=SIG)
        [found] = [s for s in findings.per_task(lb, sig, pd.DataFrame(columns=SIG))["belebele"] if "template effect" in s]
        return found

    # significant at a later Holm step, while the interval at Bonferroni's level holds 0: the test's verdict, said so
    found = line(0.03, (-0.21, 0.01), True)
    assert "significant under the paired test" in found
    assert "though its interval, simultaneous at Bonferroni's stricter level, holds 0." in found
    # not significant, but the interval excludes 0 (a bootstrap p-value and a normal interval can part at the margin)
    found = line(0.07, (-0.19, -0.01), False)
    assert "not significant" in found and found.endswith("undecided, its adjusted interval excludes 0.")
