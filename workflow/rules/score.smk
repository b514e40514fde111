# Parsing and scoring: one CPU job per (model, task, language, template); never imports torch.

from babeleval.scoring import metric_options_for


rule score:
    output:
        raw=RAW,
        scores=SCORES,
    input:
        # Not ancient(): Snakemake leaves out of its plan any job reached only through an ancient() input of a job it
        # reruns (a resumed run then stopped after the generation job, exit 0, nothing scored). A rerun generation
        # job rescores its combinations (CPU only, same bytes); the model is never asked again (response cache).
        generations=GENERATIONS,
        prompts=PROMPTS,
        template=template_file,
    params:
        metric_options=lambda w: metric_options_for(GRID.tasks[w.task], w.language),
    threads: CPU_THREADS
    resources:
        **CPU_RESOURCES,
    log:
        "results/logs/score/{model}/{task}/{language}/{template}.log",
    conda:
        "../../envs/cpu.yaml"
    script:
        "../scripts/score.py"
