# Rendering: canonical items + a template file -> the exact prompts a model will see (CPU). One job per
# (task, template) renders every language: an edited template rerenders its own prompts only.

for _task in GRID.tasks.values():

    rule:
        name:
            f"render_prompts_{_task.name}"
        output:
            job_files(paths.PROMPTS, _task, ["{template}"]),
        input:
            data=[paths.PREPARED.format(task=_task.name, language=language) for language in _task.languages],
            exemplars=lambda w, task=_task.name: exemplar_data(task, w.template),
            template=lambda w, task=_task.name: template_file(task, w.template),
        params:
            # each language's prompt record: items and exemplar pool, seeds, item limit and few-shot plan
            # (babeleval.prompts.record), in the order of the outputs
            records=lambda w, task=_task.name: prompt_records(task, w.template),
        # the longest rendering jobs first: a few-shot template's renders several prompts an item (a callable
        # priority needs snakemake 9.17, the lower bound in pyproject.toml)
        priority: lambda w, task=_task.name: render_priority(task, w.template)
        threads: CPU_THREADS
        resources:
            **CPU_RESOURCES,
        log:
            paths.log("render_prompts", _task.name, "{template}"),
        conda:
            "../../envs/cpu.yaml"
        script:
            "../scripts/render_prompts.py"
