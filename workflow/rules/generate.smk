# Generation: one GPU job per (model, task, template) covering all the task's languages, so a
# model loads once per job. Snakemake outputs cannot depend on wildcards, so each task gets its
# own rule with that task's languages spelled out. Model entries carry only the NAME of an API key's
# environment variable, so nothing secret reaches params (which Snakemake stores in .snakemake/metadata).

from babeleval.fingerprint import output_settings

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
            # a family's log-likelihood variants answered together first (variation.smk): then all cache hits
            shared_prefix=ancient(lambda w, task=_task.name: shared_prefix_input(w, task)),
        params:
            task=_task.name,
            languages=list(_task.languages),
            # a change to a model setting that changes outputs reruns the job and so rescores; the job reads the
            # whole entry from the config, so a speed-only change (batch size, concurrency) reruns nothing
            model_outputs=lambda w: output_settings(GRID.models[w.model]),
            model_path=lambda w: model_path(w.model),
            settings=lambda w, task=_task.name: generation_settings(task, w.template, w.model),
            cache=lambda w: f"results/cache/{w.model}.sqlite" if GRID.cache_enabled else None,
            # an API model's resource name: the job runs at most as many requests at once as it was granted
            api_resource=lambda w: api_resource(w.model),
        resources:
            # gpu=1 for hf/vllm; API models hold their endpoint's api_<host> resource instead (common.smk)
            **generation_resources(),
        log:
            f"results/logs/generate/{{model}}/{_task.name}/{{template}}.log",
        conda:
            generation_env
        script:
            "../scripts/generate.py"
