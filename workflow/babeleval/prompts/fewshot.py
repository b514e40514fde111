"""Few-shot exemplar choice, deterministic from the seed.

Exemplars for an item depend on (seed, task, exemplar language, item id) and
not on the template, so two templates compared on the same item show the model
the same exemplars: the comparison isolates the format. They also do not depend
on which other items are evaluated, so an item limit or a new language never
changes the prompts of items already run.
"""

from __future__ import annotations

import hashlib
import random
from pathlib import Path
from typing import Any, Sequence

from ..core.errors import DataError
from .templates import FewShot


def check_pool(template_path: Path, fewshot: FewShot, pool_size: int, where: str) -> None:
    """A few-shot plan asking for more exemplars than its pool holds stops the run, naming the template's file.

    Using fewer would change what is evaluated without a word (50 shots asked, 6 shown).
    """
    n = fewshot.n
    if n and pool_size < n and not fewshot.allow_fewer:
        raise DataError(f"{template_path}: fewshot.n is {n}, but its exemplar pool ({where}) holds only "
                        f"{pool_size} row{'s' if pool_size != 1 else ''}: lower fewshot.n or give a larger pool")


def shots(fewshot: FewShot, available: int, shortage: str) -> int:
    """How many exemplars an item gets: n, or where the template allows it, as many as there are."""
    if available >= fewshot.n:
        return fewshot.n
    if fewshot.allow_fewer:
        return available
    raise DataError(shortage)


def item_rng(seed: int, *parts: str) -> random.Random:
    digest = hashlib.sha256("\x1f".join([str(seed), *parts]).encode("utf-8")).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def first_exemplars(fewshot: FewShot, pool: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first n rows of the pool (the Belebele tutorial blog uses the first five rows of the dataset)."""
    return list(pool[: fewshot.n])


def random_exemplars(fewshot: FewShot, pool: Sequence[dict[str, Any]], item: dict[str, Any], seed: int) -> list[dict[str, Any]]:
    """n exemplars sampled without replacement from the pool, never from the item's own group (passage)."""
    candidates = [row for row in pool if row["group"] != item["group"]]
    n = shots(fewshot, len(candidates), f"language {pool[0]['language']}: only {len(candidates)} exemplar "
                                        f"candidates for item {item['id']}, {fewshot.n} needed")
    rng = item_rng(seed, item["task"], pool[0]["language"], item["id"])
    return rng.sample(candidates, n)


def stratified_exemplars(fewshot: FewShot, pool: Sequence[dict[str, Any]], item: dict[str, Any],
                         seed: int) -> list[dict[str, Any]]:
    """n exemplars with the pool's label proportions (JGLUE's JNLI, lm-eval's ``_stratified_fewshot_examples``).

    Each label gets int(share * n) exemplars, the rest go one by one to the label
    with the fewest, then the exemplars are shuffled; labels are the items' ``answer``.
    """
    candidates = [row for row in pool if row["group"] != item["group"]]
    n = shots(fewshot, len(candidates), f"language {pool[0]['language']}: only {len(candidates)} exemplar "
                                        f"candidates for item {item['id']}, {fewshot.n} needed")
    by_label: dict[Any, list[dict[str, Any]]] = {}
    for row in candidates:
        by_label.setdefault(str(row["answer"]), []).append(row)
    counts = {label: int(len(rows) / len(candidates) * n) for label, rows in by_label.items()}
    for _ in range(n - sum(counts.values())):
        label = min(counts, key=lambda k: counts[k])
        counts[label] += 1
    short = [label for label in sorted(counts) if counts[label] > len(by_label[label])]
    if fewshot.allow_fewer:
        counts = {label: min(count, len(by_label[label])) for label, count in counts.items()}
    elif short:  # sampling fewer than asked would shrink the prompt without a word
        raise DataError(f"language {pool[0]['language']}: label {short[0]} has {len(by_label[short[0]])} exemplar "
                        f"candidates for item {item['id']}, {counts[short[0]]} needed for {fewshot.n} stratified shots")
    rng = item_rng(seed, item["task"], pool[0]["language"], item["id"])
    chosen: list[dict[str, Any]] = []
    for label in sorted(by_label):
        chosen.extend(rng.sample(by_label[label], counts[label]))
    rng.shuffle(chosen)
    return chosen
