# Aggregation: every scores file -> leaderboard tables and DVC metrics.


rule leaderboard:
    output:
        csv=report("results/leaderboard.csv", caption="../report/leaderboard.rst", category="Leaderboard"),
        md="results/leaderboard.md",
        metrics="results/metrics.json",
    input:
        scores=all_scores(),
        # per-item outcomes for the bootstrap intervals (ci_low, ci_high)
        raw=all_raw(),
    params:
        bootstrap={k: ANALYSIS[k] for k in ("seed", "confidence", "samples")},
    threads: CPU_THREADS
    resources:
        **CPU_RESOURCES,
    log:
        "results/logs/leaderboard.log",
    conda:
        "../../envs/cpu.yaml"
    script:
        "../scripts/leaderboard.py"
