"""Item difficulty across models (the Belebele tutorial blog's buckets) and items solved in English but not elsewhere."""

from analysis_data import write_items, write_results
from babeleval.analysis import item_difficulty
from babeleval.analysis.records import load_items, load_outcomes


def test_buckets_from_every_model_to_no_model(tmp_path):
    raws, _ = write_results(tmp_path)
    tables = item_difficulty.difficulty(load_outcomes(raws), load_items(write_items(tmp_path)))
    buckets = tables["buckets"]
    cell = buckets[(buckets.language == "eng_Latn") & (buckets.template == "paper")]
    assert list(cell["bucket"]) == ["every model", "2 of 3 models", "1 of 3 models", "no model"]
    assert list(cell["items"]) == [3, 2, 3, 2]
    assert cell["share"].sum() == 1.0
    assert cell.iloc[0]["examples"].startswith("q01: Question q01 (eng_Latn)? | A: w / B: x")

    items = tables["items"].set_index(["language", "template", "id"])
    assert items.loc[("eng_Latn", "paper", "q04"), "models_correct"] == "m2, m3"
    assert items.loc[("eng_Latn", "paper", "q04"), "models_wrong"] == "m1"
    assert items.loc[("eng_Latn", "paper", "q10"), "bucket"] == "no model"

    patterns = tables["patterns"]
    cell = patterns[(patterns.language == "eng_Latn") & (patterns.template == "paper")]
    assert dict(zip(cell["models_correct"], cell["items"])) == {"m1, m2, m3": 3, "m3": 3, "m2, m3": 2, "(none)": 2}


def test_one_model_gives_two_buckets(tmp_path):
    raws, _ = write_results(tmp_path, models=["m2"])
    buckets = item_difficulty.difficulty(load_outcomes(raws))["buckets"]
    cell = buckets[(buckets.language == "eng_Latn") & (buckets.template == "paper")]
    assert list(cell["bucket"]) == ["every model", "no model"] and list(cell["items"]) == [5, 5]


def test_solved_in_english_failed_in_french(tmp_path):
    raws, _ = write_results(tmp_path)
    out = item_difficulty.crosslingual(load_outcomes(raws), pivot="eng_Latn", items=load_items(write_items(tmp_path)))
    gaps = out["gaps"].set_index(["model", "template"])
    assert len(gaps) == 6 and set(gaps["language"]) == {"fra_Latn"}
    m3 = gaps.loc[("m3", "paper")]
    assert (m3.n_parallel, m3.pivot_only, m3.language_only, m3.examples) == (10, 2, 0, "q07, q08")
    assert (m3.pivot_acc, m3.language_acc) == (0.8, 0.6)
    assert m3.p_value == 0.5  # exact McNemar, 2 discordant pairs both one way
    assert gaps.loc[("m1", "instruct"), "pivot_only"] == 0
    items = out["items"]
    assert list(items[(items.model == "m3") & (items.template == "paper")]["id"]) == ["q07", "q08"]
    assert items.iloc[0]["text"].startswith("Question")
    # no pivot-language file: nothing to compare
    assert item_difficulty.crosslingual(load_outcomes(raws), pivot="deu_Latn")["gaps"].empty


def test_items_not_parallel_across_languages_give_no_rows(tmp_path):
    raws, _ = write_results(tmp_path, models=["m1"])
    raw = dict(load_outcomes(raws))  # records changed in memory: read once
    for combo in raw:
        if combo.language == "fra_Latn":
            for r in raw[combo]:
                r["id"] = "fr-" + r["id"]
    assert item_difficulty.crosslingual(raw)["gaps"].empty
