"""Which (variant, item) cells a budgeted sensitivity study evaluates: balanced, seeded, reproducible.

A variant set of V variants over I items is a V x I grid of cells per language. A budget of B cells per
language (or a fraction of V x I) is spread so that every variant gets floor(B/V) or ceil(B/V) items and
every item is answered by floor(B/I) or ceil(B/I) variants: each variant's items are a random sample of
the task's items (so its observed accuracy is unbiased for its accuracy on all of them), and every item
links several variants (so item difficulty can be told apart from a variant's effect).

The draw depends only on the seed and the *sets* of variant names and item ids (they are sorted first),
so listing them in another order never changes which cells run. For item-parallel data (Belebele: the same
item id in every language) every language evaluates the same cells, which makes the languages' estimates
paired; otherwise each language has its own draw over its own items.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from ..core.errors import ConfigError


# the fewest items a variant the design gives (below it a variant's own cells cannot tell it from the items)
MIN_ITEMS = 2


def short_budget(cells: int, variants: int, languages: int, items: int | None = None) -> str | None:
    """Why ``cells`` a language cannot give each of ``variants`` variants ``MIN_ITEMS`` items, with the ways
    forward: the smallest budget that works (a share of the grid where ``items`` is known), the largest family
    this budget serves, and how many languages the same cells in all would cover; None where the budget works."""
    needed = MIN_ITEMS * variants
    if cells >= needed:
        return None
    share = f" ({needed / (variants * items):.2%} of the {variants} x {items} grid)" if items else ""
    family = cells // MIN_ITEMS
    forward = [f"the smallest budget that works is {needed} cells a language{share}, {needed * languages} in all "
               f"over the {languages} language(s)"]
    if family >= 2:
        forward.append(f"these {cells} cells a language serve a family of at most {family} variants "
                       "(`sample:` fewer)")
    if cells * languages >= needed:
        forward.append(f"the same {cells * languages} cells in all give {needed} a language to "
                       f"{cells * languages // needed} of the languages (fewer `languages:`)")
    return (f"{cells} cells a language cannot give each of {variants} variants {MIN_ITEMS} items: "
            + "; ".join(forward))


@dataclass(frozen=True)
class Budget:
    """Cells per language: a count, or a fraction of the language's variants x items."""
    cells: int | None = None
    fraction: float | None = None

    def per_language(self, variants: int, items: int, languages: int = 1) -> int:
        """The number of cells one language evaluates; a budget that cannot be met is a ConfigError
        (``languages``: how many share the design, for the ways forward ``short_budget`` names)."""
        full = variants * items
        if (self.cells is None) == (self.fraction is None):
            raise ConfigError("budget: give either `cells` or `fraction`, not both or neither")
        if self.fraction is not None and not 0 < self.fraction <= 1:
            raise ConfigError(f"budget: fraction {self.fraction} is not in (0, 1]")
        cells = self.cells if self.cells is not None else math.ceil(self.fraction * full)
        if cells > full:
            raise ConfigError(f"budget: {cells} cells is more than the {variants} x {items} = {full} the grid has")
        short = short_budget(cells, variants, languages, items)
        if short:
            raise ConfigError(f"budget: {short}")
        return cells


def _rng(seed: int, *names: str) -> np.random.Generator:
    """A generator seeded by the seed and names, stable across Python runs (no salted ``hash``)."""
    digest = hashlib.sha256("\x1f".join([str(seed), *names]).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def choose_cells(variants: Sequence[str], items: Sequence[str], cells: int, seed: int,
                 stream: str = "") -> dict[str, list[str]]:
    """variant -> the item ids it evaluates: ``cells`` cells in all, balanced over variants and items.

    Variants take turns in a seeded order; each takes its share of the items answered least so far, ties
    broken at random, so both margins differ by at most one and the variants' item sets overlap at random.
    """
    variants, items = sorted(set(variants)), sorted(set(items))
    if cells > len(variants) * len(items) or cells < len(variants):
        raise ConfigError(f"budget: {cells} cells do not fit {len(variants)} variants x {len(items)} items")
    rng = _rng(seed, stream, *variants, "\x1e", *items)
    shares = np.diff(np.floor(np.arange(len(variants) + 1) * cells / len(variants)).astype(int))
    answered = np.zeros(len(items), dtype=int)
    chosen: dict[str, list[str]] = {}
    for position, share in zip(rng.permutation(len(variants)), rng.permutation(shares)):
        # least answered first; a random key breaks ties, so which equally answered items a variant gets is random
        order = np.lexsort((rng.random(len(items)), answered))[:share]
        answered[order] += 1
        chosen[variants[position]] = sorted(items[k] for k in order)
    return dict(sorted(chosen.items()))


def choose_study(variants: Sequence[str], items: Mapping[str, Sequence[str]], budget: Budget, seed: int,
                 parallel: bool) -> dict[str, dict[str, list[str]]]:
    """language -> variant -> item ids: the cells of a budgeted study over one or more languages.

    ``parallel``: the items are the same in every language (item-parallel data), so every language evaluates
    the same cells; a language whose item ids differ from the others' is then a ConfigError.
    """
    if not items:
        raise ConfigError("budget: no languages to design for")
    if parallel:
        first, *rest = (sorted(set(ids)) for ids in items.values())
        for language, ids in items.items():
            if sorted(set(ids)) != first:
                raise ConfigError(f"budget: language {language} has other item ids than {next(iter(items))}; "
                                  "item-parallel design needs the same items in every language")
        shared = choose_cells(variants, first, budget.per_language(len(set(variants)), len(first), len(items)),
                              seed)
        return {language: shared for language in items}
    return {language: choose_cells(variants, ids, budget.per_language(len(set(variants)), len(set(ids)), len(items)),
                                   seed, stream=language)
            for language, ids in items.items()}


@dataclass(frozen=True)
class StudyPlan:
    """A budgeted variant set as the grid declares it (``tasks.<t>.variants.<base>.budget``): which variants share
    the budget, the budget, the seed and whether the task's items are parallel across languages.

    Every rendering job of the set's variants draws the same design from it (``cells``), so the plan is all a
    prompt record carries: the design itself depends on the evaluated item ids, known only once data is prepared.
    """
    base: str
    variants: tuple[str, ...]
    budget: Budget
    seed: int
    parallel: bool

    def cells(self, items: Mapping[str, Sequence[str]]) -> dict[str, dict[str, list[str]]]:
        """language -> variant -> the item ids it evaluates, from each language's evaluated item ids."""
        return choose_study(self.variants, {language: [str(i) for i in ids] for language, ids in items.items()},
                            self.budget, self.seed, self.parallel)

    def as_json(self) -> dict:
        return {"base": self.base, "variants": list(self.variants), "cells": self.budget.cells,
                "fraction": self.budget.fraction, "seed": self.seed, "parallel": self.parallel}

    @classmethod
    def from_json(cls, plan: Mapping) -> "StudyPlan":
        return cls(base=plan["base"], variants=tuple(plan["variants"]),
                   budget=Budget(cells=plan["cells"], fraction=plan["fraction"]), seed=plan["seed"],
                   parallel=plan["parallel"])
