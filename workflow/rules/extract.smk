# Extraction: where a template names an extractor model (`extractor:` in its file; off by default), that model reads
# the answer of the replies the rule parsers could not read, and of the ones they read, to measure agreement
# (babeleval.score.extraction). One job per (model, task, template), all languages, between the generation job and
# the scoring job; it asks the extractor (a generation-class job: its GPU, its environment, its response cache) with
# the fixed prompt prompts/extraction.yaml. Its outputs change only when the replies, the template, the prompt or the
# extractor's output settings do; the scoring job after it is CPU only.

for _task in GRID.tasks.values():
    _extracted = grid_rules.extracted_templates(GRID, _task.name)
    if not _extracted:
        continue

    rule:
        name:
            f"extract_{_task.name}"
        output:
            extractions=job_files(paths.EXTRACTIONS, _task, ["{template}"]),
            # the extractor's requests, cache hits and tokens: counted under its name in the run summary
            usage=paths.EXTRACTION_USAGE.format(model="{model}", task=_task.name, template="{template}"),
        input:
            generations=job_files(paths.GENERATIONS, _task, ["{template}"]),
            template=lambda w, task=_task.name: template_file(task, w.template),
            prompt=paths.EXTRACTION_PROMPT,
            model=lambda w, task=_task.name: grid_rules.model_input(GRID, extractor_of(task)(w)),
        wildcard_constraints:
            model=alternatives(grid_rules.extraction_models(GRID, _task.name)),
            template=alternatives(_extracted),
        params:
            task=_task.name,
            extractor=lambda w, task=_task.name: extractor_of(task)(w),
            # a change to the extractor's settings that change outputs reruns extraction and scoring, nothing else
            extractor_outputs=lambda w, task=_task.name: grid_rules.model_outputs(GRID, extractor_of(task)(w)),
            model_path=lambda w, task=_task.name: model_path(extractor_of(task)(w)),
            family=grid_rules.task_family(GRID, _task.name),
            decoding=lambda w, task=_task.name: grid_rules.extraction_settings(GRID, extractor_of(task)(w)),
            cache=lambda w, task=_task.name: (paths.CACHE.format(model=extractor_of(task)(w))
                                              if GRID.cache_enabled else None),
            api_resource=lambda w, task=_task.name: grid_rules.api_resource(GRID, extractor_of(task)(w)),
        threads: generation_threads(_task.name, extractor_of(_task.name))
        resources:
            **generation_resources(extractor_of(_task.name)),
            **generation_limits(_task.name, extractor_of(_task.name)),
        log:
            paths.log("extract", "{model}", _task.name, "{template}"),
        conda:
            lambda w, task=_task.name: generation_env(w, extractor_of(task))
        script:
            "../scripts/extract.py"
