# Generation: one GPU job per (model, task, template) covering all the task's languages, so a
# model loads once per job. Snakemake outputs cannot depend on wildcards, so each task gets its
# own rule with that task's languages spelled out.

for _task in GRID.tasks.values():

    rule:
        name:
            f"generate_{_task.name}"
        output:
            expand(GENERATIONS, task=_task.name, language=_task.languages, allow_missing=True),
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
        resources:
            gpu=1,
        log:
            f"results/logs/generate/{{model}}/{_task.name}/{{template}}.log",
        conda:
            "../../envs/gpu.yaml"
        script:
            "../scripts/generate.py"
