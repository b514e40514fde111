# Generation: one GPU job per (model, task, template) covering all the task's languages, so a
# model loads once per job. Snakemake outputs cannot depend on wildcards, so each task gets its
# own rule with that task's languages spelled out. Model entries carry only the NAME of an API key's
# environment variable, so nothing secret reaches params (which Snakemake stores in .snakemake/metadata).

for _task in GRID.tasks.values():

    rule:
        name:
            f"generate_{_task.name}"
        output:
            generations=expand(GENERATIONS, task=_task.name, language=_task.languages, allow_missing=True),
            # requests, cache hits, tokens this run paid for; API calls and retries (see babeleval.generate)
            usage=USAGE.replace("{task}", _task.name),
        input:
            prompts=expand(PROMPTS, task=_task.name, language=_task.languages, allow_missing=True),
            model=model_input,
        params:
            task=_task.name,
            languages=list(_task.languages),
            model_spec=lambda w: GRID.models[w.model],
            model_path=lambda w: model_path(w.model),
            settings=lambda w, task=_task.name: generation_settings(task, w.template, w.model),
            cache=lambda w: f"results/cache/{w.model}.sqlite" if GRID.cache_enabled else None,
            # an API model's resource name: the job runs at most as many requests at once as it was granted
            api_resource=lambda w: api_resource(w.model),
        threads: generation_threads(_task.name)
        resources:
            # gpu=1 for hf/vllm; API models hold their endpoint's api_<host> resource instead (common.smk)
            **generation_resources(),
            # memory, time and CPUs: workflow/resources.yaml
            **generation_limits(_task.name),
        log:
            f"results/logs/generate/{{model}}/{_task.name}/{{template}}.log",
        conda:
            generation_env
        script:
            "../scripts/generate.py"
