# Grid, wildcard constraints and input functions shared by the rule files.

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(workflow.basedir) / "workflow"))

from babeleval.grid import resources as resource_table
from babeleval.generate.backends import get_backend
from babeleval.grid.params import check_local_data, validate as validate_params
from babeleval.generate.preflight import check_response_caches

# Validates params.yaml against workflow/schemas/params.schema.yaml and checks that
# templates, parsers, presets and local data files exist: a bad grid stops here, before any job.
GRID = validate_params(config, source_file="params.yaml")
# Local datasets are read and each template is rendered on a real item here, once, in the process that
# plans the run: a broken row or an undefined template variable stops the run before any job starts
# (so before any model is built or loaded). Jobs re-read this file on a cluster; they skip the check.
if workflow.is_main_process:
    check_local_data(GRID)
    check_response_caches(GRID.models if GRID.cache_enabled else (), "results/cache/{model}.sqlite")


def alternatives(values):
    return "|".join(sorted(re.escape(v) for v in values))


wildcard_constraints:
    model=alternatives(GRID.models),
    task=alternatives(GRID.tasks),
    language=alternatives({lang for t in GRID.tasks.values() for lang in t.languages}
                          | {lang for record in GRID.prompts.values() for lang in record.exemplar_languages}),
    template=alternatives({name for t in GRID.tasks.values() for name in t.templates}),
    builtin="[A-Za-z0-9._-]+",


# -- paths -------------------------------------------------------------------------------------

PREPARED = "data/prepared/{task}/{language}.jsonl"
PREPARED_FEWSHOT = "data/prepared/{task}/fewshot/{language}.jsonl"
PROMPTS = "results/prompts/{task}/{language}/{template}.jsonl"
GENERATIONS = "results/generations/{model}/{task}/{language}/{template}.jsonl"
USAGE = "results/usage/{model}/{task}/{template}.json"
RAW = "results/raw/{model}/{task}/{language}/{template}.jsonl"
SCORES = "results/scores/{model}/{task}/{language}/{template}.json"


def per_combination(pattern):
    """``pattern`` filled in for every (model, task, language, template) of the grid."""
    return [pattern.format(model=m, task=t, language=lang, template=tpl) for m, t, lang, tpl in GRID.combinations()]


def all_scores():
    return per_combination(SCORES)


def all_raw():
    return per_combination(RAW)


def all_prepared():
    return sorted({PREPARED.format(task=t, language=lang) for _, t, lang, _ in GRID.combinations()})


# Analysis settings (params.yaml `analysis`, all optional): bootstrap intervals and significance tests.
ANALYSIS = {
    "seed": GRID.seed,
    "confidence": config.get("analysis", {}).get("confidence", 0.95),
    "samples": config.get("analysis", {}).get("bootstrap_samples", 1000),
    "alpha": config.get("analysis", {}).get("alpha", 0.05),
    "pivot_language": config.get("analysis", {}).get("pivot_language", "eng_Latn"),
}


# -- input functions and params ----------------------------------------------------------------


def shared_prefix_input(wildcards, task):
    """The jobs that answered the job's variants' whole families in one pass, where the workflow has them
    (workflow/rules/variation.smk); generate.smk marks them ancient(), as only their having run matters.
    A job per template has a {template} wildcard; a job per task (generation_job: task) covers every template."""
    from babeleval.prompts.variants import shared_prefix_family

    if task not in globals().get("SHARED_PREFIX_TASKS", ()):  # set where variation.smk is included
        return []
    if not get_backend(GRID.models[wildcards.model].backend).shared_prefix:
        return []
    templates = [wildcards.template] if hasattr(wildcards, "template") else sorted(GRID.tasks[task].templates)
    families = {shared_prefix_family(GRID, task, template) for template in templates} - {None}
    return [f"results/usage/{wildcards.model}/{task}/shared_prefix/{family}.json" for family in sorted(families)]


def template_file(wildcards):
    """The template's file; for a variant with an instruction, also the phrase table its text comes from."""
    from babeleval.prompts.variants import input_files

    return input_files(GRID.tasks[wildcards.task].templates[wildcards.template])


def _local_files(wildcards, part):
    task = GRID.tasks[wildcards.task]
    if task.source["kind"] != "local":
        return []
    from babeleval.tasks import get_task

    files = get_task(task.name).local_files(task.source, wildcards.language, part=part, options=task.options)
    return [str(p) for p in files]


def local_data_file(wildcards):
    """The official files a local source reads, so editing one reruns preparation; none for hub sources."""
    return _local_files(wildcards, "eval")


def local_fewshot_file(wildcards):
    """The official files exemplars are read from (JGLUE's train split)."""
    return _local_files(wildcards, "fewshot")


def prompt_record(wildcards):
    """The resolved prompt record of a (task, language, template) (babeleval.grid.records.PromptSpec)."""
    return GRID.prompt_spec(wildcards.task, wildcards.language, wildcards.template)


def combination_record(wildcards):
    """The resolved record of a (model, task, language, template) (babeleval.grid.records.CombinationSpec)."""
    return GRID.spec(wildcards.model, wildcards.task, wildcards.language, wildcards.template)


def exemplar_data(wildcards):
    """Prepared data the template's exemplars come from (none for a zero-shot template): its prompt record's pool."""
    return list(prompt_record(wildcards).exemplar_files)


def model_path(name):
    return GRID.models[name].model_path()


def model_input(wildcards):
    """A builtin model is built by a rule; a local directory is tracked as input; a hub id is fetched by the job."""
    model = GRID.models[wildcards.model]
    if model.builtin is not None:
        return model_path(wildcards.model)
    return model.model if Path(model.model).is_dir() else []


def is_api_model(name):
    return get_backend(GRID.models[name].backend).calls_api


def api_resource(name):
    """The Snakemake resource an API model's generation jobs hold (None for local models)."""
    return get_backend(GRID.models[name].backend).api_resource(GRID.models[name]) if is_api_model(name) else None


def generation_resources():
    """gpu=1 for local backends; for an API model, its endpoint's resource, one unit per request in flight.

    ``snakemake --resources gpu=1 api_openrouter_ai=8`` then keeps at most 8 requests in flight to that
    endpoint over the whole run, however many jobs run at once. A resource not named on the command line is
    not limited.
    """
    resources = {"gpu": lambda w: 1 if get_backend(GRID.models[w.model].backend).gpu else 0}
    for name in sorted({api_resource(m) for m in GRID.models} - {None}):
        resources[name] = lambda w, name=name: GRID.models[w.model].concurrency if api_resource(w.model) == name else 0
    return resources


# -- resources: workflow/resources.yaml, capped at one node (docs/cluster.md) ------------------------------

RESOURCE_TABLE = resource_table.load(Path(workflow.basedir) / "workflow/resources.yaml")


def _run_cap(name):
    """A cap the run was given (--cores, `--resources mem_mb=`), or None: each job asks for at most that."""
    value = workflow.global_resources.get(name)
    value = getattr(value, "value", value)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def job_resources(kind, task=None):
    return resource_table.for_job(RESOURCE_TABLE, kind, task, max_cores=_run_cap("_cores"),
                                  max_mem_mb=_run_cap("mem_mb"))


# What one generation job covers: one (model, task, template), or one (model, task) (generate.smk).
GENERATION_JOB = resource_table.generation_job(RESOURCE_TABLE)


def job_files(pattern, task, templates):
    """A generation job's files: each template's languages in turn ({model}, and a "{template}" entry, stay wildcards)."""
    return [pattern.format(model="{model}", task=task.name, language=lang, template=t)
            for t in templates for lang in task.languages]


# Every CPU rule: `threads: CPU_THREADS` and `resources: **CPU_RESOURCES`.
CPU_THREADS = job_resources("cpu")["threads"]
CPU_RESOURCES = {k: v for k, v in job_resources("cpu").items() if k != "threads"}
BUILD_MODEL_RESOURCES = {k: v for k, v in job_resources("build_model").items() if k != "threads"}


def generation_limits(task):
    """CPUs, memory and time of a task's generation jobs: the GPU entry for local models, the API one else."""
    gpu, api = job_resources("generate_gpu", task), job_resources("generate_api", task)

    def pick(key):
        return lambda w: (api if is_api_model(w.model) else gpu).get(key, 0)
    return {"mem_mb": pick("mem_mb"), "runtime": pick("runtime"), "cpus_per_gpu": pick("cpus_per_gpu")}


def generation_threads(task):
    """Threads of an API model's job (a GPU job's CPUs are cpus_per_gpu)."""
    api = job_resources("generate_api", task)
    return lambda w: api.get("threads", 1) if is_api_model(w.model) else 1


def generation_env(wildcards):
    """The conda environment of a model's generation jobs: vLLM and API clients need their own."""
    return f"../../{get_backend(GRID.models[wildcards.model].backend).conda_env}"


def generation_settings(task, template_name, model):
    """Decoding settings of a (model, task, template), as its records hold them (the same for every language)."""
    return dict(GRID.spec(model, task, GRID.tasks[task].languages[0], template_name).decoding)


def variation_section(wildcards):
    """The prompt-variation section of the report (variation.smk), where the grid has variants of a template family."""
    has_variants = any(t.variant is not None for task in GRID.tasks.values() for t in task.templates.values())
    return [rules.variation_analysis.output.fragment] if has_variants else []
