"""JGLUE (Kurihara et al., 2022): JCommonsenseQA, JNLI, MARC-ja, JSQuAD; and JaQuAD.

Official files (GitHub ``yahoojapan/JGLUE``, ``datasets/<task>-v1.3/``), JSON
Lines despite the ``.json`` name, one file per split (``train-v1.3.json``,
``valid-v1.3.json``); JSQuAD is one SQuAD-v1.1 JSON document per split. The
Hugging Face copy is ``shunk031/JGLUE`` (configs ``JCommonsenseQA``, ``JNLI``,
``MARC-ja``, ``JSQuAD``; splits ``train``, ``validation``), where labels are
class indices and JSQuAD's context is ``"<title> [SEP] <context>"``.

- JCommonsenseQA: ``q_id, question, choice0..choice4, label`` (int 0-4);
- JNLI: ``sentence_pair_id, yjcaptions_id, sentence1, sentence2, label``
  (entailment / contradiction / neutral);
- MARC-ja: ``sentence, label`` (positive / negative), ``review_id`` (a row
  number stands in where a copy lacks it); its owner no longer distributes
  it, so users point ``source.path`` at their own copy;
- JSQuAD: ``data[].title``, ``data[].paragraphs[].context``,
  ``paragraphs[].qas[].{id, question, answers[{text, answer_start}], is_impossible}``;
- JaQuAD (HF ``SkelterLabsInc/JaQuAD``, GitHub ``SkelterLabsInc/JaQuAD``
  ``data/{train,dev}/*.json``): the same SQuAD layout.

Protocol (the JGLUE harness, jp-stable branch): exemplars from the train split,
evaluated items shuffled with seed 42 before an item limit applies.
Local sources read ``<path>/<split>-v*.json`` (JGLUE) or ``<path>/<split>/*.json``
/ ``<path>/<split>.json`` (JaQuAD); ``split`` defaults to ``valid`` (JaQuAD:
``dev``) and ``fewshot_split`` to ``train``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ..core.errors import DataError
from .base import EVAL, FEWSHOT, Task
from .sources import read_text
from .validate import check_unique, label_index, require_fields, require_list, require_text, shown

JAPANESE = ("jpn_Jpan",)


class JGLUETask(Task):
    FEWSHOT_PART = "train"
    EVAL_SHUFFLE_SEED = 42
    LANGUAGES = JAPANESE
    HF_CONFIG = ""
    SPLITS = {"local": {EVAL: "valid", FEWSHOT: "train"}, "hf": {EVAL: "validation", FEWSHOT: "train"}}

    def local_files(self, source, language, root, split, options):
        directory = Path(root) / source["path"]
        found = sorted(directory.glob(f"{split}-v*.json")) or sorted(directory.glob(f"{split}.json"))
        if not found:
            raise DataError(f"{directory}: no file for split '{split}' (looked for {split}-v*.json, {split}.json)")
        return [found[-1]]

    def hub_config(self, language, options):
        return self.HF_CONFIG

    def items(self, rows, language, where, options):
        items = [self.to_item(row, language, f"{where}: row {n}", n) for n, row in enumerate(rows, start=1)]
        return check_unique(items, where)

    def to_item(self, row: dict[str, Any], language: str, where: str, number: int) -> dict[str, Any]:
        raise NotImplementedError


class JCommonsenseQA(JGLUETask):
    NAME = "jcommonsenseqa"
    FAMILY = "multiple_choice"
    HF_CONFIG = "JCommonsenseQA"
    FIELDS = ("q_id", "question", "choice0", "choice1", "choice2", "choice3", "choice4", "label")

    def to_item(self, row, language, where, number):
        require_fields(row, self.FIELDS, where)
        require_text(row, ("question", "choice0", "choice1", "choice2", "choice3", "choice4"), where)
        label = label_index(row["label"], 5, where, "label")
        return {"id": str(row["q_id"]), "task": self.NAME, "language": language, "group": str(row["q_id"]),
                "question": row["question"], "choices": [row[f"choice{k}"] for k in range(5)], "answer": label}


class LabelTask(JGLUETask):
    FAMILY = "classification"
    LABELS: tuple[str, ...] = ()

    def label_index(self, value: Any, where: str) -> int:
        """The official files name the label, the hub copy gives its index: either, exactly, is read."""
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(self.LABELS):
            return value
        if isinstance(value, str) and value.strip() in self.LABELS:
            return self.LABELS.index(value.strip())
        raise DataError(f"{where}: label must be one of {', '.join(self.LABELS)} (or its index "
                        f"0-{len(self.LABELS) - 1}), got {shown(value)}")


class JNLI(LabelTask):
    NAME = "jnli"
    HF_CONFIG = "JNLI"
    LABELS = ("entailment", "contradiction", "neutral")
    FIELDS = ("sentence_pair_id", "sentence1", "sentence2", "label")

    def to_item(self, row, language, where, number):
        require_fields(row, self.FIELDS, where)
        require_text(row, ("sentence1", "sentence2"), where)
        answer = self.label_index(row["label"], where)
        return {"id": str(row["sentence_pair_id"]), "task": self.NAME, "language": language,
                "group": str(row.get("yjcaptions_id", row["sentence_pair_id"])),
                "premise": row["sentence1"], "hypothesis": row["sentence2"],
                "label": self.LABELS[answer], "answer": answer}


class MARCja(LabelTask):
    NAME = "marc_ja"
    HF_CONFIG = "MARC-ja"
    LABELS = ("positive", "negative")
    FIELDS = ("sentence", "label")

    def to_item(self, row, language, where, number):
        require_fields(row, self.FIELDS, where)
        require_text(row, ("sentence",), where)
        answer = self.label_index(row["label"], where)
        review = row.get("review_id")
        item_id = str(review) if review not in (None, "") else f"row{number}"
        return {"id": item_id, "task": self.NAME, "language": language, "group": item_id,
                "text": row["sentence"], "label": self.LABELS[answer], "answer": answer}


# -- SQuAD-style extractive QA -------------------------------------------------------------------------


def squad_rows(document: Any, where: str) -> list[dict[str, Any]]:
    """Flatten a SQuAD v1.1 document into rows of ``id, title, context, question, answers[text]``."""
    if not isinstance(document, dict) or not isinstance(document.get("data"), list):
        raise DataError(f"{where}: not a SQuAD document (expected an object with a 'data' list)")
    rows = []
    for a, article in enumerate(document["data"]):
        at = f"{where}: data[{a}]"
        require_fields(article, ("paragraphs",), at)
        title = article.get("title", "")
        for p, paragraph in enumerate(require_list(article["paragraphs"], at, "paragraphs", "objects")):
            pt = f"{at}.paragraphs[{p}]"
            require_fields(paragraph, ("context", "qas"), pt)
            for q, qa in enumerate(require_list(paragraph["qas"], pt, "qas", "objects")):
                qt = f"{pt}.qas[{q}]"
                require_fields(qa, ("id", "question", "answers"), qt)
                texts = []
                for n, answer in enumerate(require_list(qa["answers"], qt, "answers", "{text, answer_start} objects")):
                    if not isinstance(answer, dict):
                        raise DataError(f"{qt}: answers[{n}] must be an object {{text, answer_start}}, "
                                        f"got {shown(answer)}")
                    texts.append(answer.get("text"))
                rows.append({"id": qa["id"], "title": title, "context": paragraph["context"],
                             "question": qa["question"], "answers": texts, "is_impossible": qa.get("is_impossible"),
                             "_where": qt})
    return rows


class SQuADTask(JGLUETask):
    FAMILY = "extractive_qa"

    def read_local(self, files, language, split):
        return [row for path in files for row in self.read_squad(path)]

    def read_squad(self, path: Path) -> list[dict[str, Any]]:
        text = read_text(path)
        if not text.strip():
            raise DataError(f"{path}: the file is empty (no {self.NAME} rows)")
        try:
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
        rows = squad_rows(document, str(path))
        if not rows:
            raise DataError(f"{path}: no questions in the file")
        return rows

    def items(self, rows, language, where, options):
        items, places = [], []
        for number, row in enumerate(rows, start=1):
            places.append(row.pop("_where", f"{where}: row {number}").removeprefix(f"{where}: "))
            items.append(self.to_item(row, language, f"{where}: {places[-1]}", number))
        return check_unique(items, where, places=places)

    def to_item(self, row, language, where, number):
        require_fields(row, ("id", "context", "question", "answers"), where)
        answers = row["answers"]
        if isinstance(answers, dict):  # the Hugging Face layout: {text: [...], answer_start: [...]}
            answers = answers.get("text")
        if not isinstance(answers, list) or not answers or not all(isinstance(a, str) and a.strip() for a in answers):
            raise DataError(f"{where}: answers must be a non-empty list of answers with non-empty texts, "
                            f"got {shown(row['answers'])}")
        require_text(row, ("context", "question"), where)
        context = row["context"].split("[SEP]")[-1].strip()  # the HF copy prefixes "<title> [SEP] "
        title = row.get("title") or (row["context"].split("[SEP]")[0].strip() if "[SEP]" in row["context"] else "")
        digest = hashlib.sha256(context.encode("utf-8")).hexdigest()[:12]
        return {"id": str(row["id"]), "task": self.NAME, "language": language, "group": digest,
                "title": title, "context": context, "question": row["question"], "answer": list(answers)}


class JSQuAD(SQuADTask):
    NAME = "jsquad"
    HF_CONFIG = "JSQuAD"


class JaQuAD(SQuADTask):
    NAME = "jaquad"
    SPLITS = {"local": {EVAL: "dev", FEWSHOT: "train"}, "hf": {EVAL: "validation", FEWSHOT: "train"}}

    def local_files(self, source, language, root, split, options):
        directory = Path(root) / source["path"]
        found = sorted((directory / split).glob("*.json")) or sorted(directory.glob(f"{split}.json"))
        if not found:
            raise DataError(f"{directory}: no file for split '{split}' (looked for {split}/*.json, {split}.json)")
        return found

    def hub_config(self, language, options):
        return None  # the dataset has one configuration
