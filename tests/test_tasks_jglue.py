"""JGLUE loaders: the official files (JSON Lines named .json, SQuAD JSON), the Hugging Face copy, and errors."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest

from babeleval.core.errors import DataError
from babeleval.tasks import get_task

SAMPLES = Path(__file__).resolve().parent.parent / "data" / "samples"
JA = "jpn_Jpan"


def local(path):
    return {"kind": "local", "path": str(path)}


def write_jsonl(path: Path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


# -- the bundled samples load, eval and exemplar splits ------------------------------------------------


def test_jcommonsenseqa_sample():
    task = get_task("jcommonsenseqa")
    items = task.load(local(SAMPLES / "jcommonsenseqa"), JA)
    train = task.load(local(SAMPLES / "jcommonsenseqa"), JA, part="fewshot")
    assert task.FAMILY == "multiple_choice" and task.FEWSHOT_PART == "train" and task.EVAL_SHUFFLE_SEED == 42
    assert len(items) == 8 and len(train) == 6
    first = items[0]
    assert first == {"id": "900", "task": "jcommonsenseqa", "language": JA, "group": "900",
                     "question": "本を借りる場所は?", "choices": ["図書館", "駐車場", "温泉", "市場", "空港"], "answer": 0}
    assert not {i["id"] for i in items} & {i["id"] for i in train}


def test_jnli_sample_labels():
    items = get_task("jnli").load(local(SAMPLES / "jnli"), JA)
    assert [i["label"] for i in items[:3]] == ["entailment", "contradiction", "neutral"]
    assert [i["answer"] for i in items[:3]] == [0, 1, 2]
    assert items[0]["premise"] and items[0]["hypothesis"]


def test_marc_ja_sample():
    items = get_task("marc_ja").load(local(SAMPLES / "marc_ja"), JA)
    assert items[0]["label"] == "positive" and items[0]["answer"] == 0 and items[1]["answer"] == 1
    assert items[0]["id"] == "RVALID0000"


def test_jsquad_sample_several_golds_and_sep_context():
    items = get_task("jsquad").load(local(SAMPLES / "jsquad"), JA)
    assert len(items) == 8
    first = items[0]
    assert first["title"] == "茶"
    assert first["context"].startswith("緑茶は")  # "<title> [SEP] " removed
    assert first["answer"] == ["加熱", "すぐに加熱して"]
    assert len(get_task("jsquad").load(local(SAMPLES / "jsquad"), JA, part="fewshot")) == 4


def test_jaquad_reads_a_split_directory(tmp_path):
    doc = {"version": "1.0", "data": [{"title": "東京", "paragraphs": [{"context": "東京は日本の首都である。",
           "qas": [{"id": "tk1", "question": "日本の首都は?", "answers": [{"text": "東京", "answer_start": 0,
                                                                         "answer_type": "Object"}],
                    "question_type": "Multiple sentence reasoning"}]}]}]}
    for split in ("dev", "train"):
        (tmp_path / split).mkdir()
        (tmp_path / split / f"jaquad_{split}_0000.json").write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    task = get_task("jaquad")
    items = task.load(local(tmp_path), JA)
    assert items[0]["answer"] == ["東京"] and items[0]["title"] == "東京"
    assert [p.name for p in task.files(local(tmp_path), JA)] == ["jaquad_dev_0000.json"]


# -- errors name the file and the row or language ------------------------------------------------------


def test_missing_field_names_file_and_row(tmp_path):
    write_jsonl(tmp_path / "valid-v1.3.json", [
        {"q_id": 1, "question": "q", **{f"choice{k}": "c" for k in range(5)}, "label": 0},
        {"q_id": 2, "question": "q", "choice0": "a", "label": 1},
    ])
    with pytest.raises(DataError, match=r"valid-v1\.3\.json: row 2: missing fields choice1, choice2, choice3, choice4"):
        get_task("jcommonsenseqa").load(local(tmp_path), JA)


def test_empty_file(tmp_path):
    (tmp_path / "valid-v1.3.json").write_text("", encoding="utf-8")
    with pytest.raises(DataError, match=r"valid-v1\.3\.json: the file is empty"):
        get_task("jnli").load(local(tmp_path), JA)


def test_missing_file_names_the_split(tmp_path):
    with pytest.raises(DataError, match="no file for split 'valid'"):
        get_task("jnli").load(local(tmp_path), JA)


def test_language_the_dataset_lacks():
    with pytest.raises(DataError, match="task 'jnli' has no language 'eng_Latn' \\(it has: jpn_Jpan\\)"):
        get_task("jnli").load(local(SAMPLES / "jnli"), "eng_Latn")


def test_bad_label(tmp_path):
    write_jsonl(tmp_path / "valid-v1.3.json", [{"sentence_pair_id": "1", "sentence1": "a", "sentence2": "b",
                                                "label": "maybe"}])
    with pytest.raises(DataError, match="row 1: label must be one of entailment, contradiction, neutral"):
        get_task("jnli").load(local(tmp_path), JA)


def test_squad_answer_missing(tmp_path):
    doc = {"data": [{"title": "t", "paragraphs": [{"context": "c", "qas": [{"id": "x", "question": "q", "answers": []}]}]}]}
    (tmp_path / "valid-v1.3.json").write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(DataError, match=r"data\[0\]\.paragraphs\[0\]\.qas\[0\]: answers must be a non-empty list"):
        get_task("jsquad").load(local(tmp_path), JA)


def test_squad_not_a_document(tmp_path):
    (tmp_path / "valid-v1.3.json").write_text("[]", encoding="utf-8")
    with pytest.raises(DataError, match="not a SQuAD document"):
        get_task("jsquad").load(local(tmp_path), JA)


def test_splits_can_be_renamed(tmp_path):
    write_jsonl(tmp_path / "test-v1.1.json", [{"sentence": "良い", "label": "positive", "review_id": "r1"}])
    items = get_task("marc_ja").load({"kind": "local", "path": str(tmp_path), "split": "test"}, JA)
    assert items[0]["id"] == "r1"


# -- the Hugging Face copy, with a pinned revision ------------------------------------------------------


@pytest.fixture
def fake_hub(monkeypatch):
    """A stand-in for ``datasets`` that records calls and serves rows shaped like shunk031/JGLUE."""
    calls = []
    tables = {
        ("shunk031/JGLUE", "JNLI", "validation"): [
            {"sentence_pair_id": "0", "yjcaptions_id": "1-2", "sentence1": "猫がいる。", "sentence2": "動物がいる。", "label": 0},
            {"sentence_pair_id": "1", "yjcaptions_id": "3-4", "sentence1": "雨だ。", "sentence2": "晴れだ。", "label": 1}],
        ("shunk031/JGLUE", "JSQuAD", "validation"): [
            {"id": "a1", "title": "茶", "context": "茶 [SEP] 緑茶は加熱して作る。", "question": "どう作る?",
             "answers": {"text": ["加熱して", "加熱"], "answer_start": [3, 3]}, "is_impossible": False}],
        ("shunk031/JGLUE", "MARC-ja", "validation"): [],
    }

    def load_dataset(path, name=None, split=None, revision=None):
        calls.append((path, name, split, revision))
        if (path, name, split) not in tables:
            raise ValueError(f"BuilderConfig {name} not found")
        return tables[(path, name, split)]

    module = types.ModuleType("datasets")
    module.load_dataset = load_dataset
    monkeypatch.setitem(sys.modules, "datasets", module)
    return calls


def test_hub_jnli_with_revision(fake_hub):
    source = {"kind": "hf", "dataset": "shunk031/JGLUE", "revision": "abc123"}
    items = get_task("jnli").load(source, JA)
    assert [i["label"] for i in items] == ["entailment", "contradiction"]
    assert fake_hub == [("shunk031/JGLUE", "JNLI", "validation", "abc123")]


def test_hub_jsquad_context_and_golds(fake_hub):
    items = get_task("jsquad").load({"kind": "hf", "dataset": "shunk031/JGLUE"}, JA)
    assert items[0]["context"] == "緑茶は加熱して作る。" and items[0]["title"] == "茶"
    assert items[0]["answer"] == ["加熱して", "加熱"]


def test_hub_empty_split_names_the_language(fake_hub):
    with pytest.raises(DataError, match="MARC-ja' split 'validation': no rows for language 'jpn_Jpan'"):
        get_task("marc_ja").load({"kind": "hf", "dataset": "shunk031/JGLUE"}, JA)


def test_hub_missing_config(fake_hub):
    with pytest.raises(DataError, match="no such config or split for language 'jpn_Jpan'"):
        get_task("jcommonsenseqa").load({"kind": "hf", "dataset": "shunk031/JGLUE"}, JA)
