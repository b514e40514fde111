# Summary tables for `dvc plots` and the Snakemake report: the leaderboard averaged per template and per language.


rule summary_tables:
    output:
        by_template=report(
            "results/tables/by_template.csv",
            caption="../report/by_template.rst",
            category="Leaderboard",
            labels={"table": "per template"},
        ),
        by_language=report(
            "results/tables/by_language.csv",
            caption="../report/by_language.rst",
            category="Leaderboard",
            labels={"table": "per language"},
        ),
    input:
        "results/leaderboard.csv",
    threads: CPU_THREADS
    resources:
        **CPU_RESOURCES,
    log:
        "results/logs/summary_tables.log",
    conda:
        "../../envs/cpu.yaml"
    script:
        "../scripts/summary_tables.py"
