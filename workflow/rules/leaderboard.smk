# The leaderboard: every scores file -> leaderboard tables and DVC metrics.


rule leaderboard:
    output:
        csv=report(paths.LEADERBOARD_CSV, caption="../report/leaderboard.rst", category="Leaderboard"),
        md=paths.LEADERBOARD_MD,
        metrics=paths.METRICS_JSON,
        headline=paths.HEADLINE_JSON,
    input:
        scores=all_scores(),
        # what the grid leaves out and why: a table of its own in leaderboard.md, so a missing cell is never blank
        omitted=paths.PLAN_OMITTED,
    params:
        # per-item outcomes for the bootstrap intervals (ci_low, ci_high): each written by the job that writes its
        # scores file, so not inputs of their own (a big grid's plan matched every file to its producer)
        outcomes=all_outcomes(),
        settings=GRID.analysis.pick("seed", "confidence", "samples"),
    threads: CPU_THREADS
    resources:
        **CPU_RESOURCES,
    log:
        paths.log("leaderboard"),
    conda:
        "../../envs/cpu.yaml"
    script:
        "../scripts/leaderboard.py"
