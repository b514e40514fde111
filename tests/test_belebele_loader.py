"""The Belebele loader: official per-language JSONL files and the Hugging Face dataset."""

import json

import pytest

from babeleval.core.errors import DataError
from babeleval.tasks import get_task

belebele = get_task("belebele")

ROW = {
    "link": "https://example.org/x", "question_number": 1, "flores_passage": "A passage.",
    "question": "A question?", "mc_answer1": "one", "mc_answer2": "two", "mc_answer3": "three",
    "mc_answer4": "four", "correct_answer_num": "3", "dialect": "eng_Latn", "ds": "2023-05-03",
}


def write_rows(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def local(tmp_path):
    return {"kind": "local", "path": str(tmp_path)}


def test_bundled_sample_is_parallel_across_languages(repo_root):
    source = {"kind": "local", "path": "data/samples/belebele"}
    by_language = {lang: belebele.load(source, lang, repo_root) for lang in ["eng_Latn", "jpn_Jpan", "hin_Deva"]}
    ids = [[i["id"] for i in items] for items in by_language.values()]
    assert len(ids[0]) >= 20 and ids[0] == ids[1] == ids[2]
    answers = [[i["answer"] for i in items] for items in by_language.values()]
    assert answers[0] == answers[1] == answers[2]
    assert by_language["jpn_Jpan"][0]["passage"] != by_language["eng_Latn"][0]["passage"]


def test_row_becomes_a_canonical_item(tmp_path):
    write_rows(tmp_path / "eng_Latn.jsonl", [ROW])
    [item] = belebele.load(local(tmp_path), "eng_Latn")
    assert item == {
        "id": "https://example.org/x#1", "task": "belebele", "language": "eng_Latn", "group": "https://example.org/x",
        "passage": "A passage.", "question": "A question?", "choices": ["one", "two", "three", "four"], "answer": 2,
    }


@pytest.mark.parametrize("change, message", [
    ({"mc_answer2": None}, "row 2: missing field mc_answer2"),
    ({"correct_answer_num": "5"}, "row 2: correct_answer_num must be"),
    ({"question": "  "}, "row 2: empty or non-text field question"),
    ({"dialect": "fra_Latn"}, "row 2: dialect 'fra_Latn' does not match the language 'eng_Latn'"),
    ({"question_number": 1}, "row 2: duplicate item"),
])
def test_bad_rows_name_file_and_row(tmp_path, change, message):
    second = {**ROW, "question_number": 2, **change}
    write_rows(tmp_path / "eng_Latn.jsonl", [ROW, second])
    with pytest.raises(DataError, match=message) as info:
        belebele.load(local(tmp_path), "eng_Latn")
    assert "eng_Latn.jsonl" in str(info.value)


def test_missing_language_file(tmp_path):
    with pytest.raises(DataError, match="yor_Latn.jsonl: no file for language 'yor_Latn'"):
        belebele.load(local(tmp_path), "yor_Latn")


def test_empty_file(tmp_path):
    (tmp_path / "eng_Latn.jsonl").write_text("\n", encoding="utf-8")
    with pytest.raises(DataError, match="the file is empty"):
        belebele.load(local(tmp_path), "eng_Latn")


def test_invalid_utf8_and_json_name_the_line(tmp_path):
    path = tmp_path / "eng_Latn.jsonl"
    path.write_bytes(json.dumps(ROW).encode() + b"\n{\"link\": \"\xff\"}\n")
    with pytest.raises(DataError, match="line 2: not valid UTF-8"):
        belebele.load(local(tmp_path), "eng_Latn")
    path.write_text(json.dumps(ROW) + "\n{oops\n", encoding="utf-8")
    with pytest.raises(DataError, match="line 2: not valid JSON"):
        belebele.load(local(tmp_path), "eng_Latn")


@pytest.fixture
def hub_dataset(tmp_path, repo_root, monkeypatch):
    """A dataset directory laid out like facebook/belebele (one config per language, split test)."""
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    root = tmp_path / "belebele-hub"
    (root / "data").mkdir(parents=True)
    configs = []
    for lang in ["eng_Latn", "jpn_Jpan"]:
        (root / "data" / f"{lang}.jsonl").write_bytes((repo_root / "data/samples/belebele" / f"{lang}.jsonl").read_bytes())
        configs.append(f"- config_name: {lang}\n  data_files:\n  - split: test\n    path: data/{lang}.jsonl\n")
    (root / "README.md").write_text("---\nconfigs:\n" + "".join(configs) + "---\n", encoding="utf-8")
    return {"kind": "hf", "dataset": str(root), "split": "test"}


def test_hub_dataset_reads_through_datasets(hub_dataset, repo_root):
    items = belebele.load(hub_dataset, "jpn_Jpan")
    local_items = belebele.load({"kind": "local", "path": "data/samples/belebele"}, "jpn_Jpan", repo_root)
    assert items == local_items


def test_hub_dataset_without_the_language(hub_dataset):
    with pytest.raises(DataError, match="language 'hin_Deva'"):
        belebele.load(hub_dataset, "hin_Deva")
