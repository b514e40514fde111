"""The planner's decisions: each (model, task, language, template) resolved into its record, once.

The rules that make a decision are small pure functions here (``exemplar_source``, ``decoding_for``,
``metric_entries``, ``metric_options``), so that a template outside the grid (a variant previewed with
``show``, or tried by ``search``) is resolved by the same code as the grid's own.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..generate.backends.config import ModelConfig
from ..generate.fingerprint import output_settings
from ..prompts.record import PromptRecord, prepared_file
from ..prompts.templates import Template
from ..score.metrics import get_metric, headline_metric
from ..tasks import Task, get_task
from ..tasks.base import EVAL, FEWSHOT
from ..tasks.families import get_family
from .records import CombinationRecord, MetricEntry, TaskEntry


def exemplar_source(task: Task, template: Template, language: str) -> tuple[str | None, tuple[str, ...]]:
    """The part and languages a template's exemplars are drawn from for items of ``language``.

    None and no language for a zero-shot template. Else the task's exemplar split where it has one
    (``Task.FEWSHOT_PART``), the evaluated rows where it does not; of the item's own language unless the
    template names another (``fewshot.language``).
    """
    if not template.fewshot.n:
        return None, ()
    return (FEWSHOT if task.FEWSHOT_PART else EVAL), (template.fewshot.language or language,)


def decoding_settings(mode: str, generation: dict[str, Any], preset: dict[str, Any], seed: int) -> dict[str, Any]:
    """Everything besides the prompt that decides an output; part of the cache key and of each record."""
    if mode == "loglikelihood":
        return {"mode": mode}
    settings = {"mode": mode, **preset, "max_new_tokens": generation["max_new_tokens"], "stop": list(generation["stop"])}
    if preset.get("do_sample"):
        settings["seed"] = seed  # sampled outputs are cached per seed; greedy ones do not depend on it
    return settings


def decoding_for(template: Template, model: ModelConfig | None, presets: Mapping[str, Any],
                 seed: int) -> dict[str, Any]:
    """Decoding settings of a template, with the model's cap on new tokens where it sets one."""
    max_new_tokens = template.generation.max_new_tokens
    cap = model.max_new_tokens if model is not None else None
    if cap:
        max_new_tokens = min(max_new_tokens, cap)
    generation = {"max_new_tokens": max_new_tokens, "stop": list(template.generation.stop)}
    preset = presets.get(template.generation.decoding, {}) if template.mode == "generate" else {}
    return decoding_settings(template.mode, generation, preset, seed)


def metric_entries(names: tuple[str, ...]) -> tuple[MetricEntry, ...]:
    """The metrics a combination reports, each with its scale, direction, headline role and bootstrap, as the
    registry declares them (``babeleval.score.metrics``)."""
    headline = headline_metric(names)
    return tuple(MetricEntry(name=metric.name, scale=metric.scale, higher_is_better=metric.higher_is_better,
                             headline=metric.name == headline, bootstrap=metric.resampling.bootstrap,
                             interval=metric.interval)
                 for metric in map(get_metric, names))


def metric_options(entry: TaskEntry, language: str) -> dict[str, Any]:
    """What a task's metrics need for one language: the task entry's settings, plus the language a reply is
    written in where its family's metrics need it (a translation's: BLEU's tokenizer depends on it,
    ``babeleval.score.bleu_tokenizers``)."""
    options = dict(entry.metric_options)
    task = get_task(entry.name)
    if get_family(task.FAMILY).target_language:
        options["target_language"] = task.target_language(language, entry.options)
    return options


def prompt_record(entry: TaskEntry, template_name: str, language: str, seed: int,
                  template: Template | None = None) -> PromptRecord:
    """The prompt record of one (task, language, template) of a validated task entry.

    ``template``: a template outside the grid (a variant previewed or searched), resolved by the same rules.
    """
    task = get_task(entry.name)
    template = template or entry.templates[template_name]
    part, languages = exemplar_source(task, template, language)
    return PromptRecord(
        task=entry.name, language=language, template=template_name,
        data=prepared_file(entry.name, language),
        exemplar_part=part, exemplar_languages=languages,
        exemplar_files=tuple(prepared_file(entry.name, lang, part) for lang in languages),
        seed=seed, shuffle_seed=task.EVAL_SHUFFLE_SEED, limit=entry.limit, fewshot=template.fewshot,
        budget=next((plan for plan in entry.budgets.values() if template_name in plan.variants), None),
    )


def combination_record(model: str, model_config: ModelConfig, model_outputs: Mapping[str, Any], entry: TaskEntry,
                       prompts: PromptRecord, presets: Mapping[str, Any], seed: int) -> CombinationRecord:
    family = get_family(get_task(entry.name).FAMILY)
    template = entry.templates[prompts.template]
    return CombinationRecord(
        model=model, prompts=prompts, family=family.name, mode=template.mode,
        decoding=decoding_for(template, model_config, presets, seed),
        parser=template.parser,
        metrics=metric_entries(family.reported_metrics(template.mode, template.metrics)),
        metric_options=metric_options(entry, prompts.language),
        model_outputs=model_outputs,
    )


def resolve(models: Mapping[str, ModelConfig], tasks: Mapping[str, TaskEntry], presets: Mapping[str, Any],
            seed: int, runs: Mapping[str, Mapping[str, tuple[str, ...]]] | None = None
            ) -> tuple[dict[str, Mapping[str, Any]], dict[tuple[str, str, str], PromptRecord],
                       dict[tuple[str, str, str, str], CombinationRecord]]:
    """Each model's output settings, prompt records keyed (task, language, template) and combination records
    keyed (model, task, language, template), for every combination of the grid (``runs``: model -> task -> the
    templates it runs, ``babeleval.grid.holes``; None: all of them)."""
    outputs = {model: output_settings(config) for model, config in models.items()}
    prompts = {(entry.name, language, name): prompt_record(entry, name, language, seed)
               for entry in tasks.values() for language in entry.languages for name in entry.templates}
    records = {}
    for model, config in models.items():
        for (task, language, name), record in prompts.items():
            if runs is None or name in runs[model].get(task, ()):
                records[model, task, language, name] = combination_record(model, config, outputs[model], tasks[task],
                                                                          record, presets, seed)
    return outputs, prompts, records
