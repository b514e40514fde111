"""What the rule files ask about the grid: the files a job reads, the model it loads, the resources it holds.

The rule files (``workflow/rules/*.smk``) import only the ``grid`` package; each of their input functions is
one call into here or into the grid's records, so no rule decides anything the package decides.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from ..analysis.figures import figure_targets as analysis_figures
from ..core import paths
from ..core.layout import job_pairs
from ..generate import gguf
from ..generate.backends import BackendType, get_backend
from ..generate.builtin_models import get_builtin
from ..prompts.variants import input_files
from ..score import extraction
from ..tasks import get_task
from ..tasks.lmeval import LmevalTask
from .records import Grid


def wildcard_values(grid: Grid) -> dict[str, set[str]]:
    """The values each wildcard of the rules takes in this grid (exemplar languages included)."""
    return {
        "model": set(grid.models),
        "task": set(grid.tasks),
        "language": ({language for task in grid.tasks.values() for language in task.languages}
                     | {language for record in grid.prompts.values() for language in record.exemplar_languages}),
        "template": {name for task in grid.tasks.values() for name in task.templates},
        "gguf": set(gguf_files(grid)),
    }


def combination_files(grid: Grid, pattern: str) -> list[str]:
    """``pattern`` filled in for every (model, task, language, template) of the grid."""
    return paths.combination_files(pattern, grid.combinations())


def prepared_files(grid: Grid) -> list[str]:
    """The prepared items of every (task, language) of the grid."""
    return sorted({record.data for record in grid.prompts.values()})


def template_files(grid: Grid, task: str, template: str) -> list[str]:
    """The files a template's prompts are made from (editing one rerenders them)."""
    return input_files(grid.tasks[task].templates[template])


def data_files(grid: Grid, task: str, language: str, part: str) -> list[str]:
    """The official files a (task, language) part is prepared from (none for a hub source)."""
    entry = grid.tasks[task]
    return [str(path) for path in get_task(task).files(entry.source, language, part=part, options=entry.options)]


def model_path(grid: Grid, model: str) -> str:
    """What a model's jobs load: a built model's directory, or the entry's hub id or directory."""
    return grid.models[model].model_path()


def model_input(grid: Grid, model: str) -> str | list[str]:
    """A builtin model is built by a rule, a GGUF file converted by one; a local directory is tracked as input; a
    hub id is fetched by the job."""
    config = grid.models[model]
    if config.builtin is not None or config.gguf_source() is not None:
        return model_path(grid, model)
    return config.model if Path(config.model).is_dir() else []


def builtin_inputs(builtin: str) -> list[str]:
    """The files a builtin model is built from (babeleval.generate.builtin_models): editing one rebuilds it."""
    return get_builtin(builtin).inputs(Path("."))


def gguf_files(grid: Grid) -> dict[str, str]:
    """The GGUF files the grid converts, by the ``{gguf}`` wildcard of their float copy's folder."""
    sources = {}
    for config in grid.models.values():
        source = config.gguf_source()
        if source is not None:
            sources[Path(source).name[: -len(gguf.SUFFIX)]] = str(Path(source).expanduser())
    return sources


def backend(grid: Grid, model: str) -> BackendType:
    """What a model's backend is (babeleval.generate.backends): its GPU, conda environment, API resource."""
    return get_backend(grid.models[model].backend)


def is_api_model(grid: Grid, model: str) -> bool:
    return backend(grid, model).calls_api


def api_resource(grid: Grid, model: str) -> str | None:
    """The Snakemake resource an API model's generation jobs hold (None for local models)."""
    return backend(grid, model).api_resource(grid.models[model]) if is_api_model(grid, model) else None


def api_concurrency(grid: Grid, model: str) -> int:
    """Requests an API model's job keeps in flight: the units of its resource it holds."""
    return grid.models[model].concurrency


def model_outputs(grid: Grid, model: str) -> dict[str, Any]:
    """The settings of a model that change its outputs, as its records hold them: a change reruns its jobs."""
    return dict(grid.model_outputs[model])


def generation_env(grid: Grid, model: str) -> str:
    """The conda environment of a model's generation jobs (relative to workflow/rules/): its backend's."""
    return f"../../{backend(grid, model).conda_env}"


def generation_settings(grid: Grid, model: str, task: str, template: str) -> dict[str, Any]:
    """Decoding settings of a (model, task, template), as its records hold them (the same for every language)."""
    return dict(grid.record(model, task, grid.tasks[task].languages[0], template).decoding)


def figure_targets(grid: Grid) -> list[str]:
    """Every figure of the report's tasks, over the templates the leaderboard shows (a budgeted variant has no
    score of its own there)."""
    return analysis_figures({name: {template: value for template, value in task.templates.items()
                                    if not is_budgeted(grid, name, template)} for name, task in grid.tasks.items()})


def local_vs_translated_outcomes(grid: Grid) -> list[str]:
    """The outcome tables of the tasks ``analysis.local_vs_translated`` pairs (the leaderboard's combinations)."""
    tasks = {task for pair in grid.analysis.local_vs_translated.items() for task in pair}
    return paths.combination_files(paths.OUTCOMES, [combo for combo in grid.combinations() if combo[1] in tasks
                                                    and not is_budgeted(grid, combo[1], combo[3])])


def task_formats(grid: Grid) -> dict[str, dict[str, dict[str, Any]]]:
    """task -> template -> how it asks its items (scoring mode, exemplars before each): the paired tasks' only.
    An lm-eval task's exemplars are in lm-eval's context (its ``num_fewshot``), not in the template."""
    tasks = {task for pair in grid.analysis.local_vs_translated.items() for task in pair}
    return {task: {name: {"mode": template.mode, "shots": _shots(grid, task, name)}
                   for name, template in grid.tasks[task].templates.items()} for task in sorted(tasks)}


def _shots(grid: Grid, task: str, template: str) -> int:
    """The exemplars before each item of a template: its prompt record's plan (the first language's, as every
    language's is the same), or an lm-eval task's own ``num_fewshot``."""
    language = grid.tasks[task].languages[0]
    if isinstance(get_task(task), LmevalTask):
        return get_task(task).shots(language)
    return grid.prompt_record(task, language, template).fewshot.n


def has_variants(grid: Grid) -> bool:
    """Whether the grid evaluates variants of a base template (then the report has a prompt-variation section)."""
    return any(template.variant is not None for task in grid.tasks.values() for template in task.templates.values())


def generation_groups(grid: Grid, task: str, granularity: str) -> list[tuple[list[str], list[str]]]:
    """(models, templates) of each set of a task's generation (and scoring) jobs that one rule can make.

    ``template`` granularity: one rule, a job per (model, template), every model that runs the task (the
    ``{template}`` wildcard: a model is asked only for the templates it runs). ``task``: a job per (model, task),
    whose files are spelled out, so models that run different templates of the task get rules of their own.
    """
    models = grid.models_of(task)
    if granularity != "task":
        return [(models, ["{template}"])]
    groups: dict[tuple[str, ...], list[str]] = {}
    for model in models:
        groups.setdefault(grid.templates_of(model, task), []).append(model)
    return [(members, list(templates)) for templates, members in groups.items()]


def job_files(pattern: str, task: str, languages: Sequence[str], templates: Sequence[str]) -> list[str]:
    """A job's files, in the order its job reads them (``babeleval.core.layout``); ``{model}`` and a
    ``"{template}"`` entry stay wildcards."""
    return [pattern.format(model="{model}", task=task, language=language, template=template)
            for template, language in job_pairs(templates, languages)]


def job_templates(templates: list[str], template: str | None) -> list[str]:
    """A job's templates: its ``{template}`` wildcard's (``template``), or the rule's list."""
    return [template] if templates == ["{template}"] else templates


def job_template_files(grid: Grid, task: str, templates: list[str]) -> list[str]:
    """The files a job's templates are made from (editing one reruns the job)."""
    return list(dict.fromkeys(path for name in templates for path in template_files(grid, task, name)))


def job_records(grid: Grid, model: str, task: str, templates: list[str]) -> list[dict[str, Any]]:
    """The resolved records of a job's combinations as JSON, in the order of its files (each template's languages)."""
    languages = grid.tasks[task].languages
    return [grid.record(model, task, language, name).as_json() for name in templates for language in languages]


def prompt_records(grid: Grid, task: str, template: str) -> list[dict[str, Any]]:
    """The prompt records of a (task, template) as JSON, one per language in the task's order."""
    return [grid.prompt_record(task, language, template).as_json() for language in grid.tasks[task].languages]


def render_priority(grid: Grid, task: str, template: str) -> int:
    """The scheduling priority of a (task, template)'s rendering job: the number of exemplars in each prompt, a
    stand-in for the job's length, so that the longest jobs start first. A job renders every item's prompt and its
    exemplars' turns, so a five-shot template takes several times a zero-shot one (at a full-size Belebele study on
    2 cores, `paper` 41 s against `instruct`'s 6 s); started last, behind a short job, the longest one alone set
    the phase's wall time."""
    return grid.prompt_record(task, grid.tasks[task].languages[0], template).fewshot.n


def exemplar_files(grid: Grid, task: str, template: str) -> list[str]:
    """Prepared data a (task, template)'s exemplars come from, over its languages (none for a zero-shot template)."""
    return list(dict.fromkeys(path for language in grid.tasks[task].languages
                              for path in grid.prompt_record(task, language, template).exemplar_files))


def budgeted_sets(grid: Grid) -> list[dict[str, Any]]:
    """Every (model, task, budgeted variant set) a model runs, as the budget table's step reads it
    (``babeleval.analysis.budget_table.BudgetedSet``)."""
    return [{"model": model, "task": task.name, "plan": plan.as_json(), "limit": task.limit,
             "shuffle_seed": grid.prompt_record(task.name, task.languages[0], plan.variants[0]).shuffle_seed,
             # the variants' headline metric (one: they share the base's metrics), validated right or wrong
             # per item by babeleval.grid.variants.check_outcome: the outcome the estimate models
             "metric": next(metric.name for metric in grid.record(model, task.name, task.languages[0],
                                                                  plan.variants[0]).metrics if metric.headline)}
            for model in grid.models for task in grid.tasks.values() for plan in task.budgets.values()
            if set(plan.variants) <= set(grid.templates_of(model, task.name))]


def is_budgeted(grid: Grid, task: str, template: str) -> bool:
    """Whether a template is a variant of a budgeted set (it answers a subset of the items)."""
    return any(template in plan.variants for plan in grid.tasks[task].budgets.values())


def budgeted_files(grid: Grid, pattern: str, budgeted: bool = True) -> list[str]:
    """``pattern`` filled in for the combinations of budgeted variants (``budgeted=False``: for every other)."""
    return paths.combination_files(pattern, [combo for combo in grid.combinations()
                                             if is_budgeted(grid, combo[1], combo[3]) == budgeted])


def has_budgets(grid: Grid) -> bool:
    """Whether the grid has a budgeted variant set (then the report shows its estimates)."""
    return any(task.budgets for task in grid.tasks.values())


def usage_files(grid: Grid) -> list[str]:
    """The usage file of every (model, task, template) generation of the grid (the report's planning section)."""
    jobs = sorted({(model, task, template) for model, task, _, template in grid.combinations()})
    return [paths.USAGE.format(model=model, task=task, template=template) for model, task, template in jobs]


def prices(grid: Grid) -> dict[str, dict[str, float] | None]:
    """Each model's prices per million tokens, where its entry gives them (API models)."""
    return {name: getattr(config, "prices", None) for name, config in grid.models.items()}


# -- the extractor model (babeleval.score.extraction; workflow/rules/extract.smk) ----------------------------------


def extracted_templates(grid: Grid, task: str) -> list[str]:
    """The templates of a task that name an extractor model: each gets an extraction job per model running it."""
    return [name for name, template in grid.tasks[task].templates.items() if template.extractor is not None]


def extractor(grid: Grid, task: str, template: str) -> str | None:
    """The model a template names to extract answers, or None."""
    return grid.tasks[task].templates[template].extractor


def task_family(grid: Grid, task: str) -> str:
    """The family of a task (how its answers are read and judged)."""
    return get_task(task).FAMILY


def extraction_models(grid: Grid, task: str) -> list[str]:
    """The models whose replies to a task are read by an extractor (they run a template that names one)."""
    named = set(extracted_templates(grid, task))
    return [model for model in grid.models_of(task) if named & set(grid.templates_of(model, task))]


def extraction_files(grid: Grid, model: str, task: str, templates: list[str]) -> list[str | None]:
    """The extraction file of each combination of a scoring job, in the order of its files (each template's
    languages): None where the template names no extractor."""
    languages = grid.tasks[task].languages
    return [paths.EXTRACTIONS.format(model=model, task=task, language=language, template=name)
            if extractor(grid, task, name) else None for name in templates for language in languages]


def extraction_settings(grid: Grid, model: str) -> dict[str, Any]:
    """The extractor's decoding settings: the extraction prompt's, capped by the model entry's max_new_tokens."""
    return extraction.settings(extraction.load_prompt(), grid.models[model].max_new_tokens)
