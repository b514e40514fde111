# Rendering: canonical items + a template file -> the exact prompts a model will see (CPU).


rule render_prompts:
    output:
        PROMPTS,
    input:
        data=PREPARED,
        exemplars=exemplar_data,
        template=template_file,
    params:
        seed=lambda w: prompt_record(w).seed,
        limit=lambda w: prompt_record(w).limit,
        shuffle_seed=lambda w: prompt_record(w).shuffle_seed,
    threads: CPU_THREADS
    resources:
        **CPU_RESOURCES,
    log:
        "results/logs/render_prompts/{task}/{language}/{template}.log",
    conda:
        "../../envs/cpu.yaml"
    script:
        "../scripts/render_prompts.py"
