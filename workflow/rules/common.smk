# The grid, wildcard constraints, input functions and resources shared by the rule files.
# Everything is read from the grid package (babeleval.grid), the only package these files import; each
# input function below is one call into it, so that no rule decides what the package decides.

import functools
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(workflow.basedir) / "workflow"))

from babeleval.grid import paths, plan as grid_plan, resources as resource_table, rules as grid_rules


def _run_cap(name):
    """A cap the run was given (--cores, `--resources mem_mb=`), or None: each job asks for at most that."""
    value = workflow.global_resources.get(name)
    value = getattr(value, "value", value)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


# The run's plan (babeleval.grid.plan.start): params.yaml validated against workflow/schemas/params.schema.yaml
# into the grid, templates, parsers, presets and local data files checked; in the process that plans the run,
# local datasets read and each template rendered on a real item, API keys' variables, chat templates, local
# models, GGUF files and every generation job's resources checked. A bad grid stops here, before any job (so
# before any model is built or loaded). Jobs re-read this file on a cluster; they skip the checks.
PLANNED = grid_plan.start(config, resources=Path(workflow.basedir) / grid_plan.RESOURCE_TABLE,
                          main_process=workflow.is_main_process, max_cores=_run_cap("_cores"),
                          max_mem_mb=_run_cap("mem_mb"))
GRID = PLANNED.grid


def alternatives(values):
    return "|".join(sorted(re.escape(v) for v in values))


_WILDCARDS = grid_rules.wildcard_values(GRID)


wildcard_constraints:
    model=alternatives(_WILDCARDS["model"]),
    task=alternatives(_WILDCARDS["task"]),
    language=alternatives(_WILDCARDS["language"]),
    template=alternatives(_WILDCARDS["template"]),
    builtin="[A-Za-z0-9._-]+",
    gguf=alternatives(_WILDCARDS["gguf"]) or "[A-Za-z0-9._-]+",


# The leaderboard and every analysis step read all of these: listed once
_ALL_SCORES = grid_rules.combination_files(GRID, paths.SCORES)
_ALL_OUTCOMES = grid_rules.combination_files(GRID, paths.OUTCOMES)


def all_scores():
    return _ALL_SCORES


def all_outcomes():
    return _ALL_OUTCOMES


def all_prepared():
    return grid_rules.prepared_files(GRID)


# -- input functions and params ----------------------------------------------------------------


def template_file(task, template):
    """The template's file; for a variant with an instruction, also the phrase table its text comes from."""
    return grid_rules.template_files(GRID, task, template)


def local_data_file(wildcards):
    """The official files a local source reads, so editing one reruns preparation; none for hub sources."""
    return grid_rules.data_files(GRID, wildcards.task, wildcards.language, "eval")


def local_fewshot_file(wildcards):
    """The official files exemplars are read from (JGLUE's train split)."""
    return grid_rules.data_files(GRID, wildcards.task, wildcards.language, "fewshot")


def prompt_records(task, template):
    """The prompt records of a (task, template), one per language (babeleval.prompts.record.PromptRecord)."""
    return grid_rules.prompt_records(GRID, task, template)


def render_priority(task, template):
    """Rendering jobs start longest first (babeleval.grid.rules.render_priority)."""
    return grid_rules.render_priority(GRID, task, template)


def exemplar_data(task, template):
    """Prepared data the template's exemplars come from (none for a zero-shot template): its prompt records' pools."""
    return grid_rules.exemplar_files(GRID, task, template)


def model_path(name):
    return grid_rules.model_path(GRID, name)


def model_input(wildcards):
    """A builtin model is built by a rule; a local directory is tracked as input; a hub id is fetched by the job."""
    return grid_rules.model_input(GRID, wildcards.model)


def the_model(wildcards):
    """The model a generation job asks: its {model} wildcard's (an extraction job passes its extractor instead)."""
    return wildcards.model


def generation_resources(model_of=the_model):
    """GPUs (babeleval.grid.resources: the model's); for an API model, its endpoint's resource, one unit per
    request in flight. ``model_of``: wildcards -> the model the job asks.

    ``snakemake --resources gpu=1 api_openrouter_ai=8`` then keeps at most 8 requests in flight to that
    endpoint over the whole run, however many jobs run at once. A resource not named on the command line is
    not limited.
    """
    resources = {"gpu": lambda w: generation_request(model_of(w), None)["gpu"]}
    for name in sorted({grid_rules.api_resource(GRID, m) for m in GRID.models} - {None}):
        resources[name] = lambda w, name=name: (
            grid_rules.api_concurrency(GRID, model_of(w)) if grid_rules.api_resource(GRID, model_of(w)) == name
            else 0)
    return resources


# -- resources: workflow/resources.yaml, capped at one node (docs/cluster.md) ------------------------------

RESOURCE_TABLE = PLANNED.resource_table


def job_resources(kind):
    return resource_table.for_job(RESOURCE_TABLE, kind, max_cores=_run_cap("_cores"), max_mem_mb=_run_cap("mem_mb"))


@functools.cache
def generation_request(model, task):
    """What a generation job of (model, task) asks for (babeleval.grid.plan.generation_request)."""
    return grid_plan.generation_request(GRID, RESOURCE_TABLE, config, model, task, max_cores=_run_cap("_cores"),
                                        max_mem_mb=_run_cap("mem_mb"))


# What one generation job covers: one (model, task, template), or one (model, task) (generate.smk).
GENERATION_JOB = PLANNED.granularity

# The planning process says what the grid leaves out (a model's own `tasks:`, a template its backend cannot
# answer) and, for a big grid, its size and cost, before any job starts.
for _line in PLANNED.lines:
    print(_line, file=sys.stderr)


def generation_groups(task):
    """(models, templates) of each rule making a task's generation and scoring jobs (babeleval.grid.rules)."""
    return grid_rules.generation_groups(GRID, task, GENERATION_JOB)


def job_rule_name(kind, task, group):
    """generate_<task>, score_<task>; a task whose models run different templates in task-sized jobs gets
    generate_<task>_1, ... for the second set of models on."""
    return f"{kind}_{task}" + (f"_{group}" if group else "")


def job_templates(wildcards, templates):
    """The templates of one generation or scoring job: its {template} wildcard's, or the rule's list."""
    return grid_rules.job_templates(templates, wildcards.get("template"))


def job_files(pattern, task, templates):
    """A job's files: each template's languages in turn ({model}, and a "{template}" entry, stay wildcards)."""
    return grid_rules.job_files(pattern, task.name, task.languages, templates)


def job_template_files(wildcards, task, templates):
    """The template files of a job's templates (editing one reruns it)."""
    return grid_rules.job_template_files(GRID, task, job_templates(wildcards, templates))


def job_records(wildcards, task, templates):
    """The resolved records of a job's combinations, in the order of its files (babeleval.grid.records)."""
    return grid_rules.job_records(GRID, wildcards.model, task, job_templates(wildcards, templates))


def job_log(kind, task, templates):
    """A job's log: per (model, task) for task-sized jobs, per (model, task, template) else."""
    if templates == ["{template}"]:
        return paths.log(kind, "{model}", task, "{template}")
    return paths.log(kind, "{model}", task)


# Every CPU rule: `threads: CPU_THREADS` and `resources: **CPU_RESOURCES`.
CPU_THREADS = job_resources("cpu")["threads"]
CPU_RESOURCES = {k: v for k, v in job_resources("cpu").items() if k != "threads"}
BUILD_MODEL_RESOURCES = {k: v for k, v in job_resources("build_model").items() if k != "threads"}


def generation_limits(task, model_of=the_model):
    """CPUs, memory and time of a task's generation jobs, from the model they run."""
    return {key: (lambda w, key=key: generation_request(model_of(w), task).get(key, 0))
            for key in ("mem_mb", "runtime", "cpus_per_gpu")}


def generation_threads(task, model_of=the_model):
    """Threads of a job without GPU (a GPU job's CPUs are cpus_per_gpu)."""
    return lambda w: generation_request(model_of(w), task).get("threads", 1)


def generation_env(wildcards, model_of=the_model):
    """The conda environment of a model's generation jobs: vLLM and API clients need their own."""
    return grid_rules.generation_env(GRID, model_of(wildcards))


def generation_settings(task, template_name, model):
    """Decoding settings of a (model, task, template), as its records hold them (the same for every language)."""
    return grid_rules.generation_settings(GRID, model, task, template_name)


def extractor_of(task):
    """wildcards -> the extractor model the {template} of a task names (extract.smk)."""
    return lambda w: grid_rules.extractor(GRID, task, w.template)


def job_extractions(wildcards, task, templates):
    """The extraction file of each combination of a scoring job, in the order of its files (None where the template
    names no extractor)."""
    return grid_rules.extraction_files(GRID, wildcards.model, task, job_templates(wildcards, templates))


def analysis_table(name):
    """An analysis table of the report (analysis.smk)."""
    return paths.ANALYSIS.format(name=name)


def report_sections(wildcards):
    """The report's sections of its own: prompt variation, where the grid has variants of a base template; the
    budgeted sets', where it has any (budget.smk); translated against local tests, where the grid pairs tasks."""
    return (([paths.VARIATION_SECTION] if grid_rules.has_variants(GRID) else [])
            + ([paths.BUDGET_SECTION] if grid_rules.has_budgets(GRID) else [])
            + ([paths.LOCAL_VS_TRANSLATED_SECTION] if GRID.analysis.local_vs_translated else []))
