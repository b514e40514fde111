"""Belebele: multiple-choice reading comprehension, 122 FLORES-200 languages, 900 questions each.

Official rows (HF ``facebook/belebele``, one config per language, split ``test``;
or the per-language JSONL files of the official zip)::

    link, question_number, flores_passage, question, mc_answer1..mc_answer4,
    correct_answer_num ("1".."4"), dialect (the FLORES-200 code), ds

Items are parallel across languages: ``id`` is built from ``link`` and
``question_number`` and is the same in every language.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core.errors import DataError
from .base import Task
from .sources import read_local_jsonl
from .validate import check_unique, require_fields, require_text

FIELDS = ("link", "question_number", "flores_passage", "question",
          "mc_answer1", "mc_answer2", "mc_answer3", "mc_answer4", "correct_answer_num")


class Belebele(Task):
    """Exemplars come from the evaluated rows (of the template's fewshot language): no ``FEWSHOT_PART``.
    Local: ``<path>/<language>.jsonl``; hub: the language's config, split ``test``."""

    NAME = "belebele"
    FAMILY = "multiple_choice"

    def local_files(self, source, language, root, split, options):
        return [Path(root) / source["path"] / f"{language}.jsonl"]

    def read_local(self, files, language, split):
        return read_local_jsonl(files[0], language)

    def items(self, rows, language, where, options):
        items = [_to_item(row, language, f"{where}: row {number}") for number, row in enumerate(rows, start=1)]
        return check_unique(items, where, what="item (link, question_number)")


def _to_item(row: dict[str, Any], language: str, where: str) -> dict[str, Any]:
    require_fields(row, FIELDS, where)
    require_text(row, ("flores_passage", "question", "mc_answer1", "mc_answer2", "mc_answer3", "mc_answer4"), where)
    answer = str(row["correct_answer_num"]).strip()
    if answer not in {"1", "2", "3", "4"}:
        raise DataError(f"{where}: correct_answer_num must be \"1\"..\"4\", got {row['correct_answer_num']!r}")
    dialect = row.get("dialect")
    if dialect is not None and dialect != language:
        raise DataError(f"{where}: dialect '{dialect}' does not match the language '{language}'")
    return {
        "id": f"{row['link']}#{row['question_number']}",
        "task": "belebele",
        "language": language,
        "group": str(row["link"]),
        "passage": row["flores_passage"],
        "question": row["question"],
        "choices": [row[f"mc_answer{k}"] for k in range(1, 5)],
        "answer": int(answer) - 1,
    }
