# Grid, wildcard constraints and input functions shared by the rule files.

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(workflow.basedir) / "workflow"))

from babeleval.config import validate as validate_params
from babeleval.fingerprint import digest
from babeleval.generate import decoding_settings

# Validates params.yaml against workflow/schemas/params.schema.yaml and checks that
# templates, parsers, presets and local data files exist: a bad grid stops here, before any job.
GRID = validate_params(config, source_file="params.yaml")


def alternatives(values):
    return "|".join(sorted(re.escape(v) for v in values))


wildcard_constraints:
    model=alternatives(GRID.models),
    task=alternatives(GRID.tasks),
    language=alternatives({lang for t in GRID.tasks.values() for lang in t.languages}
                          | {lang for t in GRID.tasks.values() for n in t.templates for lang in t.fewshot_languages(n)}),
    template=alternatives({name for t in GRID.tasks.values() for name in t.templates}),
    builtin="[A-Za-z0-9._-]+",


# -- paths -------------------------------------------------------------------------------------

PREPARED = "data/prepared/{task}/{language}.jsonl"
PROMPTS = "results/prompts/{task}/{language}/{template}.jsonl"
GENERATIONS = "results/generations/{model}/{task}/{language}/{template}.jsonl"
RAW = "results/raw/{model}/{task}/{language}/{template}.jsonl"
SCORES = "results/scores/{model}/{task}/{language}/{template}.json"


def all_scores():
    return [
        SCORES.format(model=m, task=t, language=lang, template=tpl)
        for m, t, lang, tpl in GRID.combinations()
    ]


def all_raw():
    return [
        RAW.format(model=m, task=t, language=lang, template=tpl)
        for m, t, lang, tpl in GRID.combinations()
    ]


def all_prepared():
    return sorted({PREPARED.format(task=t, language=lang) for _, t, lang, _ in GRID.combinations()})


PLOT_NAMES = ["heatmap", "template_spread", "parse_failures"]


def all_plots():
    return expand("results/plots/{task}/{name}.png", task=sorted(GRID.tasks), name=PLOT_NAMES)


# Analysis settings (params.yaml `analysis`, all optional): bootstrap intervals and significance tests.
ANALYSIS = {
    "seed": GRID.seed,
    "confidence": config.get("analysis", {}).get("confidence", 0.95),
    "samples": config.get("analysis", {}).get("bootstrap_samples", 1000),
    "alpha": config.get("analysis", {}).get("alpha", 0.05),
    "pivot_language": config.get("analysis", {}).get("pivot_language", "eng_Latn"),
}


# -- input functions and params ----------------------------------------------------------------


def template_file(wildcards):
    return str(GRID.tasks[wildcards.task].templates[wildcards.template].path)


def local_data_file(wildcards):
    """The official file a local source reads, so editing it reruns preparation; none for hub sources."""
    task = GRID.tasks[wildcards.task]
    if task.source["kind"] != "local":
        return []
    from babeleval.tasks import get_task

    return str(get_task(task.name).local_file(task.source, wildcards.language))


def exemplar_data(wildcards):
    """Prepared data the template's exemplars come from: the item's own language unless it names another."""
    languages = GRID.tasks[wildcards.task].fewshot_languages(wildcards.template) or [wildcards.language]
    return [PREPARED.format(task=wildcards.task, language=lang) for lang in languages]


def model_path(name):
    spec = GRID.models[name]
    return f"results/models/{spec['builtin']}" if "builtin" in spec else spec["model"]


def model_input(wildcards):
    """A builtin model is built by a rule; a local directory is tracked as input; a hub id is fetched by the job."""
    spec = GRID.models[wildcards.model]
    if "builtin" in spec:
        return model_path(wildcards.model)
    return spec["model"] if Path(spec["model"]).is_dir() else []


def generation_settings(task, template_name):
    template = GRID.tasks[task].templates[template_name]
    generation = {"max_new_tokens": template.generation.max_new_tokens, "stop": list(template.generation.stop)}
    preset = GRID.decoding.get(template.generation.decoding, {}) if template.mode == "generate" else {}
    return decoding_settings(template.mode, generation, preset, GRID.seed)


def generation_identity(wildcards):
    """What decides a generations file besides its prompts: the model entry and the decoding settings.

    The score rule reads generations as ancient() (so that a GPU job rerun for a new language does not
    rescore the languages it only re-read from the cache); this param makes any change of model or
    decoding rescore all the same.
    """
    settings = generation_settings(wildcards.task, wildcards.template)
    return digest({"model": GRID.models[wildcards.model], "settings": settings})
