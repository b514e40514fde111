"""The two Belebele multiple-choice prompts the log-likelihood benchmark scores (standard library only).

Imported by both sides of the comparison, the project's scorer (bench/mc_loglikelihood.py) and
lm-evaluation-harness (bench/lmeval_mc.py), so the two score exactly the same strings.

- ``texts``: context ``{flores_passage}\\nQuestion: {question}\\nAnswer:``, continuations
  `` {mc_answerN}``: multi-token answers, where lm-eval recomputes the passage once per choice.
- ``letters``: lm-eval's own Belebele prompt (tasks/belebele/_default_template_yaml) with the
  continuations `` A`` .. `` D``: single-token answers, which lm-eval already scores in one pass.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Iterator

CHOICES = ("texts", "letters")
LETTERS = ("A", "B", "C", "D")


def item_id(row: dict[str, Any]) -> str:
    """The id babeleval gives a Belebele row (tasks/belebele.py): ``link#question_number``."""
    return str(row["id"]) if "id" in row else f"{row['link']}#{row['question_number']}"


def answers(row: dict[str, Any]) -> list[str]:
    return [row[f"mc_answer{k}"] for k in range(1, 5)]


def context(row: dict[str, Any], choices: str) -> str:
    if choices == "texts":
        return f"{row['flores_passage']}\nQuestion: {row['question']}\nAnswer:"
    if choices == "letters":
        a, b, c, d = answers(row)
        return (f"P: {row['flores_passage']}\nQ: {row['question'].strip()}\n"
                f"A: {a}\nB: {b}\nC: {c}\nD: {d}\nAnswer:")
    raise ValueError(f"choices must be one of {CHOICES}, got {choices!r}")


def continuations(row: dict[str, Any], choices: str) -> list[str]:
    """lm-eval's target_delimiter (one space) before each choice."""
    return [" " + a for a in (answers(row) if choices == "texts" else LETTERS)]


def gold(row: dict[str, Any]) -> int:
    return int(row["correct_answer_num"]) - 1


def read_items(path: str | Path, limit: int | None = None) -> list[dict[str, Any]]:
    rows = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                rows.append(json.loads(line))
    return rows[:limit] if limit else rows


def requests(rows: list[dict[str, Any]], choices: str) -> Iterator[tuple[str, str, list[str]]]:
    """(id, context, continuations) per item, in file order."""
    for row in rows:
        yield item_id(row), context(row, choices), continuations(row, choices)


def write_results(path: str | Path, ids: list[str], logprobs: list[list[float]]) -> None:
    """One JSON line per item, in file order: ``{"id": ..., "logprobs": [four floats]}``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        for id_, lps in zip(ids, logprobs, strict=True):
            handle.write(json.dumps({"id": id_, "logprobs": [float(x) for x in lps]}, ensure_ascii=False) + "\n")
    tmp.replace(path)


def add_model_arguments(parser: argparse.ArgumentParser, *, repeats: int | None = None) -> None:
    """The arguments every model-running benchmark takes: the model, the Belebele-format data, the batch
    size, device and dtype, and (where it times repeated runs) how many."""
    parser.add_argument("--model", required=True, help="a local model directory (or hub id)")
    parser.add_argument("--data", required=True, help="Belebele-format JSON Lines")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32")
    if repeats is not None:
        parser.add_argument("--repeats", type=int, default=repeats)
