# Dataset preparation: official files or hub datasets -> canonical items, one file per (task, language).


rule prepare_data:
    output:
        PREPARED,
    input:
        local_data_file,
    params:
        source=lambda w: GRID.tasks[w.task].source,
    log:
        "results/logs/prepare_data/{task}/{language}.log",
    conda:
        "../../envs/cpu.yaml"
    script:
        "../scripts/prepare_data.py"
