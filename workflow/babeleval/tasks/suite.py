"""The English zero-shot multilingual suite (languagebench): its datasets.

Instructions are in English, content in the target language; no exemplars.
Grid languages are FLORES-200 codes; datasets with their own codes are
reached through ``babeleval.core.languages.dataset_code`` (a dataset's own code
works too).

- ``mmlu``: Global-MMLU (HF ``CohereForAI/Global-MMLU``, one config per
  language, splits ``test``/``dev``): ``sample_id, subject, subject_category,
  question, option_a..option_d, answer`` (a letter). Local: the table of one
  language and split as ``<path>/<code>/<split>.{parquet,csv,jsonl}`` (or the
  hub's ``<path>/<code>/<split>-*.parquet``).
- ``arc``: uhura ARC-Easy (HF ``masakhane/uhura-arc-easy``, configs
  ``<code>_multiple_choice``; files ``<code>_<split>.json``): ``id, question,
  choices{text, label}, answerKey``.
- ``truthfulqa``: uhura TruthfulQA (HF ``masakhane/uhura-truthfulqa``, configs
  ``<code>_multiple_choice``; files ``<code>_multiple_choice_<split>.json``):
  ``question, mc1_targets{choices, labels}``. The MC1 correct answer always
  comes first in the data; choices are put in an order fixed by the row
  number (the same in every language, independent of the seed), so that "A"
  is not always right.
- ``mgsm``: MGSM (GitHub ``google-research/url-nlp`` ``mgsm/mgsm_<code>.tsv``,
  no header, ``question<TAB>answer_number``; HF ``juletxara/mgsm`` configs by
  code, split ``test``: ``question, answer, answer_number, equation_solution``).
- ``translation_from`` / ``translation_to``: FLORES+ (HF
  ``openlanguagedata/flores_plus``, configs ``<iso_639_3>_<iso_15924>``,
  splits ``dev``/``devtest``; one sentence per row: ``id, iso_639_3,
  iso_15924, glottocode, text, url, domain, topic``). ``translation_from``
  translates the grid language into the task's ``partner`` language,
  ``translation_to`` the partner into the grid language. Local:
  ``<path>/<split>/<code>.{jsonl,parquet}``.
- ``topic_classification``: FLORES+ paragraphs (sentences grouped by
  ``url``, in order, joined by a space as they are, unstripped), the five
  most frequent topics (lower-cased; ``most_frequent_topics``) as the label set.
- ``sib200``: SIB-200 (GitHub ``dadelani/sib-200``
  ``data/annotated/<code>/<split>.tsv``, header ``index_id, category, text``;
  HF ``Davlan/sib200``), its seven categories as the label set.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from pathlib import Path
from typing import Any

from ..core.errors import DataError
from ..core.languages import dataset_code, language_name, script_name
from ..core.choices import LETTERS
from .base import EVAL, FEWSHOT, Task
from .sources import find_file, place, read_json_records, read_table, read_tsv
from .validate import check_unique, choice_texts, flags, one_of, plain_number, require_fields, require_text


# -- multiple choice -------------------------------------------------------------------------------------

GLOBAL_MMLU = ("am", "ar", "bn", "cs", "de", "el", "en", "es", "fa", "fil", "fr", "ha", "he", "hi", "id", "ig",
               "it", "ja", "ko", "ky", "lt", "mg", "ms", "ne", "nl", "ny", "pl", "pt", "ro", "ru", "si", "sn",
               "so", "sr", "sv", "sw", "te", "tr", "uk", "vi", "yo", "zh")
UHURA = ("am", "en", "ha", "nso", "sw", "yo", "zu")
MGSM = ("bn", "de", "en", "es", "fr", "ja", "ru", "sw", "te", "th", "zh")


class GlobalMMLU(Task):
    NAME = "mmlu"
    FAMILY = "multiple_choice"
    SPLITS = {"local": {EVAL: "test", FEWSHOT: "dev"}, "hf": {EVAL: "test", FEWSHOT: "dev"}}
    FIELDS = ("sample_id", "subject", "question", "option_a", "option_b", "option_c", "option_d", "answer")

    def local_files(self, source, language, root, split, options):
        directory = Path(root) / source["path"] / self.hub_config(language, options)  # the dataset's own code
        return [find_file(directory, [f"{split}.parquet", f"{split}.csv", f"{split}.jsonl", f"{split}-*.parquet"],
                          f"Global-MMLU {split}", language)]

    def read_local(self, files, language, split):
        return read_table(files[0], "Global-MMLU")

    def hub_config(self, language, options):
        return dataset_code(language, GLOBAL_MMLU, "Global-MMLU")

    def items(self, rows, language, where, options):
        items = []
        for number, row in enumerate(rows, start=1):
            at = f"{where}: row {number}"
            require_fields(row, self.FIELDS, at)
            require_text(row, ("question", "option_a", "option_b", "option_c", "option_d"), at)
            answer = one_of(row["answer"], ("A", "B", "C", "D"), at, "answer")
            items.append({"id": str(row["sample_id"]), "task": self.NAME, "language": language,
                          "group": str(row["sample_id"]), "subject": str(row["subject"]),
                          "question": row["question"],
                          "choices": [row[f"option_{k}"] for k in "abcd"], "answer": "ABCD".index(answer)})
        return check_unique(items, where)


class _Uhura(Task):
    """The uhura multiple-choice sets (ARC-Easy, TruthfulQA): one JSON file per language and split; a
    subclass reads one row into an item."""

    FAMILY = "multiple_choice"
    SPLITS = {"local": {EVAL: "test", FEWSHOT: "train"}, "hf": {EVAL: "test", FEWSHOT: "train"}}
    DATASET = ""  # the dataset's name in UHURA's codes and in messages
    FILE = ""     # the local file's name, from {code} and {split}

    def local_files(self, source, language, root, split, options):
        return [Path(root) / source["path"] / self.FILE.format(code=self._code(language), split=split)]

    def read_local(self, files, language, split):
        return read_json_records(files[0], self.DATASET)

    def hub_config(self, language, options):
        return f"{self._code(language)}_multiple_choice"

    def _code(self, language: str) -> str:
        return dataset_code(language, UHURA, self.DATASET)

    def items(self, rows, language, where, options):
        items = []
        for number, row in enumerate(rows, start=1):
            item = self.item(row, number, f"{where}: row {number}")
            # the canonical key order (id, task, language, ...): prepared files stay byte-identical
            items.append({"id": item.pop("id"), "task": self.NAME, "language": language, **item})
        return check_unique(items, where)

    def item(self, row: dict[str, Any], number: int, at: str) -> dict[str, Any]:
        raise NotImplementedError


class UhuraARC(_Uhura):
    NAME = "arc"
    DATASET = "uhura-arc-easy"
    FILE = "{code}_{split}.json"

    def item(self, row, number, at):
        require_fields(row, ("id", "question", "choices", "answerKey"), at)
        require_text(row, ("question",), at)
        choices = row["choices"]
        require_fields(choices, ("text", "label"), f"{at}: choices")
        texts = choice_texts(choices["text"], at, "choices.text", maximum=len(LETTERS))
        labels = choice_texts(choices["label"], at, "choices.label", maximum=len(LETTERS))
        if len(labels) != len(texts) or len(set(labels)) != len(labels):
            raise DataError(f"{at}: choices.label must name each of the {len(texts)} choices once, got {labels}")
        key = one_of(row["answerKey"], labels, at, "answerKey")
        return {"id": str(row["id"]), "group": str(row["id"]), "question": row["question"], "choices": texts,
                "answer": labels.index(key)}


class UhuraTruthfulQA(_Uhura):
    NAME = "truthfulqa"
    DATASET = "uhura-truthfulqa"
    FILE = "{code}_multiple_choice_{split}.json"

    def item(self, row, number, at):
        require_fields(row, ("question", "mc1_targets"), at)
        require_text(row, ("question",), at)
        targets = row["mc1_targets"]
        require_fields(targets, ("choices", "labels"), f"{at}: mc1_targets")
        texts = choice_texts(targets["choices"], at, "mc1_targets.choices", maximum=len(LETTERS))
        labels = flags(targets["labels"], at, "mc1_targets.labels")
        if len(labels) != len(texts):
            raise DataError(f"{at}: mc1_targets.labels must hold one 0/1 per choice ({len(texts)}), "
                            f"got {len(labels)}")
        if labels.count(1) != 1:
            raise DataError(f"{at}: mc1_targets.labels must mark exactly one correct choice, got {labels}")
        order = list(range(len(labels)))
        random.Random(int(hashlib.sha256(f"truthfulqa#{number}".encode()).hexdigest()[:16], 16)).shuffle(order)
        item_id = str(row.get("id", number))
        return {"id": item_id, "group": item_id, "question": row["question"], "choices": [texts[i] for i in order],
                "answer": order.index(labels.index(1))}


# -- math ----------------------------------------------------------------------------------------------


class MGSMTask(Task):
    NAME = "mgsm"
    FAMILY = "math"
    SPLITS = {"local": {EVAL: "test", FEWSHOT: "train"}, "hf": {EVAL: "test", FEWSHOT: "train"}}

    def local_files(self, source, language, root, split, options):
        return [Path(root) / source["path"] / f"mgsm_{self.hub_config(language, options)}.tsv"]  # its own code

    def read_local(self, files, language, split):
        return read_tsv(files[0], "MGSM", columns=("question", "answer_number"))

    def hub_config(self, language, options):
        return dataset_code(language, MGSM, "MGSM")

    def items(self, rows, language, where, options):
        items = []
        for number, row in enumerate(rows, start=1):
            at = f"{where}: {place(row, number)}"
            require_fields(row, ("question", "answer_number"), at)
            require_text(row, ("question",), at)
            answer = plain_number(row["answer_number"], at, "answer_number")
            items.append({"id": str(number), "task": self.NAME, "language": language, "group": str(number),
                          "question": row["question"], "answer": answer})
        return items


# -- FLORES+ --------------------------------------------------------------------------------------------

FLORES_FIELDS = ("id", "text")


class FloresTask(Task):
    """FLORES+ sentences: local ``<path>/<split>/<code>.{jsonl,parquet}``, hub config ``<code>``."""

    SPLITS = {"local": {EVAL: "dev", FEWSHOT: "dev"}, "hf": {EVAL: "dev", FEWSHOT: "dev"}}

    def local_files(self, source, language, root, split, options):
        directory = Path(root) / source["path"] / split
        return [find_file(directory, [f"{language}.jsonl", f"{language}.parquet", f"{language}-*.parquet"],
                          f"FLORES+ {split}", language)]

    def read_local(self, files, language, split):
        return read_table(files[0], "FLORES+")

    def rows(self, source, language, root=".", part=EVAL, options=None):
        """The sentences of one language, each with an id and a text, ids unique."""
        rows, where = super().rows(source, language, root, part, options)
        places = []
        for number, row in enumerate(rows, start=1):
            places.append(place(row, number))
            require_fields(row, FLORES_FIELDS, f"{where}: {places[-1]}")
            require_text(row, ("text",), f"{where}: {places[-1]}")
        # a repeated sentence id would silently pair one of its rows with the partner's sentence
        check_unique([{"id": str(row["id"])} for row in rows], where, places=places)
        return rows, where


class Translation(FloresTask):
    FAMILY = "translation"
    OPTIONS = {"partner": "eng_Latn"}
    DIRECTION = "from"

    def files(self, source, language, root=".", part=EVAL, options=None):
        """A language's items are made from its sentences and the partner language's."""
        partner = self.options(options)["partner"]
        return super().files(source, language, root, part, options) + super().files(source, partner, root, part,
                                                                                     options)

    def target_language(self, language, options=None):
        """Out of the grid language into the partner (``from``), or out of the partner into it (``to``)."""
        return language if self.DIRECTION == "to" else self.options(options)["partner"]

    def load(self, source, language, root=".", part=EVAL, options=None):
        partner = self.options(options)["partner"]
        if partner == language:
            raise DataError(f"{self.NAME}: language '{language}' is the partner language itself")
        own, own_where = self.rows(source, language, root, part, options)
        other, other_where = self.rows(source, partner, root, part, options)
        other_by_id = {str(row["id"]): row for row in other}
        source_lang, target_lang = (language, partner) if self.DIRECTION == "from" else (partner, language)
        items = []
        for number, row in enumerate(own, start=1):
            key = str(row["id"])
            if key not in other_by_id:
                raise DataError(f"{own_where}: row {number}: sentence id {key} has no counterpart in {other_where}")
            texts = {language: row["text"], partner: other_by_id[key]["text"]}
            items.append({"id": key, "task": self.NAME, "language": language, "group": str(row.get("url") or key),
                          "source_language": source_lang, "target_language": target_lang,
                          "source_name": language_name(source_lang), "target_name": language_name(target_lang),
                          "target_script": script_name(target_lang),
                          "source_text": texts[source_lang].strip(), "answer": texts[target_lang].strip()})
        return items


class TranslationFrom(Translation):
    NAME = "translation_from"
    DIRECTION = "from"


class TranslationTo(Translation):
    NAME = "translation_to"
    DIRECTION = "to"


class FloresTopics(FloresTask):
    NAME = "topic_classification"
    FAMILY = "classification"
    OPTIONS = {"topics": 5}

    def items(self, rows, language, where, options):
        top_n = options["topics"]
        paragraphs: dict[str, dict[str, Any]] = {}
        for number, row in enumerate(rows, start=1):
            absent = [key for key in ("url", "topic") if key not in row]
            if absent:
                raise DataError(f"{where}: row {number}: missing field{'s' if len(absent) > 1 else ''} {', '.join(absent)}")
            if not row.get("topic") or not row.get("url"):
                continue
            paragraph = paragraphs.setdefault(str(row["url"]), {"texts": [], "topic": str(row["topic"]).lower(),
                                                                 "first": str(row["id"])})
            paragraph["texts"].append(row["text"])  # as languagebench joins them: unstripped
        if not paragraphs:
            raise DataError(f"{where}: no row has both a topic and a url")
        topics = most_frequent_topics([p["topic"] for p in paragraphs.values()], top_n)
        items = []
        for url, paragraph in paragraphs.items():
            if paragraph["topic"] not in topics:
                continue
            items.append({"id": url, "task": self.NAME, "language": language, "group": url,
                          "text": " ".join(paragraph["texts"]), "label": paragraph["topic"],
                          "choices": list(topics), "answer": topics.index(paragraph["topic"])})
        return items


def most_frequent_topics(topics: list[str], n: int) -> list[str]:
    """The ``n`` topics with the most paragraphs, most first; tied counts in topic-name (code point) order.

    languagebench takes ``paragraphs.value_counts("topic").head(5)``: pandas groups the topics in name order,
    then sorts the counts, descending. On its pinned pandas 2.2.3 that keeps tied topics in name order where
    the sort keeps ties in place (numpy's sort of at most 16 counts without its SIMD code); numpy 2.2.5's
    AVX2 and AVX-512 sorts, and more than 16 topics, leave ties in an order no rule gives (docs/tasks.md).
    """
    counts = Counter(topics)
    return sorted(counts, key=lambda topic: (-counts[topic], topic))[:n]


SIB_CATEGORIES = ("science/technology", "travel", "politics", "sports", "health", "entertainment", "geography")


class SIB200(Task):
    NAME = "sib200"
    FAMILY = "classification"
    SPLITS = {"local": {EVAL: "test", FEWSHOT: "train"}, "hf": {EVAL: "test", FEWSHOT: "train"}}

    def local_files(self, source, language, root, split, options):
        return [Path(root) / source["path"] / language / f"{split}.tsv"]

    def read_local(self, files, language, split):
        if not files[0].is_file():
            raise DataError(f"{files[0]}: no SIB-200 file for language '{language}'")
        return read_tsv(files[0], "SIB-200")

    def items(self, rows, language, where, options):
        items = []
        places = []
        for number, row in enumerate(rows, start=1):
            places.append(place(row, number))
            at = f"{where}: {places[-1]}"
            require_fields(row, ("index_id", "category", "text"), at)
            require_text(row, ("text",), at)
            category = one_of(row["category"], SIB_CATEGORIES, at, "category")
            items.append({"id": str(row["index_id"]), "task": self.NAME, "language": language,
                          "group": str(row["index_id"]), "text": row["text"], "label": category,
                          "choices": list(SIB_CATEGORIES), "answer": SIB_CATEGORIES.index(category)})
        return check_unique(items, where, places=places)
