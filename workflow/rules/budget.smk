# Budgeted variant sets (docs/variations.md section 6): each variant answered only its design's items; their
# estimates per (model, task, set, language), the cross-lingual sensitivity test on them, and the report's section.


rule variation_budget:
    output:
        table=paths.VARIATION_BUDGET,
        sensitivity=paths.VARIATION_BUDGET_SENSITIVITY,
        fragment=paths.BUDGET_SECTION,
    input:
        leaderboard=paths.LEADERBOARD_CSV,  # every outcome table, through the leaderboard
        # the items each variant would answer in full: the grid the designs were drawn from
        prepared=all_prepared(),
    params:
        outcomes=grid_rules.budgeted_files(GRID, paths.OUTCOMES),
        sets=grid_rules.budgeted_sets(GRID),
        settings=GRID.analysis.pick("seed", "confidence", "permutations", "language_groups"),
    threads: CPU_THREADS
    resources:
        **CPU_RESOURCES,
    log:
        paths.log("analysis", "variation_budget"),
    conda:
        "../../envs/cpu.yaml"
    script:
        "../scripts/variation_budget.py"
