# Rendering: canonical items + a template file -> the exact prompts a model will see (CPU).


rule render_prompts:
    output:
        PROMPTS,
    input:
        data=PREPARED,
        exemplars=exemplar_data,
        template=template_file,
    params:
        seed=GRID.seed,
        limit=lambda w: GRID.tasks[w.task].limit,
    log:
        "results/logs/render_prompts/{task}/{language}/{template}.log",
    conda:
        "../../envs/cpu.yaml"
    script:
        "../scripts/render_prompts.py"
