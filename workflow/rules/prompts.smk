# Rendering: canonical items + a template file -> the exact prompts a model will see (CPU).


rule render_prompts:
    output:
        paths.PROMPTS,
    input:
        data=paths.PREPARED,
        exemplars=exemplar_data,
        template=template_file,
    params:
        # the prompt record: items and exemplar pool, seeds, item limit and few-shot plan (babeleval.prompts.record)
        record=lambda w: prompt_record(w).as_json(),
    threads: CPU_THREADS
    resources:
        **CPU_RESOURCES,
    log:
        paths.log("render_prompts", "{task}", "{language}", "{template}"),
    conda:
        "../../envs/cpu.yaml"
    script:
        "../scripts/render_prompts.py"
