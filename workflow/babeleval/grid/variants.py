"""A task entry's variants: the names its ``variants:`` draws besides its listed templates, and what each variant
needs from its task."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

from ..core.errors import ConfigError, TemplateError
from ..prompts.budget_design import Budget, StudyPlan, short_budget
from ..prompts.templates import Template, template_fields
from ..prompts.variants import (PHRASES_FILE, base_name, declared_axes, is_variant, phrase_table, sample_settings,
                                variant_name)
from ..score.metrics import get_metric, headline_metric
from ..tasks.families import Family


def grid_template_names(task: str, entry: dict, seed: int, source_file: str, root: str | Path = ".") -> list[str]:
    """The template names a task of the grid evaluates: its ``templates`` then the variants its ``variants`` ask for.

    ``variants: {<template>: {sample: k | all, axes: {axis: [values]}}}`` draws k variants of a template
    besides the ones listed in ``templates`` (the same k for every language, so that variants are crossed
    with languages and models), from the file's ``variations`` or the axes given here.
    """
    names = list(entry["templates"])
    for base, request in (entry.get("variants") or {}).items():
        where = f"{source_file}: tasks.{task}.variants.{base}"
        if is_variant(base):
            raise ConfigError(f"{where}: name the base template (without ~settings)")
        try:
            fields, path = template_fields(task, base, root)
            axes = declared_axes(fields, path)
            if "axes" in request:
                axes = declared_axes({**fields, "variations": request["axes"]}, path)
        except TemplateError as exc:
            raise ConfigError(f"{where}: {exc}") from None
        if not axes:
            raise ConfigError(f"{where}: {path} declares no 'variations' and none are given under 'axes'")
        k = None if request.get("sample", "all") == "all" else int(request["sample"])
        if k is None:
            check_sample_all(axes, len(entry["languages"]), where)
        listed = set(names)
        for point in sample_settings(axes, k, seed, task, base, skip=lambda p: variant_name(base, p) in listed):
            name = variant_name(base, point)
            if name not in names:
                names.append(name)
    return names


# `sample: all` takes every point of the axes' product; beyond this many variants a grid plans slowly and costs
# more than a study needs, so it is refused with the alternatives
SAMPLE_ALL_LIMIT = 500


def check_sample_all(axes: dict[str, list[str]], languages: int, where: str) -> None:
    """``sample: all`` over at most SAMPLE_ALL_LIMIT variants; beyond that, a named error with the count."""
    count = math.prod(len(values) for values in axes.values())
    if count > SAMPLE_ALL_LIMIT:
        raise ConfigError(f"{where}: sample: all would evaluate {count:,} variants (x {languages} language"
                          f"{'s' if languages != 1 else ''} = {count * languages:,} combinations per model), more "
                          f"than {SAMPLE_ALL_LIMIT}: draw some with sample: k (e.g. sample: 50), narrow the axes "
                          "under axes:, or search the family within a budget with `python -m babeleval search` "
                          "(docs/variations.md)")


def check_variant(template: Template, family: str, languages: Sequence[str], where: str) -> None:
    """What a variant needs from its task: choices of its own to reorder, phrases in every language."""
    variant = getattr(template, "variant", None)
    if variant is None:
        return
    if variant.get("order") != "orig" and (family != "multiple_choice" or template.choices is not None):
        # per-item permutations would scramble class indices, which balanced accuracy and macro-F1 count by
        raise ConfigError(f"{where}: variant {template.name}: 'order' permutes each item's own answer choices; a "
                          f"{family} task{' with label words' if template.choices is not None else ''} has classes "
                          "in a fixed order: leave 'order' out")
    if variant.get("instr") != "tgt":
        return
    missing = [language for language in languages if language not in phrase_table()]
    if missing:
        raise ConfigError(f"{where}: variant {template.name} (instr=tgt) needs phrases for {', '.join(missing)} in "
                          f"{PHRASES_FILE}; add them there, or leave instr=tgt out for this task")


def budget_plans(task: str, family: Family, entry: dict, templates: dict[str, Template], seed: int,
                 source_file: str) -> dict[str, StudyPlan]:
    """base template -> the plan of its budgeted variant set (``variants.<base>.budget: {fraction: f} | {cells: n}``,
    ``parallel: true`` for items that are the same in every language): every variant ``variants:`` draws (the base
    itself where its own settings are drawn) answers only the items its seeded design gives it
    (``babeleval.prompts.budget_design``); a template listed under ``templates`` runs in full."""
    plans = {}
    for base, request in (entry.get("variants") or {}).items():
        if "budget" not in request:
            continue
        where = f"{source_file}: tasks.{task}.variants.{base}.budget"
        listed = set(entry["templates"])  # run in full, as listed
        variants = tuple(sorted(name for name in templates if base_name(name) == base and name not in listed))
        budget = Budget(cells=request["budget"].get("cells"), fraction=request["budget"].get("fraction"))
        check_budget(budget, variants, [templates[name] for name in variants], where, len(entry["languages"]),
                     entry.get("limit"))
        check_outcome([templates[name] for name in variants], family, where)
        plans[base] = StudyPlan(base=base, variants=variants, budget=budget, seed=seed,
                                parallel=bool(request["budget"].get("parallel", False)))
    return plans


def check_budget(budget: Budget, variants: tuple[str, ...], templates: list[Template], where: str, languages: int,
                 items: int | None) -> None:
    """What a budget needs before any data is read: cells or a fraction, two variants or more, enough cells for
    two items a variant (``items``: the task's ``limit``, where set), and variants that evaluate the same items
    (the `first` sampler takes its exemplars out of the evaluated items, by shots)."""
    if (budget.cells is None) == (budget.fraction is None):
        raise ConfigError(f"{where}: give either `cells` or `fraction` (e.g. fraction: 0.1), not both or neither")
    if budget.fraction is not None and not 0 < budget.fraction <= 1:
        raise ConfigError(f"{where}: fraction {budget.fraction} is not in (0, 1]: give the share of the "
                          "variants x items cells to evaluate, e.g. 0.1")
    if len(variants) < 2:
        raise ConfigError(f"{where}: a budget shares cells among the base's variants, and the grid has "
                          f"{len(variants)}: draw more with `sample:`")
    short = short_budget(budget.cells, len(variants), languages, items) if budget.cells is not None else None
    if short:
        raise ConfigError(f"{where}: {short}")
    first = [template.name for template in templates if template.fewshot.n and template.fewshot.sampler == "first"]
    if first:
        raise ConfigError(f"{where}: variant {first[0]} takes its exemplars out of the evaluated items (fewshot "
                          "sampler `first`), so the variants would not share their items: use the random or "
                          "stratified sampler, or leave the budget out")


def check_outcome(templates: Sequence[Template], family: Family, where: str) -> None:
    """A budgeted set's headline metric is a share of items right whose outcome per item is a field of the records
    (``Metric.outcome_column``: acc's ``correct``, acc_norm's ``correct_norm``): the estimate models each (variant,
    item) cell as right or wrong, and a score such as BLEU, chrF or SQuAD F1 has no such outcome per item. (The
    variants of a base share its metrics and mode, and with them their headline.)"""
    for template in templates:
        headline = headline_metric(family.reported_metrics(template.mode, template.metrics))
        if not (headline and get_metric(headline).outcome_column):
            raise ConfigError(f"{where}: variant {template.name} reports {headline or 'no headline metric'} (task "
                              f"family {family.name}), which is not right or wrong per item; the budgeted estimate "
                              "models each (variant, item) cell as right or wrong, so it needs a metric such as "
                              "accuracy: leave the budget out and run the variants in full")
