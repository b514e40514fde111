"""One resolved specification per (model, task, language, template): what runs, decided once.

Validation of params.yaml (``babeleval.config``) resolves every combination of the grid into a
``CombinationSpec``: the prepared files its prompts are rendered from and its exemplars are drawn
from, the seeds, the decoding settings, the parser, the metrics, and the model settings that decide
its outputs. Rules, scripts, ``show`` and provenance read these records; none decides any of it again
from params.yaml or a task's attributes. The record is written into the combination's scores file
(``provenance.spec``), so what ran is on record next to its numbers.

The rules that make a decision live here as small pure functions (``exemplar_source``, ``decoding_for``,
``metric_specs``), so that a template outside the grid (a variant previewed with ``show``, or tried by
``search``) is resolved by the same code.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Mapping

from ..generate.backends.config import ModelConfig
from ..tasks.families import get_family

PREPARED = "data/prepared/{task}/{language}.jsonl"
PREPARED_FEWSHOT = "data/prepared/{task}/fewshot/{language}.jsonl"


@dataclass(frozen=True)
class MetricSpec:
    """A metric as reported: its scale, which way is better, whether it is the headline, how it is bootstrapped."""

    name: str
    scale: str  # "0-1" (stored as a share, shown as percent) or "0-100"
    higher_is_better: bool
    headline: bool  # the combination's headline number (analysis.units.primary_metric)
    bootstrap: str  # "corpus": resampled from sacrebleu statistics; "items": resampled per item


@dataclass(frozen=True)
class PromptSpec:
    """What rendering the prompts of a (task, language, template) reads: independent of the model."""

    task: str
    language: str
    template: str
    data: str  # the prepared items
    # where exemplars come from: None for a zero-shot template; "fewshot" for the task's own exemplar
    # split (JGLUE: train); "eval" for the evaluated rows of the exemplar language
    exemplar_part: str | None
    exemplar_languages: tuple[str, ...]
    exemplar_files: tuple[str, ...]  # prepared files of the exemplar pool
    seed: int  # exemplar sampling
    shuffle_seed: int | None  # the protocol's shuffle of the evaluated items before the limit
    limit: int | None


@dataclass(frozen=True)
class CombinationSpec:
    """Everything that decides the numbers of one (model, task, language, template)."""

    model: str
    prompts: PromptSpec
    family: str
    mode: str
    decoding: Mapping[str, Any]  # the generation job's settings (babeleval.generate.decoding_settings)
    parser: str | None
    metrics: tuple[MetricSpec, ...]
    metric_options: Mapping[str, Any]  # what the metrics need (BLEU's target language, the SentencePiece model)
    model_outputs: Mapping[str, Any]  # the model settings that change outputs (babeleval.fingerprint)

    @property
    def task(self) -> str:
        return self.prompts.task

    @property
    def language(self) -> str:
        return self.prompts.language

    @property
    def template(self) -> str:
        return self.prompts.template

    def as_json(self) -> dict[str, Any]:
        """The record as plain JSON types (tuples as lists), as written into the scores file."""
        record = asdict(self)
        record["decoding"], record["metric_options"] = dict(self.decoding), dict(self.metric_options)
        record["model_outputs"] = dict(self.model_outputs)
        return _plain(record)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


# -- the decisions -------------------------------------------------------------------------------------


def exemplar_source(task, template, language: str) -> tuple[str | None, tuple[str, ...]]:
    """The part and languages a template's exemplars are drawn from for items of ``language``.

    None and no language for a zero-shot template. Else the task's exemplar split where it has one
    (``Task.FEWSHOT_PART``), the evaluated rows where it does not; of the item's own language unless the
    template names another (``fewshot.language``).
    """
    if not template.fewshot.n:
        return None, ()
    return ("fewshot" if task.FEWSHOT_PART else "eval"), (template.fewshot.language or language,)


def prepared_file(task: str, language: str, part: str = "eval") -> str:
    return (PREPARED_FEWSHOT if part == "fewshot" else PREPARED).format(task=task, language=language)


def decoding_for(template, model: ModelConfig | None, presets: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """Decoding settings of a template, with the model's cap on new tokens where it sets one."""
    from ..generate.job import decoding_settings

    max_new_tokens = template.generation.max_new_tokens
    cap = model.max_new_tokens if model is not None else None
    if cap:
        max_new_tokens = min(max_new_tokens, cap)
    generation = {"max_new_tokens": max_new_tokens, "stop": list(template.generation.stop)}
    preset = presets.get(template.generation.decoding, {}) if template.mode == "generate" else {}
    return decoding_settings(template.mode, generation, preset, seed)


def metric_specs(names: tuple[str, ...]) -> tuple[MetricSpec, ...]:
    """The metrics a combination reports, each with its scale, direction, headline role and bootstrap."""
    from ..analysis.bootstrap import CORPUS_METRICS
    from ..analysis.units import PARSE_FAILURE_RATE, PERCENT_METRICS, primary_metric

    headline = primary_metric(names)
    return tuple(MetricSpec(name=name, scale="0-1" if name in PERCENT_METRICS else "0-100",
                            higher_is_better=name != PARSE_FAILURE_RATE, headline=name == headline,
                            bootstrap="corpus" if name in CORPUS_METRICS else "items") for name in names)


# -- resolving a grid ----------------------------------------------------------------------------------


def prompt_spec(task_spec, template_name: str, language: str, seed: int, template=None) -> PromptSpec:
    """The prompt record of one (task, language, template) of a validated task entry (``config.TaskSpec``).

    ``template``: a template outside the grid (a variant previewed or searched), resolved by the same rules.
    """
    from ..tasks import get_task

    task = get_task(task_spec.name)
    template = template or task_spec.templates[template_name]
    part, languages = exemplar_source(task, template, language)
    return PromptSpec(
        task=task_spec.name, language=language, template=template_name,
        data=prepared_file(task_spec.name, language),
        exemplar_part=part, exemplar_languages=languages,
        exemplar_files=tuple(prepared_file(task_spec.name, lang, part) for lang in languages),
        seed=seed, shuffle_seed=task.EVAL_SHUFFLE_SEED, limit=task_spec.limit,
    )


def combination_spec(model: str, model_config: ModelConfig, task_spec, prompts: PromptSpec,
                     presets: Mapping[str, Any], seed: int) -> CombinationSpec:
    from ..generate.fingerprint import output_settings
    from ..score.job import metric_options_for
    from ..tasks import get_task

    family = get_family(get_task(task_spec.name).FAMILY)
    template = task_spec.templates[prompts.template]
    return CombinationSpec(
        model=model, prompts=prompts, family=family.name, mode=template.mode,
        decoding=decoding_for(template, model_config, presets, seed),
        parser=template.parser,
        metrics=metric_specs(family.reported_metrics(template.mode, template.metrics)),
        metric_options=metric_options_for(task_spec, prompts.language),
        model_outputs=output_settings(model_config),
    )


def resolve(models: Mapping[str, ModelConfig], tasks: Mapping[str, Any], presets: Mapping[str, Any],
            seed: int) -> tuple[dict[tuple[str, str, str], PromptSpec], dict[tuple[str, str, str, str], CombinationSpec]]:
    """Prompt records keyed (task, language, template) and combination records keyed (model, task, language,
    template), for every combination of the grid."""
    prompts = {(task.name, language, name): prompt_spec(task, name, language, seed)
               for task in tasks.values() for language in task.languages for name in task.templates}
    combinations = {(model, task, language, name): combination_spec(model, config, tasks[task], record, presets, seed)
                    for model, config in models.items() for (task, language, name), record in prompts.items()}
    return prompts, combinations
