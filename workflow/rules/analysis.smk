# Analysis: per-item outcome tables (results/outcomes, babeleval.score.outcomes) and the leaderboard -> tables,
# figures and one HTML report (CPU, no model).
# Settings come from params.yaml `analysis` (GRID.analysis: babeleval.analysis.settings).
# A step that reads every outcome table names them as params and waits for the leaderboard, written after every
# scoring job that writes them: it reruns when any of them changes, and the plan of a big grid does not match each file to its producer once
# per step (that matching dominated planning: bench/planning.py).


rule template_sensitivity:
    output:
        sensitivity=analysis_table("template_sensitivity"),
        ranks=analysis_table("rank_stability"),
    input:
        paths.LEADERBOARD_CSV,
    threads: CPU_THREADS
    resources:
        **CPU_RESOURCES,
    log:
        paths.log("analysis", "template_sensitivity"),
    conda:
        "../../envs/cpu.yaml"
    script:
        "../scripts/template_sensitivity.py"


rule significance:
    output:
        templates=analysis_table("significance_templates"),
        models=analysis_table("significance_models"),
    input:
        # every outcome table and scores file, through the leaderboard
        leaderboard=paths.LEADERBOARD_CSV,
    params:
        outcomes=all_outcomes(),
        scores=all_scores(),
        settings=GRID.analysis.pick("seed", "samples", "alpha", "confidence"),
    threads: CPU_THREADS
    resources:
        **CPU_RESOURCES,
    log:
        paths.log("analysis", "significance"),
    conda:
        "../../envs/cpu.yaml"
    script:
        "../scripts/significance.py"


rule parse_failures:
    output:
        rates=analysis_table("parse_failures"),
        reasons=analysis_table("parse_failure_reasons"),
        reasoning=analysis_table("reasoning"),
        # where a template names an extractor model: its agreement with the rule parsers, per language
        extractor=analysis_table("extractor_agreement"),
    input:
        leaderboard=paths.LEADERBOARD_CSV,  # every outcome table, through the leaderboard
    params:
        outcomes=all_outcomes(),
    threads: CPU_THREADS
    resources:
        **CPU_RESOURCES,
    log:
        paths.log("analysis", "parse_failures"),
    conda:
        "../../envs/cpu.yaml"
    script:
        "../scripts/parse_failures.py"


rule item_difficulty:
    output:
        per_item=analysis_table("item_difficulty"),
        buckets=analysis_table("difficulty_buckets"),
        patterns=analysis_table("difficulty_patterns"),
        gaps=analysis_table("crosslingual_gaps"),
        gap_items=analysis_table("crosslingual_items"),
    input:
        leaderboard=paths.LEADERBOARD_CSV,  # every outcome table, through the leaderboard
        # item texts for the example columns
        prepared=all_prepared(),
    params:
        outcomes=all_outcomes(),
        pivot=GRID.analysis.pivot_language,
    threads: CPU_THREADS
    resources:
        **CPU_RESOURCES,
    log:
        paths.log("analysis", "item_difficulty"),
    conda:
        "../../envs/cpu.yaml"
    script:
        "../scripts/item_difficulty.py"


rule plots:
    output:
        grid_rules.figure_targets(GRID),
    input:
        leaderboard=paths.LEADERBOARD_CSV,
        rates=rules.parse_failures.output.rates,
    params:
        tasks=sorted(GRID.tasks),
    threads: CPU_THREADS
    resources:
        **CPU_RESOURCES,
    log:
        paths.log("analysis", "plots"),
    conda:
        "../../envs/cpu.yaml"
    script:
        "../scripts/plots.py"


rule report:
    output:
        paths.REPORT,
    input:
        leaderboard=paths.LEADERBOARD_CSV,
        sensitivity=rules.template_sensitivity.output.sensitivity,
        rank_stability=rules.template_sensitivity.output.ranks,
        significance_templates=rules.significance.output.templates,
        significance_models=rules.significance.output.models,
        parse_failures=rules.parse_failures.output.rates,
        parse_failure_reasons=rules.parse_failures.output.reasons,
        reasoning=rules.parse_failures.output.reasoning,
        extractor_agreement=rules.parse_failures.output.extractor,
        difficulty_buckets=rules.item_difficulty.output.buckets,
        difficulty_patterns=rules.item_difficulty.output.patterns,
        crosslingual_gaps=rules.item_difficulty.output.gaps,
        crosslingual_items=rules.item_difficulty.output.gap_items,
        plots=grid_rules.figure_targets(GRID),
        variation=report_sections,
        omitted=paths.PLAN_OMITTED,
    params:
        settings=GRID.analysis.pick("seed", "confidence", "samples", "alpha", "pivot_language"),
        # the planning section's tokens and cost per model: the generation jobs' usage files where there are some
        # (not inputs: outputs analysed without the jobs that made them have none) and the models' prices
        usage=grid_rules.usage_files(GRID),
        prices=grid_rules.prices(GRID),
    threads: CPU_THREADS
    resources:
        **CPU_RESOURCES,
    log:
        paths.log("analysis", "report"),
    conda:
        "../../envs/cpu.yaml"
    script:
        "../scripts/report.py"


# Prompt variation as a factor (docs/variations.md): spread over a variant set, variance decomposition, rank
# stability and the cross-lingual sensitivity test; tables, a figure and an HTML section the report includes.
rule variation_analysis:
    output:
        spread=paths.VARIATION_TABLE.format(name="spread"),
        axes=paths.VARIATION_TABLE.format(name="axes"),
        decomposition=paths.VARIATION_TABLE.format(name="decomposition"),
        ranks=paths.VARIATION_TABLE.format(name="ranks"),
        sensitivity=paths.VARIATION_TABLE.format(name="sensitivity"),
        figure=paths.VARIATION_FIGURE,
        fragment=paths.VARIATION_SECTION,
    input:
        leaderboard=paths.LEADERBOARD_CSV,  # every outcome table, through the leaderboard
    params:
        # a budgeted set's variants answered different items: estimated as a set instead (budget.smk)
        outcomes=grid_rules.budgeted_files(GRID, paths.OUTCOMES, budgeted=False),
        settings=GRID.analysis.pick("seed", "samples", "confidence", "permutations", "language_groups", "alpha"),
    threads: CPU_THREADS
    resources:
        **CPU_RESOURCES,
    log:
        paths.log("analysis", "variation"),
    conda:
        "../../envs/cpu.yaml"
    script:
        "../scripts/variation_analysis.py"


# Translated against locally written tests (analysis.local_vs_translated): per model and language, the gap with
# its interval, the change in model ranks, a note where chance levels or formats differ; a table and a section.
rule local_vs_translated:
    output:
        table=paths.LOCAL_VS_TRANSLATED,
        fragment=paths.LOCAL_VS_TRANSLATED_SECTION,
    input:
        outcomes=grid_rules.local_vs_translated_outcomes(GRID),
    params:
        formats=grid_rules.task_formats(GRID),
        settings=GRID.analysis.pick("seed", "samples", "confidence", "local_vs_translated"),
    threads: CPU_THREADS
    resources:
        **CPU_RESOURCES,
    log:
        paths.log("analysis", "local_vs_translated"),
    conda:
        "../../envs/cpu.yaml"
    script:
        "../scripts/local_vs_translated.py"
