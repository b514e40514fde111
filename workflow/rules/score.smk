# Parsing and scoring: one CPU job per (model, task, language, template); never imports torch.


rule score:
    output:
        raw=paths.RAW,
        scores=paths.SCORES,
    input:
        # Not ancient(): Snakemake leaves out of its plan any job reached only through an ancient() input of a job it
        # reruns (a resumed run then stopped after the generation job, exit 0, nothing scored). A rerun generation
        # job rescores its combinations (CPU only, same bytes); the model is never asked again (response cache).
        generations=paths.GENERATIONS,
        prompts=paths.PROMPTS,
        template=template_file,
    params:
        # what ran, resolved once at validation (babeleval.grid.resolve): its metrics and what they need; written
        # into the scores file's provenance
        record=lambda w: combination_record(w).as_json(),
    threads: CPU_THREADS
    resources:
        **CPU_RESOURCES,
    log:
        paths.log("score", "{model}", "{task}", "{language}", "{template}"),
    conda:
        "../../envs/cpu.yaml"
    script:
        "../scripts/score.py"
