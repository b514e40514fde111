# Parsing and scoring: one CPU job per (model, task, language, template); never imports torch.


rule score:
    output:
        raw=RAW,
        scores=SCORES,
    input:
        # ancient(): see generation_identity() in common.smk.
        generations=ancient(GENERATIONS),
        prompts=PROMPTS,
        template=template_file,
    params:
        generation=generation_identity,
        metric_options=lambda w: GRID.tasks[w.task].metric_options,
    log:
        "results/logs/score/{model}/{task}/{language}/{template}.log",
    conda:
        "../../envs/cpu.yaml"
    script:
        "../scripts/score.py"
