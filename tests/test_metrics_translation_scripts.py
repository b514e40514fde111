"""BLEU and chrF into every script: a perfect translation scores 100, a half-right one strictly between.

A tokenizer that does not split the target's script makes a whole sentence one token, so that a perfect
translation can still score 0 (Japanese with 13a and a different full stop) and any error scores 0. The
sentences are our own; the half-right hypothesis keeps about half of the reference and changes the rest.
"""

from __future__ import annotations

import pytest

from babeleval.score import bleu_tokenizers
from babeleval.score.metrics import compute_all
from babeleval.grid.resolve import metric_options

# (FLORES code, two reference sentences, a half-right translation of each)
TARGETS = [
    ("fra_Latn", ["Le chat dort sur le canapé du salon depuis ce matin.", "Nous irons au marché demain avec mes parents."],
     ["Le chat dort sur le lit de la chambre depuis hier soir.", "Nous irons au cinéma ce soir avec nos amis."]),
    ("rus_Cyrl", ["Кошка спит на диване в гостиной с самого утра.", "Завтра мы поедем на рынок вместе с родителями."],
     ["Кошка спит на кровати в спальне с вечера.", "Завтра мы поедем в кино вместе с друзьями."]),
    ("arb_Arab", ["تنام القطة على الأريكة في غرفة الجلوس منذ الصباح.", "سنذهب غدا إلى السوق مع والديّ."],
     ["تنام القطة على السرير في غرفة النوم منذ المساء.", "سنذهب غدا إلى المدرسة مع أصدقائي."]),
    ("hin_Deva", ["बिल्ली सुबह से बैठक के सोफ़े पर सो रही है।", "कल हम अपने माता-पिता के साथ बाज़ार जाएँगे।"],
     ["बिल्ली रात से कमरे के बिस्तर पर सो रही है।", "कल हम अपने दोस्तों के साथ सिनेमा जाएँगे।"]),
    ("jpn_Jpan", ["猫は朝から居間のソファで眠っています。", "明日は両親と一緒に市場へ行きます。"],
     ["猫は夜から寝室のベッドで眠っています。", "明日は友達と一緒に映画館へ行きます。"]),
    ("zho_Hans", ["猫从早上开始就在客厅的沙发上睡觉。", "明天我们要和父母一起去市场。"],
     ["猫从昨晚开始就在卧室的床上睡觉。", "明天我们要和朋友一起去电影院。"]),
    ("kor_Hang", ["고양이가 아침부터 거실 소파에서 자고 있습니다.", "내일 우리는 부모님과 함께 시장에 갈 것입니다."],
     ["고양이가 저녁부터 침실 침대에서 자고 있습니다.", "내일 우리는 친구들과 함께 극장에 갈 것입니다."]),
    ("tha_Thai", ["แมวนอนอยู่บนโซฟาในห้องนั่งเล่นตั้งแต่เช้า", "พรุ่งนี้เราจะไปตลาดกับพ่อแม่"],
     ["แมวนอนอยู่บนเตียงในห้องนอนตั้งแต่เมื่อคืน", "พรุ่งนี้เราจะไปโรงหนังกับเพื่อน"]),
]
IDS = [code for code, _, _ in TARGETS]


def records(hypotheses, references):
    return [{"prediction": h, "gold": r, "parsed": True, "correct": None} for h, r in zip(hypotheses, references)]


@pytest.mark.parametrize("code,references,half", TARGETS, ids=IDS)
def test_perfect_translation_scores_100(code, references, half):
    values, signatures = compute_all(["bleu", "chrf"], records(references, references), target_language=code)
    assert values["bleu"] == pytest.approx(100.0)
    assert values["chrf"] == pytest.approx(100.0)
    assert f"tok:{bleu_tokenizers.choose(code, False)}" in signatures["bleu"]


@pytest.mark.parametrize("code,references,half", TARGETS, ids=IDS)
def test_half_right_translation_scores_strictly_between(code, references, half):
    values, _ = compute_all(["bleu", "chrf"], records(half, references), target_language=code)
    assert 0 < values["bleu"] < 100, values
    assert 0 < values["chrf"] < 100, values


@pytest.mark.parametrize("code,references,half", TARGETS, ids=IDS)
def test_the_references_script_decides_without_a_language(code, references, half):
    """Scores computed without the target's code (a direct call) use the tokenizer its script needs."""
    values, signatures = compute_all(["bleu"], records(half, references))
    assert 0 < values["bleu"] < 100, values
    expected = bleu_tokenizers.choose(bleu_tokenizers.target_code(None, references), False)
    assert f"tok:{expected}" in signatures["bleu"]


def test_table_choices_without_the_flores200_model():
    choose = bleu_tokenizers.choose
    japanese = "ja-mecab" if bleu_tokenizers.installed("ja-mecab") else "char"
    assert choose("jpn_Jpan", False) == japanese
    assert choose("zho_Hans", False) == "zh" and choose("zho_Hant", False) == "zh"
    for code in ("tha_Thai", "lao_Laoo", "khm_Khmr", "mya_Mymr"):
        assert choose(code, False) == "char"
    assert choose("kor_Hang", False) == ("ko-mecab" if bleu_tokenizers.installed("ko-mecab") else "13a")
    for code in ("eng_Latn", "rus_Cyrl", "arb_Arab", "hin_Deva", None):
        assert choose(code, False) == "13a"


def test_table_choices_with_the_flores200_model():
    choose = bleu_tokenizers.choose
    assert choose("tha_Thai", True) == "flores200" and choose("khm_Khmr", True) == "flores200"
    assert choose("hin_Deva", True) == "flores200" and choose("eng_Latn", True) == "flores200"
    assert choose("zho_Hans", True) == "zh"  # sacrebleu's documented tokenizer for Chinese
    assert choose("jpn_Jpan", True) == ("ja-mecab" if bleu_tokenizers.installed("ja-mecab") else "flores200")


def test_a_script_suffix_not_in_the_language_table_still_decides():
    assert bleu_tokenizers.choose("wuu_Hans", False) == "zh"
    assert bleu_tokenizers.choose("kjg_Laoo", False) == "char"


def test_japanese_is_not_one_token_per_sentence():
    """The failure this table fixes: with 13a a perfect Japanese translation ending in another full stop scores 0."""
    reference = ["猫は朝から居間のソファで眠っています。"]
    hypothesis = ["猫は朝から居間のソファで眠っています."]
    values, _ = compute_all(["bleu"], records(hypothesis, reference), target_language="jpn_Jpan")
    assert values["bleu"] > 50


def test_translation_target_language_is_threaded_from_the_grid():
    from types import SimpleNamespace

    to = SimpleNamespace(name="translation_to", metric_options={}, options={"partner": "eng_Latn"})
    frm = SimpleNamespace(name="translation_from", metric_options={"spm_model": "x"}, options={"partner": "eng_Latn"})
    other = SimpleNamespace(name="belebele", metric_options={}, options={})
    assert metric_options(to, "jpn_Jpan") == {"target_language": "jpn_Jpan"}
    assert metric_options(frm, "jpn_Jpan") == {"spm_model": "x", "target_language": "eng_Latn"}
    assert metric_options(other, "jpn_Jpan") == {}
