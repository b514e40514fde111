# Parsing and scoring: one CPU job per generation job (generate.smk), scoring each of its combinations in one
# process (a process per combination spent most of its time starting up). Each combination keeps its own raw and
# scores files; an edited template reruns its render, generation and scoring jobs only. Never imports torch.

for _task in GRID.tasks.values():
    for _group, (_models, _templates) in enumerate(generation_groups(_task.name)):

        rule:
            name:
                job_rule_name("score", _task.name, _group)
            output:
                raw=job_files(paths.RAW, _task, _templates),
                scores=job_files(paths.SCORES, _task, _templates),
                # the per-item outcomes every analysis step reads (babeleval.score.outcomes), versioned with the scores
                outcomes=job_files(paths.OUTCOMES, _task, _templates),
            input:
                # Not ancient(): Snakemake leaves out of its plan any job reached only through an ancient() input of a
                # job it reruns (a resumed run then stopped after the generation job, exit 0, nothing scored). A rerun
                # generation job rescores its combinations (CPU only, same bytes); the model is never asked again.
                generations=job_files(paths.GENERATIONS, _task, _templates),
                template=lambda w, task=_task.name, templates=_templates: job_template_files(w, task, templates),
                # an extractor model's readings, where a template names one (extract.smk)
                extractions=lambda w, task=_task.name, templates=_templates: [
                    path for path in job_extractions(w, task, templates) if path],
            wildcard_constraints:
                model=alternatives(_models),
            params:
                # the prompts each generations file answered (their SHA-256 goes into the provenance): not inputs, as
                # the generations are made from them (an edited prompt reruns the generation job, so this one)
                prompts=job_files(paths.PROMPTS, _task, _templates),
                # what ran, resolved once at validation (babeleval.grid.resolve), one record per combination in the
                # order of the files: its metrics and what they need; written into its scores file's provenance
                records=lambda w, task=_task.name, templates=_templates: job_records(w, task, templates),
                # the task's source and options as validation made its entry (babeleval.grid.records.TaskEntry), for
                # the provenance's dataset: what the data was prepared from (data.smk's params)
                source=_task.source,
                task_options=_task.options,
                # each combination's extraction file, in the order of the files, or None (the inputs above)
                extractions=lambda w, task=_task.name, templates=_templates: job_extractions(w, task, templates),
            threads: CPU_THREADS
            resources:
                **CPU_RESOURCES,
            log:
                job_log("score", _task.name, _templates),
            conda:
                "../../envs/cpu.yaml"
            script:
                "../scripts/score.py"
