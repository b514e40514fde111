# Parsing and scoring: one CPU job per (model, task, language, template); never imports torch.

from babeleval.scoring import metric_options_for


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
        metric_options=lambda w: metric_options_for(GRID.tasks[w.task], w.language),
    log:
        "results/logs/score/{model}/{task}/{language}/{template}.log",
    conda:
        "../../envs/cpu.yaml"
    script:
        "../scripts/score.py"
