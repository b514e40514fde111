"""Parse failures per combination: rates, the most common reasons, an example of each."""

from analysis_data import REASONS, write_results
from babeleval.analysis import parse_failures
from babeleval.analysis.records import load_outcomes


def test_rates_reasons_and_examples(tmp_path):
    raws, _ = write_results(tmp_path)
    tables = parse_failures.tables(load_outcomes(raws))
    rates = tables["rates"].set_index(["model", "language", "template"])
    assert len(rates) == 12
    assert rates.loc[("m1", "fra_Latn", "instruct"), "parse_failures"] == 8
    assert rates.loc[("m1", "fra_Latn", "instruct"), "rate_pct"] == 80.0
    assert rates.loc[("m1", "fra_Latn", "instruct"), "top_reason"] == REASONS[1]
    assert rates.loc[("m3", "eng_Latn", "paper"), "parse_failures"] == 0
    assert rates.loc[("m3", "eng_Latn", "paper"), "top_reason"] == ""
    assert not rates.loc[("m3", "eng_Latn", "paper"), "generated"] and rates.loc[("m3", "eng_Latn", "instruct"), "generated"]

    reasons = tables["reasons"]
    m1 = reasons[(reasons.model == "m1") & (reasons.language == "fra_Latn")]
    assert list(m1["reason"]) == [REASONS[1], REASONS[0]]  # most common first: 6 empty, 2 without a letter
    assert list(m1["count"]) == [6, 2] and list(m1["rank"]) == [1, 2]
    assert list(m1["example_id"]) == ["q05", "q03"]
    assert list(m1["example_response"]) == ["", "zzz"]
    assert m1["share_of_failures"].tolist() == [0.75, 0.25]


def test_missing_reason_is_named(tmp_path):
    recs = {next(iter(load_outcomes(write_results(tmp_path, models=["m1"])[0][:1]))): [
        {"id": "a", "parsed": False, "parse_error": None, "response": "?"}, {"id": "b", "parsed": True}]}
    tables = parse_failures.tables(recs)
    assert tables["reasons"].iloc[0]["reason"] == parse_failures.UNKNOWN


def test_reasons_are_counted_by_name_with_one_full_example(tmp_path):
    """The detail after the name differs per item; counting full texts would split one reason into many rows."""
    combo = next(iter(load_outcomes(write_results(tmp_path, models=["m1"])[0][:1])))
    records = [
        {"id": "yo-1", "parsed": False, "parse_error": "ambiguous: A or B", "response": "Ìdáhùn: A tàbí B"},
        {"id": "ja-2", "parsed": False, "parse_error": "ambiguous: B or D", "response": "答え：B または D"},
        {"id": "hi-3", "parsed": False, "parse_error": "ambiguous: 5.600 reads as 5.6 or 5600",
         "response": "उत्तर: 5.600"},
        {"id": "th-4", "parsed": False, "parse_error": "no answer", "response": "ไม่แน่ใจครับ"},
        {"id": "ar-5", "parsed": False, "parse_error": "question cut: the prompt did not fit the model's context "
                                                       "and the 812 tokens cut from its left reached the item's own question",
         "response": "ب"},
        {"id": "ok", "parsed": True, "parse_error": None, "response": "C"},
    ]
    reasons = parse_failures.tables({combo: records})["reasons"]
    assert list(zip(reasons["reason"], reasons["count"])) == [("ambiguous", 3), ("no answer", 1), ("question cut", 1)]
    ambiguous = reasons.iloc[0]
    assert ambiguous["example_id"] == "yo-1" and ambiguous["example_error"] == "ambiguous: A or B"
    assert ambiguous["share_of_failures"] == 0.6
    rates = parse_failures.tables({combo: records})["rates"]
    assert rates.iloc[0]["reasons"] == 3 and rates.iloc[0]["top_reason"] == "ambiguous"
