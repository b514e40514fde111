# The plan: every (model, task, language, template) the grid leaves out, and why (babeleval.grid.holes), as a
# file the leaderboard reads and a user can open; the planning process also prints it (common.smk).


localrules:
    plan_omitted,


# A script, not a `run:` block: Snakemake runs a `run:` job in a process that parses the whole workflow again
# (about 3 s), a script job in one that only imports what it uses.
rule plan_omitted:
    output:
        paths.PLAN_OMITTED,
    params:
        rows=grid_plan.omitted_file_rows(GRID),
    log:
        paths.log("plan_omitted"),
    conda:
        "../../envs/cpu.yaml"
    script:
        "../scripts/plan_omitted.py"
