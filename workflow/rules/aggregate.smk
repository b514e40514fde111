# Aggregation: every scores file -> leaderboard tables and DVC metrics.


rule leaderboard:
    output:
        csv="results/leaderboard.csv",
        md="results/leaderboard.md",
        metrics="results/metrics.json",
    input:
        all_scores(),
    log:
        "results/logs/leaderboard.log",
    conda:
        "../../envs/cpu.yaml"
    script:
        "../scripts/leaderboard.py"
