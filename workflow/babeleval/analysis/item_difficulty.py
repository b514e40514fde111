"""Item difficulty across models, and items a model solves in English but not in another language.

The Belebele tutorial blog sorted Belebele's questions by which Llama 2 models answered them:
"easy, answered by all", "only 13B and 70B", "only 70B", "all models failed".
This module does the same for any grid, per (task, language, template):

- ``items``: each item with the number and names of the models that got it right;
- ``buckets``: items counted by how many models got them right, from "every
  model" down to "no model", with example items;
- ``patterns``: the exact set of models that got an item right, counted (the Belebele tutorial blog's
  "only 13B and 70B");
- ``crosslingual``: for tasks whose items are parallel across languages (the
  same id in every language, as in Belebele), per model and template, the items
  solved in the pivot language (English) but failed in another language, and
  the reverse, with an exact McNemar test on those paired items.
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping

import pandas as pd

from ..core.paths import Combo
from .records import item_text
from .significance import mcnemar_exact

ITEM_COLUMNS = ["task", "language", "template", "id", "n_models", "n_correct", "bucket", "models_correct",
                "models_wrong"]
BUCKET_COLUMNS = ["task", "language", "template", "n_models", "n_correct", "bucket", "items", "share", "examples"]
PATTERN_COLUMNS = ["task", "language", "template", "models_correct", "items", "share"]
GAP_COLUMNS = ["model", "task", "template", "pivot", "language", "n_parallel", "pivot_acc", "language_acc",
               "pivot_only", "language_only", "p_value", "examples"]
GAP_ITEM_COLUMNS = ["model", "task", "template", "pivot", "language", "id", "text"]
EXAMPLES = 2


def bucket_label(n_correct: int, n_models: int) -> str:
    if n_correct == n_models:
        return "every model"
    if n_correct == 0:
        return "no model"
    return f"{n_correct} of {n_models} models"


def _outcomes(records: list[dict[str, Any]]) -> dict[str, bool]:
    """id -> correct, for items scored right/wrong (corpus-level tasks leave ``correct`` null)."""
    return {str(r["id"]): bool(r["correct"]) for r in records if r.get("correct") is not None}


def _text(items: dict, task: str, language: str, item_id: str) -> str:
    item = items.get((task, language), {}).get(item_id)
    return item_text(item) if item else ""


def _cells(raw: Mapping[Combo, list[dict[str, Any]]]) -> Iterator[tuple[tuple[str, str, str], dict]]:
    """(task, language, template) -> model -> its items' outcomes, one cell read at a time, in order."""
    combos: dict[tuple[str, str, str], list[Combo]] = {}
    for combo in raw:
        combos.setdefault((combo.task, combo.language, combo.template), []).append(combo)
    for cell, members in sorted(combos.items()):
        by_model = {combo.model: outcomes for combo in members if (outcomes := _outcomes(raw[combo]))}
        if by_model:
            yield cell, by_model


def difficulty(raw: Mapping[Combo, list[dict[str, Any]]], items: dict | None = None) -> dict[str, pd.DataFrame]:
    items = items or {}
    item_rows, bucket_rows, pattern_rows = [], [], []
    for (task, language, template), by_model in _cells(raw):
        models = sorted(by_model)
        common = sorted(set.intersection(*(set(o) for o in by_model.values())))
        cell_items = []
        for item_id in common:
            right = [m for m in models if by_model[m][item_id]]
            wrong = [m for m in models if not by_model[m][item_id]]
            cell_items.append({"task": task, "language": language, "template": template, "id": item_id,
                               "n_models": len(models), "n_correct": len(right),
                               "bucket": bucket_label(len(right), len(models)),
                               "models_correct": ", ".join(right), "models_wrong": ", ".join(wrong)})
        # a table per cell, joined at the end: a grid's items as row dicts held 1 GB at a study's size
        item_rows.append(pd.DataFrame(cell_items, columns=ITEM_COLUMNS))
        for k in range(len(models), -1, -1):
            members = [r for r in cell_items if r["n_correct"] == k]
            examples = " || ".join(
                f"{r['id']}: {_text(items, task, language, r['id'])}".rstrip(": ") for r in members[:EXAMPLES])
            bucket_rows.append({"task": task, "language": language, "template": template, "n_models": len(models),
                                "n_correct": k, "bucket": bucket_label(k, len(models)), "items": len(members),
                                "share": len(members) / len(cell_items) if cell_items else float("nan"),
                                "examples": examples})
        patterns: dict[str, int] = {}
        for r in cell_items:
            key = r["models_correct"] or "(none)"
            patterns[key] = patterns.get(key, 0) + 1
        for key, count in sorted(patterns.items(), key=lambda kv: (-kv[1], kv[0])):
            pattern_rows.append({"task": task, "language": language, "template": template, "models_correct": key,
                                 "items": count, "share": count / len(cell_items)})
    return {"items": _joined(item_rows, ITEM_COLUMNS),
            "buckets": pd.DataFrame(bucket_rows, columns=BUCKET_COLUMNS),
            "patterns": pd.DataFrame(pattern_rows, columns=PATTERN_COLUMNS)}


def crosslingual(raw: Mapping[Combo, list[dict[str, Any]]], pivot: str = "eng_Latn",
                 items: dict | None = None) -> dict[str, pd.DataFrame]:
    """Items solved in ``pivot`` but failed in another language (and the reverse), on parallel item ids.

    A (model, task, template) without a pivot-language file, or whose other languages share no item id
    with it (items not parallel across languages), gives no rows.
    """
    items = items or {}
    gap_rows, item_rows = [], []
    # the pivot language's outcomes, read once; each other combination is read when its turn comes
    pivots = {combo: _outcomes(raw[combo]) for combo in raw if combo.language == pivot}
    texts: dict[tuple[str, str], str] = {}  # a pivot item fails in many languages: its text made once

    def text(task: str, item_id: str) -> str:
        if (task, item_id) not in texts:
            texts[task, item_id] = _text(items, task, pivot, item_id)
        return texts[task, item_id]

    for combo in sorted(raw):
        there = pivots.get(combo._replace(language=pivot))
        if combo.language == pivot or there is None:
            continue
        here = _outcomes(raw[combo])
        common = sorted(set(there) & set(here))
        if not common:
            continue
        a = [there[i] for i in common]
        b = [here[i] for i in common]
        pivot_only_ids = [i for i in common if there[i] and not here[i]]
        pivot_only, language_only, p = mcnemar_exact(a, b)
        gap_rows.append({"model": combo.model, "task": combo.task, "template": combo.template, "pivot": pivot,
                         "language": combo.language, "n_parallel": len(common), "pivot_acc": sum(a) / len(a),
                         "language_acc": sum(b) / len(b), "pivot_only": pivot_only, "language_only": language_only,
                         "p_value": p, "examples": ", ".join(pivot_only_ids[:3])})
        item_rows.append(pd.DataFrame(
            [{"model": combo.model, "task": combo.task, "template": combo.template, "pivot": pivot,
              "language": combo.language, "id": item_id, "text": text(combo.task, item_id)}
             for item_id in pivot_only_ids], columns=GAP_ITEM_COLUMNS))
    return {"gaps": pd.DataFrame(gap_rows, columns=GAP_COLUMNS),
            "items": _joined(item_rows, GAP_ITEM_COLUMNS)}


def _joined(frames: list[pd.DataFrame], columns: list[str]) -> pd.DataFrame:
    """Per-cell tables as one (with their columns when there are none)."""
    frames = [frame for frame in frames if len(frame)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame([], columns=columns)
