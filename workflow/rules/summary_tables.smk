# Summary tables for `dvc plots` and the Snakemake report: the leaderboard averaged per template and per language.


rule summary_tables:
    output:
        by_template=report(
            paths.BY_TEMPLATE,
            caption="../report/by_template.rst",
            category="Leaderboard",
            labels={"table": "per template"},
        ),
        by_language=report(
            paths.BY_LANGUAGE,
            caption="../report/by_language.rst",
            category="Leaderboard",
            labels={"table": "per language"},
        ),
    input:
        paths.LEADERBOARD_CSV,
    threads: CPU_THREADS
    resources:
        **CPU_RESOURCES,
    log:
        paths.log("summary_tables"),
    conda:
        "../../envs/cpu.yaml"
    script:
        "../scripts/summary_tables.py"
